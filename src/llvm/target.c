/* The LLVM side of the build: which LLVM is linked in and whether its NVPTX
 * backend is there.  This is the only folder that includes LLVM's headers;
 * lowering to LLVM IR (--emit=llir) and PTX generation grow here. */
#include "../../include/tile/tile.h"
#include "llvm.h"

#include <stdio.h>

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm/Config/llvm-config.h>

const char *tile_build_info(void) { return "LLVM " LLVM_VERSION_STRING ", NVPTX backend (nvptx64-nvidia-cuda)"; }

int llvm_nvptx_available(char *message, size_t size) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  LLVMTargetRef target;
  char *err = NULL;
  int failed = LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &err);
  if (message && size) snprintf(message, size, "%s", failed ? err : LLVMGetTargetDescription(target));
  if (err) LLVMDisposeMessage(err);
  return !failed;
}
