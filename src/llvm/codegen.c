/* LLVM IR to PTX through LLVM's NVPTX backend.  A module built by the
 * lowering (from the GPU-layout IR) is verified, optimised and emitted as
 * PTX text for the requested SM. */
#include "generate.h"
#include "llvm.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* LLVM's O1 pipeline, NVPTX's passes (NVVMReflect for libdevice...)
 * included: the lowering already emits vector memory accesses and
 * straight-line tile code, and ptxas schedules and allocates registers, so
 * what O2/O3 add (SLP and loop vectorisation, GVN, aggressive unrolling) only
 * costs time: over every kernel of tests/lit/ptx the SASS after ptxas has the
 * same instructions as with default<O3> (two kernels in another order), and
 * optimisation takes 1.2 ms instead of 1.6 for vector add, 28 ms instead of
 * 75 for the FMA matmul of config 0 (bench/README.md, "Compile time"). */
static const char OPTIMIZATION_PIPELINE[] = "default<O1>";
/* Loop strength reduction, which NVPTX code generation leaves out
 * (target.c), run last for a kernel whose loops access memory element by
 * element (lower_note_access): there it folds the elements' 64-bit pointers
 * into one advancing pointer plus offsets ptxas keeps in uniform registers
 * (docs/decisions.md, D6). */
static const char PIPELINE_WITH_LSR[] = "default<O1>,function(loop(loop-reduce))";

/* ---- widening multiplies -------------------------------------------------- */

/* v's i32 source if v extends one (sext: *is_signed 1, zext: 0, either: -1 for a zext of a non-negative
 * value or a non-negative constant that fits), else NULL; *here whether the extension sits in `block`. */
static LLVMValueRef i32_source(LLVMValueRef v, LLVMBasicBlockRef block, int *is_signed, int *here) {
  LLVMTypeRef i32 = LLVMInt32TypeInContext(LLVMGetTypeContext(LLVMTypeOf(v)));
  if (LLVMIsAConstantInt(v)) {
    long long c = LLVMConstIntGetSExtValue(v);
    *is_signed = c >= 0 ? -1 : 1, *here = 1;
    return c >= INT32_MIN && c <= INT32_MAX ? LLVMConstInt(i32, (unsigned long long)c, 1) : NULL;
  }
  if (!LLVMIsAInstruction(v)) return NULL;
  LLVMOpcode code = LLVMGetInstructionOpcode(v);
  if ((code != LLVMSExt && code != LLVMZExt) || LLVMTypeOf(LLVMGetOperand(v, 0)) != i32) return NULL;
  *is_signed = code == LLVMSExt ? 1 : LLVMGetNNeg(v) ? -1 : 0; /* zext nneg: sext as well */
  *here = LLVMGetInstructionParent(v) == block;
  return LLVMGetOperand(v, 0);
}

/* An i64 multiply of two extended i32 becomes PTX's mul.wide (one IMAD.WIDE, with the addend ptxas
 * folds in) where instruction selection, which sees one block at a time, would not: an operand
 * extended in another block (widen's exact `rows * N` in a loop, N extended once before it) is
 * otherwise a 64-bit multiply, three IMADs.  Run after the optimisation pipeline, so that what LLVM
 * strength-reduces into steps is gone first. */
static LLVMValueRef widening_multiply(LLVMBuilderRef b, LLVMValueRef mul) {
  if (LLVMGetInstructionOpcode(mul) != LLVMMul || LLVMTypeOf(mul) != LLVMInt64TypeInContext(LLVMGetTypeContext(LLVMTypeOf(mul))))
    return NULL;
  LLVMBasicBlockRef block = LLVMGetInstructionParent(mul);
  int sa, sb, here_a, here_b;
  LLVMValueRef a = i32_source(LLVMGetOperand(mul, 0), block, &sa, &here_a);
  LLVMValueRef c = i32_source(LLVMGetOperand(mul, 1), block, &sb, &here_b);
  if (!a || !c || (here_a && here_b) || (sa >= 0 && sb >= 0 && sa != sb)) return NULL;
  int is_signed = sa >= 0 ? sa : sb >= 0 ? sb : 1;
  LLVMTypeRef i32 = LLVMTypeOf(a), params[2] = {i32, i32}, fn = LLVMFunctionType(LLVMTypeOf(mul), params, 2, 0);
  const char *text = is_signed ? "mul.wide.s32 $0, $1, $2;" : "mul.wide.u32 $0, $1, $2;";
  LLVMValueRef asm_ = LLVMGetInlineAsm(fn, (char *)text, strlen(text), (char *)"=l,r,r", 6, 0, 0, LLVMInlineAsmDialectATT, 0);
  LLVMPositionBuilderBefore(b, mul);
  LLVMValueRef args[2] = {a, c};
  return LLVMBuildCall2(b, fn, asm_, args, 2, "");
}

static void widen_multiplies(LLVMModuleRef module) {
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(module));
  for (LLVMValueRef f = LLVMGetFirstFunction(module); f; f = LLVMGetNextFunction(f))
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb; bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb), next; i; i = next) {
        next = LLVMGetNextInstruction(i);
        LLVMValueRef wide = widening_multiply(b, i);
        if (!wide) continue;
        LLVMReplaceAllUsesWith(i, wide);
        LLVMInstructionEraseFromParent(i);
      }
  LLVMDisposeBuilder(b);
}

static void set_error(char *err, size_t size, const char *what, char *llvm_message) {
  snprintf(err, size, "%s%s%s", what, llvm_message ? ": " : "", llvm_message ? llvm_message : "");
  if (llvm_message) LLVMDisposeMessage(llvm_message);
}

/* The NVPTX target machine for `arch` ("sm_90", "sm_90a", "sm_80"...) writing PTX ISA `ptx_isa` (84: 8.4;
 * 0: 8.0, which assembles with the CUDA 12 and 13 ptxas and covers sm_90a; fp8 mma.sync needs 8.4). */
static LLVMTargetMachineRef target_machine(const char *arch, int ptx_isa, char *err, size_t size) {
  char message[256];
  if (!llvm_nvptx_available(message, sizeof message)) {
    snprintf(err, size, "LLVM's NVPTX backend is not available: %s", message);
    return NULL;
  }
  LLVMTargetRef target;
  char *error = NULL;
  if (LLVMGetTargetFromTriple(LLVM_NVPTX_TRIPLE, &target, &error)) {
    set_error(err, size, "no NVPTX target", error);
    return NULL;
  }
  char features[16];
  snprintf(features, sizeof features, "+ptx%d", ptx_isa > 80 ? ptx_isa : 80);
  return LLVMCreateTargetMachine(target, LLVM_NVPTX_TRIPLE, arch, features, LLVMCodeGenLevelAggressive,
                                 LLVMRelocDefault, LLVMCodeModelDefault);
}

static double clock_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

int llvm_emit_ptx(LLVMModuleRef module, const GpuTarget *t, int strength_reduce, int ptx_isa, char **ptx, size_t *len,
                  char *err, size_t size) {
  const char *arch = t->arch;
  char *error = NULL;
  if (LLVMVerifyModule(module, LLVMReturnStatusAction, &error)) {
    set_error(err, size, "internal error: invalid LLVM IR", error);
    return -1;
  }
  if (error) LLVMDisposeMessage(error);
  LLVMTargetMachineRef tm = target_machine(arch, ptx_isa, err, size);
  if (!tm) return -1;
  LLVMSetTarget(module, LLVM_NVPTX_TRIPLE);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(module, layout);
  double start = clock_ms();
  LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
  LLVMErrorRef failed = LLVMRunPasses(module, strength_reduce ? PIPELINE_WITH_LSR : OPTIMIZATION_PIPELINE, tm, options);
  LLVMDisposePassBuilderOptions(options);
  double optimized = clock_ms();
  int status = 0;
  if (failed) {
    set_error(err, size, "LLVM optimisation failed", LLVMGetErrorMessage(failed));
    status = -1;
  } else {
    widen_multiplies(module);
  }
  LLVMMemoryBufferRef buffer = NULL;
  if (!status && LLVMTargetMachineEmitToMemoryBuffer(tm, module, LLVMAssemblyFile, &error, &buffer)) {
    set_error(err, size, "PTX generation failed", error);
    status = -1;
  }
  if (!status) {
    *len = LLVMGetBufferSize(buffer);
    *ptx = malloc(*len + 1);
    if (*ptx) {
      memcpy(*ptx, LLVMGetBufferStart(buffer), *len);
      (*ptx)[*len] = 0;
    } else {
      snprintf(err, size, "out of memory for %zu bytes of PTX", *len);
      status = -1;
    }
    LLVMDisposeMemoryBuffer(buffer);
  }
  if (t->times) {
    t->times->optimize += optimized - start;
    t->times->codegen += clock_ms() - optimized;
  }
  LLVMDisposeTargetData(layout);
  LLVMDisposeTargetMachine(tm);
  return status;
}
