/* Loop-invariant code motion.
 *
 * Requires: a verified function.
 * Guarantees: no pure region-less op directly in a for's body or in either
 *   region of a while has all its operands defined outside the loop: each
 *   such op now sits just before the loop, in its original order.  Inner
 *   loops are done first, so an invariant climbs out of every loop it does
 *   not depend on.  Ops under an if inside the loop stay (hoisting them
 *   would evaluate them when the branch is not taken), and so do integer
 *   divisions and remainders unless their divisor is a constant that makes
 *   them defined (not 0, not -1 when signed): a loop that runs zero times
 *   must not acquire undefined behaviour.
 * Invalidates: nothing cached. */
#include "../support/numeric.h"
#include "passes.h"

#include <string.h>

typedef struct Licm {
  TirFunc *f;
  int *inside;     /* per value: the stamp of the loop it was found in */
  const TirOp **def; /* per value: its defining op, NULL for arguments */
  int stamp;       /* the loop being processed */
} Licm;

static void mark_inside(Licm *L, const TirBlock *b) {
  for (int i = 0; i < b->args.len; i++) L->inside[b->args.data[i]] = L->stamp;
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++) L->inside[op->results.data[k]] = L->stamp;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) mark_inside(L, op->regions[r]);
  }
}

/* Whether op may run when the loop body would not have run it. */
static int speculatable(const Licm *L, const TirOp *op) {
  if (op->code != TIR_DIV && op->code != TIR_REM) return 1;
  DType t = tir_type(L->f, op->results.data[0])->elem;
  if (dtype_is_float(t)) return 1;
  const TirOp *d = L->def[op->operands.data[1]];
  if (!d || d->code != TIR_CONSTANT) return 0;
  int64_t divisor = wrap_int(d->ival, t);
  return divisor != 0 && !(dtype_kind(t) == DK_SINT && divisor == -1);
}

static int invariant(const Licm *L, const TirOp *op) {
  if (!(tir_op_flags(op->code) & PURE) || op->regions[0] || op->regions[1] || !op->results.len) return 0;
  for (int k = 0; k < op->operands.len; k++)
    if (L->inside[op->operands.data[k]] == L->stamp) return 0;
  return speculatable(L, op);
}

/* Moves the invariant ops of `body` to the end of `into`. */
static void hoist_from(Licm *L, TirBlock *body, TirBlock *into) {
  int kept = 0;
  for (int i = 0; i < body->ops.len; i++) {
    TirOp *op = body->ops.data[i];
    if (!invariant(L, op)) {
      body->ops.data[kept++] = op;
      continue;
    }
    for (int k = 0; k < op->results.len; k++) L->inside[op->results.data[k]] = 0;
    vec_push(L->f->arena, &into->ops, op);
  }
  body->ops.len = kept;
}

static void hoist_loop(Licm *L, TirOp *loop, TirBlock *into) {
  L->stamp++;
  for (int r = 0; r < 2; r++)
    if (loop->regions[r]) mark_inside(L, loop->regions[r]);
  for (int r = 0; r < 2; r++)
    if (loop->regions[r]) hoist_from(L, loop->regions[r], into);
}

static void licm_block(Licm *L, TirBlock *b) {
  int n;
  TirOp **ops = tir_take_ops(L->f, b, &n);
  for (int i = 0; i < n; i++) {
    TirOp *op = ops[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) licm_block(L, op->regions[r]);
    if ((op->code == TIR_FOR || op->code == TIR_WHILE) && !(op->flags & NO_LICM)) hoist_loop(L, op, b);
    vec_push(L->f->arena, &b->ops, op);
  }
}

void tir_licm(TirFunc *f) {
  Licm L = {f, NULL, NULL, 0};
  size_t n = (size_t)f->types.len + 1;
  L.inside = arena_alloc(f->arena, sizeof *L.inside * n);
  L.def = arena_alloc(f->arena, sizeof *L.def * n);
  tir_index_values(f->body, NULL, L.def);
  licm_block(&L, f->body);
}
