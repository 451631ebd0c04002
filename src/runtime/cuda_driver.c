/* Loading the CUDA driver (see cuda_driver.h). */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define SYMBOL_NAME(name) SYMBOL_STRING(name)
#define SYMBOL_STRING(name) #name

int cuda_check(CudaDriver *d, CUresult r, const char *call) {
  if (r == CUDA_SUCCESS) return 0;
  const char *name = NULL, *text = NULL;
  if (d->cuGetErrorName_fn) d->cuGetErrorName_fn(r, &name);
  if (d->cuGetErrorString_fn) d->cuGetErrorString_fn(r, &text);
  snprintf(d->error, sizeof d->error, "%s failed: %s: %s", call, name ? name : "CUDA error",
           text ? text : "no description");
  return -1;
}

static int load_symbols(CudaDriver *d) {
#define CUDA_FN(name)                                                                    \
  *(void **)&d->name##_fn = dlsym(d->library, SYMBOL_NAME(name));                        \
  if (!d->name##_fn) {                                                                   \
    snprintf(d->error, sizeof d->error, "the CUDA driver has no %s (driver too old?)", SYMBOL_NAME(name)); \
    return -1;                                                                           \
  }
#define CUDA_OPTIONAL_FN(name) *(void **)&d->name##_fn = dlsym(d->library, SYMBOL_NAME(name));
#include "cuda_api.def"
#undef CUDA_FN
  return 0;
}

static int open_device(CudaDriver *d, int ordinal) {
  int count = 0;
  if (cuda_check(d, d->cuInit_fn(0), "cuInit") || cuda_check(d, d->cuDeviceGetCount_fn(&count), "cuDeviceGetCount"))
    return -1;
  if (ordinal < 0 || ordinal >= count) {
    snprintf(d->error, sizeof d->error, "no CUDA device %d (the driver sees %d)", ordinal, count);
    return -1;
  }
  if (cuda_check(d, d->cuDeviceGet_fn(&d->device, ordinal), "cuDeviceGet") ||
      cuda_check(d, d->cuDevicePrimaryCtxRetain_fn(&d->context, d->device), "cuDevicePrimaryCtxRetain"))
    return -1;
  if (cuda_check(d, d->cuCtxSetCurrent_fn(d->context), "cuCtxSetCurrent")) {
    d->cuDevicePrimaryCtxRelease_fn(d->device);
    d->context = NULL;
    return -1;
  }
  return 0;
}

int cuda_open(CudaDriver *d, const char *path, int ordinal) {
  memset(d, 0, sizeof *d);
  const char *lib = path && *path ? path : "libcuda.so.1";
  d->library = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!d->library) {
    const char *why = dlerror();
    snprintf(d->error, sizeof d->error, "no CUDA driver: cannot load %s (%s); is there an NVIDIA GPU and driver?",
             lib, why ? why : "not found");
    return -1;
  }
  if (load_symbols(d) || open_device(d, ordinal)) {
    dlclose(d->library);
    d->library = NULL;
    return -1;
  }
  d->ready = 1;
  return 0;
}

void cuda_close(CudaDriver *d) {
  if (!d->library) return;
  if (d->context) d->cuDevicePrimaryCtxRelease_fn(d->device);
  dlclose(d->library);
  memset(d, 0, sizeof *d);
}
