/* The back half of the pipeline: an LLVM IR kernel (vector add, built with
 * the LLVM C API as the lowering will build them) -> PTX through NVPTX ->
 * cubin through ptxas -> on a GPU, loaded and run by the runtime and
 * checked element by element on fresh random data. */
#include "check.h"
#include "gpu_vector_add.h"
#include "../../src/backend/ptxas.h"
#include "../../src/llvm/generate.h"
#include "../../src/llvm/llvm.h"
#include "../../src/runtime/cuda_driver.h"

#include <llvm-c/Core.h>
#include <stdlib.h>
#include <time.h>

static LLVMValueRef special_register(LLVMModuleRef m, LLVMBuilderRef b, const char *name) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(LLVMGetModuleContext(m));
  LLVMTypeRef fn_type = LLVMFunctionType(i32, NULL, 0, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(m, name);
  if (!fn) fn = LLVMAddFunction(m, name, fn_type);
  return LLVMBuildCall2(b, fn_type, fn, NULL, 0, "");
}

/* z[i] = x[i] + y[i] for i = ctaid.x * ntid.x + tid.x < n */
static LLVMModuleRef vector_add_module(LLVMContextRef ctx) {
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("add", ctx);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx), i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef f32 = LLVMFloatTypeInContext(ctx), ptr = LLVMPointerTypeInContext(ctx, 1);
  LLVMTypeRef params[] = {ptr, ptr, ptr, i32};
  LLVMValueRef fn = LLVMAddFunction(m, "add", LLVMFunctionType(LLVMVoidTypeInContext(ctx), params, 4, 0));
  LLVMSetFunctionCallConv(fn, 71); /* PTX_Kernel: an entry point */
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(ctx, fn, "entry");
  LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(ctx, fn, "body");
  LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(ctx, fn, "done");
  LLVMPositionBuilderAtEnd(b, entry);
  LLVMValueRef block = special_register(m, b, "llvm.nvvm.read.ptx.sreg.ctaid.x");
  LLVMValueRef size = special_register(m, b, "llvm.nvvm.read.ptx.sreg.ntid.x");
  LLVMValueRef thread = special_register(m, b, "llvm.nvvm.read.ptx.sreg.tid.x");
  LLVMValueRef i = LLVMBuildAdd(b, LLVMBuildMul(b, block, size, ""), thread, "i");
  LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntSLT, i, LLVMGetParam(fn, 3), ""), body, done);
  LLVMPositionBuilderAtEnd(b, body);
  LLVMValueRef index = LLVMBuildSExt(b, i, i64, "");
  LLVMValueRef px = LLVMBuildInBoundsGEP2(b, f32, LLVMGetParam(fn, 0), &index, 1, "");
  LLVMValueRef py = LLVMBuildInBoundsGEP2(b, f32, LLVMGetParam(fn, 1), &index, 1, "");
  LLVMValueRef pz = LLVMBuildInBoundsGEP2(b, f32, LLVMGetParam(fn, 2), &index, 1, "");
  LLVMValueRef sum = LLVMBuildFAdd(b, LLVMBuildLoad2(b, f32, px, ""), LLVMBuildLoad2(b, f32, py, ""), "");
  LLVMBuildStore(b, sum, pz);
  LLVMBuildBr(b, done);
  LLVMPositionBuilderAtEnd(b, done);
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  return m;
}

static void run_on_gpu(const char *cubin) {
  CudaDriver d;
  if (cuda_open(&d, NULL, 0)) {
    printf("no GPU here, the cubin is not run: %s\n", d.error);
    return;
  }
  int exact = gpu_vector_add(&d, cubin, 128);
  CHECK(exact);
  printf("LLVM -> PTX -> cubin vector add on the GPU: %s\n", exact ? "exact" : "FAILED");
  cuda_close(&d);
}

int main(void) {
  srand((unsigned)time(NULL));
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = vector_add_module(ctx);
  char err[1024] = "", *ptx = NULL;
  size_t len = 0;
  CHECK(llvm_emit_ptx(m, &(GpuTarget){"sm_90", NULL, NULL, 0}, 0, 0, &ptx, &len, err, sizeof err) == 0);
  if (!ptx) fprintf(stderr, "%s\n", err);
  CHECK_CONTAINS(ptx, ".visible .entry add(");
  CHECK_CONTAINS(ptx, ".target sm_90");
  CHECK_CONTAINS(ptx, "add.rn.f32");
  char ptxas[512];
  if (ptx && ptxas_locate(NULL, getenv("PATH"), ptxas, sizeof ptxas, err, sizeof err) == 0) {
    char *cubin = NULL, *log = NULL;
    size_t cubin_len = 0;
    PtxasLimits limits = {300, 8192}; /* the defaults of TILE_PTXAS_TIMEOUT and TILE_PTXAS_MEMORY */
    CHECK(ptxas_assemble(ptxas, &limits, ptx, len, "sm_90", &cubin, &cubin_len, &log, err, sizeof err) == 0);
    CHECK(cubin && cubin_len > 4 && !memcmp(cubin, "\x7f" "ELF", 4));
    CHECK_CONTAINS(log, "Used");
    /* bad PTX: ptxas's own message comes back */
    char *bad = NULL, *bad_log = NULL;
    size_t bad_len;
    CHECK(ptxas_assemble(ptxas, &limits, ".version 8.0\n.target sm_90\nnonsense\n", 36, "sm_90", &bad, &bad_len, &bad_log, err,
                         sizeof err) == -1);
    CHECK_CONTAINS(err, "ptxas failed (exit");
    free(bad_log);
    if (cubin) run_on_gpu(cubin);
    free(cubin);
    free(log);
  } else {
    printf("no ptxas here: %s\n", err);
  }
  CHECK(ptxas_locate("/nonexistent/ptxas", NULL, ptxas, sizeof ptxas, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "TILE_PTXAS_PATH is '/nonexistent/ptxas'");
  free(ptx);
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
  return check_report();
}
