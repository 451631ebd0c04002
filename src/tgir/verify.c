/* The GPU-layout IR verifier (tgir.h): on top of tile IR's rules (tir_verify
 * runs first), every tile value has a layout that applies to it and every
 * op's operands have the layouts its rule needs (rules.c):
 *   - a tile value (op result or region argument) has a layout of its
 *     rank, for the function's num_warps, whose linear form exists for its
 *     shape; a scalar has none;
 *   - elementwise ops (and hint, rand, scan, assert), loads, stores,
 *     atomics: every tile operand has the op's layout;
 *   - broadcast: the operand has the result's layout; expand_dims: the
 *     slice of the result's along the axis; reduce: a tile result has the
 *     slice of the operand's; trans: the result has the operand's blocked
 *     layout, permuted;
 *   - dot: operands in the dot-operand layouts of the result's, the
 *     accumulator in the result's;
 *   - for, while, if: init, region argument, yield and result of a carried
 *     value share one layout;
 *   - convert_layout keeps the type, tile to tile;
 *   - buffers (values in shared layouts) come from local_alloc and
 *     memdesc_index (one buffer of a multi-buffer, in the slot layout) and
 *     go to local_load, local_store, async_copy and wgmma dots (NVMMA
 *     layouts; B always, A when not in registers) only.
 * Each problem is reported at the op's location; a failure after a step is
 * a compiler bug, in text read back a mistake in the text. */
#include "passes.h"

typedef struct Verifier {
  const TirFunc *f;
  Diags *d;
  int problems;
} Verifier;

static const char *name_of(Verifier *V, const Layout *l) { return l ? layout_name(V->f->arena, l) : "no layout"; }

static void problem(Verifier *V, const TirOp *op, const char *msg) {
  if (op) diag_error(V->d, op->loc, "internal error: GPU-layout IR verifier: '%s': %s", tir_op_name(op->code), msg);
  else diag_error(V->d, (Loc){0}, "internal error: GPU-layout IR verifier: %s", msg);
  V->problems++;
}

/* A value's layout exists exactly for tiles and applies to its shape. */
static void check_value(Verifier *V, const TirOp *op, int v) {
  Arena *a = V->f->arena;
  const Type *t = tir_type(V->f, v);
  const Layout *l = tir_layout(V->f, v);
  LinearLayout ll;
  const char *why = NULL;
  if (t->rank == 0) {
    if (l) problem(V, op, arena_printf(a, "scalar %%%d has layout %s", v, name_of(V, l)));
  } else if (!l) {
    problem(V, op, arena_printf(a, "tile %%%d has no layout", v));
  } else if (l->rank != t->rank) {
    problem(V, op, arena_printf(a, "%%%d of rank %d has layout %s of rank %d", v, t->rank, name_of(V, l), l->rank));
  } else if (!layout_is_shared(l) && l->num_warps != V->f->num_warps) {
    problem(V, op, arena_printf(a, "%%%d has layout %s for %d warps in a function of %d", v, name_of(V, l),
                                l->num_warps, V->f->num_warps));
  } else if (layout_linear_of(l, t, &ll, &why)) {
    problem(V, op, arena_printf(a, "%%%d: layout %s does not apply to %s: %s", v, name_of(V, l), type_str(a, t), why));
  }
}

static void check_operands(Verifier *V, const TirOp *op, const TirOp *parent) {
  const Layout *own = tgir_own_layout(V->f, op);
  for (int k = 0; k < op->operands.len; k++) {
    int v = op->operands.data[k];
    const char *rule;
    const Layout *need = tgir_operand_need(V->f, op, k, own, parent, &rule);
    if (need && tir_layout(V->f, v) != need)
      problem(V, op, arena_printf(V->f->arena, "operand %%%d has %s, needs %s (%s)", v, name_of(V, tir_layout(V->f, v)),
                                  name_of(V, need), rule));
  }
}

static void check_same(Verifier *V, const TirOp *op, int v, const Layout *want, const char *rule) {
  if (tir_layout(V->f, v) != want)
    problem(V, op, arena_printf(V->f->arena, "%%%d has %s, needs %s (%s)", v, name_of(V, tir_layout(V->f, v)),
                                name_of(V, want), rule));
}

static const char *result_rule(TirCode code) {
  switch (code) {
  case TIR_REDUCE: return "reduce's result has the slice of its operand's layout along the axis";
  case TIR_TRANS: return "trans' result has its operand's blocked layout, permuted";
  case TIR_JOIN: return "join's result has its operands' blocked layout with a last dimension of 2 in registers";
  default: return "split's result has its operand's blocked layout without the last dimension";
  }
}

/* Rules on results: reduce, trans, join, split, and carried values' region arguments. */
static void check_results(Verifier *V, const TirOp *op) {
  const TirFunc *f = V->f;
  int res = op->results.len ? op->results.data[0] : -1;
  for (int i = 0; op->code == TIR_REDUCE_COMBINE && i < op->results.len; i++)
    if (tgir_is_tile(f, op->results.data[i]))
      check_same(V, op, op->results.data[i], tgir_result_layout(f, op, tir_layout(f, op->operands.data[i])),
                 result_rule(TIR_REDUCE));
  for (int i = 1; op->code == TIR_SCAN_COMBINE && i < op->results.len; i++)
    check_same(V, op, op->results.data[i], tir_layout(f, op->results.data[0]), "the results of a scan share one layout");
  if ((op->code == TIR_REDUCE && tgir_is_tile(f, res)) || op->code == TIR_TRANS || op->code == TIR_JOIN ||
      op->code == TIR_SPLIT)
    check_same(V, op, res, tgir_result_layout(f, op, tir_layout(f, op->operands.data[0])), result_rule(op->code));
  const char *carried = "a carried value keeps its layout (init, region argument, yield and result share one)";
  if (op->code == TIR_FOR)
    for (int i = 0; i < op->results.len; i++)
      check_same(V, op, op->regions[0]->args.data[1 + i], tir_layout(f, op->results.data[i]), carried);
  if (op->code == TIR_WHILE)
    for (int i = 0; i < op->results.len && i < op->regions[1]->args.len; i++)
      check_same(V, op, op->regions[1]->args.data[i], tir_layout(f, op->results.data[i]), carried);
  if (op->code == TIR_CONVERT_LAYOUT &&
      (!type_equal(tir_type(f, op->operands.data[0]), tir_type(f, res)) || !tgir_is_tile(f, res)))
    problem(V, op, "converts a tile to a tile of the same type");
}

/* Buffers (values in a shared layout) are made by local_alloc,
 * memdesc_index and mbarrier_alloc only and read by the shared-memory ops and wgmma dots. */
static void check_buffers(Verifier *V, const TirOp *op) {
  const TirFunc *f = V->f;
  int makes = op->code == TIR_LOCAL_ALLOC || op->code == TIR_MEMDESC_INDEX || op->code == TIR_MEMDESC_TRANS ||
              op->code == TIR_MBAR_ALLOC;
  for (int k = 0; k < op->results.len; k++)
    if (makes != layout_is_shared(tir_layout(f, op->results.data[k])))
      problem(V, op, makes ? "a buffer needs a shared layout" : "only local_alloc, memdesc_index and memdesc_trans make buffers");
  for (int k = 0; k < op->operands.len; k++) {
    const Layout *l = tir_layout(f, op->operands.data[k]);
    int is_buffer = layout_is_shared(l), want = 0;
    switch (op->code) {
    case TIR_MEMDESC_INDEX: want = k == 0; break;
    case TIR_MEMDESC_TRANS: want = 1; break;
    case TIR_LOCAL_LOAD:
    case TIR_ASYNC_WAIT: want = 1; break;
    case TIR_LOCAL_STORE:
    case TIR_ASYNC_COPY: want = k == 1; break;
    case TIR_MBAR_WAIT:
    case TIR_MBAR_INVAL: want = k == 0; break;
    case TIR_TMA_COPY: want = k < 2; break;
    case TIR_TMA_STORE: want = k == 0; break;
    case TIR_DOT: {
      const Layout *acc = tir_layout(f, op->results.data[0]);
      int wgmma = acc && acc->kind == LAYOUT_MMA && acc->version == 3;
      want = wgmma && k < 2 && (k == 1 || is_buffer);
      if (is_buffer && (!wgmma || l->kind != LAYOUT_NVMMA)) want = 0;
      break;
    }
    default: break;
    }
    if (is_buffer != want)
      problem(V, op, arena_printf(f->arena, "operand %%%d %s", op->operands.data[k],
                                  want ? "must be a buffer (a shared layout)" : "is a buffer here it cannot be"));
  }
  if (op->code == TIR_MEMDESC_INDEX && layout_is_shared(tir_layout(f, op->operands.data[0])) &&
      tir_layout(f, op->results.data[0]) != layout_shared_slot(f->layout_table, tir_layout(f, op->operands.data[0])))
    problem(V, op, "the result has the layout of one buffer of its operand's");
  if (op->code == TIR_MEMDESC_TRANS && !tgir_views_transposed(f, op->operands.data[0], op->results.data[0]))
    problem(V, op, "the result's layout puts each element where the operand's puts its transpose");
  if ((op->code == TIR_TMA_COPY || op->code == TIR_TMA_STORE) &&
      (op->ival < 0 || op->ival >= f->tensor_maps.len || op->operands.len != (op->code == TIR_TMA_COPY ? 6 : 3)))
    problem(V, op, "needs a tensor map of the function and two coordinates");
}

static void verify_block(Verifier *V, const TirBlock *b, const TirOp *parent) {
  for (int i = 0; i < b->args.len; i++) check_value(V, parent, b->args.data[i]);
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) verify_block(V, op->regions[r], op);
    for (int k = 0; k < op->results.len; k++) check_value(V, op, op->results.data[k]);
    check_operands(V, op, parent);
    check_results(V, op);
    check_buffers(V, op);
  }
}

int tgir_verify(const TirFunc *f, Diags *d) {
  Verifier V = {f, d, 0};
  verify_block(&V, f->body, NULL);
  return V.problems;
}
