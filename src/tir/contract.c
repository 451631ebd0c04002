/* Floating-point contraction, Triton's default (its enable_fp_fusion): an
 * add or a subtract of a product becomes one fused multiply-add, rounded
 * once.  Triton leaves this to LLVM (fp-contract=fast);
 * tile does it here, in tile IR, because the interpreter and the simulator
 * run this IR too: they compute the same fma the GPU does, so results stay
 * equal bit for bit across the three (LLVM's own contraction stays off:
 * lower_elementwise.c emits .rn instructions, which ptxas leaves alone).
 *
 * Requires: a verified function (after fold: x * 1 is gone).
 * Guarantees: for fp32 and fp64 values, with m = mul(a, b),
 *     add(m, c), add(c, m)  become  fma(a, b, c)
 *     sub(m, c)             becomes fma(a, b, neg(c))
 *     sub(c, m)             becomes fma(neg(a), b, c)
 *   in place of the add or subtract (same result id, its location).  A
 *   product with other uses is contracted into each add or subtract and kept
 *   for the rest (LLVM's NVPTX target fuses as aggressively); one with none
 *   left is removed by dce.  fp16 and bf16 are not contracted: their
 *   products round to 16 bits, which an fp32 fma would not.
 *   tile_options.fp_fusion = TILE_FP_FUSION_OFF (Triton's
 *   enable_fp_fusion=False) leaves the pass out (src/driver/pipeline.c).
 * Invalidates: nothing cached. */
#include "passes.h"

typedef struct Contract {
  TirFunc *f;
  const TirOp **def; /* per value: the op defining it, NULL for arguments */
  int n;             /* value ids before the pass (the negations it adds come after) */
} Contract;

static int contractible_type(const Type *t) { return !t->is_ptr && (t->elem == DT_FP32 || t->elem == DT_FP64); }

/* Whether value v is a product of type t. */
static int product(const Contract *C, int v, const Type *t) {
  const TirOp *m = v < C->n ? C->def[v] : NULL;
  return m && m->code == TIR_MUL && m->kind == 0 && type_equal(tir_type(C->f, v), t);
}

static int negated(Contract *C, TirBlock *b, int v, Loc loc) {
  TirOp *neg = tir_op_new(C->f, TIR_NEG, loc);
  tir_add_operand(C->f, neg, v);
  int r = tir_add_result(C->f, neg, tir_type(C->f, v));
  tir_append(C->f, b, neg);
  return r;
}

/* Which operand of op, an add or subtract of type t, is a product to contract (the first if both); -1: none. */
static int product_operand(const Contract *C, const TirOp *op, const Type *t) {
  for (int k = 0; k < 2; k++)
    if (product(C, op->operands.data[k], t)) return k;
  return -1;
}

/* Appends op to b, as an fma when it is an add or subtract of a product. */
static void contract_op(Contract *C, TirBlock *b, TirOp *op) {
  int is_sub = op->code == TIR_SUB;
  const Type *t = op->results.len == 1 ? tir_type(C->f, op->results.data[0]) : NULL;
  int k = (op->code == TIR_ADD || is_sub) && !op->kind && t && contractible_type(t) ? product_operand(C, op, t) : -1;
  if (k >= 0) {
    const TirOp *m = C->def[op->operands.data[k]];
    int x = m->operands.data[0], y = m->operands.data[1], z = op->operands.data[1 - k];
    if (is_sub && k == 0) z = negated(C, b, z, op->loc); /* x*y - z */
    if (is_sub && k == 1) x = negated(C, b, x, op->loc); /* z - x*y */
    op->code = TIR_FMA;
    op->operands.len = 0;
    tir_add_operand(C->f, op, x);
    tir_add_operand(C->f, op, y);
    tir_add_operand(C->f, op, z);
  }
  tir_append(C->f, b, op);
}

static void contract_block(Contract *C, TirBlock *b) {
  int n;
  TirOp **ops = tir_take_ops(C->f, b, &n);
  for (int i = 0; i < n; i++) {
    for (int r = 0; r < 2; r++)
      if (ops[i]->regions[r]) contract_block(C, ops[i]->regions[r]);
    contract_op(C, b, ops[i]);
  }
}

void tir_contract(TirFunc *f) {
  size_t n = (size_t)f->types.len + 1;
  Contract C = {f, arena_alloc(f->arena, sizeof(TirOp *) * n), (int)n};
  tir_index_values(f->body, NULL, C.def);
  contract_block(&C, f->body);
}
