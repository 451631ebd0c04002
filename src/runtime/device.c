/* The context's GPU: opened on the first call that needs it (device 0, or
 * tile_device_open's), its primary context made current on the calling
 * thread at each entry; the target it wants; modules and launches. */
#include "gpu.h"
#include "../support/arch.h"
#include "../support/dtypes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_SHARED_LIMIT = 48 * 1024 };

/* Name, compute capability, the shared memory limit, the L2's size and the multiprocessors. */
static int query(struct Device *d) {
  CudaDriver *c = &d->cuda;
  return cuda_check(c, c->cuDeviceGetName_fn(d->name, sizeof d->name, c->device), "cuDeviceGetName") ||
         cuda_check(c, c->cuDeviceGetAttribute_fn(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, c->device),
                    "cuDeviceGetAttribute") ||
         cuda_check(c, c->cuDeviceGetAttribute_fn(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, c->device),
                    "cuDeviceGetAttribute") ||
         cuda_check(c, c->cuDeviceGetAttribute_fn(&d->max_shared_optin,
                                                  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, c->device),
                    "cuDeviceGetAttribute") ||
         cuda_check(c, c->cuDeviceGetAttribute_fn(&d->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, c->device),
                    "cuDeviceGetAttribute") ||
         cuda_check(c, c->cuDeviceGetAttribute_fn(&d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, c->device),
                    "cuDeviceGetAttribute");
}

/* Opens the device without touching ctx's message; remembers a failure. */
static int open_quietly(tile_context *ctx) {
  if (ctx->device) return 0;
  if (ctx->device_error[0]) return -1;
  struct Device *d = calloc(1, sizeof *d);
  if (!d) {
    snprintf(ctx->device_error, sizeof ctx->device_error, "out of memory opening the GPU");
    return -1;
  }
  if (cuda_open(&d->cuda, ctx->cuda_library, ctx->device_ordinal) || query(d)) {
    const char *why = d->cuda.error;
    snprintf(ctx->device_error, sizeof ctx->device_error, "%s%s", strncmp(why, "no CUDA", 7) ? "no usable GPU: " : "", why);
    cuda_close(&d->cuda);
    free(d);
    return -1;
  }
  ctx->device = d;
  return 0;
}

tile_status device_ready(tile_context *ctx) {
  return open_quietly(ctx) ? context_fail(ctx, TILE_ERROR_UNSUPPORTED, ctx->device_error) : TILE_OK;
}

int device_available(tile_context *ctx) { return !ctx->on_cpu && open_quietly(ctx) == 0; }

void device_close(tile_context *ctx) {
  if (!ctx->device) return;
  cuda_close(&ctx->device->cuda);
  free(ctx->device);
  ctx->device = NULL;
}

struct Device *gpu_enter(tile_context *ctx) {
  if (device_ready(ctx) != TILE_OK) return NULL;
  struct Device *d = ctx->device;
  CUcontext current = NULL;
  if (d->cuda.cuCtxGetCurrent_fn(&current) == CUDA_SUCCESS && current == d->cuda.context) return d;
  if (gpu_status(ctx, d, d->cuda.cuCtxSetCurrent_fn(d->cuda.context), "cuCtxSetCurrent") != TILE_OK) return NULL;
  return d;
}

tile_status gpu_status(tile_context *ctx, struct Device *d, CUresult r, const char *call) {
  if (r == CUDA_SUCCESS) return TILE_OK;
  cuda_check(&d->cuda, r, call);
  tile_status s = r == CUDA_ERROR_OUT_OF_MEMORY ? TILE_ERROR_MEMORY
                  : r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_INVALID_HANDLE ? TILE_ERROR_ARGUMENT
                                                                                   : TILE_ERROR_RUNTIME;
  int trapped = r == CUDA_ERROR_ILLEGAL_INSTRUCTION || r == CUDA_ERROR_LAUNCH_FAILED;
  if (trapped && ctx->trapping_checks[0]) /* a trap has no message of its own: name what can trap */
    return context_failf(ctx, s, "%s; a kernel stops this way when one of its compiler-made checks fails: kernel %s",
                         d->cuda.error, ctx->trapping_checks);
  return context_fail(ctx, s, d->cuda.error);
}

const char *device_arch(tile_context *ctx, int *prefer_ptx) {
  *prefer_ptx = 0;
  if (ctx->on_cpu || open_quietly(ctx)) return NULL;
  return arch_for_gpu(ctx->device->cc_major, ctx->device->cc_minor, prefer_ptx);
}

DeviceRuns device_runs(tile_context *ctx, const char *arch) {
  int version = 0, n = 0;
  if (ctx->on_cpu || open_quietly(ctx) || sscanf(arch, "sm_%d%n", &version, &n) != 1) return DEVICE_RUNS_CUBIN;
  int major = version / 10, minor = version % 10, gpu_major = ctx->device->cc_major, gpu_minor = ctx->device->cc_minor;
  int specific = arch[n] == 'a';
  if (major > gpu_major || (major == gpu_major && minor > gpu_minor)) return DEVICE_RUNS_NONE;
  if (specific && (major != gpu_major || minor != gpu_minor)) return DEVICE_RUNS_NONE; /* no PTX carries 'a' forward */
  return major == gpu_major ? DEVICE_RUNS_CUBIN : DEVICE_RUNS_PTX;
}

/* A PTX or cubin load, with the driver's JIT log in the message. */
static tile_status load_module(tile_context *ctx, struct Device *d, const void *image, CUmodule *module) {
  char log[2048] = "";
  CUjit_option keys[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log, (void *)(uintptr_t)sizeof log};
  CUresult r = d->cuda.cuModuleLoadDataEx_fn(module, image, 2, keys, values);
  if (r == CUDA_SUCCESS) return TILE_OK;
  gpu_status(ctx, d, r, "cuModuleLoadDataEx");
  return context_failf(ctx, TILE_ERROR_UNSUPPORTED, "%s%s%.1500s", d->cuda.error, log[0] ? "\n" : "", log);
}

tile_status device_load(tile_context *ctx, const void *image, const char *name, int shared, void **module,
                        void **function) {
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  if (d->cc_major < 8)
    return context_failf(ctx, TILE_ERROR_UNSUPPORTED, "%s has compute capability %d.%d; tile needs sm_80 or newer",
                         d->name, d->cc_major, d->cc_minor);
  if (shared > DEFAULT_SHARED_LIMIT && shared > d->max_shared_optin)
    return context_failf(ctx, TILE_ERROR_UNSUPPORTED, "kernel '%s' needs %d bytes of shared memory; %s allows %d", name,
                         shared, d->name, d->max_shared_optin);
  CUmodule m = NULL;
  CUfunction f = NULL;
  tile_status s = load_module(ctx, d, image, &m);
  if (s == TILE_OK && gpu_status(ctx, d, d->cuda.cuModuleGetFunction_fn(&f, m, name), "cuModuleGetFunction") != TILE_OK)
    s = TILE_ERROR_ARGUMENT; /* the metadata names a kernel the image does not have */
  if (s == TILE_OK && shared > DEFAULT_SHARED_LIMIT)
    s = gpu_status(ctx, d, d->cuda.cuFuncSetAttribute_fn(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared),
                   "cuFuncSetAttribute");
  if (s != TILE_OK && m) d->cuda.cuModuleUnload_fn(m);
  *module = s == TILE_OK ? m : NULL;
  *function = s == TILE_OK ? f : NULL;
  return s;
}

void device_unload(tile_context *ctx, void *module) {
  struct Device *d = ctx->device;
  if (d && module && gpu_enter(ctx)) d->cuda.cuModuleUnload_fn(module);
}

int device_sm_count(const tile_context *ctx) { return ctx->device ? ctx->device->sm_count : 0; }

tile_status device_launch(tile_context *ctx, void *function, const unsigned grid[3], int block, int shared,
                          tile_stream stream, void **params) {
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  CUresult r = d->cuda.cuLaunchKernel_fn(function, grid[0], grid[1], grid[2], (unsigned)block, 1, 1, (unsigned)shared,
                                         (CUstream)stream, params, NULL);
  return r == CUDA_SUCCESS ? TILE_OK : gpu_status(ctx, d, r, "cuLaunchKernel");
}

/* ---- tensor maps ------------------------------------------------------------------------ */

_Static_assert(sizeof(TensorMap) == sizeof(CUtensorMap) && _Alignof(TensorMap) >= _Alignof(CUtensorMap),
               "TensorMap is storage for a CUtensorMap");

int device_tensor_map_dtype(int dt) {
  switch (dt) {
  case DT_FP16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DT_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DT_FP32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case DT_FP64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  case DT_I8: case DT_U8: case DT_FP8E4NV: case DT_FP8E5: case DT_FP8E4B15:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* a copy moves bits: the sign, the fp8 format do not matter */
  case DT_I32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case DT_U32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
  case DT_I64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case DT_U64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
  default: return -1;
  }
}

/* By the swizzle span / 32 (the metadata allows 0, 32, 64 and 128 bytes). */
static const CUtensorMapSwizzle swizzle_modes[5] = {[0] = CU_TENSOR_MAP_SWIZZLE_NONE, [1] = CU_TENSOR_MAP_SWIZZLE_32B,
                                                    [2] = CU_TENSOR_MAP_SWIZZLE_64B, [4] = CU_TENSOR_MAP_SWIZZLE_128B};

tile_status device_encode_tensor_map(tile_context *ctx, const TensorMapShape *t, TensorMap *map) {
  struct Device *d = gpu_enter(ctx);
  if (!d) return TILE_ERROR_UNSUPPORTED;
  if (!d->cuda.cuTensorMapEncodeTiled_fn)
    return context_fail(ctx, TILE_ERROR_UNSUPPORTED,
                        "the CUDA driver has no cuTensorMapEncodeTiled (it is older than CUDA 12.0), which a kernel "
                        "that loads through the tensor memory accelerator needs");
  const cuuint32_t element_strides[5] = {1, 1, 1, 1, 1};
  CUresult r = d->cuda.cuTensorMapEncodeTiled_fn(
      (CUtensorMap *)map, (CUtensorMapDataType)device_tensor_map_dtype(t->dtype), (cuuint32_t)t->rank, t->address,
      t->dims, t->strides, t->box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_modes[t->swizzle / 32],
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return gpu_status(ctx, d, r, "cuTensorMapEncodeTiled");
}

/* ---- the public calls ------------------------------------------------------------------- */

tile_status tile_device_open(tile_context *ctx, int ordinal) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (ordinal < 0) return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_device_open: no device %d", ordinal);
  if (ctx->on_cpu) return TILE_OK;
  if (ctx->device && ordinal != ctx->device_ordinal)
    return context_failf(ctx, TILE_ERROR_ARGUMENT,
                         "tile_device_open(%d): the context already uses device %d; open a device before any other GPU call",
                         ordinal, ctx->device_ordinal);
  if (!ctx->device) {
    ctx->device_ordinal = ordinal;
    ctx->device_error[0] = 0; /* try again */
  }
  return device_ready(ctx);
}

const char *tile_device_name(tile_context *ctx) {
  if (!context_valid(ctx) || ctx->on_cpu || open_quietly(ctx)) return "";
  return ctx->device->name;
}
