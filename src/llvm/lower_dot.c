/* dot on the FMA path (tensor cores come later): the accumulator in its
 * layout, A and B in the FMA operand layouts derived from it (a thread
 * holds every K element of the rows of A and the columns of B its
 * accumulator elements need; operands that arrive in another layout are
 * converted).  For each accumulator element and each k in increasing
 * order, acc = fma(a[m, k], b[k, n], acc) in fp32 (fp16 and bf16 operands
 * extended, tf32 operands rounded with cvt.rna.tf32.f32), in fp64 for fp64
 * and i32 for int8: the interpreter's order and rounding, so the results
 * are bit-identical.  Batched (rank 3) dots keep the batch coordinate. */
#include "lower.h"

#include <string.h>

typedef struct Dims {
  int rank;
  int64_t batch, m, n, k;
} Dims;

static uint32_t flat3(const Dims *d, int64_t z, int64_t i, int64_t j, int64_t rows, int64_t cols) {
  (void)d;
  return (uint32_t)((z * rows + i) * cols + j);
}

/* The operand layout of A (op 0, shape [M, K]) or B (op 1, [K, N]) for an
 * accumulator layout: its bases with the other operand's dimension dropped,
 * then registers for all of K. */
static void operand_layout(const LinearLayout *acc, const Dims *d, int op, LinearLayout *out) {
  memset(out, 0, sizeof *out);
  out->rank = d->rank;
  if (d->rank == 3) out->shape[0] = d->batch;
  out->shape[d->rank - 2] = op == 0 ? d->m : d->k;
  out->shape[d->rank - 1] = op == 0 ? d->k : d->n;
  int64_t rows = out->shape[d->rank - 2], cols = out->shape[d->rank - 1];
  const uint32_t *lists[3] = {acc->reg, acc->lane, acc->warp};
  uint32_t *outs[3] = {out->reg, out->lane, out->warp};
  int counts[3] = {acc->n_reg, acc->n_lane, acc->n_warp}, *n_out[3] = {&out->n_reg, &out->n_lane, &out->n_warp};
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < counts[l]; i++) {
      int64_t c[MAX_RANK] = {0};
      ll_coords(acc, lists[l][i], c);
      int64_t z = d->rank == 3 ? c[0] : 0, m = c[d->rank - 2], n = c[d->rank - 1];
      uint32_t b = op == 0 ? (n ? 0 : flat3(d, z, m, 0, rows, cols)) : (m ? 0 : flat3(d, z, 0, n, rows, cols));
      if (l == 0 && !b) continue; /* registers never repeat an element */
      outs[l][(*n_out[l])++] = b;
    }
  for (int64_t k = 1; k < d->k; k <<= 1) out->reg[out->n_reg++] = (uint32_t)(op == 0 ? k : k * cols);
}

/* An operand register ready for the FMA: extended to the accumulation type. */
static LLVMValueRef fma_input(Lower *L, LLVMValueRef v, LLVMTypeRef acc_type, int tf32) {
  LLVMTypeRef t = LLVMTypeOf(v);
  if (LLVMGetTypeKind(acc_type) == LLVMIntegerTypeKind) return LLVMBuildSExt(L->b, v, acc_type, "");
  if (t != acc_type) v = LLVMBuildFPExt(L->b, v, acc_type, "");
  return tf32 ? L->target->round_tf32(L, v) : v;
}

static int find(Lower *L, const LinearLayout *ll, uint32_t off) {
  int r = ll_find_register(ll, off);
  if (r < 0) lower_fail(L, "internal error: a dot operand lacks an element its accumulator needs");
  return r;
}

void lower_dot(Lower *L, const TirOp *op) {
  int res = op->results.data[0];
  const Type *ta = lower_type(L, op->operands.data[0]), *rt = lower_type(L, res);
  Dims d = {ta->rank, ta->rank == 3 ? ta->shape[0] : 1, ta->shape[ta->rank - 2],
            lower_type(L, op->operands.data[1])->shape[ta->rank - 1], ta->shape[ta->rank - 1]};
  LinearLayout acc, la, lb;
  lower_linear(L, res, &acc);
  operand_layout(&acc, &d, 0, &la);
  operand_layout(&acc, &d, 1, &lb);
  Regs a = lower_operand(L, op, 0, &la), b = lower_operand(L, op, 1, &lb), c = lower_operand(L, op, 2, &acc);
  int is_int = !dtype_is_float(ta->elem), tf32 = op->kind == DOT_TF32 && ta->elem == DT_FP32;
  LLVMTypeRef at = is_int ? L->i32 : ta->elem == DT_FP64 ? L->f64 : L->f32;
  for (int i = 0; i < a.n; i++) a.v[i] = fma_input(L, a.v[i], at, tf32);
  for (int i = 0; i < b.n; i++) b.v[i] = fma_input(L, b.v[i], at, tf32);
  Regs out = lower_regs(L, c.n);
  int *arow = arena_alloc(L->arena, sizeof(int) * (size_t)c.n), *bcol = arena_alloc(L->arena, sizeof(int) * (size_t)c.n);
  for (int r = 0; r < c.n; r++) {
    int64_t x[MAX_RANK] = {0};
    ll_coords(&acc, ll_reg_offset(&acc, (uint32_t)r), x);
    int64_t z = d.rank == 3 ? x[0] : 0;
    arow[r] = find(L, &la, flat3(&d, z, x[d.rank - 2], 0, d.m, d.k));
    bcol[r] = find(L, &lb, flat3(&d, z, 0, x[d.rank - 1], d.k, d.n));
    out.v[r] = is_int ? c.v[r] : LLVMTypeOf(c.v[r]) == at ? c.v[r] : LLVMBuildFPExt(L->b, c.v[r], at, "");
  }
  for (int64_t k = 0; k < d.k; k++) {
    int ak = find(L, &la, (uint32_t)k), bk = find(L, &lb, (uint32_t)(k * d.n));
    for (int r = 0; r < c.n; r++) {
      LLVMValueRef x = a.v[arow[r] ^ ak], y = b.v[bcol[r] ^ bk];
      if (is_int) {
        out.v[r] = LLVMBuildAdd(L->b, out.v[r], LLVMBuildMul(L->b, x, y, ""), "");
      } else {
        LLVMValueRef args[3] = {x, y, out.v[r]};
        out.v[r] = lower_intrinsic(L, "llvm.fma", &at, 1, args, 3);
      }
    }
  }
  LLVMTypeRef et = lower_elem_type(L, rt);
  for (int r = 0; r < c.n && !is_int; r++)
    if (et != at) out.v[r] = LLVMBuildFPTrunc(L->b, out.v[r], et, "");
  lower_result(L, op, 0, out);
}
