/* Kernels and launches.  A launch computes its arguments' specialisation
 * key on the stack, finds the specialisation (the last one used is first in
 * the list, so a steady loop of launches compares one key), compiles it on a
 * miss (through the kernel's compiler), checks the arguments against its
 * metadata while packing them, and calls cuLaunchKernel; on the CPU
 * interpreter it runs the tile IR over the tracked host buffers instead.
 * Nothing on the path of a launch that hits allocates or formats text.
 * AOT kernels (tile_kernel_load) have one specialisation: the metadata's. */
#include "kernel.h"
#include "args.h"
#include "device.h"
#include "../support/dtypes.h"
#include "../support/diag.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_GRID_X = 0x7fffffff, MAX_GRID_YZ = 65535, MAX_IMAGE_BYTES = 1 << 30, DEFAULT_COMPILE_THREADS = 16 };

tile_kernel *kernel_new(tile_context *ctx, const KernelCompiler *compiler, void *source) {
  tile_kernel *k = calloc(1, sizeof *k);
  if (!k) return NULL;
  k->magic = KERNEL_MAGIC;
  k->ctx = ctx;
  k->compiler = compiler;
  k->source = source;
  k->heuristics = -1;
  k->next = ctx->kernels;
  if (ctx->kernels) ctx->kernels->prev = k;
  ctx->kernels = k;
  return k;
}

static void spec_free(tile_kernel *k, Spec *s) {
  if (s->module) device_unload(k->ctx, s->module);
  if (k->compiler) k->compiler->release_spec(k, s);
  arena_free(&s->arena);
  free(s->key);
  free(s);
}

void tile_kernel_destroy(tile_kernel *k) {
  if (!kernel_valid(k)) return;
  k->magic = 0;
  if (k->prev) k->prev->next = k->next;
  else k->ctx->kernels = k->next;
  if (k->next) k->next->prev = k->prev;
  while (k->specs) {
    Spec *s = k->specs;
    k->specs = s->next;
    spec_free(k, s);
  }
  autotune_release(k);
  if (k->compiler) k->compiler->release(k);
  free(k);
}

void kernel_destroy_all(tile_context *ctx) {
  while (ctx->kernels) tile_kernel_destroy(ctx->kernels);
}

static Spec *spec_new(const uint16_t *key, int key_len, int on_cpu, Variant v, int heuristics) {
  Spec *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->on_cpu = on_cpu;
  s->variant = v;
  s->heuristics = heuristics;
  s->key_len = key_len;
  if (key_len > 0 && !(s->key = malloc(sizeof *key * (size_t)key_len))) {
    free(s);
    return NULL;
  }
  if (key_len > 0) memcpy(s->key, key, sizeof *key * (size_t)key_len);
  arena_init(&s->arena, 0);
  return s;
}

typedef struct MetaRead {
  Spec *s;
  int failed;
  char err[512];
} MetaRead;

static void parse_meta(void *ud) {
  MetaRead *r = ud;
  r->failed = meta_parse(&r->s->arena, r->s->metadata, strlen(r->s->metadata), &r->s->meta, r->err, sizeof r->err) != 0;
}

/* Reads s->metadata into s->meta. */
static tile_status read_meta(tile_context *ctx, Spec *s, tile_status on_error) {
  MetaRead r = {s, 1, ""};
  if (arena_run(&s->arena, parse_meta, &r)) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory reading kernel metadata");
  return r.failed ? context_fail(ctx, on_error, r.err) : TILE_OK;
}

static tile_status load(tile_kernel *k, Spec *s) {
  return device_load(k->ctx, s->image, s->meta.name, s->meta.shared, &s->module, &s->function);
}

/* A new specialisation with its signature, not compiled yet; NULL when out of memory. */
static Spec *spec_make(tile_kernel *k, const uint16_t *key, int key_len, Variant v) {
  char signature[MAX_SIGNATURE];
  Spec *s = spec_new(key, key_len, k->ctx->on_cpu, v, k->heuristics);
  if (s && key_len >= 0 && key_signature(key, key_len, signature, sizeof signature) == 0 &&
      !(s->signature = arena_strdup(&s->arena, signature))) { /* the arena has no guard yet: NULL */
    spec_free(k, s);
    return NULL;
  }
  return s;
}

/* After the compiler built s (`st`): its metadata read, loaded when a GPU
 * is there, and first in k's list; freed if anything failed. */
static tile_status spec_keep(tile_kernel *k, Spec *s, tile_status st) {
  if (st == TILE_OK) st = read_meta(k->ctx, s, TILE_ERROR_COMPILE);
  if (st == TILE_OK && !s->on_cpu && device_available(k->ctx)) st = load(k, s);
  if (st != TILE_OK) {
    spec_free(k, s);
    return st;
  }
  s->next = k->specs;
  k->specs = s;
  return TILE_OK;
}

/* Compiles a new specialisation; loads it when a GPU is there. */
static tile_status build(tile_kernel *k, const uint16_t *key, int key_len, Variant v, Spec **out) {
  Spec *s = spec_make(k, key, key_len, v);
  if (!s) return context_fail(k->ctx, TILE_ERROR_MEMORY, "out of memory");
  tile_status st = spec_keep(k, s, k->compiler->build(k, s));
  if (st == TILE_OK) *out = s;
  return st;
}

tile_status kernel_key(tile_kernel *k, const tile_arg *args, int n, uint16_t *key, int *key_len) {
  char err[512];
  *key_len = NO_KEY;
  if (!k->compiler || k->fixed_signature || !args) return TILE_OK;
  if (k->declared_params && n != k->num_declared_params)
    return context_failf(k->ctx, TILE_ERROR_ARGUMENT, "kernel '%s' takes %d argument%s (%s), not %d", k->declared_name,
                         k->num_declared_params, k->num_declared_params == 1 ? "" : "s", k->declared_params, n);
  if (args_key(args, n, key, err, sizeof err)) return context_fail(k->ctx, TILE_ERROR_ARGUMENT, err);
  *key_len = n;
  return TILE_OK;
}

/* The link to k's specialisation for `key` and variant v on the context's side (GPU or CPU); NULL if none. */
static Spec **find_spec(tile_kernel *k, const uint16_t *key, int key_len, Variant v) {
  for (Spec **link = &k->specs, *s; (s = *link); link = &s->next)
    if (s->on_cpu == k->ctx->on_cpu && s->variant.config == v.config && s->variant.refill == v.refill &&
        s->variant.tma == v.tma && s->variant.maxnreg == v.maxnreg && s->heuristics == k->heuristics &&
        s->key_len == key_len &&
        (key_len <= 0 || !memcmp(s->key, key, sizeof *key * (size_t)key_len)))
      return link;
  return NULL;
}

tile_status kernel_specialize(tile_kernel *k, const uint16_t *key, int key_len, Variant v, Spec **out) {
  tile_context *ctx = k->ctx;
  if (!k->compiler) {
    *out = k->specs;
    if (!ctx->on_cpu) return TILE_OK;
    return context_failf(ctx, TILE_ERROR_UNSUPPORTED, "kernel '%s' was loaded ahead of time: a GPU image cannot run on the CPU interpreter",
                         k->specs->meta.name);
  }
  Spec **link = find_spec(k, key, key_len, v), *s = link ? *link : NULL;
  if (!s) return build(k, key, key_len, v, out);
  *link = s->next;
  s->next = k->specs;
  k->specs = s;
  *out = s;
  return TILE_OK;
}

/* Threads for compiling `jobs` specialisations: TILE_COMPILE_THREADS, else
 * one per core, at most DEFAULT_COMPILE_THREADS; never more than the jobs. */
static int threads_for(const tile_context *ctx, int jobs) {
  long n = ctx->compile_threads ? ctx->compile_threads : sysconf(_SC_NPROCESSORS_ONLN);
  if (!ctx->compile_threads && n > DEFAULT_COMPILE_THREADS) n = DEFAULT_COMPILE_THREADS;
  return n < 1 ? 1 : n < jobs ? (int)n : jobs;
}

void kernel_prebuild(tile_kernel *k, const uint16_t *key, int key_len, const Variant *v, int num_variants) {
  if (!k->compiler || !k->compiler->build_many || k->ctx->on_cpu || threads_for(k->ctx, num_variants) < 2) return;
  Spec **specs = calloc((size_t)num_variants, sizeof *specs);
  tile_status *status = calloc((size_t)num_variants, sizeof *status);
  int count = 0, made = specs && status;
  for (int i = 0; made && i < num_variants; i++)
    if (!find_spec(k, key, key_len, v[i])) made = (specs[count++] = spec_make(k, key, key_len, v[i])) != NULL;
  int threads = threads_for(k->ctx, count), built = made && threads > 1;
  if (built) k->compiler->build_many(k, specs, count, threads, status);
  for (int i = 0; i < count; i++) { /* the failed ones (or all, out of memory) are kernel_specialize's to report */
    if (built && status[i] == TILE_OK) spec_keep(k, specs[i], TILE_OK);
    else if (specs[i]) spec_free(k, specs[i]);
  }
  free(specs), free(status);
}

static tile_status check_call(tile_kernel *k, const tile_arg *args, int n, const char *call) {
  char err[512];
  if (n < 0 || n > MAX_KERNEL_ARGS || (n && !args))
    return context_failf(k->ctx, TILE_ERROR_ARGUMENT, "%s: NULL arguments, or not from 0 to %d of them", call,
                         MAX_KERNEL_ARGS);
  if (args_layout(args, n, err, sizeof err)) return context_failf(k->ctx, TILE_ERROR_ARGUMENT, "%s: %s", call, err);
  return TILE_OK;
}

/* Starts a compile or launch call: its arguments checked, their specialisation key. */
static tile_status begin_call(tile_kernel *k, const tile_arg *args, int n, const char *call, uint16_t *key,
                              int *key_len) {
  context_begin(k->ctx);
  k->heuristics = -1;
  tile_status st = check_call(k, args, n, call);
  if (st == TILE_OK) st = kernel_key(k, args, n, key, key_len);
  if (st == TILE_OK && k->heuristics_at_launch) st = k->compiler->heuristics(k, args, n, &k->heuristics);
  return st;
}

tile_status tile_kernel_compile(tile_kernel *k, const tile_arg *args, int num_args) {
  if (!kernel_valid(k)) return TILE_ERROR_ARGUMENT;
  Spec *s;
  uint16_t key[MAX_KERNEL_ARGS];
  int key_len;
  tile_status st = begin_call(k, args, num_args, "tile_kernel_compile", key, &key_len);
  if (st == TILE_OK)
    st = k->tuning ? autotune_compile(k, key, key_len, args, num_args, &s)
                   : kernel_specialize(k, key, key_len, AS_GIVEN, &s);
  if (st == TILE_OK) k->current = s;
  return st;
}

/* ---- launching ---------------------------------------------------------------------- */

/* On the interpreter: each buffer's size from its tracked block. */
static tile_status launch_cpu(tile_kernel *k, Spec *s, const unsigned grid[3], const tile_arg *args, int n) {
  size_t bytes[MAX_KERNEL_ARGS] = {0};
  for (int i = 0; i < s->meta.num_params; i++) {
    const MetaParam *p = &s->meta.params[i];
    const tile_arg *a = &args[p->position];
    size_t extent, elem = dtype_size(p->dtype);
    if (!p->is_ptr) continue;
    if (!allocation_extent(k->ctx, a->data, &extent))
      return context_failf(k->ctx, TILE_ERROR_ARGUMENT,
                           "argument %d ('%s'): %p is not memory from tile_malloc, which every buffer on the CPU "
                           "interpreter must be", p->position, p->name, a->data);
    if (a->count > extent / elem)
      return context_failf(k->ctx, TILE_ERROR_ARGUMENT,
                           "argument %d ('%s'): %zu elements of %s pass the end of its block (%zu bytes from there)",
                           p->position, p->name, a->count, dtype_name((DType)p->dtype), extent);
    bytes[p->position] = extent;
  }
  return k->compiler->run_cpu(k, s, grid, args, n, bytes);
}

/* Encodes m's tensor maps from the launch's arguments into maps[] and
 * points params[] past the ABI parameters at them, in order. */
static tile_status encode_tensor_maps(tile_context *ctx, const KernelMetadata *m, const tile_arg *args, TensorMap *maps,
                                      void **params) {
  char err[512];
  for (int i = 0; i < m->num_tensor_maps; i++) {
    const MetaTensorMap *t = &m->tensor_maps[i];
    TensorMapShape shape;
    if (args_tensor_map(t, args, &shape, err, sizeof err)) return context_fail(ctx, TILE_ERROR_ARGUMENT, err);
    tile_status st = device_encode_tensor_map(ctx, &shape, &maps[i]);
    if (st != TILE_OK) /* the driver's message, said of what it failed for */
      return context_failf(ctx, st, "kernel '%s', the tensor map of argument %d ('%s'): %s", m->name,
                           t->base->position, t->base->name, ctx->error);
    params[m->num_params + i] = &maps[i];
  }
  return TILE_OK;
}

/* A grid of no more programs than the GPU has multiprocessors runs one program on each: occupancy buys
 * nothing there.  Without a register cap ptxas schedules for occupancy (a loop of loads issued one after
 * another to keep registers for programs that will not come); with one it keeps loads in flight.  Such a
 * launch takes the specialisation compiled with the most registers its program's threads may have,
 * unless the kernel states a cap of its own or already uses that many.  Only a user's launch: the
 * autotuner times configs as they are. */
static tile_status one_wave(tile_kernel *k, Spec **s, const unsigned grid[3]) {
  int sms = device_sm_count(k->ctx), cap = arch_thread_registers(32 * (*s)->meta.num_warps);
  uint64_t programs = (uint64_t)grid[0] * grid[1] * grid[2];
  Spec *plain = *s;
  if (!k->compiler || sms <= 0 || programs > (uint64_t)sms || plain->meta.maxnreg || plain->variant.maxnreg ||
      plain->meta.registers < 0 || plain->meta.registers >= cap || plain->one_wave_failed)
    return TILE_OK;
  Variant v = plain->variant;
  v.maxnreg = cap;
  tile_status st = kernel_specialize(k, plain->key, plain->key_len, v, s);
  if (st == TILE_ERROR_MEMORY) return st;
  if (st != TILE_OK) { /* the kernel as it is compiled; so it is launched, and not tried again */
    plain->one_wave_failed = 1;
    *s = plain;
  }
  k->current = *s;
  return TILE_OK;
}

tile_status kernel_launch_spec(tile_kernel *k, Spec *s, const unsigned *given, tile_grid_fn grid_fn, void *user,
                               tile_stream stream, const tile_arg *args, int n, int users) {
  tile_context *ctx = k->ctx;
  tile_status st;
  k->current = s;
  uint64_t slots[MAX_KERNEL_ARGS];
  void *params[MAX_KERNEL_ARGS];
  char err[512];
  if (args_check(&s->meta, args, n, s->on_cpu ? NULL : slots, params, err, sizeof err))
    return context_fail(ctx, TILE_ERROR_ARGUMENT, err);
  unsigned grid[3] = {1, 1, 1};
  if (grid_fn) grid_fn(k, args, n, grid, user);
  else memcpy(grid, given, sizeof grid);
  if (grid[0] > MAX_GRID_X || grid[1] > MAX_GRID_YZ || grid[2] > MAX_GRID_YZ)
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "the grid (%u, %u, %u) is larger than a GPU allows (2^31-1 x 65535 x 65535)",
                         grid[0], grid[1], grid[2]);
  if (!grid[0] || !grid[1] || !grid[2]) return TILE_OK;
  if (s->on_cpu) return launch_cpu(k, s, grid, args, n);
  if (users && (st = one_wave(k, &s, grid)) != TILE_OK) return st;
  if (!s->function && (st = load(k, s)) != TILE_OK) return st;
  TensorMap maps[MAX_TENSOR_MAPS]; /* live until cuLaunchKernel has read them */
  if (s->meta.num_tensor_maps && (st = encode_tensor_maps(ctx, &s->meta, args, maps, params)) != TILE_OK) return st;
  if (s->meta.checks && s->meta.checks[0]) /* named if a later call finds the launch faulted */
    snprintf(ctx->trapping_checks, sizeof ctx->trapping_checks, "'%s': %s", s->meta.name, s->meta.checks);
  return device_launch(ctx, s->function, grid, 32 * s->meta.num_warps, s->meta.shared, stream, params);
}

static tile_status launch(tile_kernel *k, const unsigned *given, tile_grid_fn grid_fn, void *user, tile_stream stream,
                          const tile_arg *args, int n) {
  Spec *s;
  uint16_t key[MAX_KERNEL_ARGS];
  int key_len;
  tile_status st = begin_call(k, args, n, "tile_launch", key, &key_len);
  if (st == TILE_OK && !context_has_stream(k->ctx, stream))
    st = context_fail(k->ctx, TILE_ERROR_ARGUMENT,
                      "tile_launch: the stream is not one tile_stream_create made in this context (or it was destroyed)");
  if (st == TILE_OK)
    st = k->tuning ? autotune_select(k, key, key_len, args, n, given, grid_fn, user, stream, &s)
                   : kernel_specialize(k, key, key_len, AS_GIVEN, &s);
  return st == TILE_OK ? kernel_launch_spec(k, s, given, grid_fn, user, stream, args, n, 1) : st;
}

tile_status tile_launch(tile_kernel *k, const unsigned grid[3], tile_stream stream, const tile_arg *args, int num_args) {
  if (!kernel_valid(k)) return TILE_ERROR_ARGUMENT;
  if (!grid) return context_fail(k->ctx, TILE_ERROR_ARGUMENT, "tile_launch: NULL grid");
  return launch(k, grid, NULL, NULL, stream, args, num_args);
}

tile_status tile_launch_grid(tile_kernel *k, tile_grid_fn grid, void *user, tile_stream stream, const tile_arg *args,
                             int num_args) {
  if (!kernel_valid(k)) return TILE_ERROR_ARGUMENT;
  if (!grid) return context_fail(k->ctx, TILE_ERROR_ARGUMENT, "tile_launch_grid: NULL grid function");
  return launch(k, NULL, grid, user, stream, args, num_args);
}

/* ---- what a specialisation is ------------------------------------------------------------ */

static tile_status need_current(const tile_kernel *k, const char *call) {
  if (k->current) return TILE_OK;
  return context_failf(k->ctx, TILE_ERROR_ARGUMENT, "%s: the kernel has no specialisation yet (compile or launch it first)", call);
}

const char *tile_kernel_metadata(tile_kernel *k) { return kernel_valid(k) && k->current ? k->current->metadata : NULL; }

int tile_kernel_config(const tile_kernel *k) { return kernel_valid(k) && k->current ? k->current->meta.config : -1; }

tile_status tile_kernel_image(tile_kernel *k, const void **data, size_t *size) {
  if (!kernel_valid(k) || !data || !size) return TILE_ERROR_ARGUMENT;
  context_begin(k->ctx);
  *data = NULL;
  *size = 0;
  tile_status st = need_current(k, "tile_kernel_image");
  if (st != TILE_OK) return st;
  if (!k->current->image)
    return context_fail(k->ctx, TILE_ERROR_UNSUPPORTED, "tile_kernel_image: a kernel compiled for the CPU interpreter has no GPU image");
  *data = k->current->image;
  *size = k->current->image_size;
  return TILE_OK;
}

const char *tile_kernel_text(tile_kernel *k, tile_stage stage) {
  if (!kernel_valid(k) || !k->current || (int)stage < 0 || stage > TILE_STAGE_METADATA) return NULL;
  if (stage == TILE_STAGE_METADATA) return k->current->metadata;
  if (stage == TILE_STAGE_PTX && !k->current->text[stage] && k->current->image_is_ptx) return (const char *)k->current->image;
  return k->current->text[stage];
}

tile_status tile_kernel_constexpr(const tile_kernel *k, const char *name, long long *value) {
  if (!kernel_valid(k) || !name || !value) return TILE_ERROR_ARGUMENT;
  tile_status st = need_current(k, "tile_kernel_constexpr");
  if (st != TILE_OK) return st;
  const KernelMetadata *m = &k->current->meta;
  if (!strcmp(name, "num_warps") || !strcmp(name, "num_stages")) {
    *value = name[4] == 'w' ? m->num_warps : m->num_stages;
    return TILE_OK;
  }
  for (int i = 0; i < m->num_constexprs; i++) {
    const Json *v = m->constexprs[i].value;
    if (strcmp(m->constexprs[i].name, name)) continue;
    if ((v->kind == JSON_NUMBER && v->is_int) || v->kind == JSON_BOOL) {
      *value = v->i;
      return TILE_OK;
    }
    return context_failf(k->ctx, TILE_ERROR_ARGUMENT, "kernel '%s': constexpr '%s' is not an integer", m->name, name);
  }
  for (int i = 0; i < m->num_fixed; i++)
    if (!strcmp(m->fixed[i].name, name)) {
      *value = 1;
      return TILE_OK;
    }
  return context_failf(k->ctx, TILE_ERROR_ARGUMENT, "kernel '%s' has no constexpr '%s'", m->name, name);
}

/* ---- ahead of time ------------------------------------------------------------------- */

/* The image agrees with what the metadata says it is. */
static tile_status check_image(tile_context *ctx, const KernelMetadata *m, const void *image, size_t size) {
  int elf = size >= 4 && !memcmp(image, "\x7f" "ELF", 4);
  if (!strcmp(m->target, "cubin") && !elf)
    return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_load: the metadata says cubin but the image is not an ELF file");
  if (!strcmp(m->target, "ptx") && (elf || memchr(image, 0, size)))
    return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_load: the metadata says ptx but the image is not PTX text");
  if (!strcmp(m->target, "cpu"))
    return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_load: the metadata is of a CPU-interpreter kernel, which has no image");
  return TILE_OK;
}

typedef struct Kept {
  Spec *s;
  const void *image;
  size_t size;
  int is_ptx;
  const char *metadata;
  size_t metadata_len;
} Kept;

static void copy_into_spec(void *ud) {
  Kept *k = ud;
  Spec *s = k->s;
  s->metadata = arena_strndup(&s->arena, k->metadata, k->metadata_len);
  if (!k->image) return;
  unsigned char *copy = arena_alloc(&s->arena, k->size + 1); /* zeroed: PTX ends with a NUL */
  memcpy(copy, k->image, k->size);
  s->image = copy;
  s->image_size = k->size;
  s->image_is_ptx = k->is_ptx;
}

int spec_copy_in(Spec *s, const void *image, size_t size, int is_ptx, const char *metadata, size_t metadata_len) {
  Kept k = {s, image, size, is_ptx, metadata, metadata_len};
  return arena_run(&s->arena, copy_into_spec, &k) ? -1 : 0;
}

tile_status tile_kernel_load(tile_context *ctx, const void *image, size_t size, const char *metadata, tile_kernel **out) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!out || !image || !size || !metadata)
    return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_load: NULL or empty image, NULL metadata or out");
  *out = NULL;
  Spec *s = spec_new(NULL, NO_KEY, 0, AS_GIVEN, -1);
  if (!s) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  tile_kernel k0 = {.ctx = ctx}; /* frees s on failure: no compiler */
  tile_status st = spec_copy_in(s, image, size, 0, metadata, strlen(metadata))
                       ? context_fail(ctx, TILE_ERROR_MEMORY, "out of memory loading a kernel")
                       : TILE_OK;
  if (st == TILE_OK) st = read_meta(ctx, s, TILE_ERROR_ARGUMENT);
  if (st == TILE_OK) st = check_image(ctx, &s->meta, image, size);
  s->image_is_ptx = st == TILE_OK && !strcmp(s->meta.target, "ptx");
  if (st == TILE_OK && device_available(ctx)) st = load(&k0, s);
  tile_kernel *k = st == TILE_OK ? kernel_new(ctx, NULL, NULL) : NULL;
  if (st == TILE_OK && !k) st = context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  if (st != TILE_OK) {
    spec_free(&k0, s);
    return st;
  }
  k->fixed_signature = 1;
  k->specs = k->current = s;
  *out = k;
  return TILE_OK;
}

/* PATH with its extension replaced by ".json": k.cubin -> k.json. */
static char *metadata_beside(const char *image_path) {
  size_t n = strlen(image_path);
  const char *slash = strrchr(image_path, '/'), *dot = strrchr(image_path, '.');
  if (dot && (!slash || dot > slash + 1)) n = (size_t)(dot - image_path);
  char *path = malloc(n + sizeof ".json");
  if (path) snprintf(path, n + sizeof ".json", "%.*s.json", (int)n, image_path);
  return path;
}

tile_status tile_kernel_load_file(tile_context *ctx, const char *image_path, const char *metadata_path, tile_kernel **out) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (out) *out = NULL;
  if (!image_path || !out) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_load_file: NULL path or out");
  char *beside = metadata_path ? NULL : metadata_beside(image_path);
  if (!metadata_path && !beside) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  char *image = NULL, *metadata = NULL;
  size_t size = 0, len = 0;
  tile_status st = context_read_file(ctx, image_path, MAX_IMAGE_BYTES, &image, &size);
  if (st == TILE_OK) st = context_read_file(ctx, metadata_path ? metadata_path : beside, MAX_IMAGE_BYTES, &metadata, &len);
  if (st == TILE_OK) st = tile_kernel_load(ctx, image, size, metadata, out);
  free(image);
  free(metadata);
  free(beside);
  return st;
}
