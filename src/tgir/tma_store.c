/* tma-store: a tensor descriptor's store goes out by the tensor memory
 * accelerator, as Triton lowers desc.store:
 *
 *     store ptr, value, mask        (the descriptor form: tma.c)
 * becomes
 *     %buf = local_alloc value : T[M, N] #nvmma_shared   (the swizzle the map has)
 *     tma_store %buf, origin_inner, origin_outer map(...)
 *
 * The tile goes to shared memory in the layout the map's swizzle expects,
 * and one thread writes the box; TMA drops the elements outside the tensor,
 * which are the ones the mask drops.  Only where the box's start is known
 * not to be negative (tma.c): a bulk store from below 0 is an illegal
 * instruction, where a bulk load reads zeros.  A store whose value was converted to
 * the store's layout takes the value before the conversion (the epilogue's
 * mma accumulator goes to shared memory once, not twice).  The pointers and
 * the mask, dead then, go with DCE.
 *
 * On sm_90a, for the GPU and the simulator (arch.def's tma column), which
 * models the bulk store (tile_sim_tma_store).
 *
 * Requires: GPU-layout IR (after pipeline: the loops' maps come first).
 * Guarantees: the same elements written; the buffer is read by the copy
 *   before anything writes its bytes again (lower_tma.c waits).
 * Invalidates: nothing outside the rewritten stores. */
#include "passes.h"

#include <string.h>

typedef struct Rewrite {
  TirFunc *f;
  const AxisInfo *axis;
  const TirOp **def;     /* per value id: its defining op */
  OpList out;            /* the ops of the block being rebuilt */
} Rewrite;

static int emit(Rewrite *R, TirCode code, Type *t, const Layout *l, const int *operands, int n, Loc loc) {
  TirOp *op = tir_op_new(R->f, code, loc);
  for (int i = 0; i < n; i++) tir_add_operand(R->f, op, operands[i]);
  int r = t ? tir_add_result(R->f, op, t) : -1;
  if (t) tir_set_layout(R->f, r, l);
  vec_push(R->f->arena, &R->out, op);
  return r;
}

/* The stored tile before a conversion to the store's layout. */
static int unconverted(Rewrite *R, int v) {
  const TirOp *d = R->def[v];
  return d && d->code == TIR_CONVERT_LAYOUT && tgir_is_tile(R->f, d->operands.data[0]) ? d->operands.data[0] : v;
}

static int rewrite_store(Rewrite *R, const TirOp *store) {
  TmaLoad t;
  const Layout *buffer = tma_plan_store(R->f, R->axis, store, &t);
  if (!buffer) return 0;
  Loc loc = store->loc;
  int value = unconverted(R, store->operands.data[1]);
  int buf = emit(R, TIR_LOCAL_ALLOC, tir_type(R->f, value), buffer, &value, 1, loc);
  /* an empty dimension moves the tile past every extent: a bulk store starting below 0 is an illegal
   * instruction, and the boxes after the first start further along (at most 256 further, no overflow) */
  int ops[3] = {buf, tgir_tma_origin(R->f, &R->out, &t, 0, -1, ARCH_MAX_TENSOR_MAP_DIM, loc),
                tgir_tma_origin(R->f, &R->out, &t, 1, -1, ARCH_MAX_TENSOR_MAP_DIM, loc)};
  emit(R, TIR_TMA_STORE, NULL, NULL, ops, 3, loc);
  R->out.data[R->out.len - 1]->ival = t.map;
  return 1;
}

static void rewrite_block(Rewrite *R, TirBlock *b) {
  OpList saved = R->out;
  memset(&R->out, 0, sizeof R->out);
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) rewrite_block(R, op->regions[r]);
    if (op->code != TIR_STORE || !rewrite_store(R, op)) vec_push(R->f->arena, &R->out, op);
  }
  b->ops.data = R->out.data, b->ops.len = R->out.len, b->ops.cap = R->out.cap;
  R->out = saved;
}

void tgir_tma_store(TirFunc *f, const TgirOptions *o) {
  if (!o->tma_store) return;
  Rewrite R = {f, tir_axis_info(f), arena_alloc(f->arena, sizeof(TirOp *) * (size_t)(f->types.len + 1)), {0}};
  memset(R.def, 0, sizeof(TirOp *) * (size_t)(f->types.len + 1));
  tir_index_values(f->body, NULL, R.def);
  rewrite_block(&R, f->body);
  tir_dce(f);
}
