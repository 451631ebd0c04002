/* The CUDA driver layer.  Without a GPU (here and in CI) it must fail with
 * a clear message, never crash.  With one (the GPU test command, see
 * README) it loads a hand-written PTX vector add, runs it on fresh random
 * data with a poisoned output, and checks every element. */
#include "check.h"
#include "runtime/cuda_driver.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

/* z[i] = x[i] + y[i] for i < n, one thread an element. */
static const char add_ptx[] =
    ".version 8.0\n"
    ".target sm_80\n"
    ".address_size 64\n"
    ".visible .entry add(.param .u64 px, .param .u64 py, .param .u64 pz, .param .u32 pn)\n"
    "{\n"
    "  .reg .pred p;\n"
    "  .reg .f32 a, b, c;\n"
    "  .reg .b32 i, n, block, size, thread;\n"
    "  .reg .b64 x, y, z, off;\n"
    "  ld.param.u64 x, [px];\n"
    "  ld.param.u64 y, [py];\n"
    "  ld.param.u64 z, [pz];\n"
    "  ld.param.u32 n, [pn];\n"
    "  mov.u32 block, %ctaid.x;\n"
    "  mov.u32 size, %ntid.x;\n"
    "  mov.u32 thread, %tid.x;\n"
    "  mad.lo.s32 i, block, size, thread;\n"
    "  setp.ge.s32 p, i, n;\n"
    "  @p bra done;\n"
    "  mul.wide.s32 off, i, 4;\n"
    "  add.s64 x, x, off;\n"
    "  add.s64 y, y, off;\n"
    "  add.s64 z, z, off;\n"
    "  ld.global.f32 a, [x];\n"
    "  ld.global.f32 b, [y];\n"
    "  add.f32 c, a, b;\n"
    "  st.global.f32 [z], c;\n"
    "done:\n"
    "  ret;\n"
    "}\n";

static void test_without_gpu(const char *error) {
  printf("no GPU here: %s\n", error);
  CHECK(strstr(error, "CUDA") != NULL); /* the message says what is missing */
}

static void test_missing_library(void) {
  CudaDriver d;
  CHECK(cuda_open(&d, "/nonexistent/libcuda.so.1", 0) == -1);
  CHECK_CONTAINS(d.error, "no CUDA driver: cannot load /nonexistent/libcuda.so.1");
  cuda_close(&d);
}

static void test_vector_add(CudaDriver *d) {
  int n = 98432;
  size_t bytes = sizeof(float) * (size_t)n;
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes);
  for (int i = 0; i < n; i++) {
    x[i] = (float)rand() / (float)RAND_MAX;
    y[i] = (float)rand() / (float)RAND_MAX;
  }
  CUmodule module;
  CUfunction fn;
  CUdeviceptr dx, dy, dz;
  CHECK(cuda_check(d, d->cuModuleLoadDataEx_fn(&module, add_ptx, 0, NULL, NULL), "cuModuleLoadDataEx") == 0);
  CHECK(cuda_check(d, d->cuModuleGetFunction_fn(&fn, module, "add"), "cuModuleGetFunction") == 0);
  CHECK(cuda_check(d, d->cuMemAlloc_fn(&dx, bytes), "cuMemAlloc") == 0);
  CHECK(cuda_check(d, d->cuMemAlloc_fn(&dy, bytes), "cuMemAlloc") == 0);
  CHECK(cuda_check(d, d->cuMemAlloc_fn(&dz, bytes), "cuMemAlloc") == 0);
  CHECK(cuda_check(d, d->cuMemcpyHtoD_fn(dx, x, bytes), "cuMemcpyHtoD") == 0);
  CHECK(cuda_check(d, d->cuMemcpyHtoD_fn(dy, y, bytes), "cuMemcpyHtoD") == 0);
  CHECK(cuda_check(d, d->cuMemsetD8_fn(dz, 0xFF, bytes), "cuMemsetD8") == 0); /* NaN everywhere */
  void *params[] = {&dx, &dy, &dz, &n};
  CHECK(cuda_check(d, d->cuLaunchKernel_fn(fn, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL),
                   "cuLaunchKernel") == 0);
  CHECK(cuda_check(d, d->cuCtxSynchronize_fn(), "cuCtxSynchronize") == 0);
  CHECK(cuda_check(d, d->cuMemcpyDtoH_fn(z, dz, bytes), "cuMemcpyDtoH") == 0);
  int exact = 1;
  for (int i = 0; i < n; i++) exact &= z[i] == x[i] + y[i];
  CHECK(exact);
  char name[128] = "";
  d->cuDeviceGetName_fn(name, sizeof name, d->device);
  printf("vector add on %s: %s\n", name, exact ? "exact" : "MISMATCH");
  d->cuMemFree_fn(dx);
  d->cuMemFree_fn(dy);
  d->cuMemFree_fn(dz);
  d->cuModuleUnload_fn(module);
  free(x), free(y), free(z);
}

static void test_bad_module(CudaDriver *d) {
  CUmodule module;
  CHECK(cuda_check(d, d->cuModuleLoadDataEx_fn(&module, ".version 8.0\nnot ptx\n", 0, NULL, NULL),
                   "cuModuleLoadDataEx") == -1);
  CHECK_CONTAINS(d->error, "cuModuleLoadDataEx failed: CUDA_ERROR_");
}

int main(void) {
  srand((unsigned)time(NULL));
  test_missing_library();
  CudaDriver d;
  if (cuda_open(&d, NULL, 0)) {
    test_without_gpu(d.error);
  } else {
    test_vector_add(&d);
    test_bad_module(&d);
    cuda_close(&d);
  }
  return check_report();
}
