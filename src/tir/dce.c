/* Dead code elimination.
 *
 * Requires: a verified function.
 * Guarantees: no pure region-less op has only unused results.  Ops with
 *   effects and structured ops (for, if, while) stay, results and all:
 *   dropping a loop's unused carried value would mean rewriting its
 *   regions' arguments and yields.
 * Invalidates: nothing cached.
 *
 * One backward walk suffices: every use of a value comes after its
 * definition in walk order (nested regions are walked when their op is
 * reached), so by the time an op is reached all its uses have been seen,
 * and removing an op releases its operands before their definitions. */
#include "passes.h"

static int dead(const TirOp *op, const int *uses) {
  if (!(tir_op_flags(op->code) & PURE) || op->regions[0] || op->regions[1]) return 0;
  for (int k = 0; k < op->results.len; k++)
    if (uses[op->results.data[k]]) return 0;
  return 1;
}

/* Removes b's dead ops, last first; returns how many. */
static int sweep(TirBlock *b, int *uses) {
  int removed = 0, kept = b->ops.len;
  for (int i = b->ops.len - 1; i >= 0; i--) {
    TirOp *op = b->ops.data[i];
    for (int r = 1; r >= 0; r--)
      if (op->regions[r]) removed += sweep(op->regions[r], uses);
    if (dead(op, uses)) {
      for (int k = 0; k < op->operands.len; k++) uses[op->operands.data[k]]--;
      removed++;
      continue;
    }
    b->ops.data[--kept] = op;
  }
  /* the kept ops sit at the end of the array, in order: move them down */
  int n = b->ops.len - kept;
  for (int i = 0; i < n; i++) b->ops.data[i] = b->ops.data[kept + i];
  b->ops.len = n;
  return removed;
}

void tir_dce(TirFunc *f) {
  int *uses = arena_alloc(f->arena, sizeof *uses * ((size_t)f->types.len + 1));
  tir_index_values(f->body, uses, NULL);
  int removed;
  do removed = sweep(f->body, uses); /* to a fixed point; the second sweep normally finds nothing */
  while (removed);
}
