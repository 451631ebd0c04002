/* The context's GPU, as the rest of the runtime sees it: opened on first
 * use, the target it wants, modules and launches.  Handles are void * here
 * so that only device.c and memory.c include cuda.h. */
#ifndef TILE_DEVICE_H
#define TILE_DEVICE_H

#include "context.h"

#include <stdint.h>

/* Opens the context's device unless it is open.  TILE_OK, or
 * TILE_ERROR_UNSUPPORTED with why ("no CUDA driver: ...") in ctx; a failure
 * is remembered until tile_device_open tries again. */
tile_status device_ready(tile_context *ctx);
void device_close(tile_context *ctx);
/* Nonzero when the context runs on a GPU that can be opened (tried quietly: no message). */
int device_available(tile_context *ctx);
/* The target for the GPU present ("sm_90a"), NULL if none can be opened;
 * *prefer_ptx is set for GPUs newer than any target (the driver then
 * compiles the PTX). */
const char *device_arch(tile_context *ctx, int *prefer_ptx);
/* How code built for target `arch` ("sm_80", "sm_90a") runs on the GPU
 * present: its cubin (the GPU's major version, a minor not above the GPU's;
 * an 'a' target only on its own GPU), its PTX compiled by the driver (an
 * older major version: cubins do not carry across them), or not at all (a
 * newer target).  DEVICE_RUNS_CUBIN when no GPU can be opened. */
typedef enum { DEVICE_RUNS_CUBIN, DEVICE_RUNS_PTX, DEVICE_RUNS_NONE } DeviceRuns;
DeviceRuns device_runs(tile_context *ctx, const char *arch);
/* Loads an image (cubin, or NUL-terminated PTX) and finds kernel `name`;
 * sets the function's dynamic shared memory limit when it needs more than
 * 48 KB. */
tile_status device_load(tile_context *ctx, const void *image, const char *name, int shared, void **module,
                        void **function);
void device_unload(tile_context *ctx, void *module);
/* cuLaunchKernel with a 1-D block of `block` threads. */
/* The open GPU's multiprocessors (0: no GPU open, or unknown). */
int device_sm_count(const tile_context *ctx);
tile_status device_launch(tile_context *ctx, void *function, const unsigned grid[3], int block, int shared,
                          tile_stream stream, void **params);

/* One tensor map as cuTensorMapEncodeTiled takes it, the fixed fields aside
 * (element strides 1, no interleave, L2 promotion of 128 bytes, zeros out
 * of bounds). */
typedef struct TensorMapShape {
  int dtype;              /* DType of the elements */
  int rank;               /* 1..5 */
  void *address;          /* the tensor's global address, 16-byte aligned */
  uint64_t dims[5];       /* elements, innermost first */
  uint64_t strides[4];    /* bytes, of dims 1..rank-1 */
  uint32_t box[5];        /* elements, innermost first */
  int swizzle;            /* bytes: 0, 32, 64 or 128 */
} TensorMapShape;

/* Storage for one encoded map: cuda.h's CUtensorMap (128 bytes; the driver
 * needs 64-byte alignment, the C type declares 128, which a pointer to it
 * must then have). */
typedef struct TensorMap {
  _Alignas(128) unsigned char bytes[128];
} TensorMap;

/* The CUtensorMapDataType for elements of DType `dt` (fp16, bf16, fp32,
 * fp64, i8, u8, i32, u32, i64, u64); -1 for the others. */
int device_tensor_map_dtype(int dt);
/* Encodes `shape` into *map with cuTensorMapEncodeTiled.  TILE_OK, or a
 * status with the message in ctx: the driver's error, or a driver without
 * cuTensorMapEncodeTiled (TILE_ERROR_UNSUPPORTED). */
tile_status device_encode_tensor_map(tile_context *ctx, const TensorMapShape *shape, TensorMap *map);

/* Copies `bytes` from one block of device memory to another (memory.c;
 * memcpy on the interpreter); both ranges must lie in tracked blocks. */
tile_status device_copy(tile_context *ctx, void *dst, const void *src, size_t bytes);

/* Allocation tracking (memory.c).  1 with the bytes from ptr to the end of
 * the tracked block it lies in, else 0. */
int allocation_extent(const tile_context *ctx, const void *ptr, size_t *bytes);
/* Frees every block left (tile_context_destroy). */
void free_allocations(tile_context *ctx);
/* Destroys the streams and events left (tile_context_destroy): the device's primary context, shared with
 * every other context on the device, outlives this one. */
void free_host_tokens(tile_context *ctx);
/* Nonzero if s is NULL (the default stream) or a live stream tile_stream_create made in ctx. */
int context_has_stream(const tile_context *ctx, tile_stream s);

#endif
