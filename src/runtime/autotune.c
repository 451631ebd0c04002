/* The autotuner: Triton's @triton.autotune, at launch.  A JIT kernel whose
 * source lists several configs (and whose options fix none) has a
 * KernelTuning.  The first launch for each tuning key -- the arguments'
 * specialisation key and the values of the decorator's `key` arguments --
 * asks the compiler which configs the kernel's early_config_prune keeps for
 * these arguments (all, without one), compiles each for that specialisation (those not built yet at
 * once, on several threads: kernel_prebuild) and, unless the options fix
 * tile_options.refill, each config's other refill schedules (the compiler
 * picks one without knowing the grid, which decides which is faster);
 * launches and times each with events as Triton's do_bench does (a warm-up, then the median of the
 * measured runs, each after a write of twice the L2's size so that every
 * config reads its inputs from memory, as the real launch will when they
 * were just written: with a warm L2, a shape whose inputs fit in it ranks
 * the configs otherwise), and keeps the fastest: in memory, and on disk through the
 * compiler, so that another process skips the tuning.  A config that does
 * not compile, load (more shared memory than the GPU has) or launch (more
 * registers or threads than a block may have) is skipped, as Triton skips
 * OutOfResources.  reset_to_zero buffers are zeroed, and restore_value
 * buffers put back as they were, before each run and before the real
 * launch.  On the CPU interpreter nothing is timed: the first config that
 * compiles is kept.
 * Requires: k->tuning, made by the compiler.  A launch whose key is tuned
 * compares keys and values in place: no allocation, no text. */
#include "kernel.h"
#include "args.h"
#include "device.h"
#include "cache.h"
#include "gpu.h"
#include "json.h"
#include "../support/dtypes.h"
#include "../support/diag.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ESTIMATE_RUNS = 5, MIN_REPS = 3, MAX_REPS = 200, MAX_WARMUP_RUNS = 1000 };
static const double DEFAULT_WARMUP_MS = 25, DEFAULT_REP_MS = 100; /* do_bench's */

struct TuneChoice {
  TuneChoice *next;
  int on_cpu;
  int key_len;                /* as Spec's */
  uint16_t *key;
  long long *values;          /* the tuning key's argument values (see key_value) */
  Variant variant;
};

/* Text grown with malloc, for messages made across calls that reset the context's. */
typedef struct Text {
  char *data;
  size_t len, cap;
} Text;

static void text_printf(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(Text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (t->len + (size_t)n + 1 > t->cap) {
    size_t cap = (t->len + (size_t)n + 1) * 2;
    char *grown = realloc(t->data, cap);
    if (!grown) return; /* the message is shorter; nothing else depends on it */
    t->data = grown;
    t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(t->data + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

static const char *text_cstr(const Text *t) { return t->data ? t->data : ""; }

/* ---- choices ------------------------------------------------------------------------- */

/* A key argument's value: an integer, a float's bits; 0 for a buffer, whose
 * dtype and alignment are in the specialisation key already. */
static long long key_value(const tile_arg *args, int n, int position) {
  if (position >= n) return 0;
  const tile_arg *a = &args[position];
  long long bits = 0;
  if (a->kind == TILE_ARG_INT) bits = a->i;
  else if (a->kind == TILE_ARG_FLOAT) memcpy(&bits, &a->f, sizeof bits);
  return bits;
}

static int same_choice(const TuneChoice *c, const KernelTuning *t, int on_cpu, const uint16_t *key, int key_len,
                       const tile_arg *args, int n) {
  if (c->on_cpu != on_cpu || c->key_len != key_len) return 0;
  if (key_len > 0 && memcmp(c->key, key, sizeof *key * (size_t)key_len)) return 0;
  for (int i = 0; i < t->num_keys; i++)
    if (c->values[i] != key_value(args, n, t->key_args[i])) return 0;
  return 1;
}

/* The choice for these arguments, moved to the front; NULL if none. */
static TuneChoice *find_choice(tile_kernel *k, const uint16_t *key, int key_len, const tile_arg *args, int n) {
  for (TuneChoice **link = &k->choices, *c; (c = *link); link = &c->next) {
    if (!same_choice(c, k->tuning, k->ctx->on_cpu, key, key_len, args, n)) continue;
    *link = c->next;
    c->next = k->choices;
    k->choices = c;
    return c;
  }
  return NULL;
}

/* Remembers variant v for these arguments; out of memory only forgets it. */
static void keep_choice(tile_kernel *k, const uint16_t *key, int key_len, const tile_arg *args, int n, Variant v) {
  const KernelTuning *t = k->tuning;
  size_t key_bytes = key_len > 0 ? sizeof *key * (size_t)key_len : 0;
  TuneChoice *c = calloc(1, sizeof *c);
  if (c) c->values = calloc((size_t)t->num_keys + 1, sizeof *c->values);
  if (c && key_bytes) c->key = malloc(key_bytes);
  if (!c || !c->values || (key_bytes && !c->key)) {
    if (c) free(c->values), free(c->key);
    free(c);
    return;
  }
  c->on_cpu = k->ctx->on_cpu;
  c->key_len = key_len;
  if (key_bytes) memcpy(c->key, key, key_bytes);
  for (int i = 0; i < t->num_keys; i++) c->values[i] = key_value(args, n, t->key_args[i]);
  c->variant = v;
  c->next = k->choices;
  k->choices = c;
}

void autotune_release(tile_kernel *k) {
  while (k->choices) {
    TuneChoice *c = k->choices;
    k->choices = c->next;
    free(c->key);
    free(c->values);
    free(c);
  }
}

/* "M=512, N=512, K=512": the tuning key's values, for messages and the disk cache. */
static void describe_key(Text *out, const KernelTuning *t, const tile_arg *args, int n) {
  for (int i = 0; i < t->num_keys; i++) {
    int p = t->key_args[i];
    const tile_arg *a = p < n ? &args[p] : NULL;
    text_printf(out, "%s%s=", i ? ", " : "", t->key_names[i]);
    if (a && a->kind == TILE_ARG_INT) text_printf(out, "%lld", a->i);
    else if (a && a->kind == TILE_ARG_FLOAT) text_printf(out, "%.17g", a->f);
    else text_printf(out, "a buffer");
  }
  if (!t->num_keys) text_printf(out, "any key");
}

/* What the disk cache keys a choice by, besides the kernel: the GPU, the signature, the key's values. */
static void describe_case(Text *out, tile_kernel *k, const uint16_t *key, int key_len, const tile_arg *args, int n) {
  char signature[MAX_SIGNATURE] = "(the kernel's own)";
  if (key_len >= 0) key_signature(key, key_len, signature, sizeof signature);
  text_printf(out, "device=%s; signature=%s; key=", tile_device_name(k->ctx), signature);
  describe_key(out, k->tuning, args, n);
}

/* The first line of the context's message, for a one-line reason. */
static void first_line(const char *message, char *out, size_t size) {
  size_t n = strcspn(message, "\n");
  snprintf(out, size, "%.*s", (int)(n < 400 ? n : 400), message);
}

/* ---- timing ------------------------------------------------------------------------ */

/* One tuning: the launch being tuned and what each config did. */
typedef struct Tuner {
  tile_kernel *k;
  const KernelTuning *t;
  const uint16_t *key;
  int key_len;
  const tile_arg *args;
  int n;
  const unsigned *given;
  tile_grid_fn grid_fn;
  void *user;
  tile_stream stream;
  void *saved[MAX_KERNEL_ARGS];   /* restore_value: each buffer as it was, in device memory */
  size_t reset_bytes[MAX_KERNEL_ARGS], restore_bytes[MAX_KERNEL_ARGS];
  tile_event starts[MAX_REPS], ends[MAX_REPS];
  int num_events;                 /* pairs created so far */
  void *flush;                    /* written before each timed run; NULL: no flush (no room, or the L2 unknown) */
  size_t flush_bytes;
  Text report;                    /* each variant's time, or why it was skipped */
  Text failures;                  /* each failed variant's reason, for the error if all fail */
  tile_status first_failure;
  Variant best;                   /* the fastest so far (config -1: none) */
  double best_ms;
  Text timings;                   /* JSON: each timed variant, for the disk cache */
  int *kept;                      /* the configs tried, in order: those early_config_prune keeps, else all */
  int num_kept;
} Tuner;

/* The configs this tuning tries into u->kept: those the kernel's
 * early_config_prune keeps for these arguments (compiler->prune), else all;
 * the report says which were kept. */
static tile_status choose_configs(Tuner *u) {
  int n = u->t->num_configs, prunes = u->t->prunes && u->k->compiler->prune;
  unsigned char *keep = malloc((size_t)n);
  u->kept = malloc(sizeof *u->kept * (size_t)n);
  if (!keep || !u->kept) {
    free(keep);
    return context_fail(u->k->ctx, TILE_ERROR_MEMORY, "out of memory");
  }
  memset(keep, !prunes, (size_t)n);
  tile_status st = prunes ? u->k->compiler->prune(u->k, u->args, u->n, keep) : TILE_OK;
  for (int c = 0; st == TILE_OK && c < n; c++)
    if (keep[c]) u->kept[u->num_kept++] = c;
  free(keep);
  if (prunes && st == TILE_OK) {
    text_printf(&u->report, "%s  early_config_prune kept config%s", u->report.len ? "\n" : "", u->num_kept > 1 ? "s" : "");
    for (int i = 0; i < u->num_kept; i++) text_printf(&u->report, "%s %d", i ? "," : "", u->kept[i]);
  }
  return st;
}

/* The bytes a reset_to_zero or restore_value buffer spans: its count, else
 * the rest of its tile_malloc block. */
static tile_status buffer_bytes(Tuner *u, int position, const char *name, const char *what, size_t *bytes) {
  tile_context *ctx = u->k->ctx;
  const tile_arg *a = position < u->n ? &u->args[position] : NULL;
  int dt = a && a->kind == TILE_ARG_BUFFER && a->dtype ? dtype_lookup(a->dtype) : -1;
  if (!a || a->kind != TILE_ARG_BUFFER || !a->data || dt < 0)
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "autotune %s: argument %d ('%s') is not a buffer of a known dtype", what,
                         position, name);
  if (a->count) {
    *bytes = a->count * dtype_size(dt);
    return TILE_OK;
  }
  if (allocation_extent(ctx, a->data, bytes)) return TILE_OK;
  return context_failf(ctx, TILE_ERROR_ARGUMENT,
                       "autotune %s: argument %d ('%s') has no element count and is not memory from tile_malloc, so its "
                       "size is unknown; give tile_buffer its count", what, position, name);
}

/* Sizes the hooks' buffers and saves the restore_value ones. */
static tile_status save_buffers(Tuner *u) {
  const KernelTuning *t = u->t;
  tile_status st = TILE_OK;
  for (int i = 0; st == TILE_OK && i < t->num_resets; i++)
    st = buffer_bytes(u, t->reset_args[i], t->reset_names[i], "reset_to_zero", &u->reset_bytes[i]);
  for (int i = 0; st == TILE_OK && i < t->num_restores; i++) {
    int p = t->restore_args[i];
    st = buffer_bytes(u, p, t->restore_names[i], "restore_value", &u->restore_bytes[i]);
    if (st == TILE_OK) st = tile_malloc(u->k->ctx, &u->saved[i], u->restore_bytes[i]);
    if (st == TILE_OK) st = device_copy(u->k->ctx, u->saved[i], u->args[p].data, u->restore_bytes[i]);
  }
  return st;
}

/* Before each run and before the real launch: the buffers as the caller gave them, reset ones zeroed. */
static tile_status prepare_buffers(Tuner *u) {
  const KernelTuning *t = u->t;
  tile_status st = TILE_OK;
  for (int i = 0; st == TILE_OK && i < t->num_restores; i++)
    st = device_copy(u->k->ctx, u->args[t->restore_args[i]].data, u->saved[i], u->restore_bytes[i]);
  for (int i = 0; st == TILE_OK && i < t->num_resets; i++)
    st = tile_memset(u->k->ctx, u->args[t->reset_args[i]].data, 0, u->reset_bytes[i]);
  return st;
}

static tile_status run_once(Tuner *u, Spec *s) {
  tile_status st = prepare_buffers(u);
  return st != TILE_OK ? st : kernel_launch_spec(u->k, s, u->given, u->grid_fn, u->user, u->stream, u->args, u->n, 0);
}

/* Event pairs 0..count-1, created as needed. */
static tile_status need_events(Tuner *u, int count) {
  tile_status st = TILE_OK;
  for (; st == TILE_OK && u->num_events < count; u->num_events++) {
    st = tile_event_create(u->k->ctx, &u->starts[u->num_events]);
    if (st == TILE_OK && (st = tile_event_create(u->k->ctx, &u->ends[u->num_events])) != TILE_OK)
      tile_event_destroy(u->k->ctx, u->starts[u->num_events]);
  }
  if (st != TILE_OK) u->num_events--; /* the loop counted the pair that failed */
  return st;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Mean ms of ESTIMATE_RUNS back-to-back runs: sizes the warm-up and the measurement. */
static tile_status estimate(Tuner *u, Spec *s, double *ms) {
  tile_context *ctx = u->k->ctx;
  float elapsed = 0;
  tile_status st = tile_event_record(ctx, u->starts[0], u->stream);
  for (int i = 0; st == TILE_OK && i < ESTIMATE_RUNS; i++) st = run_once(u, s);
  if (st == TILE_OK) st = tile_event_record(ctx, u->ends[0], u->stream);
  if (st == TILE_OK) st = tile_event_elapsed(ctx, u->starts[0], u->ends[0], &elapsed);
  *ms = fmax((double)elapsed / ESTIMATE_RUNS, 1e-4);
  return st;
}

static int runs_for(double budget_ms, double each_ms, int least, int most) {
  double runs = budget_ms / each_ms;
  return runs < least ? least : runs > most ? most : (int)runs;
}

/* The median ms of s's timed runs, each between its own pair of events. */
static tile_status measure(Tuner *u, Spec *s, double *ms) {
  tile_context *ctx = u->k->ctx;
  const KernelTuning *t = u->t;
  double each = 1;
  tile_status st = need_events(u, 1);
  if (st == TILE_OK) st = estimate(u, s, &each);
  int warmups = runs_for(t->warmup_ms > 0 ? t->warmup_ms : DEFAULT_WARMUP_MS, each, 1, MAX_WARMUP_RUNS);
  int reps = runs_for(t->rep_ms > 0 ? t->rep_ms : DEFAULT_REP_MS, each, MIN_REPS, MAX_REPS);
  for (int i = 0; st == TILE_OK && i < warmups; i++) st = run_once(u, s);
  if (st == TILE_OK) st = need_events(u, reps);
  for (int r = 0; st == TILE_OK && r < reps; r++) {
    st = prepare_buffers(u);
    if (st == TILE_OK && u->flush) st = tile_memset(ctx, u->flush, r & 0xff, u->flush_bytes);
    if (st == TILE_OK) st = tile_event_record(ctx, u->starts[r], u->stream);
    if (st == TILE_OK) st = kernel_launch_spec(u->k, s, u->given, u->grid_fn, u->user, u->stream, u->args, u->n, 0);
    if (st == TILE_OK) st = tile_event_record(ctx, u->ends[r], u->stream);
  }
  double times[MAX_REPS];
  for (int r = 0; st == TILE_OK && r < reps; r++) {
    float elapsed = 0;
    st = tile_event_elapsed(ctx, u->starts[r], u->ends[r], &elapsed);
    times[r] = elapsed;
  }
  if (st != TILE_OK) return st;
  qsort(times, (size_t)reps, sizeof *times, compare_doubles);
  *ms = reps % 2 ? times[reps / 2] : 0.5 * (times[reps / 2 - 1] + times[reps / 2]);
  return TILE_OK;
}

/* "config 2", "config 2, refill late", "config 2, refill late, no TMA": a variant in messages. */
static void describe_variant(Text *out, Variant v) {
  text_printf(out, "config %d%s%s%s", v.config, v.refill ? ", refill " : "", meta_refill_names[v.refill],
              v.tma == TILE_TMA_OFF ? ", no TMA" : "");
}

/* Notes variant v's failure to compile, load or launch: it is skipped. */
static void skip(Tuner *u, Variant v, tile_status st) {
  char why[512];
  first_line(tile_error(u->k->ctx), why, sizeof why);
  text_printf(&u->report, "%s  ", u->report.len ? "\n" : "");
  describe_variant(&u->report, v);
  text_printf(&u->report, ": skipped (%s)", why);
  text_printf(&u->failures, "\n  ");
  describe_variant(&u->failures, v);
  text_printf(&u->failures, ": %s", why);
  if (u->first_failure == TILE_OK) u->first_failure = st;
}

static int same_image(const Spec *a, const Spec *b) {
  return a->image && b->image && a->image_size == b->image_size && !memcmp(a->image, b->image, a->image_size);
}

/* Compiles and times variant v; *ms is INFINITY when it is skipped, NAN
 * when its code is `same`'s (the config's own schedule: not timed again).
 * Only errors that no other variant can avoid come back. */
static tile_status try_variant(Tuner *u, Variant v, const Spec *same, double *ms, Spec **out) {
  Spec *s;
  *ms = INFINITY;
  *out = NULL;
  tile_status st = kernel_specialize(u->k, u->key, u->key_len, v, &s);
  if (st == TILE_OK && same && same_image(s, same)) {
    *ms = NAN;
    text_printf(&u->report, "%s  ", u->report.len ? "\n" : "");
    describe_variant(&u->report, v);
    text_printf(&u->report, ": the same code as config %d's, not timed again", v.config);
    return TILE_OK;
  }
  if (st == TILE_OK) st = run_once(u, s); /* the warm-up run also says whether it can launch at all */
  if (st == TILE_ERROR_MEMORY) return st;
  if (st != TILE_OK) {
    skip(u, v, st);
    return TILE_OK;
  }
  *out = s;
  st = measure(u, s, ms);
  if (st != TILE_OK) return st;
  text_printf(&u->report, "%s  ", u->report.len ? "\n" : "");
  describe_variant(&u->report, v);
  text_printf(&u->report, ": %.4f ms (%d warp%s)", *ms, s->meta.num_warps, s->meta.num_warps > 1 ? "s" : "");
  return st;
}

/* Releases the events and saved buffers (the calls reset the context's messages). */
static void end_tuning(Tuner *u) {
  for (int i = 0; i < u->num_events; i++) {
    tile_event_destroy(u->k->ctx, u->starts[i]);
    tile_event_destroy(u->k->ctx, u->ends[i]);
  }
  for (int i = 0; i < u->t->num_restores; i++)
    if (u->saved[i]) tile_free(u->k->ctx, u->saved[i]);
  if (u->flush) tile_free(u->k->ctx, u->flush);
}

/* The buffer that flushes the L2 between timed runs; tuning goes on without it if there is no room. */
static void make_flush(Tuner *u) {
  const struct Device *d = u->k->ctx->device;
  if (!d || d->l2_bytes <= 0) return;
  u->flush_bytes = 2 * (size_t)d->l2_bytes;
  if (tile_malloc(u->k->ctx, &u->flush, u->flush_bytes) != TILE_OK) {
    u->flush = NULL;
    text_printf(&u->report, "  (no room for %zu bytes to flush the L2 with: timed with a warm L2)", u->flush_bytes);
  }
}

/* The variants after a config's own compile s: its other refill
 * schedules, where its pipelined loops have one to vary. */
static int other_refills(const Tuner *u, int config, const Spec *s, Variant *out) {
  int n = 0;
  if (!u->t->tune_refill || !s || !s->meta.refills) return 0;
  if (s->meta.refills != TILE_REFILL_EARLY) out[n++] = (Variant){config, TILE_REFILL_EARLY, TILE_TMA_AUTO, 0};
  if (s->meta.refills != TILE_REFILL_LATE) out[n++] = (Variant){config, TILE_REFILL_LATE, TILE_TMA_AUTO, 0};
  return n;
}

/* Times variants v[0..count), keeping the fastest in u->best; own[i] is the
 * config's own compile when v[i] varies its schedule (NULL: v[i] is it),
 * timed[i] (when given) v[i]'s spec if it ran. */
static tile_status time_variants(Tuner *u, const Variant *v, int count, Spec *const *own, Spec **timed) {
  tile_status st = TILE_OK;
  kernel_prebuild(u->k, u->key, u->key_len, v, count); /* try_variant finds them built */
  for (int i = 0; st == TILE_OK && i < count; i++) {
    double ms;
    Spec *s;
    st = try_variant(u, v[i], own ? own[i] : NULL, &ms, &s);
    if (timed) timed[i] = s;
    if (st != TILE_OK || isnan(ms)) continue;
    text_printf(&u->timings, "%s{\"config\": %d, \"refill\": %d, \"tma\": %d, \"ms\": ", u->timings.len > 1 ? ", " : "",
                v[i].config, v[i].refill, v[i].tma);
    text_printf(&u->timings, isinf(ms) ? "null}" : "%.6g}", ms);
    if (ms < u->best_ms) u->best_ms = ms, u->best = v[i];
  }
  return st;
}

/* The variants v[0..count) that ran (ran[i]) with TMA copies, with cp.async
 * instead (tune_tma): which is faster depends on the tile shape and the
 * grid, so both are timed (docs/decisions.md, D1). */
static int without_tma(const Tuner *u, const Variant *v, Spec *const *ran, int count, Variant *out) {
  int n = 0;
  for (int i = 0; u->t->tune_tma && i < count; i++)
    if (ran[i] && ran[i]->meta.num_tensor_maps) out[n] = v[i], out[n++].tma = TILE_TMA_OFF;
  return n;
}

/* Every config timed with its own schedule, then (tune_refill) the other
 * schedules of those that ran, at most two each, then (tune_tma) those
 * that used TMA without it; the fastest into u->best (config -1: none could
 * run), the timings (JSON) into u->timings. */
static tile_status time_configs(Tuner *u) {
  int n = u->num_kept, others = 0, ran_all = n;
  Variant *plain = calloc((size_t)n * 3, sizeof *plain), *other = plain ? plain + n : NULL;
  Variant *no_tma = calloc((size_t)n * 3, sizeof *no_tma);
  Spec **ran = calloc((size_t)n * 3, sizeof *ran), **own = calloc((size_t)n * 2, sizeof *own);
  tile_status st = plain && no_tma && ran && own ? save_buffers(u)
                                                  : context_fail(u->k->ctx, TILE_ERROR_MEMORY, "out of memory");
  u->best = AS_GIVEN, u->best_ms = INFINITY;
  make_flush(u);
  for (int c = 0; plain && c < n; c++) plain[c] = (Variant){u->kept[c], TILE_REFILL_AUTO, TILE_TMA_AUTO, 0};
  text_printf(&u->timings, "[");
  if (st == TILE_OK) st = time_variants(u, plain, n, NULL, ran);
  for (int c = 0; st == TILE_OK && c < n; c++) {
    int added = other_refills(u, plain[c].config, ran[c], other + others);
    for (int i = 0; i < added; i++) own[others + i] = ran[c];
    others += added;
  }
  if (st == TILE_OK) st = time_variants(u, other, others, own, ran + n);
  ran_all += others; /* plain and other are one array, as are their specs in ran */
  int slower = st == TILE_OK ? without_tma(u, plain, ran, ran_all, no_tma) : 0;
  if (st == TILE_OK) st = time_variants(u, no_tma, slower, NULL, NULL);
  text_printf(&u->timings, "]");
  if (st == TILE_OK && u->best.config >= 0) st = prepare_buffers(u); /* for the real launch */
  free(plain), free(no_tma), free(ran), free(own);
  return st;
}

/* What the caller sees when no config could run: each one's reason. */
static tile_status none_ran(Tuner *u, const char *key_text) {
  return context_failf(u->k->ctx, u->first_failure, "autotune: no config of kernel '%s' could run for %s:%s", u->t->kernel,
                       key_text, text_cstr(&u->failures));
}

/* ---- choosing ----------------------------------------------------------------------- */

/* On the interpreter, or of the one config early_config_prune kept: the first that compiles. */
static tile_status first_compiling(Tuner *u, Variant *chosen, Spec **out) {
  *chosen = AS_GIVEN;
  for (int i = 0; i < u->num_kept && chosen->config < 0; i++) {
    Variant v = {u->kept[i], TILE_REFILL_AUTO, TILE_TMA_AUTO, 0};
    tile_status st = kernel_specialize(u->k, u->key, u->key_len, v, out);
    if (st == TILE_ERROR_MEMORY) return st;
    if (st == TILE_OK) *chosen = v;
    else skip(u, v, st);
  }
  return TILE_OK;
}

enum { NOTE_BYTES = 512 }; /* a note about the choice on disk, added at the end of the call */

/* The variant recorded on disk for this case; config -1 if none, with a
 * note when the entry there was not sound (for the end of the call). */
static Variant from_disk(tile_kernel *k, const char *what, char note[NOTE_BYTES]) {
  note[0] = 0;
  Variant v = k->ctx->on_cpu ? AS_GIVEN : k->compiler->load_choice(k, what, note, NOTE_BYTES);
  return v.config < k->tuning->num_configs ? v : AS_GIVEN;
}

static void note_tuning(tile_kernel *k, const char *key_text, const char *report, Variant chosen) {
  context_note(k->ctx, "autotune: kernel '%s' for %s%s:", k->tuning->kernel, key_text,
               k->ctx->on_cpu ? " (CPU interpreter: nothing timed, the first config that compiles)" : "");
  for (const char *line = report; *line;) {
    size_t len = strcspn(line, "\n");
    context_note(k->ctx, "%.*s", (int)len, line);
    line += len + (line[len] == '\n');
  }
  Text choice = {0};
  describe_variant(&choice, chosen);
  context_note(k->ctx, "  chose %s", text_cstr(&choice));
  free(choice.data);
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* "config 3 (BLOCK: 512, num_warps: 4, num_stages: 3)": the variant as Triton prints a Config
 * (", maxnreg: 128" too when it has a register cap). */
static void describe_config(Text *out, Variant v, const KernelMetadata *m) {
  describe_variant(out, v);
  text_printf(out, " (");
  for (int i = 0; i < m->num_constexprs; i++) {
    const Json *j = m->constexprs[i].value;
    text_printf(out, "%s: ", m->constexprs[i].name);
    if (j->kind == JSON_BOOL) text_printf(out, "%s", j->i ? "True" : "False");
    else if (j->kind == JSON_NUMBER && j->is_int) text_printf(out, "%lld", j->i);
    else if (j->kind == JSON_NUMBER) text_printf(out, "%.17g", j->f);
    else if (j->kind == JSON_STRING) text_printf(out, "'%s'", j->s);
    else text_printf(out, "None");
    text_printf(out, ", ");
  }
  text_printf(out, "num_warps: %d, num_stages: %d", m->num_warps, m->num_stages);
  if (m->maxnreg) text_printf(out, ", maxnreg: %d", m->maxnreg);
  text_printf(out, ")");
}

/* TILE_PRINT_AUTOTUNING: what Triton's TRITON_PRINT_AUTOTUNING prints, on stderr, with each variant's time. */
static void print_tuning(tile_kernel *k, const char *key_text, const char *report, Variant chosen, const Spec *s,
                         double seconds) {
  Text config = {0};
  describe_config(&config, chosen, &s->meta);
  fprintf(stderr, "tile autotuning for kernel '%s' with key %s%s:\n%s%s", k->tuning->kernel, key_text,
          k->ctx->on_cpu ? " (CPU interpreter: nothing timed, the first config that compiles)" : "", report,
          *report ? "\n" : "");
  fprintf(stderr, "tile autotuning for kernel '%s' finished after %.2f s; best config selected: %s;\n",
          k->tuning->kernel, seconds, text_cstr(&config));
  free(config.data);
}

/* Tunes u's case: *chosen is the variant kept (config -1: none ran), the
 * timings (JSON) in u->timings.  An error comes back only when it is no
 * config's fault; its message is kept across the clean-up. */
static tile_status tune(Tuner *u, Variant *chosen) {
  tile_context *ctx = u->k->ctx;
  Spec *s;
  tile_status st = choose_configs(u);
  int timed = !ctx->on_cpu && u->num_kept > 1; /* one config kept: used untimed, as Triton does */
  if (st == TILE_OK) st = timed ? time_configs(u) : first_compiling(u, chosen, &s);
  if (timed) *chosen = u->best;
  char error[2048];
  snprintf(error, sizeof error, "%s", tile_error(ctx));
  end_tuning(u);
  return st == TILE_OK ? st : context_fail(ctx, st, error);
}

tile_status autotune_select(tile_kernel *k, const uint16_t *key, int key_len, const tile_arg *args, int n,
                            const unsigned *given, tile_grid_fn grid_fn, void *user, tile_stream stream, Spec **out) {
  TuneChoice *c = find_choice(k, key, key_len, args, n);
  if (c) return kernel_specialize(k, key, key_len, c->variant, out);
  Tuner *u = calloc(1, sizeof *u);
  if (!u) return context_fail(k->ctx, TILE_ERROR_MEMORY, "out of memory");
  u->k = k, u->t = k->tuning, u->key = key, u->key_len = key_len, u->args = args, u->n = n;
  u->given = given, u->grid_fn = grid_fn, u->user = user, u->stream = stream;
  Text what = {0}, key_text = {0};
  describe_case(&what, k, key, key_len, args, n);
  describe_key(&key_text, k->tuning, args, n);
  double start = seconds_now();
  char note[NOTE_BYTES];
  Variant chosen = from_disk(k, text_cstr(&what), note);
  tile_status st = TILE_OK;
  if (chosen.config >= 0) {
    text_printf(&u->report, "  ");
    describe_variant(&u->report, chosen);
    text_printf(&u->report, ", tuned by an earlier run (disk cache)");
  } else {
    st = tune(u, &chosen);
  }
  if (st == TILE_OK && chosen.config < 0) st = none_ran(u, text_cstr(&key_text));
  if (st == TILE_OK) st = kernel_specialize(k, key, key_len, chosen, out);
  if (st == TILE_OK) {
    keep_choice(k, key, key_len, args, n, chosen);
    if (u->timings.len) k->compiler->save_choice(k, text_cstr(&what), chosen, text_cstr(&u->timings));
    note_tuning(k, text_cstr(&key_text), text_cstr(&u->report), chosen);
    if (k->ctx->print_autotuning)
      print_tuning(k, text_cstr(&key_text), text_cstr(&u->report), chosen, *out, seconds_now() - start);
    context_clear_error(k->ctx); /* a skipped config's error is in the notes */
  }
  free(u->report.data), free(u->failures.data), free(u->timings.data), free(u->kept), free(u);
  free(what.data), free(key_text.data);
  if (note[0]) context_note(k->ctx, "%s", note); /* after tuning's calls, which start the notes afresh */
  return st;
}

/* autotune_compile before any choice: every config compiled, the first that compiles in *out. */
static tile_status compile_configs(tile_kernel *k, const uint16_t *key, int key_len, const tile_arg *args, int n,
                                   Spec **out) {
  Tuner *u = calloc(1, sizeof *u);
  if (!u) return context_fail(k->ctx, TILE_ERROR_MEMORY, "out of memory");
  u->k = k, u->t = k->tuning, u->key = key, u->key_len = key_len, u->args = args, u->n = n;
  tile_status st = choose_configs(u);
  Spec *first = NULL, *s;
  int configs = u->num_kept;
  Variant *plain = st == TILE_OK ? calloc((size_t)configs + 1, sizeof *plain) : NULL;
  if (!plain && st == TILE_OK) st = context_fail(k->ctx, TILE_ERROR_MEMORY, "out of memory");
  for (int i = 0; plain && i < configs; i++) plain[i] = (Variant){u->kept[i], TILE_REFILL_AUTO, TILE_TMA_AUTO, 0};
  int tried = plain != NULL;
  if (plain) kernel_prebuild(k, key, key_len, plain, configs);
  for (int i = 0; plain && i < configs && st != TILE_ERROR_MEMORY; i++) { /* warms the caches */
    st = kernel_specialize(k, key, key_len, plain[i], &s);
    if (st == TILE_OK && !first) first = s;
    else if (st != TILE_OK) skip(u, plain[i], st);
  }
  free(plain);
  Text key_text = {0};
  describe_key(&key_text, k->tuning, args, n);
  if (tried && st != TILE_ERROR_MEMORY) st = first ? TILE_OK : none_ran(u, text_cstr(&key_text));
  if (st == TILE_OK) context_clear_error(k->ctx); /* a config that did not compile said why in tile_diagnostics */
  free(key_text.data);
  free(u->report.data), free(u->failures.data), free(u->kept), free(u);
  *out = first;
  return st;
}

tile_status autotune_compile(tile_kernel *k, const uint16_t *key, int key_len, const tile_arg *args, int n,
                             Spec **out) {
  TuneChoice *c = find_choice(k, key, key_len, args, n);
  Text what = {0};
  char note[NOTE_BYTES] = "";
  describe_case(&what, k, key, key_len, args, n);
  Variant chosen = c ? c->variant : from_disk(k, text_cstr(&what), note);
  free(what.data);
  if (chosen.config >= 0) {
    tile_status st = kernel_specialize(k, key, key_len, chosen, out);
    if (st == TILE_OK && !c) keep_choice(k, key, key_len, args, n, chosen);
    return st;
  }
  tile_status st = compile_configs(k, key, key_len, args, n, out);
  if (note[0]) context_note(k->ctx, "%s", note); /* after the compiles, which start the notes afresh */
  return st;
}

typedef struct ChoiceText {
  Arena arena;
  const char *what, *timings;
  Variant v;
  Buf json;
} ChoiceText;

static void choice_json(void *ud) {
  ChoiceText *c = ud;
  buf_init(&c->json, &c->arena);
  buf_printf(&c->json, "{\"config\": %d, \"refill\": %d, \"tma\": %d, \"timings_ms\": %s, \"case\": ", c->v.config,
             c->v.refill, c->v.tma, c->timings);
  json_put_string(&c->json, c->what);
  buf_puts(&c->json, "}\n");
  buf_cstr(&c->json);
}

void autotune_write_choice(tile_kernel *k, const char *key, const char *what, Variant v, const char *timings,
                           const char *deps, size_t deps_len) {
  char why[512];
  ChoiceText c = {.what = what, .timings = timings, .v = v};
  arena_init(&c.arena, 1 << 24);
  if (!arena_run(&c.arena, choice_json, &c)) {
    static const char tag[] = "tile autotune choice";
    CacheEntry e = {(unsigned char *)tag, sizeof tag - 1, 0, (char *)buf_cstr(&c.json), c.json.len, (char *)deps,
                    deps_len};
    if (cache_write(k->ctx->cache_dir, key, &e, why, sizeof why))
      context_note(k->ctx, "cache: %s; the autotuner's choice was not cached", why);
  }
  arena_free(&c.arena);
}

/* An integer field of a choice entry's JSON within [0, limit), or -1. */
static int read_index(const Json *entry, const char *field, int limit) {
  const Json *v = json_get(entry, field);
  return v && v->kind == JSON_NUMBER && v->is_int && v->i >= 0 && v->i < limit ? (int)v->i : -1;
}

typedef struct ChoiceRead {
  Arena arena;
  const CacheEntry *entry;
  int num_configs;
  Variant v;
} ChoiceRead;

static void parse_choice(void *ud) {
  ChoiceRead *r = ud;
  char why[128];
  const Json *entry = json_parse(&r->arena, r->entry->metadata, r->entry->metadata_len, why, sizeof why);
  int refill = json_get(entry, "refill") ? read_index(entry, "refill", TILE_REFILL_LATE + 1) : TILE_REFILL_AUTO;
  int tma = json_get(entry, "tma") ? read_index(entry, "tma", TILE_TMA_OFF + 1) : TILE_TMA_AUTO;
  int config = refill >= 0 && tma >= 0 ? read_index(entry, "config", r->num_configs) : -1;
  if (config >= 0) r->v = (Variant){config, refill, tma, 0};
}

/* Whether the files the choice was tuned from read as they did then; a
 * list that does not read gets a note, as a kernel entry's does. */
static int deps_hold(tile_kernel *k, const char *key, const CacheEntry *e, ChoiceDepsCheck *check, char *note,
                     size_t notesize) {
  char why[256] = "its dependency list cannot be checked here";
  int held = !e->deps_len ? 1 : check ? check(e->deps, e->deps_len, why, sizeof why) : -1;
  if (held < 0)
    snprintf(note, notesize, "cache: ignored the autotuner's choice %s/%s.tile (%s)", k->ctx->cache_dir, key, why);
  return held > 0;
}

Variant autotune_read_choice(tile_kernel *k, const char *key, int num_configs, ChoiceDepsCheck *check, char *note,
                             size_t notesize) {
  char why[256];
  CacheEntry e;
  ChoiceRead r = {.num_configs = num_configs, .v = AS_GIVEN};
  if (!k->ctx->cache_dir || cache_read(k->ctx->cache_dir, key, &e, why, sizeof why) <= 0) return r.v;
  r.entry = &e;
  arena_init(&r.arena, 1 << 20);
  if (deps_hold(k, key, &e, check, note, notesize))
    arena_run(&r.arena, parse_choice, &r); /* out of memory: no choice, the kernel is tuned again */
  arena_free(&r.arena);
  cache_entry_free(&e);
  return r.v;
}
