/* The tile IR passes and the pass manager.  Each pass keeps the function
 * valid: the verifier runs after every pass. */
#ifndef TILE_TIR_PASSES_H
#define TILE_TIR_PASSES_H

#include "tir.h"

#define PASS(id, name, summary) void tir_##id(TirFunc *f);
#include "passes.def"
#undef PASS

/* Runs the passes named in `list` ("fold,cse", "all", "none"; NULL: all) in
 * the default order, verifying after each; with `dump` set, prints the
 * function after each pass into it.  Returns 0, or the number of problems
 * (an unknown pass name, a verifier failure), reported to `d`. */
int tir_run_passes(TirFunc *f, const char *list, Diags *d, Buf *dump);
/* Whether `name` is one of the comma-separated words of `list`.  A list
 * also names GPU-layout IR steps (src/tgir/passes.def); each level runs
 * the ones it knows. */
int tir_pass_listed(const char *list, const char *name);

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
