/* Device memory, streams and events: thin checked wrappers over the CUDA
 * driver, or, on the CPU interpreter, host memory the context tracks (so a
 * launch knows each buffer's size), memcpy, no-op streams and host-clock
 * events.  Every block from tile_malloc is tracked by address in both modes:
 * tile_free rejects what it did not give, copies into a tracked block are
 * bounds-checked, and the context frees what is left.  Streams and events
 * are recorded on the context too, so a handle it did not make is refused,
 * and those left are destroyed with the context. */
#include "gpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { POISON = 0xFF }; /* fresh host memory on the interpreter: NaN floats, -1 integers */

/* ---- tracking ----------------------------------------------------------------------- */

/* Index of the last block starting at or below p; -1 if none. */
static int block_below(const tile_context *ctx, uintptr_t p) {
  int lo = 0, hi = ctx->num_allocations - 1, found = -1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (ctx->allocations[mid].base <= p) found = mid, lo = mid + 1;
    else hi = mid - 1;
  }
  return found;
}

int allocation_extent(const tile_context *ctx, const void *ptr, size_t *bytes) {
  uintptr_t p = (uintptr_t)ptr;
  int i = block_below(ctx, p);
  if (i < 0) return 0;
  const Allocation *a = &ctx->allocations[i];
  if (p - a->base > a->bytes || (p - a->base == a->bytes && a->bytes)) return 0;
  *bytes = a->bytes - (p - a->base);
  return 1;
}

static int track(tile_context *ctx, uintptr_t base, size_t bytes) {
  if (ctx->num_allocations == ctx->cap_allocations) {
    int cap = ctx->cap_allocations ? 2 * ctx->cap_allocations : 16;
    Allocation *grown = realloc(ctx->allocations, sizeof *grown * (size_t)cap);
    if (!grown) return -1;
    ctx->allocations = grown;
    ctx->cap_allocations = cap;
  }
  int at = block_below(ctx, base) + 1;
  memmove(&ctx->allocations[at + 1], &ctx->allocations[at], sizeof(Allocation) * (size_t)(ctx->num_allocations - at));
  ctx->allocations[at] = (Allocation){base, bytes};
  ctx->num_allocations++;
  return 0;
}

static int untrack(tile_context *ctx, uintptr_t base) {
  int i = block_below(ctx, base);
  if (i < 0 || ctx->allocations[i].base != base) return -1;
  memmove(&ctx->allocations[i], &ctx->allocations[i + 1], sizeof(Allocation) * (size_t)(ctx->num_allocations - i - 1));
  ctx->num_allocations--;
  return 0;
}

void free_allocations(tile_context *ctx) {
  struct Device *d = ctx->device;
  for (int i = 0; i < ctx->num_allocations; i++) {
    if (ctx->on_cpu) free((void *)ctx->allocations[i].base);
    else if (d && gpu_enter(ctx)) d->cuda.cuMemFree_fn((CUdeviceptr)ctx->allocations[i].base);
  }
  free(ctx->allocations);
  ctx->allocations = NULL;
  ctx->num_allocations = ctx->cap_allocations = 0;
}

/* A copy of `bytes` into or out of device memory at p: within its block if tracked; on the
 * interpreter it must be tracked. */
static tile_status check_range(tile_context *ctx, const char *call, const void *p, size_t bytes) {
  size_t extent;
  if (allocation_extent(ctx, p, &extent)) {
    if (bytes <= extent) return TILE_OK;
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "%s: %zu bytes at %p pass the end of its block (%zu bytes from there)",
                         call, bytes, p, extent);
  }
  if (!ctx->on_cpu) return TILE_OK; /* memory from elsewhere (another library's cuMemAlloc) */
  return context_failf(ctx, TILE_ERROR_ARGUMENT, "%s: %p is not memory from tile_malloc", call, p);
}

/* ---- memory ----------------------------------------------------------------------- */

static tile_status host_malloc(tile_context *ctx, void **out, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) return context_failf(ctx, TILE_ERROR_MEMORY, "tile_malloc: out of host memory for %zu bytes", bytes);
  memset(p, POISON, bytes);
  if (track(ctx, (uintptr_t)p, bytes)) {
    free(p);
    return context_fail(ctx, TILE_ERROR_MEMORY, "tile_malloc: out of memory");
  }
  *out = p;
  return TILE_OK;
}

tile_status tile_malloc(tile_context *ctx, void **device_ptr, size_t bytes) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!device_ptr) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_malloc: NULL device_ptr");
  *device_ptr = NULL;
  if (ctx->on_cpu) return host_malloc(ctx, device_ptr, bytes);
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  CUdeviceptr p = 0;
  tile_status s = gpu_status(ctx, d, d->cuda.cuMemAlloc_fn(&p, bytes ? bytes : 1), "cuMemAlloc");
  if (s != TILE_OK) return s;
  if (track(ctx, (uintptr_t)p, bytes)) {
    d->cuda.cuMemFree_fn(p);
    return context_fail(ctx, TILE_ERROR_MEMORY, "tile_malloc: out of host memory");
  }
  *device_ptr = (void *)(uintptr_t)p;
  return TILE_OK;
}

tile_status tile_free(tile_context *ctx, void *device_ptr) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!device_ptr) return TILE_OK;
  if (untrack(ctx, (uintptr_t)device_ptr))
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_free: %p is not a block from tile_malloc (or was freed already)",
                         device_ptr);
  if (ctx->on_cpu) {
    free(device_ptr);
    return TILE_OK;
  }
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  return gpu_status(ctx, d, d->cuda.cuMemFree_fn((CUdeviceptr)(uintptr_t)device_ptr), "cuMemFree");
}

/* The checks every copy and memset starts with; NULL device is fine to continue with on the CPU. */
static tile_status begin_copy(tile_context *ctx, const char *call, const void *device, const void *host, size_t bytes,
                              struct Device **d) {
  context_begin(ctx);
  *d = NULL;
  if (!device || !host) return context_failf(ctx, TILE_ERROR_ARGUMENT, "%s: NULL pointer", call);
  tile_status s = check_range(ctx, call, device, bytes);
  if (s != TILE_OK || ctx->on_cpu) return s;
  *d = gpu_enter(ctx);
  return *d ? TILE_OK : TILE_ERROR_UNSUPPORTED;
}

tile_status tile_memcpy_to_device(tile_context *ctx, void *device_dst, const void *host_src, size_t bytes) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  struct Device *d;
  tile_status s = begin_copy(ctx, "tile_memcpy_to_device", device_dst, host_src, bytes, &d);
  if (s != TILE_OK || !bytes) return s;
  if (!d) {
    memcpy(device_dst, host_src, bytes);
    return TILE_OK;
  }
  return gpu_status(ctx, d, d->cuda.cuMemcpyHtoD_fn((CUdeviceptr)(uintptr_t)device_dst, host_src, bytes), "cuMemcpyHtoD");
}

tile_status tile_memcpy_to_host(tile_context *ctx, void *host_dst, const void *device_src, size_t bytes) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  struct Device *d;
  tile_status s = begin_copy(ctx, "tile_memcpy_to_host", device_src, host_dst, bytes, &d);
  if (s != TILE_OK || !bytes) return s;
  if (!d) {
    memcpy(host_dst, device_src, bytes);
    return TILE_OK;
  }
  return gpu_status(ctx, d, d->cuda.cuMemcpyDtoH_fn(host_dst, (CUdeviceptr)(uintptr_t)device_src, bytes), "cuMemcpyDtoH");
}

tile_status device_copy(tile_context *ctx, void *dst, const void *src, size_t bytes) {
  tile_status s = check_range(ctx, "device_copy", dst, bytes);
  if (s == TILE_OK) s = check_range(ctx, "device_copy", src, bytes);
  if (s != TILE_OK || !bytes) return s;
  if (ctx->on_cpu) {
    memmove(dst, src, bytes);
    return TILE_OK;
  }
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  return gpu_status(ctx, d, d->cuda.cuMemcpyDtoD_fn((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, bytes),
                    "cuMemcpyDtoD");
}

tile_status tile_memset(tile_context *ctx, void *device_ptr, int byte, size_t bytes) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  struct Device *d;
  tile_status s = begin_copy(ctx, "tile_memset", device_ptr, "", bytes, &d);
  if (s != TILE_OK || !bytes) return s;
  if (!d) {
    memset(device_ptr, byte, bytes);
    return TILE_OK;
  }
  return gpu_status(ctx, d, d->cuda.cuMemsetD8_fn((CUdeviceptr)(uintptr_t)device_ptr, (unsigned char)byte, bytes),
                    "cuMemsetD8");
}

tile_status tile_synchronize(tile_context *ctx) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (ctx->on_cpu) return TILE_OK;
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  return gpu_status(ctx, d, d->cuda.cuCtxSynchronize_fn(), "cuCtxSynchronize");
}

/* ---- the streams and events a context made ------------------------------------------
 * Each is recorded in a list on the context, so a handle that the context did
 * not make, or that was destroyed, is refused by a search that never reads
 * through it (a foreign pointer may point anywhere).  On the interpreter the
 * record is the handle (a stream does nothing; an event holds the host time);
 * on the GPU the handle is the CUstream or CUevent the record names. */

enum { TOKEN_STREAM, TOKEN_EVENT };

typedef struct HostToken {
  struct HostToken *prev, *next; /* the context's list */
  void *handle;                  /* what the caller holds: this record, or the CUstream / CUevent */
  int kind;                      /* TOKEN_STREAM or TOKEN_EVENT */
  double ms;                     /* an interpreter's event: host time when recorded, from CLOCK_MONOTONIC */
  int recorded;
} HostToken;

static HostToken *host_token_new(tile_context *ctx, int kind) {
  HostToken *t = calloc(1, sizeof *t);
  if (!t) return NULL;
  t->kind = kind;
  t->handle = t;
  t->next = ctx->host_tokens;
  if (t->next) t->next->prev = t;
  ctx->host_tokens = t;
  return t;
}

static void host_token_free(tile_context *ctx, HostToken *t) {
  if (t->prev) t->prev->next = t->next;
  else ctx->host_tokens = t->next;
  if (t->next) t->next->prev = t->prev;
  free(t);
}

void free_host_tokens(tile_context *ctx) {
  /* the device's primary context outlives ours when another context (or library) holds it: destroy them */
  struct Device *d = !ctx->on_cpu && ctx->device && ctx->host_tokens ? gpu_enter(ctx) : NULL;
  for (HostToken *t; (t = ctx->host_tokens);) {
    if (d && t->kind == TOKEN_STREAM) d->cuda.cuStreamDestroy_fn((CUstream)t->handle);
    else if (d) d->cuda.cuEventDestroy_fn((CUevent)t->handle);
    host_token_free(ctx, t);
  }
}

/* The record of `handle` as a `kind`; NULL if the context made no such live handle. */
static HostToken *find_token(const tile_context *ctx, const void *handle, int kind) {
  for (HostToken *t = ctx->host_tokens; t; t = t->next)
    if (t->handle == handle && t->kind == kind) return t;
  return NULL;
}

int context_has_stream(const tile_context *ctx, tile_stream s) { return !s || find_token(ctx, s, TOKEN_STREAM); }

static tile_status bad_handle(tile_context *ctx, const char *call, const char *what) {
  return context_failf(ctx, TILE_ERROR_ARGUMENT, "%s: the %s is not one tile_%s_create made in this context (or it was destroyed)",
                       call, what, what);
}

/* A stream argument (NULL: the default stream) of `call`. */
static tile_status check_stream(tile_context *ctx, const char *call, tile_stream s) {
  return context_has_stream(ctx, s) ? TILE_OK : bad_handle(ctx, call, "stream");
}

/* Records a new handle; on the GPU, `made` is the driver's, destroyed again if out of memory. */
static tile_status keep_token(tile_context *ctx, int kind, void *made, void **out) {
  HostToken *t = host_token_new(ctx, kind);
  if (!t) {
    if (made && kind == TOKEN_STREAM) ctx->device->cuda.cuStreamDestroy_fn((CUstream)made);
    else if (made) ctx->device->cuda.cuEventDestroy_fn((CUevent)made);
    return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  }
  if (made) t->handle = made;
  *out = t->handle;
  if (kind == TOKEN_STREAM) ctx->live_streams++;
  else ctx->live_events++;
  return TILE_OK;
}

/* Forgets a handle the context made; 0 if it made no such live one. */
static int drop_token(tile_context *ctx, void *handle, int kind) {
  HostToken *t = find_token(ctx, handle, kind);
  if (!t) return 0;
  host_token_free(ctx, t);
  if (kind == TOKEN_STREAM) ctx->live_streams--;
  else ctx->live_events--;
  return 1;
}

/* ---- streams ------------------------------------------------------------------------ */

tile_status tile_stream_create(tile_context *ctx, tile_stream *out) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!out) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_stream_create: NULL out");
  *out = NULL;
  if (ctx->on_cpu) return keep_token(ctx, TOKEN_STREAM, NULL, (void **)out);
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  CUstream s;
  tile_status st = gpu_status(ctx, d, d->cuda.cuStreamCreate_fn(&s, CU_STREAM_DEFAULT), "cuStreamCreate");
  return st == TILE_OK ? keep_token(ctx, TOKEN_STREAM, s, (void **)out) : st;
}

tile_status tile_stream_synchronize(tile_context *ctx, tile_stream s) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  tile_status st = check_stream(ctx, "tile_stream_synchronize", s);
  if (st != TILE_OK || ctx->on_cpu) return st;
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  return gpu_status(ctx, d, d->cuda.cuStreamSynchronize_fn((CUstream)s), "cuStreamSynchronize");
}

void tile_stream_destroy(tile_context *ctx, tile_stream s) {
  if (!context_valid(ctx) || !s || !drop_token(ctx, s, TOKEN_STREAM)) return;
  if (!ctx->on_cpu && gpu_enter(ctx)) ctx->device->cuda.cuStreamDestroy_fn((CUstream)s);
}

/* ---- events ------------------------------------------------------------------------- */

tile_status tile_event_create(tile_context *ctx, tile_event *out) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!out) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_event_create: NULL out");
  *out = NULL;
  if (ctx->on_cpu) return keep_token(ctx, TOKEN_EVENT, NULL, (void **)out);
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  CUevent e;
  tile_status s = gpu_status(ctx, d, d->cuda.cuEventCreate_fn(&e, CU_EVENT_DEFAULT), "cuEventCreate");
  return s == TILE_OK ? keep_token(ctx, TOKEN_EVENT, e, (void **)out) : s;
}

tile_status tile_event_record(tile_context *ctx, tile_event e, tile_stream s) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  HostToken *t = find_token(ctx, e, TOKEN_EVENT);
  if (!t) return bad_handle(ctx, "tile_event_record", "event");
  tile_status st = check_stream(ctx, "tile_event_record", s);
  if (st != TILE_OK) return st;
  if (ctx->on_cpu) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    t->ms = (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
    t->recorded = 1;
    return TILE_OK;
  }
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  return gpu_status(ctx, d, d->cuda.cuEventRecord_fn((CUevent)e, (CUstream)s), "cuEventRecord");
}

tile_status tile_event_elapsed(tile_context *ctx, tile_event start, tile_event end, float *ms) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!ms) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_event_elapsed: NULL ms");
  const HostToken *a = find_token(ctx, start, TOKEN_EVENT), *b = find_token(ctx, end, TOKEN_EVENT);
  if (!a || !b) return bad_handle(ctx, "tile_event_elapsed", "event");
  if (ctx->on_cpu) {
    if (!a->recorded || !b->recorded) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_event_elapsed: an event was never recorded");
    *ms = (float)(b->ms - a->ms);
    return TILE_OK;
  }
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  tile_status s = gpu_status(ctx, d, d->cuda.cuEventSynchronize_fn((CUevent)end), "cuEventSynchronize");
  return s != TILE_OK ? s : gpu_status(ctx, d, d->cuda.cuEventElapsedTime_fn(ms, (CUevent)start, (CUevent)end), "cuEventElapsedTime");
}

void tile_event_destroy(tile_context *ctx, tile_event e) {
  if (!context_valid(ctx) || !e || !drop_token(ctx, e, TOKEN_EVENT)) return;
  if (!ctx->on_cpu && gpu_enter(ctx)) ctx->device->cuda.cuEventDestroy_fn((CUevent)e);
}
