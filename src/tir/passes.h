/* The tile IR passes.  Each keeps the function valid: the pass manager
 * (src/driver/passes.c) runs the verifier after every one. */
#ifndef TILE_TIR_PASSES_H
#define TILE_TIR_PASSES_H

#include "tir.h"

/* The passes (src/driver/passes.def says their order; one file each). */
void tir_fold(TirFunc *f);
void tir_combine(TirFunc *f);
void tir_cse(TirFunc *f);
void tir_assume(TirFunc *f);
void tir_widen(TirFunc *f);
void tir_licm(TirFunc *f);
void tir_contract(TirFunc *f);
void tir_dce(TirFunc *f);

/* AxisInfo (axisinfo.c): per value and dimension, the contiguity,
 * divisibility and constancy that layouts and vectorisation rely on. */
typedef struct AxisInfo {
  int64_t contiguity[MAX_RANK];   /* length of runs of consecutive integers */
  int64_t divisibility[MAX_RANK]; /* largest power of two dividing each run's first element */
  int64_t constancy[MAX_RANK];    /* length of runs of equal values */
  int nonneg;                     /* every element is >= 0 (wrap-around ignored) */
  int rank;
} AxisInfo;

/* Computes AxisInfo for every value of f (indexed by value id). */
AxisInfo *tir_axis_info(const TirFunc *f);
/* Prints the function with each value's AxisInfo after its op. */
void tir_print_axis_info(const TirFunc *f, Buf *out);

#endif
