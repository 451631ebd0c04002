/* The GPU-layout IR verifier (see tgir.h). */
#include "tgir.h"

typedef struct Verifier {
  const TirFunc *f;
  Diags *d;
  int problems;
} Verifier;

static void problem(Verifier *V, Loc loc, const char *fmt, int value, const char *detail) {
  diag_error(V->d, loc, fmt, value, detail);
  V->problems++;
}

static void check_value(Verifier *V, Loc loc, int v) {
  const Type *t = tir_type(V->f, v);
  const Layout *l = tir_layout(V->f, v);
  if (t->rank == 0) return;
  if (!l) return problem(V, loc, "GPU-layout IR: tile %%%d has no layout%s", v, "");
  LinearLayout ll;
  const char *why = NULL;
  if (l->num_warps != V->f->num_warps) problem(V, loc, "GPU-layout IR: %%%d's layout is for another number of warps%s", v, "");
  else if (layout_linear_of(l, t, &ll, &why)) problem(V, loc, "GPU-layout IR: %%%d: %s", v, why);
}

static void verify_block(Verifier *V, const TirBlock *b) {
  for (int i = 0; i < b->args.len; i++) check_value(V, (Loc){0}, b->args.data[i]);
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++) check_value(V, op->loc, op->results.data[k]);
    int elementwise = (tir_op_flags(op->code) & EW) && op->results.len && tir_type(V->f, op->results.data[0])->rank;
    for (int k = 0; elementwise && k < op->operands.len; k++)
      if (tir_layout(V->f, op->operands.data[k]) != tir_layout(V->f, op->results.data[0]))
        problem(V, op->loc, "GPU-layout IR: operand %%%d of an elementwise op has another layout than its result%s",
                op->operands.data[k], "");
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) verify_block(V, op->regions[r]);
  }
}

int tgir_verify(const TirFunc *f, Diags *d) {
  Verifier V = {f, d, 0};
  verify_block(&V, f->body);
  return V.problems;
}
