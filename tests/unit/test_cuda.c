/* The CUDA driver layer.  Without a GPU (here and in CI) it must fail with
 * a clear message, never crash.  With one (the GPU test command, see
 * README) it loads a hand-written PTX vector add, runs it on fresh random
 * data with a poisoned output, and checks every element. */
#include "check.h"
#include "gpu_vector_add.h"
#include "../../src/runtime/cuda_driver.h"

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
  int exact = gpu_vector_add(d, add_ptx, 256);
  CHECK(exact);
  char name[128] = "";
  d->cuDeviceGetName_fn(name, sizeof name, d->device);
  printf("vector add on %s: %s\n", name, exact ? "exact" : "MISMATCH");
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
