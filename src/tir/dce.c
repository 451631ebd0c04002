/* Dead code elimination.
 *
 * Requires: a verified function.
 * Guarantees: no pure region-less op has only unused results, and no `for`
 *   carries a value that neither its body (but to carry it on) nor the
 *   code after it uses (a variable the loop reassigns before each use, as
 *   an attention backward's `offs_m`: it would take registers, and make
 *   the pipeliner carry its source twice).  Ops with effects and the other
 *   structured ops (if, while) stay, results and all.
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

static void remove_at(int *data, int *len, int i) {
  for (int j = i + 1; j < *len; j++) data[j - 1] = data[j];
  (*len)--;
}

/* Drops a `for`'s carried values whose result is unused and whose argument
 * only goes to the yield as it is; returns how many.  Their next values
 * are released for the sweep of the body. */
static int drop_dead_carried(TirOp *loop, int *uses) {
  if (loop->code != TIR_FOR) return 0;
  TirBlock *body = loop->regions[0];
  TirOp *yield = body->ops.data[body->ops.len - 1];
  int dropped = 0;
  for (int k = loop->results.len - 1; k >= 0; k--) {
    int arg = body->args.data[1 + k];
    if (uses[loop->results.data[k]] || uses[arg] != (yield->operands.data[k] == arg)) continue;
    uses[loop->operands.data[3 + k]]--;
    uses[yield->operands.data[k]]--;
    remove_at(loop->operands.data, &loop->operands.len, 3 + k);
    remove_at(loop->results.data, &loop->results.len, k);
    remove_at(body->args.data, &body->args.len, 1 + k);
    remove_at(yield->operands.data, &yield->operands.len, k);
    dropped++;
  }
  return dropped;
}

/* Removes b's dead ops, last first; returns how many. */
static int sweep(TirBlock *b, int *uses) {
  int removed = 0, kept = b->ops.len;
  for (int i = b->ops.len - 1; i >= 0; i--) {
    TirOp *op = b->ops.data[i];
    removed += drop_dead_carried(op, uses);
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
