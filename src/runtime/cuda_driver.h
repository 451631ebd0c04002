/* The CUDA driver, loaded at run time.  This folder is the only one that
 * includes cuda.h.  Every call goes through cuda_check, which turns a
 * CUresult into a message naming the call; nothing here prints or aborts. */
#ifndef TILE_CUDA_DRIVER_H
#define TILE_CUDA_DRIVER_H

#include <cuda.h>
#include <stddef.h>

typedef struct CudaDriver {
  void *library;          /* dlopen handle of libcuda.so.1 */
#define CUDA_FN(name) __typeof__(name) *name##_fn;
#include "cuda_api.def"
#undef CUDA_FN
  CUdevice device;
  CUcontext context;      /* the device's primary context, retained */
  int ready;
  char error[512];        /* the last failure */
} CudaDriver;

/* Loads libcuda.so.1 (or $TILE_CUDA_LIBRARY when given by the caller as
 * `path`), initialises the driver and retains device `ordinal`'s primary
 * context.  Returns 0, or -1 with d->error saying why (no driver library, no
 * device, a driver error). */
int cuda_open(CudaDriver *d, const char *path, int ordinal);
void cuda_close(CudaDriver *d);

/* 0 if r is CUDA_SUCCESS, else -1 with d->error set to "call: NAME: description". */
int cuda_check(CudaDriver *d, CUresult r, const char *call);

#endif
