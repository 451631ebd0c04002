/* dot on mma.sync (version 2 mma layouts, sm_80 and later).
 *
 * The accumulator is in the mma layout: each group of 4 registers whose
 * register bits 0-1 differ is one 16 x 8 tile's c0..c3.  A and B arrive in
 * the mma's dot-operand layouts (local_load from shared memory, ldmatrix),
 * their K-consecutive pairs (f16, bf16), singles (tf32) or quads (s8)
 * packed into the 32-bit words the instruction takes (fp8 quads, e4m3 or
 * e5m2, from sm_89, as s8).  For each K step of
 * the instruction (16, 8 or 32) and each accumulator tile, the A words of
 * its 16 rows and the B words of its 8 columns are found by offset in the
 * operand layouts (the same thread holds them: the layouts share their
 * lane and warp bases along M and N) and one mma.sync updates the tile.
 * fp16 accumulators run in fp32 and round at the end, as the interpreter's
 * dot does; tf32 operands are rounded to tf32 (cvt.rna) first; tf32x3
 * splits each operand into a tf32 high part and the tf32 of the rest and
 * adds small x big, big x small and big x big, in that order. */
#include "lower.h"

#include <string.h>

int mma_fp8_kind(DType a, DType b) { return MMA_FP8 + (a == DT_FP8E5) + 2 * (b == DT_FP8E5); }

typedef struct Mma {
  int kind;                 /* MMA_* */
  int tf32x3;
  int kw;                   /* elements per 32-bit word */
  int k_step;               /* the instruction's K */
  int rank;
  int64_t m, n, k;
  LinearLayout acc, la, lb;
} Mma;

static uint32_t flat3(int64_t z, int64_t i, int64_t j, int64_t rows, int64_t cols) {
  return (uint32_t)((z * rows + i) * cols + j);
}

static int find(Lower *L, const LinearLayout *ll, uint32_t off) {
  int r = ll_find_register(ll, off);
  if (r < 0) lower_fail(L, "internal error: an mma operand lacks an element its accumulator tile needs");
  return r;
}

static void plan(Lower *L, const TirOp *op, Mma *D) {
  const Type *ta = lower_type(L, op->operands.data[0]), *tb = lower_type(L, op->operands.data[1]);
  memset(D, 0, sizeof *D);
  D->rank = ta->rank;
  D->m = ta->shape[D->rank - 2], D->k = ta->shape[D->rank - 1], D->n = tb->shape[D->rank - 1];
  switch (ta->elem) {
  case DT_FP16: D->kind = MMA_F16, D->kw = 2; break;
  case DT_BF16: D->kind = MMA_BF16, D->kw = 2; break;
  case DT_FP32: D->kind = MMA_TF32, D->kw = 1, D->tf32x3 = op->kind == DOT_TF32X3; break;
  case DT_I8: D->kind = MMA_S8, D->kw = 4; break;
  case DT_FP8E4NV:
  case DT_FP8E5: D->kind = mma_fp8_kind(ta->elem, tb->elem), D->kw = 4; break;
  default: lower_fail(L, "internal error: no mma.sync for %s operands", dtype_name(ta->elem));
  }
  D->k_step = 8 * D->kw;
  lower_linear(L, op->results.data[0], &D->acc);
  if (D->acc.n_reg < 2 || D->acc.reg[0] != 1 || D->acc.reg[1] != 8 * (uint32_t)D->n)
    lower_fail(L, "internal error: an mma accumulator tile smaller than one instruction");
  lower_linear(L, op->operands.data[0], &D->la);
  lower_linear(L, op->operands.data[1], &D->lb);
}

/* An operand's 32-bit words, made on first use: from registers, or from
 * shared memory through a reader (the dot's local_load, deferred).  tf32
 * words are rounded (cvt.rna); part 1 is the tf32 of what the rounding
 * left (tf32x3). */
typedef struct Words {
  Regs regs;                  /* the operand in registers, or */
  OperandReader *reader;      /* its buffer */
  LLVMValueRef *done[2];      /* per part, per word */
} Words;

static Words words_of(Lower *L, const TirOp *op, int k, const LinearLayout *ll, int kw) {
  Words w;
  memset(&w, 0, sizeof w);
  int v = op->operands.data[k], n = ll_registers(ll) / kw + 1;
  if (L->deferred[v]) w.reader = lower_operand_reader(L, L->defs[v]);
  else w.regs = lower_operand(L, op, k, ll);
  for (int p = 0; p < 2; p++) w.done[p] = arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)n);
  return w;
}

static LLVMValueRef word(Lower *L, const Mma *D, Words *w, int i, int part) {
  if (w->done[part][i]) return w->done[part][i];
  LLVMValueRef x;
  if (w->reader) {
    x = lower_read_word(L, w->reader, i);
  } else {
    LLVMValueRef e[4];
    for (int j = 0; j < D->kw; j++) e[j] = w->regs.v[i * D->kw + j];
    x = lower_pack(L, e, D->kw, L->i32);
  }
  if (D->kind == MMA_TF32) {
    LLVMValueRef f = LLVMBuildBitCast(L->b, x, L->f32, ""), big = L->target->round_tf32(L, f);
    f = part ? L->target->round_tf32(L, LLVMBuildFSub(L->b, f, big, "")) : big;
    x = LLVMBuildBitCast(L->b, f, L->i32, "");
  }
  return w->done[part][i] = x;
}

typedef struct Operands {
  Words a, b;
} Operands;

/* One mma on accumulator registers acc[c..c+3] for rows at m, columns at n
 * (register parts), K from k0. */
static void mma_tile(Lower *L, const Mma *D, Operands *o, Regs acc, int c, int64_t z, int64_t m, int64_t n,
                     int64_t k0) {
  int aw[4], bw[2];
  for (int i = 0; i < 4; i++)
    aw[i] = find(L, &D->la, flat3(z, m + 8 * (i & 1), k0 + 4 * D->kw * (i >> 1), D->m, D->k)) / D->kw;
  for (int i = 0; i < 2; i++) bw[i] = find(L, &D->lb, flat3(z, k0 + 4 * D->kw * i, n, D->k, D->n)) / D->kw;
  static const int passes[3][2] = {{1, 0}, {0, 1}, {0, 0}}; /* (A part, B part): small terms first */
  for (int p = D->tf32x3 ? 0 : 2; p < 3; p++) {
    LLVMValueRef a[4], b[2], d[4];
    for (int i = 0; i < 4; i++) a[i] = word(L, D, &o->a, aw[i], passes[p][0]);
    for (int i = 0; i < 2; i++) b[i] = word(L, D, &o->b, bw[i], passes[p][1]);
    L->target->mma(L, D->kind, d, a, b, acc.v + c);
    for (int i = 0; i < 4; i++) acc.v[c + i] = d[i];
  }
}

void lower_mma_dot(Lower *L, const TirOp *op) {
  Mma D;
  plan(L, op, &D);
  Regs c = lower_operand(L, op, 2, &D.acc);
  Operands o = {words_of(L, op, 0, &D.la, D.kw), words_of(L, op, 1, &D.lb, D.kw)};
  Regs acc = lower_regs(L, c.n);
  LLVMTypeRef at = D.kind == MMA_S8 ? L->i32 : L->f32;
  for (int r = 0; r < c.n; r++) acc.v[r] = LLVMTypeOf(c.v[r]) == at ? c.v[r] : LLVMBuildFPExt(L->b, c.v[r], at, "");
  for (int64_t k0 = 0; k0 < D.k; k0 += D.k_step)
    for (int r = 0; r < acc.n; r += 4) { /* register bits 0-1: one tile's c0..c3 */
      int64_t x[MAX_RANK] = {0};
      ll_coords(&D.acc, ll_reg_offset(&D.acc, (uint32_t)r), x);
      mma_tile(L, &D, &o, acc, r, D.rank == 3 ? x[0] : 0, x[D.rank - 2], x[D.rank - 1], k0);
    }
  LLVMTypeRef et = lower_elem_type(L, lower_type(L, op->results.data[0]));
  for (int r = 0; r < acc.n; r++)
    if (LLVMTypeOf(acc.v[r]) != et) acc.v[r] = LLVMBuildFPTrunc(L->b, acc.v[r], et, "");
  lower_result(L, op, 0, acc);
}
