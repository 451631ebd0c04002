/* The fake CUDA driver (see fake_cuda.h).  Each function has cuda.h's
 * prototype, so the versioned names (cuMemAlloc_v2...) come out as the
 * runtime's dlsym expects. */
#include "fake_cuda.h"

#include <cuda.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

static FakeCuda state = {.cc_major = 9, .cc_minor = 0, .max_shared_optin = 227 * 1024};
static int primary_context; /* its address is the context handle */

typedef struct FakeFunction {
  char name[64];
} FakeFunction;

typedef struct FakeModule {
  char image[4096];             /* the text up to the first NUL: function names are looked up in it */
  int elf;                      /* a real cubin: any name is found */
  FakeFunction functions[8];    /* handed out by cuModuleGetFunction, freed with the module */
  int num_functions;
} FakeModule;

EXPORT FakeCuda *fake_cuda_state(void) { return &state; }

EXPORT CUresult CUDAAPI cuInit(unsigned int flags) { return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **s) {
  *s = error == CUDA_ERROR_INVALID_PTX ? "CUDA_ERROR_INVALID_PTX"
       : error == CUDA_ERROR_NOT_FOUND ? "CUDA_ERROR_NOT_FOUND"
       : error == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY"
       : error == CUDA_ERROR_INVALID_VALUE ? "CUDA_ERROR_INVALID_VALUE"
       : error == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **s) {
  *s = "fake driver error";
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count) { *count = 1; return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) { *device = ordinal; return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
  strncpy(name, "Fake GPU", (size_t)len);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute, CUdevice dev) {
  *value = attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? state.cc_major
           : attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ? state.cc_minor
           : attribute == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ? state.max_shared_optin
           : attribute == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE ? state.l2_bytes : 0;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  *ctx = (CUcontext)&primary_context;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) { return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
  state.current = ctx;
  state.set_current_calls++;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx) { *ctx = state.current; return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuCtxSynchronize(void) { return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options,
                                          void **values) {
  if (state.fail_next_load) {
    state.fail_next_load = 0;
    for (unsigned i = 0; i < n; i++)
      if (options[i] == CU_JIT_ERROR_LOG_BUFFER) strcpy(values[i], "ptxas fatal: fake parse error at line 3");
    return CUDA_ERROR_INVALID_PTX;
  }
  FakeModule *m = calloc(1, sizeof *m);
  strncpy(m->image, image, sizeof m->image - 1); /* PTX ends with a NUL, and the runtime puts one after a cubin */
  const unsigned char *bytes = image;
  m->elf = !memcmp(image, "\x7f" "ELF", 4) && (bytes[4] == 1 || bytes[4] == 2); /* a real ELF class */
  *module = (CUmodule)m;
  state.live_modules++;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule module) {
  free(module);
  state.live_modules--;
  return CUDA_SUCCESS;
}

/* Finds `name` among the image's bytes (a cubin's symbol table, PTX's .entry). */
EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *function, CUmodule module, const char *name) {
  FakeModule *m = (FakeModule *)module;
  if ((m->elf || strstr(m->image, name)) && m->num_functions < 8) {
    FakeFunction *f = &m->functions[m->num_functions++];
    strncpy(f->name, name, sizeof f->name - 1);
    *function = (CUfunction)f;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult CUDAAPI cuFuncGetAttribute(int *value, CUfunction_attribute attribute, CUfunction f) {
  *value = 0;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute, int value) {
  if (attribute == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) state.shared_attribute = value;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                      unsigned bz, unsigned shared, CUstream stream, void **params, void **extra) {
  if (state.max_block && bx * by * bz > state.max_block) return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  state.launches++;
  strcpy(state.function, ((FakeFunction *)f)->name);
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

EXPORT CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  void *m = aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  *p = (CUdeviceptr)m;
  state.live_allocations++;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFree(CUdeviceptr p) {
  free((void *)p);
  state.live_allocations--;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) { memcpy((void *)dst, src, n); return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, (void *)src, n); return CUDA_SUCCESS; }
EXPORT CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  memmove((void *)dst, (void *)src, n);
  state.copies++;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char c, size_t n) {
  memset((void *)dst, c, n);
  state.memsets++;
  state.memset_bytes += n;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *s, unsigned int flags) {
  *s = (CUstream)malloc(1);
  state.live_streams++;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream s) {
  free(s);
  state.live_streams--;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream s) { return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int flags) {
  *e = (CUevent)calloc(1, sizeof(double));
  state.live_events++;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  *(double *)e = state.on_launch ? state.clock_ms : (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent e) { return CUDA_SUCCESS; }

EXPORT CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  *ms = (float)(*(double *)end - *(double *)start);
  return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventDestroy(CUevent e) {
  free(e);
  state.live_events--;
  return CUDA_SUCCESS;
}

#ifndef FAKE_CUDA_NO_TENSOR_MAP
/* Records the call and writes a FakeTensorMap; fails as the driver does for a misaligned map. */
EXPORT CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
                                              const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
                                              const cuuint32_t *element_strides, CUtensorMapInterleave interleave,
                                              CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
                                              CUtensorMapFloatOOBfill oob) {
  FakeEncode *e = &state.encoded[state.encodes++ % 8];
  *e = (FakeEncode){map, type, (int)rank, (uint64_t)(uintptr_t)address, {0}, {0}, {0}, {0}, interleave, swizzle, l2, oob};
  for (cuuint32_t i = 0; i < rank && i < 5; i++) {
    e->dims[i] = dims[i], e->box[i] = box[i], e->element_strides[i] = element_strides[i];
    if (i) e->strides[i - 1] = strides[i - 1];
  }
  if (state.fail_next_encode || (uintptr_t)map % 64 || rank < 1 || rank > 5) {
    state.fail_next_encode = 0;
    return CUDA_ERROR_INVALID_VALUE;
  }
  FakeTensorMap written = {FAKE_TENSOR_MAP_MAGIC, e->address, {0}, {0}, {0}, (uint32_t)state.encodes};
  memcpy(written.dims, e->dims, sizeof written.dims);
  memcpy(written.strides, e->strides, sizeof written.strides);
  memcpy(written.box, e->box, sizeof written.box);
  memset(map, 0, sizeof *map);
  memcpy(map, &written, sizeof written);
  return CUDA_SUCCESS;
}
#endif
