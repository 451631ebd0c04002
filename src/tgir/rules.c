/* The layout rules of GPU-layout IR, written once: what layout each op
 * needs of each operand given its own layout, and what layout reduce,
 * trans, join and split give their results.  Layout assignment follows them when it
 * inserts conversions, conversion removal when it rebuilds operands, and
 * the verifier checks them (docs/tgir.md lists them).
 *
 * Requires: layouts interned in f->layout_table (slices, dot operands and
 *   transposed layouts are made there on demand).
 * Guarantees: the same answer for the same op and layouts.
 * Invalidates: nothing. */
#include "passes.h"

int tgir_is_tile(const TirFunc *f, int value) { return tir_type(f, value)->rank > 0; }

static int log2_of(int64_t x) { return __builtin_ctzll((unsigned long long)x); }

int tgir_views_transposed(const TirFunc *f, int of, int view) {
  const Type *t = tir_type(f, view);
  LinearLayout a, b;
  const char *why;
  if (t->rank != 2 || layout_linear_of(tir_layout(f, of), tir_type(f, of), &a, &why) ||
      layout_linear_of(tir_layout(f, view), t, &b, &why) || a.n_reg != b.n_reg)
    return 0;
  int col_bits = log2_of(t->shape[1]), row_bits_of = log2_of(t->shape[0]); /* of's columns are view's rows */
  for (int i = 0; i < b.n_reg; i++) { /* view's flat bit i: a column bit (of's row bit) or a row bit */
    int in_of = i < col_bits ? i + row_bits_of : i - col_bits;
    if (b.reg[i] != a.reg[in_of]) return 0;
  }
  return 1;
}

static const Layout *layout_of(const TirFunc *f, int value) { return tir_layout(f, value); }

/* k_width of a dot's operands: FMA operands hold a K element at a time,
 * tensor-core fragments a 32-bit register's worth. */
static int dot_k_width(const TirFunc *f, const TirOp *op, const Layout *acc) {
  if (acc->kind != LAYOUT_MMA) return 1;
  int bits = dtype_bits(tir_type(f, op->operands.data[0])->elem);
  return bits >= 32 ? 1 : 32 / bits;
}

/* Shared-memory ops: a buffer operand is what it is (verify.c checks its
 * layout); the others as for loads and stores. */
static const Layout *buffer_op_need(const TirFunc *f, const TirOp *op, int k, const Layout *own, const char **rule) {
  *rule = "a buffer keeps its shared layout";
  if (layout_is_shared(layout_of(f, op->operands.data[k]))) return NULL;
  switch (op->code) {
  case TIR_ASYNC_COPY:
    *rule = "an async_copy's pointers and mask share one layout";
    return own;
  case TIR_DOT_WAIT:
    *rule = "dot_wait's results keep their operands' layouts";
    return layout_of(f, op->results.data[k]);
  default: return NULL; /* local_alloc and local_store take any layout */
  }
}

/* What a terminator's carried operand k needs: the layout of the value it
 * becomes in the enclosing op. */
static const Layout *carried_need(const TirFunc *f, const TirOp *op, int k, const TirOp *parent, const char **rule) {
  *rule = "a carried value keeps its layout (init, region argument, yield and result share one)";
  if (!parent) return NULL;
  if (op->code == TIR_CONDITION)
    return k == 0 ? NULL : layout_of(f, parent->regions[1]->args.data[k - 1]);
  if (parent->code == TIR_WHILE) return layout_of(f, parent->regions[0]->args.data[k]);
  return k < parent->results.len ? layout_of(f, parent->results.data[k]) : NULL;
}

/* reshape's layout re-split (layout_reshaped): the result's from the
 * operand's, or with `inverse` the operand's from the result's. */
static const Layout *reshaped(const TirFunc *f, const TirOp *op, const Layout *l, int inverse) {
  const Type *in = tir_type(f, op->operands.data[0]), *out = tir_type(f, op->results.data[0]);
  if (inverse) return layout_reshaped(f->layout_table, l, out->rank, out->shape, in->rank, in->shape);
  return layout_reshaped(f->layout_table, l, in->rank, in->shape, out->rank, out->shape);
}

static const Layout *shape_op_need(const TirFunc *f, const TirOp *op, int k, const Layout *own, const char **rule) {
  LayoutTable *t = f->layout_table;
  switch (op->code) {
  case TIR_BROADCAST:
    *rule = "broadcast's operand has its result's layout over the smaller shape";
    return own;
  case TIR_EXPAND_DIMS:
    *rule = "expand_dims' operand has the slice of its result's layout along the axis";
    return own ? layout_slice(t, op->axis, own) : NULL;
  case TIR_REDUCE:
  case TIR_REDUCE_COMBINE:
    *rule = "reduce's result has the slice of its operand's layout along the axis";
    return own && own->kind == LAYOUT_SLICE && own->dim == op->axis ? own->parent : NULL;
  case TIR_TRANS:
    *rule = "trans' result has its operand's blocked layout, permuted";
    return layout_transposed(t, own, op->ints, 1);
  case TIR_JOIN:
    *rule = "join's result has its operands' blocked layout with a last dimension of 2 in registers";
    return layout_joined(t, own, 1);
  case TIR_SPLIT:
    *rule = "split's operand has its result's blocked layout with a last dimension of 2 in registers";
    return layout_joined(t, own, 0);
  case TIR_RESHAPE: /* none where no blocked layout holds it: codegen moves the elements */
    *rule = "reshape's operand has its result's layout re-split to its shape, where a blocked layout holds that";
    return reshaped(f, op, own, 1);
  case TIR_GATHER: /* the source goes through shared memory whatever its layout */
    *rule = "gather's index has its result's layout";
    return k == 1 ? own : NULL;
  default: return NULL;
  }
}

const Layout *tgir_operand_need(const TirFunc *f, const TirOp *op, int k, const Layout *own, const TirOp *parent,
                                const char **rule) {
  const char *unused;
  if (!rule) rule = &unused;
  *rule = "";
  if (!tgir_is_tile(f, op->operands.data[k])) return NULL;
  if (tir_op_flags(op->code) & EW) {
    *rule = "elementwise operands share their result's layout";
    return own;
  }
  switch (op->code) {
  case TIR_HINT:
  case TIR_RAND:
  case TIR_SCAN:
  case TIR_SCAN_COMBINE:
  case TIR_ASSERT:
    *rule = "the tile operands share the op's layout";
    return own;
  case TIR_LOAD:
  case TIR_STORE:
  case TIR_ATOMIC_RMW:
  case TIR_ATOMIC_CAS:
    *rule = "a memory op's pointers, mask and values share one layout";
    return own;
  case TIR_DOT:
    *rule = "dot's operands have the dot-operand layouts of its result's, the accumulator the result's";
    if (!own || k == 2) return own;
    if (layout_is_shared(layout_of(f, op->operands.data[k]))) return NULL; /* wgmma reads it from shared memory */
    return layout_dot_operand(f->layout_table, k, own, dot_k_width(f, op, own));
  case TIR_LOCAL_ALLOC:
  case TIR_MEMDESC_INDEX:
  case TIR_MEMDESC_TRANS:
  case TIR_LOCAL_LOAD:
  case TIR_LOCAL_STORE:
  case TIR_ASYNC_COPY:
  case TIR_DOT_WAIT:
  case TIR_MBAR_ALLOC:
  case TIR_MBAR_WAIT:
  case TIR_MBAR_INVAL:
  case TIR_TMA_COPY:
  case TIR_TMA_STORE: return buffer_op_need(f, op, k, own, rule);
  case TIR_FOR:
    *rule = "a carried value keeps its layout (init, region argument, yield and result share one)";
    return k >= 3 ? layout_of(f, op->results.data[k - 3]) : NULL;
  case TIR_WHILE:
    *rule = "a carried value keeps its layout (init, region argument, yield and result share one)";
    return layout_of(f, op->regions[0]->args.data[k]);
  case TIR_YIELD:
  case TIR_CONDITION: return carried_need(f, op, k, parent, rule);
  default: return shape_op_need(f, op, k, own, rule);
  }
}

const Layout *tgir_own_layout(const TirFunc *f, const TirOp *op) {
  if (op->regions[0]) return NULL;
  if (op->results.len) return tgir_is_tile(f, op->results.data[0]) ? layout_of(f, op->results.data[0]) : NULL;
  int anchored_on_operand = op->code == TIR_STORE || op->code == TIR_ASSERT || op->code == TIR_ASYNC_COPY;
  if (anchored_on_operand && tgir_is_tile(f, op->operands.data[0])) return layout_of(f, op->operands.data[0]);
  return NULL;
}

const Layout *tgir_result_layout(const TirFunc *f, const TirOp *op, const Layout *operand) {
  if (!operand) return NULL;
  if (op->code == TIR_REDUCE || op->code == TIR_REDUCE_COMBINE) return layout_slice(f->layout_table, op->axis, operand);
  if (op->code == TIR_TRANS) return layout_transposed(f->layout_table, operand, op->ints, 0);
  if (op->code == TIR_JOIN || op->code == TIR_SPLIT)
    return layout_joined(f->layout_table, operand, op->code == TIR_SPLIT);
  if (op->code == TIR_RESHAPE) return reshaped(f, op, operand, 0);
  return NULL;
}
