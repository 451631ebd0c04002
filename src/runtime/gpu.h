/* The device behind a context, for the files of src/runtime that talk to
 * the CUDA driver (device.c, memory.c); the rest see device.h. */
#ifndef TILE_GPU_H
#define TILE_GPU_H

#include "cuda_driver.h"
#include "device.h"

struct Device {
  CudaDriver cuda;
  int cc_major, cc_minor;  /* compute capability */
  int max_shared_optin;    /* dynamic shared memory a block may opt in to, bytes */
  int l2_bytes;            /* the L2 cache's size (the autotuner flushes twice that) */
  int sm_count;            /* multiprocessors: a grid of no more programs runs in one wave */
  char name[256];
};

/* The device, open and its context current on this thread (launches may
 * come from any thread); NULL with the message in ctx. */
struct Device *gpu_enter(tile_context *ctx);
/* TILE_OK for CUDA_SUCCESS, else a status for r (out of memory, a bad
 * value, a failure while running) with "call failed: NAME: text" in ctx. */
tile_status gpu_status(tile_context *ctx, struct Device *d, CUresult r, const char *call);

#endif
