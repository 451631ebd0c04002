/* Runs a loaded vector-add kernel `add(x, y, z, n)` on the GPU over fresh
 * random data with a poisoned output; shared by the driver and codegen
 * tests.  Returns 1 when every element is exactly x + y. */
#ifndef TILE_TEST_GPU_VECTOR_ADD_H
#define TILE_TEST_GPU_VECTOR_ADD_H

#include "check.h"
#include "../../src/runtime/cuda_driver.h"

#include <stdlib.h>

static int gpu_vector_add(CudaDriver *d, const void *image, unsigned block) {
  int n = 98432;
  size_t bytes = sizeof(float) * (size_t)n;
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
  for (int k = 0; k < n; k++) {
    x[k] = (float)rand() / (float)RAND_MAX;
    y[k] = (float)rand() / (float)RAND_MAX;
  }
  CUmodule module = NULL;
  CUfunction fn;
  CUdeviceptr dx = 0, dy = 0, dz = 0;
  void *params[] = {&dx, &dy, &dz, &n};
  int ok = !cuda_check(d, d->cuModuleLoadDataEx_fn(&module, image, 0, NULL, NULL), "cuModuleLoadDataEx") &&
           !cuda_check(d, d->cuModuleGetFunction_fn(&fn, module, "add"), "cuModuleGetFunction") &&
           !cuda_check(d, d->cuMemAlloc_fn(&dx, bytes), "cuMemAlloc") &&
           !cuda_check(d, d->cuMemAlloc_fn(&dy, bytes), "cuMemAlloc") &&
           !cuda_check(d, d->cuMemAlloc_fn(&dz, bytes), "cuMemAlloc") &&
           !cuda_check(d, d->cuMemcpyHtoD_fn(dx, x, bytes), "cuMemcpyHtoD") &&
           !cuda_check(d, d->cuMemcpyHtoD_fn(dy, y, bytes), "cuMemcpyHtoD") &&
           !cuda_check(d, d->cuMemsetD8_fn(dz, 0xFF, bytes), "cuMemsetD8") && /* NaN everywhere */
           !cuda_check(d, d->cuLaunchKernel_fn(fn, (n + block - 1) / block, 1, 1, block, 1, 1, 0, NULL, params, NULL),
                       "cuLaunchKernel") &&
           !cuda_check(d, d->cuCtxSynchronize_fn(), "cuCtxSynchronize") &&
           !cuda_check(d, d->cuMemcpyDtoH_fn(z, dz, bytes), "cuMemcpyDtoH");
  if (!ok) fprintf(stderr, "%s\n", d->error);
  int exact = ok;
  for (int k = 0; k < n && ok; k++) exact &= z[k] == x[k] + y[k];
  if (dx) d->cuMemFree_fn(dx);
  if (dy) d->cuMemFree_fn(dy);
  if (dz) d->cuMemFree_fn(dz);
  if (module) d->cuModuleUnload_fn(module);
  free(x), free(y), free(z);
  return exact;
}

#endif
