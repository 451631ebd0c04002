/* GPU-layout IR to LLVM IR (placeholder until the lowering lands). */
#include "generate.h"

int llvm_generate(const TirFunc *f, const GpuTarget *t, int want_llir, int want_ptx, Arena *a, GpuCode *out,
                  Diags *d) {
  (void)f, (void)t, (void)want_llir, (void)want_ptx, (void)a, (void)out;
  diag_error(d, (Loc){0}, "lowering to LLVM IR is not implemented yet");
  return -1;
}
