/* Lowering of a checked kernel (the typed AST of sema.c) to tile IR.
 * Requires: a kernel that passed the checker, so every expression is typed,
 * constexprs are folded, helpers inlined and conversions explicit.
 * Guarantees: SSA form; loop-carried values and values merged after an if
 * flow through block arguments and yields; source locations on every op. */
#include "sema.h"

#include <math.h>
#include <string.h>

typedef struct EnvEntry {
  const char *name;
  int value;
} EnvEntry;

typedef Vec(EnvEntry) Env;

typedef struct Lower {
  TirFunc *f;
  Diags *diags;
  TirBlock *block;     /* where ops go */
  Env env;             /* variable name -> current value */
  int returned;
  const Node *asm_args;  /* the args of the last inline_asm with several results, whose op is asm_op */
  TirOp *asm_op;
} Lower;

static int lower_expr(Lower *L, Node *n);
static void lower_block(Lower *L, NodeVec *body, TirBlock *into);

/* ---- environment --------------------------------------------------------- */

static int env_get(Env *e, const char *name) {
  for (int i = e->len - 1; i >= 0; i--)
    if (!strcmp(e->data[i].name, name)) return e->data[i].value;
  return -1;
}

static void env_set(Lower *L, const char *name, int value) {
  for (int i = L->env.len - 1; i >= 0; i--)
    if (!strcmp(L->env.data[i].name, name)) {
      L->env.data[i].value = value;
      return;
    }
  EnvEntry e = {name, value};
  vec_push(L->f->arena, &L->env, e);
}

static Env env_clone(Lower *L, const Env *e) {
  Env c = {0};
  for (int i = 0; i < e->len; i++) vec_push(L->f->arena, &c, e->data[i]);
  return c;
}

static Env env_copy(Lower *L) { return env_clone(L, &L->env); }

/* ---- emitting ops -------------------------------------------------------- */

static TirOp *emit_op(Lower *L, TirCode code, Loc loc) {
  TirOp *op = tir_op_new(L->f, code, loc);
  tir_append(L->f, L->block, op);
  return op;
}

/* An op with up to three operands (-1: none) and one result of type t. */
static int emit(Lower *L, TirCode code, Loc loc, Type *t, int a, int b, int c) {
  TirOp *op = emit_op(L, code, loc);
  int operands[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    if (operands[i] >= 0) tir_add_operand(L->f, op, operands[i]);
  return t ? tir_add_result(L->f, op, t) : -1;
}

static TirOp *last_op(Lower *L) { return L->block->ops.data[L->block->ops.len - 1]; }

static int emit_constant(Lower *L, Loc loc, Type *t, int64_t i, double f) {
  int v = emit(L, TIR_CONSTANT, loc, t, -1, -1, -1);
  TirOp *op = last_op(L);
  op->ival = i;
  op->fval = f;
  return v;
}

static Type *ty(Lower *L, int v) { return tir_type(L->f, v); }

/* ---- shapes -------------------------------------------------------------- */

/* Broadcasts v to type t's shape: splat a scalar, add leading 1s, grow 1s. */
static int broadcast_to(Lower *L, Loc loc, int v, Type *t) {
  Type *src = ty(L, v);
  Type *want = type_tile(L->f->arena, src, t->rank, t->shape);
  if (type_same_shape(src, want)) return v;
  if (src->rank == 0) return emit(L, TIR_SPLAT, loc, want, v, -1, -1);
  if (src->rank < want->rank) {
    int64_t shape[MAX_RANK];
    int pad = want->rank - src->rank;
    for (int i = 0; i < want->rank; i++) shape[i] = i < pad ? 1 : src->shape[i - pad];
    v = emit(L, TIR_RESHAPE, loc, type_tile(L->f->arena, src, want->rank, shape), v, -1, -1);
    if (type_same_shape(ty(L, v), want)) return v;
  }
  return emit(L, TIR_BROADCAST, loc, want, v, -1, -1);
}

static int expand_dims(Lower *L, Loc loc, int v, int axis) {
  Type *t = ty(L, v);
  int64_t shape[MAX_RANK];
  for (int i = 0, j = 0; i <= t->rank; i++) shape[i] = i == axis ? 1 : t->shape[j++];
  int r = emit(L, TIR_EXPAND_DIMS, loc, type_tile(L->f->arena, t, t->rank + 1, shape), v, -1, -1);
  last_op(L)->axis = axis;
  return r;
}

/* x[:, None] and friends: one expand_dims for each None. */
static int lower_subscript(Lower *L, Node *n) {
  int v = lower_expr(L, n->a);
  for (int i = 0; i < n->args.len; i++)
    if (n->args.data[i]->kind == ND_NONE) v = expand_dims(L, n->loc, v, i);
  return v;
}

/* ---- constants and operators --------------------------------------------- */

/* A float constant's integer value, for a constant of integer type; values
 * with no integer (NaN, infinities, out of range) give 0 rather than C's
 * undefined conversion. */
static int64_t float_to_int64(double f) {
  return isfinite(f) && f > -9.2e18 && f < 9.2e18 ? (int64_t)f : 0;
}

static int lower_const(Lower *L, Node *n) {
  const Value *v = n->cval;
  double f = v->kind == V_FLOAT ? v->f : (double)v->i;
  int64_t i = v->kind == V_FLOAT ? float_to_int64(v->f) : v->i;
  return emit_constant(L, n->loc, n->type, i, f);
}

static int cmp_kind(TokenKind op) {
  switch (op) {
  case TK_LT: return CMP_LT;
  case TK_LE: return CMP_LE;
  case TK_GT: return CMP_GT;
  case TK_GE: return CMP_GE;
  case TK_EQ: return CMP_EQ;
  default: return CMP_NE;
  }
}

static TirCode binary_code(TokenKind op) {
  switch (op) {
  case TK_PLUS: return TIR_ADD;
  case TK_MINUS: return TIR_SUB;
  case TK_STAR: return TIR_MUL;
  case TK_SLASH:
  case TK_FLOORDIV: return TIR_DIV;
  case TK_PERCENT: return TIR_REM;
  case TK_AMP: return TIR_AND;
  case TK_PIPE: return TIR_OR;
  case TK_CARET: return TIR_XOR;
  case TK_SHL: return TIR_SHL;
  case TK_SHR: return TIR_SHR;
  default: return TIR_CMP;
  }
}

static int lower_binary(Lower *L, Node *n) {
  int x = lower_expr(L, n->a), y = lower_expr(L, n->b);
  if (ty(L, x)->is_ptr && !ty(L, y)->is_ptr) { /* pointer +/- offset */
    if (n->op == TK_MINUS) y = emit(L, TIR_NEG, n->loc, ty(L, y), y, -1, -1);
    return emit(L, TIR_ADDPTR, n->loc, n->type, x, y, -1);
  }
  TirCode code = binary_code(n->op);
  int r = emit(L, code, n->loc, n->type, x, y, -1);
  if (code == TIR_CMP) last_op(L)->kind = cmp_kind(n->op);
  return r;
}

static int lower_unary(Lower *L, Node *n) {
  int x = lower_expr(L, n->a);
  return emit(L, n->op == TK_MINUS ? TIR_NEG : TIR_NOT, n->loc, n->type, x, -1, -1);
}

static int lower_cast(Lower *L, Node *n) {
  int x = lower_expr(L, n->a);
  return emit(L, TIR_CAST, n->loc, n->type, x, -1, -1);
}

/* ---- builtins ------------------------------------------------------------ */

static int is_none(Node *n) { return n->kind == ND_CONST && !n->type && n->cval && n->cval->kind == V_NONE; }
static int64_t const_int(Node *n) { return n->cval->i; }
static const char *const_str(Node *n) { return n->cval && n->cval->kind == V_STR ? n->cval->s : NULL; }

static int builtin_id(Node *call) { return (int)call->a->cval->i; }

/* eviction_policy=: an EvictionPolicy (0 when absent). */
static int eviction(Node *n) {
  const char *s = const_str(n);
  int policy = s ? tir_evict_lookup(s, strlen(s)) : -1;
  return policy > 0 ? policy : EVICT_NONE;
}

static int lower_load(Lower *L, Node *n, NodeVec *a) {
  int ptr = lower_expr(L, a->data[0]);
  int mask = is_none(a->data[1]) ? -1 : lower_expr(L, a->data[1]);
  int other = is_none(a->data[2]) ? -1 : lower_expr(L, a->data[2]);
  int r = emit(L, TIR_LOAD, n->loc, n->type, ptr, mask, other);
  TirOp *op = last_op(L);
  op->flags = (mask >= 0 ? LOAD_MASK : 0) | (other >= 0 ? LOAD_OTHER : 0) | (a->data[7]->cval->i ? LOAD_VOLATILE : 0);
  const char *cache = const_str(a->data[5]);
  op->str = cache && *cache ? cache : NULL;
  op->ival = eviction(a->data[6]);
  return r;
}

/* An op whose operands are the call's first `n_values` arguments, then an
 * optional mask at `mask_at`. */
static TirOp *effect_op(Lower *L, Node *n, TirCode code, int n_values, int mask_at) {
  int values[4], count = 0;
  for (int i = 0; i < n_values; i++) values[count++] = lower_expr(L, n->args.data[i]);
  int mask = mask_at >= 0 && !is_none(n->args.data[mask_at]) ? lower_expr(L, n->args.data[mask_at]) : -1;
  TirOp *op = emit_op(L, code, n->loc);
  for (int i = 0; i < count; i++) tir_add_operand(L->f, op, values[i]);
  if (mask >= 0) {
    tir_add_operand(L->f, op, mask);
    op->flags |= LOAD_MASK;
  }
  return op;
}

/* One op for all of an asm's results: the checker assigned them one after another (asm_results),
 * so result 0 makes the op and the others, sharing its args node, take their results from it. */
static int lower_inline_asm(Lower *L, Node *n, NodeVec *a) {
  Node *dtypes = a->data[3];
  if (n->ival > 0 && L->asm_args == a->data[2]) return L->asm_op->results.data[n->ival];
  NodeVec *args = &a->data[2]->args;
  int v[MAX_ASM_ARGS];
  for (int i = 0; i < args->len; i++) v[i] = lower_expr(L, args->data[i]);
  TirOp *op = emit_op(L, TIR_INLINE_ASM, n->loc);
  for (int i = 0; i < args->len; i++) tir_add_operand(L->f, op, v[i]);
  op->str = const_str(a->data[0]);
  op->str2 = const_str(a->data[1]);
  if (const_int(a->data[4])) op->flags |= ASM_PURE;
  if (const_int(a->data[5]) > 1) op->ival = const_int(a->data[5]);
  if (dtypes->kind != ND_TUPLE) return tir_add_result(L->f, op, n->type);
  for (int k = 0; k < dtypes->args.len; k++)
    tir_add_result(L->f, op, type_with_elem(L->f->arena, n->type, dtypes->args.data[k]->cval->dtype, 0));
  L->asm_args = a->data[2];
  L->asm_op = op;
  return op->results.data[n->ival];
}

static int lower_dot(Lower *L, Node *n, NodeVec *a) {
  int x = lower_expr(L, a->data[0]), y = lower_expr(L, a->data[1]);
  int acc = is_none(a->data[2]) ? emit_constant(L, n->loc, n->type, 0, 0.0) : lower_expr(L, a->data[2]);
  int r = emit(L, TIR_DOT, n->loc, n->type, x, y, acc);
  const char *prec = const_str(a->data[3]);
  Value *allow = a->data[4]->cval;
  int kind = prec ? tir_kind_lookup(TIR_DOT, prec, strlen(prec)) : allow->kind == V_BOOL && !allow->i ? DOT_IEEE : DOT_TF32;
  last_op(L)->kind = ty(L, x)->elem == DT_FP32 ? kind : DOT_IEEE; /* only fp32 products have a precision to choose */
  return r;
}

static int reduce_kind(int id, Node *n) {
  switch (id) {
  case B_SUM: return RED_SUM;
  case B_MAX: return n->ival ? RED_ARGMAX : RED_MAX;
  case B_MIN: return n->ival ? RED_ARGMIN : RED_MIN;
  case B_ARGMAX: return RED_ARGMAX;
  default: return RED_ARGMIN;
  }
}

/* Reductions over one axis, or over all (flattened first); keep_dims puts
 * the reduced axes back as size 1. */
static int lower_reduce(Lower *L, Node *n, NodeVec *a, int id) {
  int x = lower_expr(L, a->data[0]);
  Type *in = ty(L, x);
  int kind = reduce_kind(id, n);
  if (kind == RED_SUM && in->elem != n->type->elem)
    x = emit(L, TIR_CAST, n->loc, type_with_elem(L->f->arena, in, n->type->elem, 0), x, -1, -1);
  int all = is_none(a->data[1]);
  int axis = all ? 0 : (int)const_int(a->data[1]);
  if (all) {
    if (axis < 0) axis += in->rank;
    int64_t numel = type_numel(in);
    if (in->rank != 1) x = emit(L, TIR_RESHAPE, n->loc, type_tile(L->f->arena, ty(L, x), 1, &numel), x, -1, -1);
  } else if (axis < 0) {
    axis += in->rank;
  }
  Type *src = ty(L, x);
  int64_t shape[MAX_RANK];
  for (int i = 0, j = 0; i < src->rank; i++)
    if (i != axis) shape[j++] = src->shape[i];
  Type *rt = type_tile(L->f->arena, type_scalar(L->f->arena, n->type->elem), src->rank - 1, shape);
  int r = emit(L, TIR_REDUCE, n->loc, rt, x, -1, -1);
  last_op(L)->kind = kind;
  last_op(L)->axis = axis;
  if (type_same_shape(rt, n->type)) return r;
  if (all) return emit(L, TIR_RESHAPE, n->loc, n->type, r, -1, -1);
  return expand_dims(L, n->loc, r, axis);
}

static int lower_scan(Lower *L, Node *n, NodeVec *a, int id) {
  int x = lower_expr(L, a->data[0]);
  if (ty(L, x)->elem != n->type->elem) x = emit(L, TIR_CAST, n->loc, n->type, x, -1, -1);
  int axis = (int)const_int(a->data[1]);
  int r = emit(L, TIR_SCAN, n->loc, n->type, x, -1, -1);
  TirOp *op = last_op(L);
  op->kind = id == B_CUMSUM ? RED_SUM : RED_PROD;
  op->axis = axis < 0 ? axis + n->type->rank : axis;
  if (a->data[2]->cval->i) op->flags |= SCAN_REVERSE;
  return r;
}

static int lower_nary(Lower *L, Node *n, TirCode code, int count) {
  int v[3] = {-1, -1, -1};
  for (int i = 0; i < count; i++) v[i] = lower_expr(L, n->args.data[i]);
  return emit(L, code, n->loc, n->type, v[0], v[1], v[2]);
}

static int lower_libdevice(Lower *L, Node *n) {
  int v[LIBDEVICE_MAX_ARGS];
  for (int i = 0; i < n->args.len; i++) v[i] = lower_expr(L, n->args.data[i]);
  TirOp *op = emit_op(L, TIR_LIBDEVICE, n->loc);
  op->kind = (int)n->a->cval->i;
  for (int i = 0; i < n->args.len; i++) tir_add_operand(L->f, op, v[i]);
  return tir_add_result(L->f, op, n->type);
}

static int lower_expand_dims(Lower *L, Node *n, NodeVec *a) {
  int v = lower_expr(L, a->data[0]);
  Value *axes = a->data[1]->kind == ND_TUPLE ? NULL : a->data[1]->cval;
  int rank = n->type->rank, is_new[MAX_RANK] = {0};
  Node *t = a->data[1];
  int count = axes ? 1 : t->args.len;
  for (int i = 0; i < count; i++) {
    int64_t ax = axes ? axes->i : t->args.data[i]->cval->i;
    is_new[ax < 0 ? ax + rank : ax] = 1;
  }
  for (int i = 0; i < rank; i++)
    if (is_new[i]) v = expand_dims(L, n->loc, v, i);
  return v;
}

static int lower_permute(Lower *L, Node *n, NodeVec *a) {
  int v = lower_expr(L, a->data[0]);
  Node *dims = a->data[1];
  if (dims->kind == ND_TUPLE && dims->args.len == 1 && dims->args.data[0]->kind == ND_TUPLE) dims = dims->args.data[0];
  int r = emit(L, TIR_TRANS, n->loc, n->type, v, -1, -1);
  TirOp *op = last_op(L);
  op->n_ints = n->type->rank;
  for (int i = 0; i < op->n_ints; i++)
    op->ints[i] = dims->args.len ? dims->args.data[i]->cval->i : op->n_ints - 1 - i;
  return r;
}

/* ---- join, split and what is built from them ---- */

static int reshape(Lower *L, Loc loc, int v, int rank, const int64_t *shape) {
  Type *t = type_tile(L->f->arena, ty(L, v), rank, shape);
  return type_same_shape(ty(L, v), t) ? v : emit(L, TIR_RESHAPE, loc, t, v, -1, -1);
}

static int permute(Lower *L, Loc loc, int v, const int *perm) {
  Type *t = ty(L, v);
  int64_t shape[MAX_RANK];
  for (int i = 0; i < t->rank; i++) shape[i] = t->shape[perm[i]];
  int r = emit(L, TIR_TRANS, loc, type_tile(L->f->arena, t, t->rank, shape), v, -1, -1);
  TirOp *op = last_op(L);
  op->n_ints = t->rank;
  for (int i = 0; i < t->rank; i++) op->ints[i] = perm[i];
  return r;
}

/* Two tiles of one type (rank >= 1) side by side in a new last dimension. */
static int join(Lower *L, Loc loc, int a, int b) {
  Type *t = ty(L, a);
  int64_t shape[MAX_RANK];
  memcpy(shape, t->shape, sizeof shape);
  shape[t->rank] = 2;
  return emit(L, TIR_JOIN, loc, type_tile(L->f->arena, t, t->rank + 1, shape), a, b, -1);
}

static int split(Lower *L, Loc loc, int v, int half) {
  Type *t = ty(L, v);
  int r = emit(L, TIR_SPLIT, loc, type_tile(L->f->arena, t, t->rank - 1, t->shape), v, -1, -1);
  last_op(L)->ival = half;
  return r;
}

/* join and interleave: scalars become tiles of one element first (the op
 * joins tiles); interleave is the join reshaped. */
static int lower_join(Lower *L, Node *n, NodeVec *a) {
  int x = lower_expr(L, a->data[0]), y = lower_expr(L, a->data[1]);
  if (ty(L, x)->rank == 0) {
    int64_t one = 1;
    x = emit(L, TIR_SPLAT, n->loc, type_tile(L->f->arena, ty(L, x), 1, &one), x, -1, -1);
    y = emit(L, TIR_SPLAT, n->loc, type_tile(L->f->arena, ty(L, y), 1, &one), y, -1, -1);
  }
  return reshape(L, n->loc, join(L, n->loc, x, y), n->type->rank, n->type->shape);
}

/* One half of split (the checker made one call per half, n->ival); a
 * pair of scalars comes from a [1, 2] tile. */
static int lower_split(Lower *L, Node *n, NodeVec *a) {
  int x = lower_expr(L, a->data[0]);
  if (ty(L, x)->rank == 1) {
    int64_t shape[2] = {1, 2};
    x = reshape(L, n->loc, x, 2, shape);
  }
  return reshape(L, n->loc, split(L, n->loc, x, (int)n->ival), n->type->rank, n->type->shape);
}

/* cat along dim: the join's new dimension moved in front of dim, the two
 * merged: [..., 2, N, ...] in row-major order is a then b. */
static int lower_cat(Lower *L, Node *n, NodeVec *a) {
  int x = lower_expr(L, a->data[0]), y = lower_expr(L, a->data[1]);
  int rank = ty(L, x)->rank, dim = (int)const_int(a->data[3]), perm[MAX_RANK];
  for (int i = 0, j = 0; i <= rank; i++) perm[i] = i == dim ? rank : j++;
  int r = permute(L, n->loc, join(L, n->loc, x, y), perm);
  return reshape(L, n->loc, r, n->type->rank, n->type->shape);
}

/* Reversing dim flips every bit of its index: one bit at a time, the tile
 * viewed as [outer, 2, inner] with that bit in the middle, whose halves
 * trade places (split, then join the other way round). */
static int lower_flip(Lower *L, Node *n, NodeVec *a) {
  int v = lower_expr(L, a->data[0]);
  Type *t = ty(L, v);
  int dim = (int)const_int(a->data[1]);
  int64_t size = t->shape[dim], outer = 1, inner = 1;
  for (int i = 0; i < t->rank; i++) {
    if (i < dim) outer *= t->shape[i];
    if (i > dim) inner *= t->shape[i];
  }
  static const int swap_last[3] = {0, 2, 1};
  for (int64_t bit = 1; bit < size; bit *= 2) {
    int64_t view[3] = {outer * size / (2 * bit), 2, bit * inner};
    v = permute(L, n->loc, reshape(L, n->loc, v, 3, view), swap_last);
    v = join(L, n->loc, split(L, n->loc, v, 1), split(L, n->loc, v, 0));
    v = permute(L, n->loc, v, swap_last);
  }
  return reshape(L, n->loc, v, t->rank, t->shape);
}

static int lower_hint(Lower *L, Node *n, NodeVec *a, int id) {
  int v = lower_expr(L, a->data[0]);
  int r = emit(L, TIR_HINT, n->loc, n->type, v, -1, -1);
  TirOp *op = last_op(L);
  op->kind = id == B_MULTIPLE_OF ? HINT_MULTIPLE_OF : id == B_MAX_CONTIGUOUS ? HINT_MAX_CONTIGUOUS : HINT_MAX_CONSTANCY;
  Node *vals = a->data[1];
  if (vals->kind == ND_TUPLE) {
    op->n_ints = vals->args.len;
    for (int i = 0; i < op->n_ints; i++) op->ints[i] = vals->args.data[i]->cval->i;
  } else {
    op->n_ints = 1;
    op->ints[0] = vals->cval->i;
  }
  return r;
}

static int lower_print(Lower *L, Node *n, NodeVec *a) {
  Node *values = a->data[1];
  int v[64], count = 0;
  if (values->args.len > 64) diag_error(L->diags, n->loc, "device_print takes at most 64 values");
  for (int i = 0; i < values->args.len && count < 64; i++) v[count++] = lower_expr(L, values->args.data[i]);
  TirOp *op = emit_op(L, TIR_PRINT, n->loc);
  for (int i = 0; i < count; i++) tir_add_operand(L->f, op, v[i]);
  op->str = const_str(a->data[0]);
  if (a->data[2]->cval->i) op->flags |= PRINT_HEX;
  return -1;
}

static int lower_full(Lower *L, Node *n, NodeVec *a, int id) {
  if (id == B_ZEROS) return emit_constant(L, n->loc, n->type, 0, 0.0);
  Node *value = a->data[1];
  if (value->kind == ND_CONST && value->cval) {
    double f = value->cval->kind == V_FLOAT ? value->cval->f : (double)value->cval->i;
    int64_t i = value->cval->kind == V_FLOAT ? float_to_int64(f) : value->cval->i;
    return emit_constant(L, n->loc, n->type, i, f);
  }
  return emit(L, TIR_SPLAT, n->loc, n->type, lower_expr(L, value), -1, -1);
}

/* tl.atomic_NAME's AtomicKind: NAME in lang/memory.def. */
static int atomic_kind(int builtin) {
  const char *name = builtin_name(builtin) + strlen("atomic_");
  return tir_kind_lookup(TIR_ATOMIC_RMW, name, strlen(name));
}

/* sem= and scope= of an atomic (arguments 3 and 4): MemSem and MemScope, 0 when absent. */
static void atomic_order(TirOp *op, Node *n) {
  const char *sem = const_str(n->args.data[3]), *scope = const_str(n->args.data[4]);
  op->ival = sem && tir_sem_lookup(sem, strlen(sem)) > 0 ? tir_sem_lookup(sem, strlen(sem)) : SEM_ACQ_REL;
  op->ival2 = scope && tir_scope_lookup(scope, strlen(scope)) > 0 ? tir_scope_lookup(scope, strlen(scope)) : SCOPE_GPU;
}

/* The tile IR op each builtin becomes one-to-one (lang/builtins.def's op
 * column; TIR_COUNT: the builtin has a rule of its own below). */
#define TIR_NONE TIR_COUNT
static const TirCode builtin_ops[] = {
#define BUILTIN(id, handler, op, flags, name, params, summary) TIR_##op,
#include "builtins.def"
#undef BUILTIN
};
#undef TIR_NONE

static int lower_builtin(Lower *L, Node *n) {
  int id = builtin_id(n);
  NodeVec *a = &n->args;
  TirOp *op;
  if (builtin_ops[id] != TIR_COUNT) {
    int v = lower_nary(L, n, builtin_ops[id], tir_op_arity(builtin_ops[id]));
    int takes_nan = id == B_MAXIMUM || id == B_MINIMUM || id == B_CLAMP;
    if (takes_nan && dtype_is_float(n->type->elem)) /* propagate_nan, bound by the checker as NAN_* */
      last_op(L)->kind = (int)const_int(a->data[tir_op_arity(builtin_ops[id])]);
    return v;
  }
  switch (id) {
  case B_PROGRAM_ID:
  case B_NUM_PROGRAMS: {
    int r = emit(L, id == B_PROGRAM_ID ? TIR_PROGRAM_ID : TIR_NUM_PROGRAMS, n->loc, n->type, -1, -1, -1);
    last_op(L)->axis = (int)const_int(a->data[0]);
    return r;
  }
  case B_ARANGE: {
    int r = emit(L, TIR_MAKE_RANGE, n->loc, n->type, -1, -1, -1);
    last_op(L)->ival = const_int(a->data[0]);
    last_op(L)->ival2 = const_int(a->data[1]);
    return r;
  }
  case B_ZEROS:
  case B_FULL: return lower_full(L, n, a, id);
  case B_LOAD: return lower_load(L, n, a);
  case B_STORE:
    op = effect_op(L, n, TIR_STORE, 2, 2);
    op->str = const_str(a->data[4]) && *const_str(a->data[4]) ? const_str(a->data[4]) : NULL;
    op->ival = eviction(a->data[5]);
    return -1;
  case B_ATOMIC_ADD: case B_ATOMIC_MAX: case B_ATOMIC_MIN: case B_ATOMIC_AND:
  case B_ATOMIC_OR: case B_ATOMIC_XOR: case B_ATOMIC_XCHG:
    op = effect_op(L, n, TIR_ATOMIC_RMW, 2, 2);
    op->kind = atomic_kind(id);
    atomic_order(op, n);
    return tir_add_result(L->f, op, n->type);
  case B_ATOMIC_CAS:
    op = effect_op(L, n, TIR_ATOMIC_CAS, 3, -1);
    atomic_order(op, n);
    return tir_add_result(L->f, op, n->type);
  case B_DOT: return lower_dot(L, n, a);
  case B_SUM: case B_MAX: case B_MIN: case B_ARGMAX: case B_ARGMIN: return lower_reduce(L, n, a, id);
  case B_CUMSUM: case B_CUMPROD: return lower_scan(L, n, a, id);
  case B_DIV_RN: {
    int v = lower_nary(L, n, TIR_DIV, 2);
    last_op(L)->kind = DIV_RN;
    return v;
  }
  case B_EXPAND_DIMS: return lower_expand_dims(L, n, a);
  case B_BROADCAST_TO: return broadcast_to(L, n->loc, lower_expr(L, a->data[0]), n->type);
  case B_RESHAPE:
  case B_VIEW: return emit(L, TIR_RESHAPE, n->loc, n->type, lower_expr(L, a->data[0]), -1, -1);
  case B_TRANS:
  case B_PERMUTE: return lower_permute(L, n, a);
  case B_JOIN:
  case B_INTERLEAVE: return lower_join(L, n, a);
  case B_SPLIT: return lower_split(L, n, a);
  case B_CAT: return lower_cat(L, n, a);
  case B_FLIP: return lower_flip(L, n, a);
  case B_GATHER: {
    int r = emit(L, TIR_GATHER, n->loc, n->type, lower_expr(L, a->data[0]), lower_expr(L, a->data[1]), -1);
    last_op(L)->axis = (int)const_int(a->data[2]);
    return r;
  }
  case B_TO:
  case B_CAST: {
    int r = emit(L, a->data[3]->cval->i ? TIR_BITCAST : TIR_CAST, n->loc, n->type, lower_expr(L, a->data[0]), -1, -1);
    const char *rounding = const_str(a->data[2]);
    last_op(L)->kind = rounding ? tir_modifier_lookup(TIR_CAST, rounding, strlen(rounding)) : ROUND_RTNE;
    return r;
  }
  case B_MULTIPLE_OF: case B_MAX_CONTIGUOUS: case B_MAX_CONSTANCY: return lower_hint(L, n, a, id);
  case B_DEVICE_ASSERT:
    op = effect_op(L, n, TIR_ASSERT, 1, 2);
    op->str = const_str(a->data[1]);
    return -1;
  case B_DEVICE_PRINT:
  case B_PY_PRINT: return lower_print(L, n, a);
  case B_DEBUG_BARRIER: emit_op(L, TIR_BARRIER, n->loc); return -1;
  case B_INLINE_ASM: return lower_inline_asm(L, n, a);
  case B_RAND: case B_RANDN: case B_RANDINT: {
    int r = lower_nary(L, n, TIR_RAND, 2);
    last_op(L)->kind = id == B_RAND ? RAND_UNIFORM : id == B_RANDN ? RAND_NORMAL : RAND_INT;
    last_op(L)->ival = const_int(a->data[2]);
    return r;
  }
  default:
    diag_error(L->diags, n->loc, "internal error: builtin %s has no lowering", builtin_name(id));
    return emit_constant(L, n->loc, n->type ? n->type : type_scalar(L->f->arena, DT_I32), 0, 0);
  }
}

static int lower_expr(Lower *L, Node *n) {
  switch (n->kind) {
  case ND_CONST: return lower_const(L, n);
  case ND_NAME: {
    int v = env_get(&L->env, n->name);
    if (v < 0) {
      diag_error(L->diags, n->loc, "internal error: '%s' has no value", n->name);
      v = emit_constant(L, n->loc, n->type, 0, 0);
    }
    return v;
  }
  case ND_BINOP: return lower_binary(L, n);
  case ND_UNARY: return lower_unary(L, n);
  case ND_CAST: return lower_cast(L, n);
  case ND_BROADCAST: return broadcast_to(L, n->loc, lower_expr(L, n->a), n->type);
  case ND_SUBSCRIPT: return lower_subscript(L, n);
  case ND_CALL: return n->a->cval->kind == V_LIBDEVICE ? lower_libdevice(L, n) : lower_builtin(L, n);
  default:
    diag_error(L->diags, n->loc, "internal error: %s cannot be lowered", node_kind_name(n->kind));
    return emit_constant(L, n->loc, type_scalar(L->f->arena, DT_I32), 0, 0);
  }
}

/* ---- control flow -------------------------------------------------------- */

/* The variables the checker decided flow out of a loop or an if (its args):
 * each with its value before the statement. */
static Env recorded_vars(Lower *L, Node *n) {
  Env c = {0};
  for (int i = 0; i < n->args.len; i++) {
    const char *name = n->args.data[i]->name;
    int v = env_get(&L->env, name);
    EnvEntry e = {name, v};
    if (v < 0 && n->kind != ND_IF) {
      diag_error(L->diags, n->loc, "internal error: loop variable '%s' has no value before the loop", name);
      continue;
    }
    vec_push(L->f->arena, &c, e);
  }
  return c;
}

static void bind_args(Lower *L, TirBlock *b, Env *vars) {
  for (int i = 0; i < vars->len; i++) {
    int arg = tir_value_new(L->f, ty(L, vars->data[i].value), vars->data[i].name);
    vec_push(L->f->arena, &b->args, arg);
    env_set(L, vars->data[i].name, arg);
  }
}

static void emit_yield(Lower *L, TirBlock *b, Env *vars, Loc loc, TirCode code, int cond) {
  TirOp *y = tir_op_new(L->f, code, loc);
  if (cond >= 0) tir_add_operand(L->f, y, cond);
  for (int i = 0; i < vars->len; i++) {
    int v = env_get(&L->env, vars->data[i].name);
    if (v < 0) diag_error(L->diags, loc, "internal error: '%s' has no value at the end of a block", vars->data[i].name);
    else tir_add_operand(L->f, y, v);
  }
  tir_append(L->f, b, y);
}

/* Puts a loop after its body is built: the environment of before the loop,
 * with the carried variables now the loop's results. */
static void finish_loop(Lower *L, TirOp *op, Env *carried, Env outer) {
  L->env = outer;
  tir_append(L->f, L->block, op);
  for (int i = 0; i < carried->len; i++)
    env_set(L, carried->data[i].name, tir_add_result(L->f, op, ty(L, carried->data[i].value)));
}

/* A scalar operand that may still be an untyped constexpr (range bounds). */
static int lower_scalar(Lower *L, Node *n, Type *t) {
  if (n->kind == ND_CONST && !n->type) return emit_constant(L, n->loc, t, n->cval->i, (double)n->cval->i);
  return lower_expr(L, n);
}

static void lower_for(Lower *L, Node *n) {
  NodeVec *a = &n->b->args;
  Type *it = n->a->type;
  int has_end = !is_none(a->data[1]);
  Node *start = has_end ? a->data[0] : NULL, *end = has_end ? a->data[1] : a->data[0];
  int lb = start ? lower_scalar(L, start, it) : emit_constant(L, n->loc, it, 0, 0);
  int ub = lower_scalar(L, end, it);
  int step = is_none(a->data[2]) ? emit_constant(L, n->loc, it, 1, 1) : lower_scalar(L, a->data[2], it);
  int bounds[3] = {lb, ub, step};
  for (int i = 0; i < 3; i++)
    if (ty(L, bounds[i])->elem != it->elem) bounds[i] = emit(L, TIR_CAST, n->loc, it, bounds[i], -1, -1);
  Env carried = recorded_vars(L, n);
  TirOp *op = tir_op_new(L->f, TIR_FOR, n->loc);
  for (int i = 0; i < 3; i++) tir_add_operand(L->f, op, bounds[i]);
  for (int i = 0; i < carried.len; i++) tir_add_operand(L->f, op, carried.data[i].value);
  if (a->len > 3 && !is_none(a->data[3])) op->ival = const_int(a->data[3]); /* num_stages */
  if (a->len > 4 && !is_none(a->data[4]) && const_int(a->data[4]) > 1) op->ival2 = const_int(a->data[4]); /* loop_unroll_factor */
  if (a->len > 8 && const_int(a->data[8])) op->flags |= NO_LICM; /* disable_licm */
  Env outer = env_copy(L);
  TirBlock *body = tir_block_new(L->f);
  op->regions[0] = body;
  int iv = tir_value_new(L->f, it, n->a->name);
  vec_push(L->f->arena, &body->args, iv);
  env_set(L, n->a->name, iv);
  bind_args(L, body, &carried);
  lower_block(L, &n->body, body);
  emit_yield(L, body, &carried, n->loc, TIR_YIELD, -1);
  finish_loop(L, op, &carried, outer);
}

static void lower_while(Lower *L, Node *n) {
  Env carried = recorded_vars(L, n);
  TirOp *op = tir_op_new(L->f, TIR_WHILE, n->loc);
  if (n->ival) op->flags |= NO_LICM; /* tl.condition's disable_licm */
  for (int i = 0; i < carried.len; i++) tir_add_operand(L->f, op, carried.data[i].value);
  Env outer = env_copy(L);
  TirBlock *before = tir_block_new(L->f), *after = tir_block_new(L->f);
  op->regions[0] = before;
  op->regions[1] = after;
  TirBlock *saved = L->block;
  L->block = before;
  bind_args(L, before, &carried);
  int cond = lower_expr(L, n->a);
  emit_yield(L, before, &carried, n->loc, TIR_CONDITION, cond);
  L->block = saved;
  L->env = env_clone(L, &outer);
  bind_args(L, after, &carried);
  lower_block(L, &n->body, after);
  emit_yield(L, after, &carried, n->loc, TIR_YIELD, -1);
  finish_loop(L, op, &carried, outer);
}

static void lower_if(Lower *L, Node *n) {
  int cond = lower_expr(L, n->a);
  Env results = recorded_vars(L, n);
  TirOp *op = tir_op_new(L->f, TIR_IF, n->loc);
  tir_add_operand(L->f, op, cond);
  Env outer = env_copy(L);
  NodeVec *branches[2] = {&n->body, &n->orelse};
  Type *types[64];
  if (results.len > 64) diag_error(L->diags, n->loc, "an if may define at most 64 variables");
  int returned = L->returned;
  for (int b = 0; b < 2; b++) {
    L->env = env_clone(L, &outer);
    L->returned = returned;
    TirBlock *region = tir_block_new(L->f);
    op->regions[b] = region;
    lower_block(L, branches[b], region);
    emit_yield(L, region, &results, n->loc, TIR_YIELD, -1);
    if (b == 0)
      for (int i = 0; i < results.len && i < 64; i++) types[i] = n->args.data[i]->type;
  }
  L->env = outer;
  L->returned = returned;
  tir_append(L->f, L->block, op);
  for (int i = 0; i < results.len && i < 64; i++) env_set(L, results.data[i].name, tir_add_result(L->f, op, types[i]));
}

/* ---- custom combines ------------------------------------------------------ */

/* The combine region of tl.reduce / tl.associative_scan: the checked body
 * of combine_fn (combine.c) on 2N scalar arguments, yielding its N values. */
static TirBlock *combine_region(Lower *L, Node *n) {
  TirBlock *b = tir_block_new(L->f), *saved = L->block;
  Env outer = env_copy(L);
  int returned = L->returned;
  for (int i = 0; i < n->orelse.len; i++) {
    Node *p = n->orelse.data[i];
    int v = tir_value_new(L->f, p->type, p->name);
    vec_push(L->f->arena, &b->args, v);
    env_set(L, p->name, v);
  }
  lower_block(L, &n->body, b);
  L->block = b;
  TirOp *y = tir_op_new(L->f, TIR_YIELD, n->loc);
  for (int i = 0; i < n->kwargs.len; i++) tir_add_operand(L->f, y, lower_expr(L, n->kwargs.data[i]));
  tir_append(L->f, b, y);
  L->block = saved;
  L->env = outer;
  L->returned = returned;
  return b;
}

/* s: the assignment of a combine call's N results (combine.c).  One
 * reduce_combine or scan_combine op; axis=None flattens the inputs first,
 * keep_dims puts the reduced axes back as size 1. */
static void lower_combine(Lower *L, Node *s) {
  Node *n = s->b, *inputs = n->args.data[0];
  int reduce = builtin_id(n) == B_REDUCE, all = reduce && is_none(n->args.data[1]);
  Type *in = inputs->args.data[0]->type;
  int axis = all ? 0 : (int)const_int(n->args.data[1]);
  if (axis < 0) axis += in->rank;
  TirOp *op = tir_op_new(L->f, reduce ? TIR_REDUCE_COMBINE : TIR_SCAN_COMBINE, n->loc);
  op->axis = axis;
  if (!reduce && n->args.data[3]->cval->i) op->flags |= SCAN_REVERSE;
  for (int i = 0; i < inputs->args.len; i++) {
    int x = lower_expr(L, inputs->args.data[i]);
    int64_t numel = type_numel(in);
    if (all && in->rank != 1) x = emit(L, TIR_RESHAPE, n->loc, type_tile(L->f->arena, ty(L, x), 1, &numel), x, -1, -1);
    tir_add_operand(L->f, op, x);
  }
  op->combine = combine_region(L, n);
  tir_append(L->f, L->block, op);
  Type *src = ty(L, op->operands.data[0]);
  int64_t shape[MAX_RANK];
  for (int d = 0, j = 0; d < src->rank; d++)
    if (d != axis || !reduce) shape[j++] = src->shape[d];
  for (int i = 0; i < s->args.len; i++) {
    Node *target = s->args.data[i];
    int r = tir_add_result(L->f, op, type_tile(L->f->arena, target->type, src->rank - reduce, shape));
    env_set(L, target->name, r);
  }
  for (int i = 0; reduce && i < s->args.len; i++) {
    Node *target = s->args.data[i];
    int r = op->results.data[i];
    if (type_same_shape(ty(L, r), target->type)) continue;
    r = all ? emit(L, TIR_RESHAPE, n->loc, target->type, r, -1, -1) : expand_dims(L, n->loc, r, axis);
    env_set(L, target->name, r);
  }
}

static int is_combine(const Node *n) {
  return n && n->kind == ND_CALL && n->a->cval->kind == V_BUILTIN &&
         (n->a->cval->i == B_REDUCE || n->a->cval->i == B_ASSOCIATIVE_SCAN);
}

static void lower_stmt(Lower *L, Node *s) {
  switch (s->kind) {
  case ND_ASSIGN:
    if (is_combine(s->b)) lower_combine(L, s);
    else env_set(L, s->args.data[0]->name, lower_expr(L, s->b));
    break;
  case ND_EXPR_STMT: lower_expr(L, s->a); break;
  case ND_IF: lower_if(L, s); break;
  case ND_FOR: lower_for(L, s); break;
  case ND_WHILE: lower_while(L, s); break;
  case ND_RETURN: /* inside an if (a kernel's early exit) the branch just ends */
    if (L->block == L->f->body) emit_op(L, TIR_RETURN, s->loc);
    L->returned = 1;
    break;
  default: diag_error(L->diags, s->loc, "internal error: %s cannot be lowered", node_kind_name(s->kind));
  }
}

static void lower_block(Lower *L, NodeVec *body, TirBlock *into) {
  TirBlock *saved = L->block;
  L->block = into;
  for (int i = 0; i < body->len && !L->returned; i++) lower_stmt(L, body->data[i]);
  L->block = saved;
}

TirFunc *tir_lower(const CheckedKernel *k, Arena *a, Diags *d) {
  Lower L = {0};
  L.f = tir_func_new(a, k->def->name);
  L.diags = d;
  for (int i = 0, arg = 0; i < k->params.len; i++) {
    const KernelParam *p = &k->params.data[i];
    if (p->is_constexpr) {
      arg += p->specialized; /* a ':1' argument is still passed at launch */
      continue;
    }
    TirParam tp = {p->name, tir_value_new(L.f, p->type, p->name), p->divisibility, arg++};
    vec_push(a, &L.f->params, tp);
    env_set(&L, p->name, tp.value);
  }
  lower_block(&L, &k->def->body, L.f->body);
  if (!L.returned) tir_append(L.f, L.f->body, tir_op_new(L.f, TIR_RETURN, k->def->loc));
  return L.f;
}
