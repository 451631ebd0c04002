/* The LLVM side of the build: which LLVM is linked in and whether its NVPTX
 * backend is there.  This is the only folder that includes LLVM's headers;
 * lowering to LLVM IR (--emit=llir) and PTX generation grow here. */
#include "../../include/tile/tile.h"
#include "llvm.h"

#include <pthread.h>
#include <stdio.h>

#include <llvm-c/Core.h>
#include <llvm-c/Support.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm/Config/llvm-config.h>

const char *tile_build_info(void) { return "LLVM " LLVM_VERSION_STRING ", NVPTX backend (nvptx64-nvidia-cuda)"; }

static void register_nvptx(void) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  /* No loop strength reduction in NVPTX code generation: it gave each row of
   * a pipelined loop's copies its own 64-bit pointer advanced every
   * iteration (D9 of docs/decisions.md).  Loops whose
   * accesses are not vectorised need it (a pointer per element, spilled):
   * codegen.c runs it for those kernels as an optimisation pass.  The
   * option belongs to the copy of LLVM linked into libtile, whose symbols it
   * does not export. */
  const char *argv[] = {"tile", "-disable-lsr"};
  LLVMParseCommandLineOptions(2, argv, NULL);
}

/* LLVM's target registry is a process-wide list that registration updates
 * without a lock (check-then-insert): two threads registering at once can
 * link the NVPTX entry to itself.  So it is done once, under a once-flag,
 * with the code-generation option above: the library's only process-wide
 * state, set once and never changed. */
static pthread_once_t nvptx_registered = PTHREAD_ONCE_INIT;

int llvm_nvptx_available(char *message, size_t size) {
  if (pthread_once(&nvptx_registered, register_nvptx)) {
    if (message && size) snprintf(message, size, "pthread_once failed");
    return 0;
  }
  LLVMTargetRef target;
  char *err = NULL;
  int failed = LLVMGetTargetFromTriple("nvptx64-nvidia-cuda", &target, &err);
  if (message && size) snprintf(message, size, "%s", failed ? err : LLVMGetTargetDescription(target));
  if (err) LLVMDisposeMessage(err);
  return !failed;
}
