/* Code generation from GPU-layout IR, as the rest of the library sees it:
 * no LLVM types here, so only src/llvm includes LLVM's headers. */
#ifndef TILE_LLVM_GENERATE_H
#define TILE_LLVM_GENERATE_H

#include "../support/arch.h"
#include "../tir/tir.h"

typedef struct GpuTarget {
  const char *arch;   /* "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"; or "sim" (as sm_80), "sim90" (as
                         sm_90a): LLVM IR for the host that calls the thread simulator of tests/sim
                         instead of GPU instructions */
  const char *libdevice; /* libdevice.10.bc, linked when a kernel calls a math function the GPU has no
                            instruction for (the driver resolves the default: tile_options.libdevice,
                            else the context's); NULL: none, an error for such a kernel */
  struct GpuTimes *times; /* NULL, or where the milliseconds of LLVM's optimiser and of NVPTX are added */
  int maxnreg;        /* registers a thread may use (the entry's .maxnreg); 0: no cap.  The simulator ignores it */
} GpuTarget;

typedef struct GpuTimes {
  double optimize;    /* LLVM's optimisation passes */
  double codegen;     /* NVPTX's instruction selection and PTX printing */
} GpuTimes;
typedef struct GpuCode {
  const char *llir;   /* the LLVM module as text, before optimisation (if asked) */
  const char *ptx;    /* PTX text (if asked and the target is a GPU) */
  size_t ptx_len;
  int shared_bytes;   /* dynamic shared memory the kernel needs */
} GpuCode;

/* Lowers `f` (GPU-layout IR) to LLVM IR for `t`, and with want_ptx runs
 * LLVM's optimiser and NVPTX backend to PTX.  Text lives in `a`.  Returns
 * 0, or -1 after reporting to `d` (an op or layout the backend cannot lower
 * yet, LLVM's own failure). */
int llvm_generate(const TirFunc *f, const GpuTarget *t, int want_llir, int want_ptx, Arena *a, GpuCode *out,
                  Diags *d);

#endif
