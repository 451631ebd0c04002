/* Coalescing: for each load, store and atomic on a tile of pointers, the
 * blocked layout that makes a warp's accesses contiguous and each thread's
 * as wide as the pointers allow (128 bits on sm_80 and later), as Triton's
 * Coalesce pass.
 *
 * Requires: verified tile IR.
 * Guarantees: returns, per value id, the layout chosen for each memory op's
 *   pointer operand (NULL elsewhere); layout assignment (assign.c) gives
 *   the op, its operands and its result that layout.
 * Invalidates: nothing. */
#include "../tir/passes.h"
#include "tgir.h"

typedef struct Coalesce {
  TirFunc *f;
  LayoutTable *table;
  const AxisInfo *info;
  const Layout **chosen;
} Coalesce;

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Dimensions by decreasing contiguity of the pointers; ties keep the last
 * dimension fastest (row-major). */
static void contiguity_order(const AxisInfo *ai, int rank, int *order) {
  for (int i = 0; i < rank; i++) order[i] = rank - 1 - i;
  for (int i = 1; i < rank; i++)
    for (int j = i; j > 0 && ai->contiguity[order[j]] > ai->contiguity[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
}

/* Elements per thread along the fastest dimension: as many as are
 * contiguous, aligned, fit in 128 bits, and (for masked ops) share a mask. */
static int per_thread(Coalesce *C, const TirOp *op, const Type *t, int dim) {
  const AxisInfo *ptr = &C->info[op->operands.data[0]];
  int64_t bytes = dtype_bits(t->elem) >= 8 ? dtype_bits(t->elem) / 8 : 1;
  int64_t n = min64(ptr->contiguity[dim], ptr->divisibility[dim] / bytes);
  n = min64(n, 16 / bytes);
  int mask = op->code == TIR_STORE ? 2 : 1;
  int has_mask = op->code == TIR_STORE ? op->operands.len > 2 : (op->flags & LOAD_MASK) != 0;
  if (op->code == TIR_ATOMIC_RMW || op->code == TIR_ATOMIC_CAS) n = 1;
  else if (has_mask) n = min64(n, C->info[op->operands.data[mask]].constancy[dim]);
  int64_t threads = (int64_t)WARP_SIZE * C->f->num_warps, numel = type_numel(t);
  n = min64(n, numel / threads > 1 ? numel / threads : 1);
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

static void choose(Coalesce *C, const TirOp *op) {
  int ptr = op->operands.data[0];
  const Type *t = tir_type(C->f, ptr);
  if (t->rank == 0) return;
  int order[MAX_RANK], spt[MAX_RANK];
  contiguity_order(&C->info[ptr], t->rank, order);
  for (int d = 0; d < t->rank; d++) spt[d] = 1;
  spt[order[0]] = per_thread(C, op, t, order[0]);
  C->chosen[ptr] = layout_default(C->table, t->rank, t->shape, spt, order, C->f->num_warps);
}

static void visit(Coalesce *C, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (op->code == TIR_LOAD || op->code == TIR_STORE || op->code == TIR_ATOMIC_RMW || op->code == TIR_ATOMIC_CAS)
      choose(C, op);
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) visit(C, op->regions[r]);
  }
}

const Layout **tgir_coalesce(TirFunc *f, LayoutTable *table) {
  Coalesce C = {f, table, tir_axis_info(f), NULL};
  C.chosen = arena_alloc(f->arena, sizeof *C.chosen * (size_t)(f->types.len + 1));
  visit(&C, f->body);
  return C.chosen;
}
