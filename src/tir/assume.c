/* Checked sign assumptions for `%`.
 *
 * x % y is contiguous in aligned groups only when x >= 0 (C's truncating
 * remainder breaks the runs around zero), and AxisInfo can seldom prove
 * that of the tutorial's `(pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N`:
 * pid_n comes from // and % by values built from the parameters.  Triton
 * ignores the sign and vectorises; a negative dividend would then load the
 * wrong elements, silently.  Here the assumption is made but checked: where
 * the dividend is splat(s) + r with r provably non-negative (a range),
 *     assert(s >= 0, "...")       just before the add: once per program
 *                                 where, as in the tutorial, that is
 *                                 before the loop
 *     s' = maximum(s, 0)          equal to s whenever the assert passed
 * and the add takes splat(s') instead of splat(s), so AxisInfo sees a
 * non-negative dividend.  A kernel whose s is negative stops with the
 * assert's message and the `%`'s source line, on the GPU and on the
 * interpreter alike, instead of computing wrong results.
 *
 * Requires: a verified function (before widen, which would put casts
 *   between the add and the `%`).
 * Guarantees: only a tile `%` of integers whose dividend is not known
 *   non-negative is touched, and only where the dividend has runs and the
 *   divisor a divisibility of at least 2 along some dimension (elsewhere the
 *   assumption would gain nothing).
 * Invalidates: nothing cached. */
#include "passes.h"

#include <string.h>

typedef struct Assume {
  TirFunc *f;
  const AxisInfo *info;  /* of the function as it was on entry */
  const TirOp **def;     /* per value: its defining op, NULL for arguments */
  const TirOp **rem_of;  /* per value: a `%` that would gain from the value being non-negative */
} Assume;

/* Whether x % y would have runs longer than 1 along some dimension were x known non-negative. */
static int would_gain(const Assume *A, const TirOp *rem) {
  const Type *t = tir_type(A->f, rem->results.data[0]);
  const AxisInfo *x = &A->info[rem->operands.data[0]], *y = &A->info[rem->operands.data[1]];
  if (!t->rank || !dtype_is_int(t->elem) || x->nonneg) return 0;
  for (int d = 0; d < t->rank; d++)
    if (x->contiguity[d] > 1 && y->divisibility[d] >= 2 && y->contiguity[d] == 1) return 1;
  return 0;
}

static void find_rems(Assume *A, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) find_rems(A, op->regions[r]);
    if (op->code == TIR_REM && would_gain(A, op)) A->rem_of[op->operands.data[0]] = op;
  }
}

/* Operand k of `add` is splat(s) of a scalar of unknown sign, the other operand is non-negative: s, else -1. */
static int uniform_part(const Assume *A, const TirOp *add, int k) {
  const TirOp *splat = A->def[add->operands.data[k]];
  if (!splat || splat->code != TIR_SPLAT || !A->info[add->operands.data[1 - k]].nonneg) return -1;
  int s = splat->operands.data[0];
  return A->info[s].nonneg ? -1 : s;
}

static TirOp *new_op(Assume *A, TirCode code, Loc loc, int a, int b, Type *t) {
  TirOp *op = tir_op_new(A->f, code, loc);
  tir_add_operand(A->f, op, a);
  if (b >= 0) tir_add_operand(A->f, op, b);
  if (t) tir_add_result(A->f, op, t);
  return op;
}

/* The ops that check s >= 0 and give splat(max(s, 0)) in the add's operand k, appended to `out`. */
static void assume_nonneg(Assume *A, TirBlock *out, TirOp *add, int k, int s, const TirOp *rem) {
  Type *st = tir_type(A->f, s);
  Loc loc = rem->loc;
  TirOp *zero = tir_op_new(A->f, TIR_CONSTANT, loc);
  int z = tir_add_result(A->f, zero, st);
  TirOp *ge = new_op(A, TIR_CMP, loc, s, z, type_scalar(A->f->arena, DT_I1));
  ge->kind = CMP_GE;
  TirOp *check = new_op(A, TIR_ASSERT, loc, ge->results.data[0], -1, NULL);
  check->str = "a negative dividend of '%', which tile assumes non-negative to vectorise (as Triton does)";
  check->flags = ASSERT_TRAP;
  TirOp *max = new_op(A, TIR_MAXIMUM, loc, s, z, st);
  TirOp *splat = new_op(A, TIR_SPLAT, loc, max->results.data[0], -1, tir_type(A->f, add->operands.data[k]));
  TirOp *ops[] = {zero, ge, check, max, splat};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) tir_append(A->f, out, ops[i]);
  add->operands.data[k] = splat->results.data[0];
}

static void assume_block(Assume *A, TirBlock *b) {
  int n;
  TirOp **ops = tir_take_ops(A->f, b, &n);
  for (int i = 0; i < n; i++) {
    TirOp *op = ops[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) assume_block(A, op->regions[r]);
    const TirOp *rem = op->code == TIR_ADD && op->results.len == 1 ? A->rem_of[op->results.data[0]] : NULL;
    for (int k = 0; rem && k < 2; k++) {
      int s = uniform_part(A, op, k);
      if (s < 0) continue;
      assume_nonneg(A, b, op, k, s, rem);
      break;
    }
    tir_append(A->f, b, op);
  }
}

void tir_assume(TirFunc *f) {
  size_t n = (size_t)f->types.len + 1;
  Assume A = {f, tir_axis_info(f), arena_alloc(f->arena, sizeof(TirOp *) * n),
              arena_alloc(f->arena, sizeof(TirOp *) * n)};
  tir_index_values(f->body, NULL, A.def);
  find_rems(&A, f->body);
  assume_block(&A, f->body);
}
