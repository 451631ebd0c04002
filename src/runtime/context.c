/* The public API's context: creation (the TILE_* environment is read here
 * and nowhere else), messages, notes, the CPU/GPU switch, and destruction,
 * which releases everything made through the context (kernels, device
 * memory, the device).  This half of the driver needs no compiler: libtile
 * and libtile_rt both have it. */
#include "context.h"
#include "device.h"
#include "kernel.h"
#include "../support/file.h"
#include "../support/parallel.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <stddef.h>

/* An interpreted launch stops after 60 s (an endless loop; a trivial
 * iteration takes ~0.1 us, so 2^30 of them took 101 s). */
enum { DEFAULT_MEMORY_CAP = 1u << 30, DEFAULT_INTERPRET_SECONDS = 60, INTERPRET_MAX_SECONDS = 1000000000 };

/* What one ptxas run may take unless TILE_PTXAS_TIMEOUT / TILE_PTXAS_MEMORY say otherwise (docs/abi.md, section 7). */
enum {
  PTXAS_DEFAULT_TIMEOUT_S = 300,
  PTXAS_DEFAULT_MEMORY_MIB = 8192,
  PTXAS_MAX_TIMEOUT_S = 1 << 24,   /* half a year: larger values are typos */
  PTXAS_MAX_MEMORY_MIB = 1 << 30,  /* an exbibyte */
};

const char *tile_version(void) { return TILE_VERSION_STRING; }

const char *tile_status_string(tile_status s) {
  switch (s) {
  case TILE_OK: return "ok";
  case TILE_ERROR_COMPILE: return "compile error";
  case TILE_ERROR_ARGUMENT: return "bad argument";
  case TILE_ERROR_IO: return "i/o error";
  case TILE_ERROR_MEMORY: return "out of memory";
  case TILE_ERROR_UNSUPPORTED: return "unsupported";
  case TILE_ERROR_RUNTIME: return "kernel failed while running";
  }
  return "unknown status";
}

static char *copy_env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? strdup(v) : NULL;
}

static char *default_cache_dir(void) {
  const char *home = getenv("HOME");
  if (!home || !*home) return NULL;
  size_t n = strlen(home) + sizeof "/.cache/tile";
  char *dir = malloc(n);
  if (dir) snprintf(dir, n, "%s/.cache/tile", home);
  return dir;
}

/* TILE_LIBDEVICE_PATH, else libdevice in the toolkit at $CUDA_HOME, else at /usr/local/cuda. */
static char *libdevice_path(void) {
  char *path = copy_env("TILE_LIBDEVICE_PATH");
  if (path) return path;
  const char *home = getenv("CUDA_HOME");
  if (!home || !*home) home = "/usr/local/cuda";
  size_t n = strlen(home) + sizeof "/nvvm/libdevice/libdevice.10.bc";
  if ((path = malloc(n))) snprintf(path, n, "%s/nvvm/libdevice/libdevice.10.bc", home);
  return path;
}

/* Keeps the first unusable variable's complaint: tile_context_create reports it. */
static void env_complain(tile_context *ctx, const char *name, const char *value, const char *expected) {
  if (!ctx->environment_error[0])
    snprintf(ctx->environment_error, sizeof ctx->environment_error, "%s is '%.40s': expected %s", name, value, expected);
}

/* A number from the environment (TILE_PTXAS_TIMEOUT=300): unset or empty, `fallback`; else a number from 0
 * (`zero` says what 0 means) to `max`, in whole `unit`s if `whole` (digits only), any decimal otherwise;
 * anything else is complained about, and `fallback` taken. */
static double env_number(tile_context *ctx, const char *name, const char *unit, const char *zero, double max,
                         int whole, double fallback) {
  const char *v = getenv(name);
  if (!v || !*v) return fallback;
  char *end;
  double n = strtod(v, &end);
  int ok = !*end && n >= 0 && n <= max && (!whole || strspn(v, "0123456789") == strlen(v));
  if (ok) return n;
  char expected[160];
  snprintf(expected, sizeof expected, "a %snumber of %s from 0 (%s) to %.0f", whole ? "whole " : "", unit, zero, max);
  env_complain(ctx, name, v, expected);
  return fallback;
}

static int same_word(const char *a, const char *b) { return !strcasecmp(a, b); }

/* A switch from the environment (TILE_INTERPRET=1): 1, true, yes, on (any case) turn it on; unset, empty,
 * 0, false, no, off leave it off; anything else is complained about. */
static int env_switch(tile_context *ctx, const char *name, const char *meaning) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  static const char *const on[] = {"1", "true", "yes", "on"}, *const off[] = {"0", "false", "no", "off"};
  for (int i = 0; i < 4; i++) {
    if (same_word(v, on[i])) return 1;
    if (same_word(v, off[i])) return 0;
  }
  char expected[160];
  snprintf(expected, sizeof expected, "1, true, yes or on (%s), or 0, false, no, off or nothing", meaning);
  env_complain(ctx, name, v, expected);
  return 0;
}

/* The documented TILE_* variables (and HOME, PATH, CUDA_HOME for their defaults). */
static void read_environment(tile_context *ctx) {
  ctx->on_cpu = env_switch(ctx, "TILE_INTERPRET", "kernels run on the CPU interpreter");
  ctx->cache_dir = copy_env("TILE_CACHE_DIR");
  if (!ctx->cache_dir) ctx->cache_dir = default_cache_dir();
  ctx->ptxas_path = copy_env("TILE_PTXAS_PATH");
  ctx->ptxas_timeout_s = (int)env_number(ctx, "TILE_PTXAS_TIMEOUT", "seconds", "no limit", PTXAS_MAX_TIMEOUT_S, 1,
                                         PTXAS_DEFAULT_TIMEOUT_S);
  ctx->ptxas_memory_mib = (size_t)env_number(ctx, "TILE_PTXAS_MEMORY", "MiB", "no limit", PTXAS_MAX_MEMORY_MIB, 1,
                                             PTXAS_DEFAULT_MEMORY_MIB);
  ctx->cuda_library = copy_env("TILE_CUDA_LIBRARY");
  ctx->search_path = copy_env("PATH");
  ctx->libdevice_path = libdevice_path();
  ctx->compile_threads = (int)env_number(ctx, "TILE_COMPILE_THREADS", "threads", "one per core, at most 16",
                                         PARALLEL_MAX_THREADS, 1, 0);
  ctx->interp_time_limit = env_number(ctx, "TILE_INTERPRET_TIMEOUT", "seconds", "no limit", INTERPRET_MAX_SECONDS, 0,
                                      DEFAULT_INTERPRET_SECONDS);
  ctx->print_autotuning = env_switch(ctx, "TILE_PRINT_AUTOTUNING", "the autotuner reports on stderr");
}

tile_status tile_context_create(tile_context **out) {
  if (!out) return TILE_ERROR_ARGUMENT;
  tile_context *ctx = calloc(1, sizeof *ctx);
  *out = ctx;
  if (!ctx) return TILE_ERROR_MEMORY;
  ctx->magic = CONTEXT_MAGIC;
  arena_init(&ctx->results, 0);
  ctx->error = ctx->diagnostics = "";
  ctx->memory_cap = DEFAULT_MEMORY_CAP;
  read_environment(ctx); /* a variable it cannot use fails the creation; the context, with its default, is still made */
  return ctx->environment_error[0] ? context_fail(ctx, TILE_ERROR_ARGUMENT, ctx->environment_error) : TILE_OK;
}

void tile_context_destroy(tile_context *ctx) {
  if (!context_valid(ctx)) return;
  kernel_destroy_all(ctx);
  free_allocations(ctx);
  free_host_tokens(ctx);
  device_close(ctx);
  arena_free(&ctx->results);
  free(ctx->cache_dir);
  free(ctx->ptxas_path);
  free(ctx->cuda_library);
  free(ctx->search_path);
  free(ctx->libdevice_path);
  ctx->magic = 0;
  free(ctx);
}

const char *tile_error(const tile_context *ctx) { return context_valid(ctx) ? ctx->error : "no context"; }
const char *tile_diagnostics(const tile_context *ctx) { return context_valid(ctx) ? ctx->diagnostics : ""; }

void tile_options_init_size(tile_options *opts, size_t struct_size) {
  if (!opts || struct_size < sizeof opts->struct_size) return;
  if (struct_size <= STRUCT_SIZE_PLAUSIBLE) memset(opts, 0, struct_size); /* a newer struct's fields: 0 */
  opts->struct_size = struct_size;  /* one this library does not know is refused where the options are used */
  if (struct_size >= offsetof(tile_options, config) + sizeof opts->config) opts->config = -1;
}

/* The size of the tile_options that ended before `field`: its offset rounded up to the struct's alignment. */
#define OPTIONS_SIZE_BEFORE(field) \
  ((offsetof(tile_options, field) + _Alignof(tile_options) - 1) / _Alignof(tile_options) * _Alignof(tile_options))

/* The tile_options layouts this library reads, by struct_size, oldest first (docs/abi.md, section 10):
 * a field added to tile_options adds the new size here; an older size is read up to its end, the fields
 * after it keeping tile_options_init's defaults.  A field that fills the older layout's tail padding
 * (maxnreg, on LP64) leaves the size as it was: such a struct is read whole, and the field is 0 where
 * tile_options_init zeroed the padding. */
static const size_t OPTIONS_SIZES[] = {OPTIONS_SIZE_BEFORE(maxnreg), OPTIONS_SIZE_BEFORE(fp_fusion),
                                       sizeof(tile_options)};

static tile_status check_options_size(tile_context *ctx, size_t size, const char *call, const char *sep) {
  for (size_t i = 0; i < sizeof OPTIONS_SIZES / sizeof OPTIONS_SIZES[0]; i++)
    if (size == OPTIONS_SIZES[i]) return TILE_OK;
  if (size > sizeof(tile_options) && size <= STRUCT_SIZE_PLAUSIBLE)
    return context_failf(ctx, TILE_ERROR_ARGUMENT,
                         "%s%soptions: struct_size is %zu, larger than the tile_options of this library (%zu bytes, "
                         "tile %s): the program was built against a newer tile.h",
                         call, sep, size, sizeof(tile_options), TILE_VERSION_STRING);
  return context_failf(ctx, TILE_ERROR_ARGUMENT,
                       "%s%soptions: struct_size is %zu, not the size of a tile_options (%zu bytes): initialise them "
                       "with tile_options_init (a program built against a tile.h older than struct_size must be rebuilt)",
                       call, sep, size, sizeof(tile_options));
}

tile_status context_read_options(tile_context *ctx, const tile_options *o, const char *call, tile_options *full) {
  tile_options_init(full);
  if (!o) return TILE_OK;
  tile_status s = check_options_size(ctx, o->struct_size, call, *call ? ": " : "");
  if (s != TILE_OK) return s;
  memcpy(full, o, o->struct_size);
  full->struct_size = sizeof *full;
  return context_check_options(ctx, full, call);
}

tile_status context_check_options(tile_context *ctx, const tile_options *o, const char *call) {
  const char *sep = *call ? ": " : "";
  if (!o) return TILE_OK;
#define CHECK_RANGE(field, lo, hi, valid, rule)                                                           \
  if (o->field < (lo) || o->field > (hi) || (o->field && !valid(o->field)))                                 \
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "%s%soptions: " #field " must be %s, not %d", call, sep, rule, o->field);
  OPTION_RANGES(CHECK_RANGE)
#undef CHECK_RANGE
  if (o->num_defines < 0)
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "%s%soptions: num_defines must be 0 or more, not %d", call, sep,
                         o->num_defines);
  if (o->num_defines && !o->defines)
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "%s%soptions: num_defines is %d but defines is NULL", call, sep,
                         o->num_defines);
  for (int i = 0; i < o->num_defines; i++)
    if (!o->defines[i]) return context_failf(ctx, TILE_ERROR_ARGUMENT, "%s%soptions: defines[%d] is NULL", call, sep, i);
  return TILE_OK;
}

tile_status tile_options_check(tile_context *ctx, const tile_options *opts) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  tile_options full;
  return context_read_options(ctx, opts, "", &full); /* the message is the caller's to place (tilec's "--num-stages") */
}

void context_begin(tile_context *ctx) {
  if (ctx->results.head) arena_free(&ctx->results);
  ctx->error = ctx->diagnostics = "";
}

/* As much of `text` as `size` bytes hold, NUL-terminated. */
static const char *cut(char *to, size_t size, const char *text) {
  size_t n = strnlen(text, size - 1);
  memcpy(to, text, n);
  to[n] = 0;
  return to;
}

/* The results arena has no guard, so the library never aborts on a message:
 * when a copy cannot be made, the text is cut to a buffer in the context. */
tile_status context_fail(tile_context *ctx, tile_status s, const char *message) {
  const char *copy = arena_strdup(&ctx->results, message);
  ctx->error = copy ? copy : cut(ctx->error_fallback, sizeof ctx->error_fallback, message);
  return s;
}

void context_clear_error(tile_context *ctx) { ctx->error = ""; }

tile_status context_failf(tile_context *ctx, tile_status s, const char *fmt, ...) {
  char message[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return context_fail(ctx, s, message);
}

void context_note(tile_context *ctx, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t old = strlen(ctx->diagnostics), add = strlen(line);
  char *text = arena_alloc(&ctx->results, old + add + 2);
  if (!text) return;
  memcpy(text, ctx->diagnostics, old);
  memcpy(text + old, line, add);
  text[old + add] = '\n';
  ctx->diagnostics = text;
}

tile_status tile_context_use_cpu(tile_context *ctx) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (ctx->on_cpu) return TILE_OK;
  if (ctx->num_allocations || ctx->live_streams || ctx->live_events)
    return context_fail(ctx, TILE_ERROR_ARGUMENT,
                        "tile_context_use_cpu: the context already holds GPU memory, streams or events; "
                        "switch before making any");
  ctx->on_cpu = 1;
  return TILE_OK;
}

int tile_context_on_cpu(const tile_context *ctx) { return context_valid(ctx) && ctx->on_cpu; }

tile_status context_read_file(tile_context *ctx, const char *path, size_t max_bytes, char **text, size_t *len) {
  char why[128];
  FILE *f = file_fopen_regular(path, why, sizeof why);
  *text = NULL;
  *len = 0;
  if (!f) return context_failf(ctx, TILE_ERROR_IO, "cannot read '%s': %s", path, why);
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n == cap) {
      if (cap >= max_bytes) break;
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  int read_error = ferror(f) ? errno : 0;
  fclose(f);
  if (!buf) return context_failf(ctx, TILE_ERROR_MEMORY, "out of memory reading '%s'", path);
  if (n == cap || read_error) {
    free(buf);
    return n == cap ? context_failf(ctx, TILE_ERROR_IO, "'%s' is larger than the %zu MiB allowed", path, max_bytes >> 20)
                    : context_failf(ctx, TILE_ERROR_IO, "cannot read '%s': %s", path, strerror(read_error));
  }
  buf[n] = 0;
  *text = buf;
  *len = n;
  return TILE_OK;
}
