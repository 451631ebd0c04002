/* LLVM IR to PTX through LLVM's NVPTX backend.  A module built by the
 * lowering (next: from the GPU-layout IR) is verified, optimised at -O3 and
 * emitted as PTX text for the requested SM. */
#include "llvm.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <stdio.h>
#include <string.h>

static void set_error(char *err, size_t size, const char *what, char *llvm_message) {
  snprintf(err, size, "%s%s%s", what, llvm_message ? ": " : "", llvm_message ? llvm_message : "");
  if (llvm_message) LLVMDisposeMessage(llvm_message);
}

/* The NVPTX target machine for `arch` ("sm_90", "sm_90a", "sm_80"...). */
static LLVMTargetMachineRef target_machine(const char *arch, char *err, size_t size) {
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
  /* PTX ISA 8.0 assembles with the CUDA 12 and 13 ptxas and covers sm_90a */
  return LLVMCreateTargetMachine(target, LLVM_NVPTX_TRIPLE, arch, "+ptx80", LLVMCodeGenLevelAggressive,
                                 LLVMRelocDefault, LLVMCodeModelDefault);
}

int llvm_emit_ptx(LLVMModuleRef module, const char *arch, char **ptx, size_t *len, char *err, size_t size) {
  char *error = NULL;
  if (LLVMVerifyModule(module, LLVMReturnStatusAction, &error)) {
    set_error(err, size, "internal error: invalid LLVM IR", error);
    return -1;
  }
  if (error) LLVMDisposeMessage(error);
  LLVMTargetMachineRef tm = target_machine(arch, err, size);
  if (!tm) return -1;
  LLVMSetTarget(module, LLVM_NVPTX_TRIPLE);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(module, layout);
  LLVMPassBuilderOptionsRef options = LLVMCreatePassBuilderOptions();
  LLVMErrorRef failed = LLVMRunPasses(module, "default<O3>", tm, options);
  LLVMDisposePassBuilderOptions(options);
  int status = 0;
  if (failed) {
    set_error(err, size, "LLVM optimisation failed", LLVMGetErrorMessage(failed));
    status = -1;
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
  LLVMDisposeTargetData(layout);
  LLVMDisposeTargetMachine(tm);
  return status;
}
