/* stage-operands: the operands of mma.sync dots go through shared memory
 * explicitly (Triton's reduce-data-duplication for dot operands).
 *
 * A convert_layout to a #dot_op layout of an mma.sync (version 2) becomes
 *     %buf = local_alloc %x : T #shared        (swizzled for ldmatrix)
 *     %op  = local_load %buf : T #dot_op
 * so code generation writes the tile once, in 16-byte vectors where its
 * layout has them, and reads each warp's fragments with ldmatrix; the
 * pipeline step then replaces such a local_alloc of a loaded tile with
 * asynchronous copies.  The shared layout keeps the tile's contiguous
 * dimension (its blocked order; else the last dimension) and swizzles as
 * layout_shared_for_dot says.
 *
 * An operand that does not change in a `for` loop (the Q block of an
 * attention kernel, read by every iteration's dot) is staged once, before
 * the loop: its local_alloc (wgmma's, made by accelerate-matmul, or this
 * step's) and the local_load reading it move out of the body, so the loop
 * neither rewrites the buffer each iteration nor keeps the source tile
 * live in registers beside it.
 *
 * A wgmma's register A (a #dot_op of a version 3 mma) keeps its
 * convert_layout: from the accumulator layout, as accelerate-matmul makes
 * it, it only renames registers (lower_layout.c).
 *
 * Requires: GPU-layout IR after accelerate-matmul and remove-converts.
 * Guarantees: no convert_layout to an mma.sync dot-operand layout is left; no
 *   for loop stages an operand defined outside it; the values computed
 *   are the same.
 * Invalidates: nothing (the conversions' results keep their ids). */
#include "passes.h"

#include <string.h>

static int is_operand_conversion(const TirFunc *f, const TirOp *op) {
  if (op->code != TIR_CONVERT_LAYOUT) return 0;
  const Layout *to = tir_layout(f, op->results.data[0]), *from = tir_layout(f, op->operands.data[0]);
  return to && to->kind == LAYOUT_DOT_OPERAND && to->parent->kind == LAYOUT_MMA && to->parent->version == 2 && from &&
         !layout_is_shared(from);
}

/* The shared layout for operand op_index of tile x: contiguous where x's
 * layout is. */
static const Layout *staging_layout(TirFunc *f, int x, int op_index) {
  const Type *t = tir_type(f, x);
  const Layout *from = tir_layout(f, x);
  int order[MAX_RANK];
  for (int d = 0; d < t->rank; d++) order[d] = from->kind == LAYOUT_BLOCKED ? from->order[d] : t->rank - 1 - d;
  return layout_shared_for_dot(f->layout_table, op_index, dtype_bits(t->elem), t->rank, t->shape, order);
}

static void stage_block(TirFunc *f, TirBlock *b) {
  Vec(TirOp *) out = {0};
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) stage_block(f, op->regions[r]);
    if (!is_operand_conversion(f, op)) {
      vec_push(f->arena, &out, op);
      continue;
    }
    int x = op->operands.data[0];
    TirOp *alloc = tir_op_new(f, TIR_LOCAL_ALLOC, op->loc);
    tir_add_operand(f, alloc, x);
    int buf = tir_add_result(f, alloc, tir_type(f, x));
    tir_set_layout(f, buf, staging_layout(f, x, tir_layout(f, op->results.data[0])->op_index));
    vec_push(f->arena, &out, alloc);
    op->code = TIR_LOCAL_LOAD; /* the same result, now read from the buffer */
    op->operands.data[0] = buf;
    vec_push(f->arena, &out, op);
  }
  b->ops.data = out.data;
  b->ops.len = out.len;
  b->ops.cap = out.cap;
}

/* Marks the values b defines: its arguments and its ops' results, nested regions included. */
static void mark_defined(const TirBlock *b, char *inside) {
  for (int i = 0; i < b->args.len; i++) inside[b->args.data[i]] = 1;
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++) inside[op->results.data[k]] = 1;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) mark_defined(op->regions[r], inside);
  }
}

/* A local_alloc of a tile from outside the loop, or a local_load of a
 * buffer such a local_alloc made (hoisted[]): immutable, the same every
 * iteration. */
static int invariant_staging(const TirOp *op, const char *inside, const char *hoisted) {
  if (op->code == TIR_LOCAL_ALLOC) return op->operands.len == 1 && !inside[op->operands.data[0]];
  return op->code == TIR_LOCAL_LOAD && hoisted[op->operands.data[0]] && !inside[op->operands.data[0]];
}

/* Moves the invariant staging of each for loop in b to just before it, inner loops first. */
static void hoist_block(TirFunc *f, TirBlock *b, char *inside, char *hoisted) {
  Vec(TirOp *) out = {0};
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) hoist_block(f, op->regions[r], inside, hoisted);
    if (op->code == TIR_FOR) {
      TirBlock *body = op->regions[0];
      memset(inside, 0, (size_t)f->types.len + 1);
      mark_defined(body, inside);
      int kept = 0;
      for (int j = 0; j < body->ops.len; j++) {
        TirOp *inner = body->ops.data[j];
        if (!invariant_staging(inner, inside, hoisted)) {
          body->ops.data[kept++] = inner;
          continue;
        }
        vec_push(f->arena, &out, inner);
        inside[inner->results.data[0]] = 0;
        hoisted[inner->results.data[0]] = inner->code == TIR_LOCAL_ALLOC;
      }
      body->ops.len = kept;
    }
    vec_push(f->arena, &out, op);
  }
  b->ops.data = out.data;
  b->ops.len = out.len;
  b->ops.cap = out.cap;
}

void tgir_stage_operands(TirFunc *f, const TgirOptions *o) {
  stage_block(f, f->body);
  size_t n = (size_t)f->types.len + 1;
  char *inside = arena_alloc(f->arena, n), *hoisted = arena_alloc(f->arena, n); /* zeroed */
  hoist_block(f, f->body, inside, hoisted);
}
