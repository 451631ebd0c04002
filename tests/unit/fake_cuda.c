/* The fake CUDA driver (see fake_cuda.h).  Each function has cuda.h's
 * prototype, so the versioned names (cuMemAlloc_v2...) come out as the
 * runtime's dlsym expects. */
#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#include "fake_cuda.h"

#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* A device's primary context; its address is the handle. */
typedef struct FakeContext {
  int device;
  int retains;
} FakeContext;

typedef struct FakeFunction {
  char name[64];
  int device;                   /* its module's */
} FakeFunction;

typedef struct FakeModule {
  char image[4096];             /* the text up to the first NUL: function names are looked up in it */
  int elf;                      /* a real cubin: any name is found */
  int device;                   /* the current context's when it was loaded */
  FakeFunction functions[8];    /* handed out by cuModuleGetFunction, freed with the module */
  int num_functions;
} FakeModule;

typedef struct FakeStream {
  int device;
} FakeStream;

typedef struct FakeEvent {
  int device;                   /* first, as in FakeStream (make_on_device) */
  double ms;                    /* when it was recorded */
} FakeEvent;

/* A block from cuMemAlloc. */
typedef struct FakeBlock {
  uintptr_t base;
  size_t bytes;
  int device;
} FakeBlock;

static void *current_context(void);
static void make_current(void *context);
static int device_of(const void *p);

static FakeCuda state = {.cc_major = 9, .cc_minor = 0, .max_shared_optin = 227 * 1024, .current = current_context,
                         .make_current = make_current, .device_of = device_of};
static FakeContext contexts[FAKE_MAX_DEVICES];
static _Thread_local CUcontext current;       /* as the real driver's: one per thread */
static FakeBlock *blocks;                      /* the live allocations, in no order */
static int num_blocks, cap_blocks;
/* over everything above; recursive, since on_launch runs under it and may call device_of */
static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* state.devices, else $FAKE_CUDA_DEVICES (for a program that cannot reach the state), else 1. */
static int device_count(void) {
  const char *env = getenv("FAKE_CUDA_DEVICES");
  int n = state.devices ? state.devices : env ? atoi(env) : 1;
  return n > 0 && n <= FAKE_MAX_DEVICES ? n : 1;
}

static void *current_context(void) { return current; }
static void make_current(void *context) { current = context; }

/* The device of this thread's current context; -1 if none (or not one of ours) is current. */
static int current_device(void) {
  FakeContext *c = (FakeContext *)current;
  return c >= contexts && c < contexts + FAKE_MAX_DEVICES && c->retains > 0 ? c->device : -1;
}

/* A call made with the wrong context current: counted, the first one named.  Under the lock. */
static CUresult refuse(const char *call, CUresult why) {
  if (!state.wrong_context++) snprintf(state.wrong_call, sizeof state.wrong_call, "%s", call);
  return why;
}

/* CUDA_SUCCESS if a context is current on this thread and `device` (of a
 * handle the call was given; -1: none) is its device.  Under the lock. */
static CUresult on_device(const char *call, int device) {
  int here = current_device();
  if (here < 0) return refuse(call, CUDA_ERROR_INVALID_CONTEXT);
  return device < 0 || device == here ? CUDA_SUCCESS : refuse(call, CUDA_ERROR_INVALID_HANDLE);
}

static FakeBlock *block_of(const void *p) {
  for (int i = 0; i < num_blocks; i++)
    if ((uintptr_t)p >= blocks[i].base && (uintptr_t)p - blocks[i].base < (blocks[i].bytes ? blocks[i].bytes : 1))
      return &blocks[i];
  return NULL;
}

/* The device of an allocation at p; -1 for memory the fake did not give (a test's own). */
static int block_device(const void *p) {
  FakeBlock *b = block_of(p);
  return b ? b->device : -1;
}

/* When the last dlclose unloads the fake: `blocks` would be lost with the library's memory. */
__attribute__((destructor)) static void unload(void) {
  free(blocks);
  blocks = NULL;
  num_blocks = cap_blocks = 0;
}

static int device_of(const void *p) {
  pthread_mutex_lock(&lock);
  int d = block_device(p);
  pthread_mutex_unlock(&lock);
  return d;
}

/* A stream or event (`size` bytes, its device first) in the current context; `live` counts them. */
static CUresult make_on_device(const char *call, size_t size, void **out, int *live) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device(call, -1);
  int *made = r == CUDA_SUCCESS ? calloc(1, size) : NULL;
  if (made) {
    *made = current_device();
    *out = made;
    (*live)++;
  }
  pthread_mutex_unlock(&lock);
  return r == CUDA_SUCCESS && !made ? CUDA_ERROR_OUT_OF_MEMORY : r;
}

/* Frees a module, stream or event of `device` if its context is current. */
static CUresult free_on_device(const char *call, void *object, int device, int *live) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device(call, device);
  if (r == CUDA_SUCCESS) {
    free(object);
    (*live)--;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT FakeCuda *fake_cuda_state(void) { return &state; }

EXPORT CUresult CUDAAPI cuInit(unsigned int flags) { return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **s) {
  *s = error == CUDA_ERROR_INVALID_PTX ? "CUDA_ERROR_INVALID_PTX"
       : error == CUDA_ERROR_NOT_FOUND ? "CUDA_ERROR_NOT_FOUND"
       : error == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY"
       : error == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
       : error == CUDA_ERROR_INVALID_CONTEXT ? "CUDA_ERROR_INVALID_CONTEXT"
       : error == CUDA_ERROR_INVALID_HANDLE ? "CUDA_ERROR_INVALID_HANDLE"
       : error == CUDA_ERROR_INVALID_DEVICE ? "CUDA_ERROR_INVALID_DEVICE"
       : error == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **s) {
  *s = "fake driver error";
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count) { *count = device_count(); return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal < 0 || ordinal >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

/* "Fake GPU", or with several "Fake GPU 0", "Fake GPU 1"... */
EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
  if (device_count() == 1) snprintf(name, (size_t)len, "Fake GPU");
  else snprintf(name, (size_t)len, "Fake GPU %d", (int)dev);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice dev) {
  *value = attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? state.cc_major
           : attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ? state.cc_minor
           : attribute == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ? state.max_shared_optin
           : attribute == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE ? state.l2_bytes
           : attribute == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? state.sm_count : 0;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  if (dev < 0 || dev >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  contexts[dev].device = dev;
  contexts[dev].retains++;
  pthread_mutex_unlock(&lock);
  *ctx = (CUcontext)&contexts[dev];
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) {
  if (dev < 0 || dev >= device_count()) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&lock);
  CUresult r = contexts[dev].retains > 0 ? (contexts[dev].retains--, CUDA_SUCCESS) : CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  current = ctx;
  pthread_mutex_lock(&lock);
  state.set_current_calls++;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx) { *ctx = current; return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuCtxSynchronize(void) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device("cuCtxSynchronize", -1);
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options,
                                          void **values) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device("cuModuleLoadDataEx", -1);
  if (r == CUDA_SUCCESS && state.fail_next_load) {
    state.fail_next_load = 0;
    for (unsigned i = 0; i < n; i++)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER) strcpy(values[i], "ptxas fatal: fake parse error at line 3");
    r = CUDA_ERROR_INVALID_PTX;
  }
  FakeModule *m = r == CUDA_SUCCESS ? calloc(1, sizeof *m) : NULL;
  if (m) {
    strncpy(m->image, image, sizeof m->image - 1); /* PTX ends with a NUL, and the runtime puts one after a cubin */
    const unsigned char *bytes = image;
    m->elf = !memcmp(image, "\x7f" "ELF", 4) && (bytes[4] == 1 || bytes[4] == 2); /* a real ELF class */
    m->device = current_device();
    *module = (CUmodule)m;
    state.live_modules++;
  }
  pthread_mutex_unlock(&lock);
  return r == CUDA_SUCCESS && !m ? CUDA_ERROR_OUT_OF_MEMORY : r;
}

EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  return free_on_device("cuModuleUnload", module, ((FakeModule *)module)->device, &state.live_modules);
}

/* Finds `name` among the image's bytes (a cubin's symbol table, PTX's .entry). */
EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  FakeModule *m = (FakeModule *)module;
  pthread_mutex_lock(&lock);
  CUresult r = on_device("cuModuleGetFunction", m->device);
  if (r == CUDA_SUCCESS && (m->elf || strstr(m->image, name)) && m->num_functions < 8) {
    FakeFunction *f = &m->functions[m->num_functions++];
    strncpy(f->name, name, sizeof f->name - 1);
    f->device = m->device;
    *function = (CUfunction)f;
  } else if (r == CUDA_SUCCESS) {
    r = CUDA_ERROR_NOT_FOUND;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult CUDAAPI cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction f) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device("cuFuncGetAttribute", ((FakeFunction *)f)->device);
  pthread_mutex_unlock(&lock);
  *value = 0;
  return r;
}

EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device("cuFuncSetAttribute", ((FakeFunction *)f)->device);
  if (r == CUDA_SUCCESS && attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) state.shared_attribute = value;
  pthread_mutex_unlock(&lock);
  return r;
}

static int stream_device(CUstream s) { return s ? ((FakeStream *)s)->device : -1; }

/* Records the launch (and "runs" on_launch) under the lock. */
static CUresult record_launch(FakeFunction *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared, CUstream stream, void **params) {
  CUresult r = on_device("cuLaunchKernel", f->device);
  if (r == CUDA_SUCCESS) r = on_device("cuLaunchKernel (its stream)", stream_device(stream));
  if (r != CUDA_SUCCESS) return r;
  if (state.max_block && bx * by * bz > state.max_block) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  state.launches++;
  state.launches_on[f->device]++;
  state.launch_device = f->device;
  strcpy(state.function, f->name);
  state.grid[0] = gx, state.grid[1] = gy, state.grid[2] = gz;
  state.block[0] = bx, state.block[1] = by, state.block[2] = bz;
  state.shared = shared;
  state.stream = stream;
  for (int i = 0; i < state.params_to_copy && i < 16; i++) memcpy(&state.params[i], params[i], 8);
  for (int i = 0; i < state.maps_to_copy && i < 8; i++) {
    memcpy(&state.maps[i], params[state.params_to_copy + i], sizeof state.maps[i]);
    state.map_addresses[i] = (uintptr_t)params[state.params_to_copy + i];
  }
  if (state.on_launch) state.clock_ms += state.on_launch(&state, params);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                      unsigned bz, unsigned shared, CUstream stream, void **params, void **extra) {
  pthread_mutex_lock(&lock);
  CUresult r = record_launch((FakeFunction *)f, gx, gy, gz, bx, by, bz, shared, stream, params);
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device("cuMemAlloc", -1);
  void *m = NULL;
  if (r == CUDA_SUCCESS && num_blocks == cap_blocks) {
    int cap = cap_blocks ? 2 * cap_blocks : 64;
    FakeBlock *grown = realloc(blocks, sizeof *grown * (size_t)cap);
    if (grown) blocks = grown, cap_blocks = cap;
  }
  if (r == CUDA_SUCCESS && num_blocks < cap_blocks && (m = aligned_alloc(256, (bytes + 255) / 256 * 256))) {
    blocks[num_blocks++] = (FakeBlock){(uintptr_t)m, bytes, current_device()};
    *p = (CUdeviceptr)m;
    state.live_allocations++;
  }
  pthread_mutex_unlock(&lock);
  return r == CUDA_SUCCESS && !m ? CUDA_ERROR_OUT_OF_MEMORY : r;
}

EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  pthread_mutex_lock(&lock);
  FakeBlock *b = block_of((void *)p);
  CUresult r = on_device("cuMemFree", b ? b->device : -1);
  if (r == CUDA_SUCCESS) {
    if (b) *b = blocks[--num_blocks];
    free((void *)p);
    state.live_allocations--;
  }
  pthread_mutex_unlock(&lock);
  return r;
}

/* A copy or memset touching device memory at `a` and `b` (NULL: host memory). */
static CUresult check_copy(const char *call, const void *a, const void *b) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device(call, a ? block_device(a) : -1);
  if (r == CUDA_SUCCESS && b) r = on_device(call, block_device(b));
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
  CUresult r = check_copy("cuMemcpyHtoD", (void *)dst, NULL);
  if (r == CUDA_SUCCESS) memcpy((void *)dst, src, n);
  return r;
}

EXPORT CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) {
  CUresult r = check_copy("cuMemcpyDtoH", (void *)src, NULL);
  if (r == CUDA_SUCCESS) memcpy(dst, (void *)src, n);
  return r;
}

EXPORT CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  CUresult r = check_copy("cuMemcpyDtoD", (void *)dst, (void *)src);
  if (r != CUDA_SUCCESS) return r;
  memmove((void *)dst, (void *)src, n);
  pthread_mutex_lock(&lock);
  state.copies++;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char c, size_t n) {
  CUresult r = check_copy("cuMemsetD8", (void *)dst, NULL);
  if (r != CUDA_SUCCESS) return r;
  memset((void *)dst, c, n);
  pthread_mutex_lock(&lock);
  state.memsets++;
  state.memset_bytes += n;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned int flags) {
  return make_on_device("cuStreamCreate", sizeof(FakeStream), (void **)s, &state.live_streams);
}

EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  return free_on_device("cuStreamDestroy", s, stream_device(s), &state.live_streams);
}

EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream s) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device("cuStreamSynchronize", stream_device(s));
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int flags) {
  return make_on_device("cuEventCreate", sizeof(FakeEvent), (void **)e, &state.live_events);
}

EXPORT CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  pthread_mutex_lock(&lock);
  FakeEvent *event = (FakeEvent *)e;
  CUresult r = on_device("cuEventRecord", event->device);
  if (r == CUDA_SUCCESS) r = on_device("cuEventRecord (its stream)", stream_device(s));
  if (r == CUDA_SUCCESS) event->ms = state.on_launch ? state.clock_ms : (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent e) {
  pthread_mutex_lock(&lock);
  CUresult r = on_device("cuEventSynchronize", ((FakeEvent *)e)->device);
  pthread_mutex_unlock(&lock);
  return r;
}

EXPORT CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  const FakeEvent *a = (const FakeEvent *)start, *b = (const FakeEvent *)end;
  pthread_mutex_lock(&lock);
  CUresult r = a->device == b->device ? on_device("cuEventElapsedTime", a->device) : CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_unlock(&lock);
  if (r == CUDA_SUCCESS) *ms = (float)(b->ms - a->ms);
  return r;
}

EXPORT CUresult CUDAAPI cuEventDestroy(CUevent e) {
  return free_on_device("cuEventDestroy", e, ((FakeEvent *)e)->device, &state.live_events);
}

#ifndef FAKE_CUDA_NO_TENSOR_MAP
/* Records the call and writes a FakeTensorMap; fails as the driver does for a misaligned map. */
EXPORT CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                                              const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                              const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                                              CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                              CUtensorMapFloatOOBfill oob) {
  pthread_mutex_lock(&lock);
  FakeEncode *e = &state.encoded[state.encodes++ % 8];
  *e = (FakeEncode){map, type, (int)rank, (uint64_t)(uintptr_t)address, {0}, {0}, {0}, {0}, interleave, swizzle, l2, oob};
  for (cuuint32_t i = 0; i < rank && i < 5; i++) {
    e->dims[i] = dims[i], e->box[i] = box[i], e->element_strides[i] = element_strides[i];
    if (i) e->strides[i - 1] = strides[i - 1];
  }
  if (state.fail_next_encode || (uintptr_t)map % 64 || rank < 1 || rank > 5) {
    state.fail_next_encode = 0;
    pthread_mutex_unlock(&lock);
    return CUDA_ERROR_INVALID_VALUE;
  }
  FakeTensorMap written = {FAKE_TENSOR_MAP_MAGIC, e->address, {0}, {0}, {0}, (uint32_t)state.encodes};
  memcpy(written.dims, e->dims, sizeof written.dims);
  memcpy(written.strides, e->strides, sizeof written.strides);
  memcpy(written.box, e->box, sizeof written.box);
  memset(map, 0, sizeof *map);
  memcpy(map, &written, sizeof written);
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}
#endif
