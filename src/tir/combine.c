/* Combining a dot with the add that accumulates it, as Triton's combine
 * pass does: `acc += tl.dot(a, b)` lowers to add(acc, dot(a, b, zeros)),
 * which costs a zeroed accumulator and an elementwise add per iteration;
 * dot(a, b, acc) accumulates in place.
 *
 * Requires: a verified function (after fold, so zeros are constants; a
 *   splat of a constant zero is recognised too).
 * Guarantees: add(d, dot(a, b, 0)) and add(dot(a, b, 0), d) become
 *   dot(a, b, d) where the dot's only use is the add, both are in the same
 *   block (a dot is never moved into a loop), and the add, the dot and d
 *   have one type.  The dot takes the add's place and result id; the old
 *   dot result is gone (its one use was the add).  Floating-point results
 *   round differently (the products are added to d instead of to zero and
 *   then to d), as in Triton; the interpreter runs this IR too, so it and
 *   the GPU agree.
 * Invalidates: nothing cached. */
#include "passes.h"

#include <string.h>

typedef struct Combine {
  TirFunc *f;
  int *uses;      /* per value: its operand uses anywhere in the function */
  const TirOp **def; /* per value: the op defining it, NULL for arguments */
} Combine;

/* A constant zero (+0 or -0), or a splat of one. */
static int is_zero(const Combine *C, int v) {
  const TirOp *op = C->def[v];
  if (op && op->code == TIR_SPLAT) op = C->def[op->operands.data[0]];
  if (!op || op->code != TIR_CONSTANT) return 0;
  return dtype_is_float(tir_type(C->f, op->results.data[0])->elem) ? op->fval == 0 : op->ival == 0;
}

/* The dot in block b that operand k of `add` comes from, if it can absorb the add; else -1 (its index in b). */
static int absorbing_dot(const Combine *C, const TirBlock *b, int at, const TirOp *add, int k) {
  int v = add->operands.data[k], d = add->operands.data[1 - k], r = add->results.data[0];
  const TirOp *dot = C->def[v];
  if (!dot || dot->code != TIR_DOT || C->uses[v] != 1 || !is_zero(C, dot->operands.data[2])) return -1;
  const Type *t = tir_type(C->f, r);
  if (!type_equal(tir_type(C->f, v), t) || !type_equal(tir_type(C->f, d), t)) return -1;
  for (int i = at - 1; i >= 0; i--)
    if (b->ops.data[i] == dot) return i;
  return -1; /* in another block */
}

/* Rewrites the add at b->ops.data[at] if one of its operands is such a dot; 1 if it did. */
static int combine_add(Combine *C, TirBlock *b, int at) {
  TirOp *add = b->ops.data[at];
  for (int k = 0; k < 2; k++) {
    int i = absorbing_dot(C, b, at, add, k);
    if (i < 0) continue;
    TirOp *dot = b->ops.data[i];
    dot->operands.data[2] = add->operands.data[1 - k];
    dot->results.data[0] = add->results.data[0];
    dot->loc = add->loc; /* the accumulation is what the line wrote: acc += tl.dot(a, b) */
    memmove(&b->ops.data[i], &b->ops.data[i + 1], sizeof *b->ops.data * (size_t)(at - i - 1));
    b->ops.data[at - 1] = dot;
    b->ops.len--;
    memmove(&b->ops.data[at], &b->ops.data[at + 1], sizeof *b->ops.data * (size_t)(b->ops.len - at));
    C->def[dot->results.data[0]] = dot;
    return 1;
  }
  return 0;
}

static void combine_block(Combine *C, TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) combine_block(C, op->regions[r]);
    if (op->code == TIR_ADD && op->results.len == 1 && combine_add(C, b, i)) i--;
  }
}

void tir_combine(TirFunc *f) {
  size_t n = (size_t)f->types.len + 1;
  Combine C = {f, arena_alloc(f->arena, sizeof(int) * n), arena_alloc(f->arena, sizeof(TirOp *) * n)};
  tir_index_values(f->body, C.uses, C.def);
  combine_block(&C, f->body);
}
