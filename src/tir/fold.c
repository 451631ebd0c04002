/* Constant folding and canonicalisation.
 *
 * Requires: a verified function.
 * Guarantees:
 *   - an elementwise op (arithmetic, cmp, cast, bitcast, ...) whose operands
 *     are all constants, and a shape op (splat, broadcast, expand_dims,
 *     reshape, trans) of a constant, becomes a constant of its result type,
 *     in place (the value id stays).  The value is the one the op computes
 *     at run time: integers wrap, floats round to nearest even in their
 *     type (numeric.c).  Nothing is folded where the run-time result is
 *     undefined (division by zero, INT_MIN / -1, shifts by the width or
 *     more, float to int out of range) or where the GPU does not compute
 *     the correctly rounded result (fp32 division is div.full.f32 in
 *     Triton; exp, sqrt, ...), nor fmod, which NVPTX expands inexactly;
 *   - every constant is canonical: integers wrapped to their type, floats
 *     rounded to it;
 *   - identities: x+0, 0+x, x-0, x*1, 1*x, x/1, x&-1, x|0, x^0, x<<0, x>>0,
 *     addptr p, 0, cast/bitcast/broadcast/reshape to the same type,
 *     trans by the identity, select with a constant condition or equal
 *     arms, max/min(x, x) on integers: every use of the result now uses x.
 *     Floats only where the identity is exact (x + -0.0, x - 0.0, x * 1.0);
 *     integer x*0 and x&0 become the constant 0;
 *   - a shape op of a splat becomes one splat; reshape of reshape one reshape;
 *   - an `if` whose condition is a constant is replaced by the ops of the
 *     branch it takes.
 * Leaves the ops it bypassed in place, unused, for dce.
 * Invalidates: nothing cached (no pass keeps analyses across passes). */
#include "../support/numeric.h"
#include "passes.h"

#include <math.h>
#include <string.h>

typedef struct Fold {
  TirFunc *f;
  int *subst;     /* per value: the value its uses now take (itself if none) */
  TirOp **def;    /* per value: the op that defines it, NULL for arguments */
} Fold;

/* A scalar value: `i` for integer types (canonical, see wrap_int), `f` for floats. */
typedef struct Const {
  int64_t i;
  double f;
} Const;

static DType elem(const TirFunc *f, int v) { return tir_type(f, v)->elem; }
static DType result_elem(const TirFunc *f, const TirOp *op) { return elem(f, op->results.data[0]); }

/* ---- constants ------------------------------------------------------------ */

static void set_value(TirOp *op, DType t, Const c) {
  if (dtype_is_float(t)) {
    op->fval = c.f;
    if (!float_to_int(c.f, DT_I64, &op->ival)) op->ival = 0; /* as lowering's (int64_t) cast, where defined */
  } else {
    op->ival = c.i;
    op->fval = (double)c.i;
  }
}

static Const value_of(const TirOp *op, DType t) {
  Const c = {0, 0};
  if (dtype_is_float(t)) c.f = round_to_dtype(op->fval, t);
  else c.i = wrap_int(op->ival, t);
  return c;
}

/* Turns op into `constant c` of its result type, keeping its value id and location. */
static void make_constant(TirOp *op, DType t, Const c) {
  op->code = TIR_CONSTANT;
  op->operands.len = 0;
  op->kind = op->axis = op->flags = op->n_ints = 0;
  op->ival2 = 0;
  op->str = NULL;
  set_value(op, t, c);
}

static const TirOp *constant_def(const Fold *F, int v) {
  const TirOp *d = F->def[v];
  return d && d->code == TIR_CONSTANT && !tir_type(F->f, v)->is_ptr ? d : NULL;
}

static int constant_value(const Fold *F, int v, Const *out) {
  const TirOp *d = constant_def(F, v);
  if (d) *out = value_of(d, elem(F->f, v));
  return d != NULL;
}

/* Whether v is the constant n (integer types) or x (float types, bit for bit: -0.0 is not 0.0). */
static int is_const(const Fold *F, int v, int64_t n, double x) {
  Const c;
  if (!constant_value(F, v, &c)) return 0;
  DType t = elem(F->f, v);
  if (!dtype_is_float(t)) return c.i == wrap_int(n, t);
  return c.f == x && signbit(c.f) == signbit(x);
}

static int is_int_const(const Fold *F, int v, int64_t n) { return !dtype_is_float(elem(F->f, v)) && is_const(F, v, n, 0); }

/* ---- evaluation ----------------------------------------------------------- */

/* Float ops whose GPU result is the correctly rounded one.  Computing in
 * double and rounding once to fp32/fp16/bf16 gives that result for + - *
 * (double has more than twice the precision plus two bits). */
static int float_binary(TirCode code, DType t, double a, double b, double *r) {
  switch (code) {
  case TIR_ADD: *r = a + b; return 1;
  case TIR_SUB: *r = a - b; return 1;
  case TIR_MUL: *r = a * b; return 1;
  case TIR_DIV: *r = a / b; return t == DT_FP64; /* fp32 '/' is approximate (div.full.f32); div_rn is left too */
  case TIR_MAXIMUM:
  case TIR_MINIMUM:
    /* NaN and signed zeros depend on the instruction chosen: leave them */
    if (isnan(a) || isnan(b) || (a == 0 && b == 0)) return 0;
    *r = (code == TIR_MAXIMUM) == (a > b) ? a : b;
    return 1;
  default: return 0;
  }
}

static int float_unary(TirCode code, double a, double *r) {
  switch (code) {
  case TIR_NEG: *r = -a; return 1;
  case TIR_ABS: *r = fabs(a); return 1;
  case TIR_FLOOR: *r = floor(a); return 1;
  case TIR_CEIL: *r = ceil(a); return 1;
  default: return 0;
  }
}

static int float_ternary(TirCode code, DType t, const Const *in, double *r) {
  double x = in[0].f, lo = in[1].f, hi = in[2].f;
  if (code == TIR_FMA) { /* one rounding: only fp64 has it in C */
    *r = fma(x, lo, hi);
    return t == DT_FP64;
  }
  if (code != TIR_CLAMP || isnan(x) || isnan(lo) || isnan(hi) || x == 0 || lo == 0 || hi == 0) return 0;
  *r = fmin(fmax(x, lo), hi);
  return 1;
}

/* Arithmetic whose operands and result share the type t. */
static int arithmetic(const TirOp *op, DType t, const Const *in, Const *out) {
  int n = op->operands.len;
  if (dtype_is_float(t)) {
    int ok = n == 1 ? float_unary(op->code, in[0].f, &out->f)
           : n == 2 ? float_binary(op->code, t, in[0].f, in[1].f, &out->f)
                    : float_ternary(op->code, t, in, &out->f);
    out->f = round_to_dtype(out->f, t);
    return ok;
  }
  int ok = n == 1 ? tir_int_unary(op->code, t, in[0].i, &out->i)
         : n == 2 ? tir_int_binary(op->code, t, in[0].i, in[1].i, &out->i)
                  : 0;
  out->i = wrap_int(out->i, t);
  return ok;
}

static int compare(int kind, DType t, Const a, Const b) {
  int unordered = 0, lt, eq;
  if (dtype_is_float(t)) {
    unordered = isnan(a.f) || isnan(b.f);
    lt = a.f < b.f;
    eq = a.f == b.f;
  } else {
    lt = int_less(t, a.i, b.i);
    eq = a.i == b.i;
  }
  switch (kind) {
  case CMP_LT: return lt;
  case CMP_LE: return lt || eq;
  case CMP_GT: return !unordered && !lt && !eq;
  case CMP_GE: return !unordered && !lt;
  case CMP_EQ: return eq;
  default: return !eq; /* une: true when unordered, as Triton's != */
  }
}

/* Value conversion (Triton's cast): to i1 is `!= 0`; float to int truncates. */
static int convert(DType from, DType to, Const a, Const *r) {
  int from_float = dtype_is_float(from), to_float = dtype_is_float(to);
  if (to == DT_I1) r->i = from_float ? a.f != 0 : a.i != 0;
  else if (!from_float && !to_float) r->i = wrap_int(a.i, to);
  else if (!from_float) r->f = int_to_float(a.i, from, to);
  else if (to_float) r->f = round_to_dtype(a.f, to);
  else return float_to_int(a.f, to, &r->i);
  return 1;
}

/* Same bits, another type of the same width.  NaNs are left alone: their
 * payload does not survive the trip through a double. */
static int reinterpret(DType from, DType to, Const a, Const *r) {
  if (dtype_bits(from) != dtype_bits(to) || (dtype_is_float(from) && isnan(a.f))) return 0;
  uint64_t bits = dtype_is_float(from) ? float_to_bits(a.f, from) : (uint64_t)a.i;
  if (!dtype_is_float(to)) {
    r->i = wrap_int((int64_t)bits, to);
    return 1;
  }
  r->f = float_from_bits(bits, to);
  return !isnan(r->f);
}

static int evaluate(const Fold *F, const TirOp *op, const Const *in, Const *out) {
  DType t = elem(F->f, op->operands.data[0]), r = result_elem(F->f, op);
  switch (op->code) {
  case TIR_CMP: out->i = compare(op->kind, t, in[0], in[1]); return 1;
  case TIR_CAST: return op->kind == ROUND_RTNE && convert(t, r, in[0], out);
  case TIR_BITCAST: return reinterpret(t, r, in[0], out);
  case TIR_SELECT: case TIR_ADDPTR: return 0; /* select: simplify() picks the arm */
  default: return t == r && arithmetic(op, t, in, out);
  }
}

/* Folds op when all its operands are constants. */
static int fold_constant(Fold *F, TirOp *op) {
  Const in[3];
  if (op->operands.len < 1 || op->operands.len > 3 || tir_type(F->f, op->results.data[0])->is_ptr) return 0;
  for (int i = 0; i < op->operands.len; i++)
    if (!constant_value(F, op->operands.data[i], &in[i])) return 0;
  Const out = {0, 0};
  switch (op->code) {
  case TIR_SPLAT: case TIR_BROADCAST: case TIR_EXPAND_DIMS: case TIR_RESHAPE: case TIR_TRANS: case TIR_SPLIT:
    out = in[0];
    break;
  default:
    if (!(tir_op_flags(op->code) & EW) || !evaluate(F, op, in, &out)) return 0;
  }
  make_constant(op, result_elem(F->f, op), out);
  return 1;
}

/* ---- canonicalisation ----------------------------------------------------- */

static int is_identity_permutation(const TirOp *op) {
  for (int i = 0; i < op->n_ints; i++)
    if (op->ints[i] != i) return 0;
  return 1;
}

/* A shape op of a splat is a splat of the scalar; reshape of reshape one reshape. */
static void merge_shape_ops(const Fold *F, TirOp *op) {
  const TirOp *d = F->def[op->operands.data[0]];
  if (!d) return;
  if (d->code == TIR_SPLAT) {
    op->code = TIR_SPLAT;
    op->axis = op->n_ints = 0;
    op->operands.data[0] = d->operands.data[0];
  } else if (op->code == TIR_RESHAPE && d->code == TIR_RESHAPE) {
    op->operands.data[0] = d->operands.data[0];
  }
}

/* split of a join is the joined operand; a split of a splat a splat. */
static int split_of_join(const Fold *F, TirOp *op) {
  const TirOp *d = F->def[op->operands.data[0]];
  if (d && d->code == TIR_JOIN) return d->operands.data[op->ival];
  if (d && d->code == TIR_SPLAT) {
    merge_shape_ops(F, op);
    op->ival = 0;
  }
  return -1;
}

/* join of a pair's two halves, in order, is the pair. */
static int join_of_halves(const Fold *F, const TirOp *op) {
  const TirOp *a = F->def[op->operands.data[0]], *b = F->def[op->operands.data[1]];
  if (!a || !b || a->code != TIR_SPLIT || b->code != TIR_SPLIT) return -1;
  return a->ival == 0 && b->ival == 1 && a->operands.data[0] == b->operands.data[0] ? a->operands.data[0] : -1;
}

/* The arm of a commutative op that is the identity `n`/`x`, giving the other arm; -1 if neither. */
static int drop_identity(const Fold *F, const int *v, int commutes, int64_t n, double x) {
  if (is_const(F, v[1], n, x)) return v[0];
  if (commutes && is_const(F, v[0], n, x)) return v[1];
  return -1;
}

static int is_int_op(const Fold *F, const TirOp *op) { return !dtype_is_float(result_elem(F->f, op)); }

/* Integer x*0 and x&0 are 0. */
static int absorbs(const Fold *F, const TirOp *op) {
  if ((op->code != TIR_MUL && op->code != TIR_AND) || !is_int_op(F, op)) return 0;
  return is_int_const(F, op->operands.data[0], 0) || is_int_const(F, op->operands.data[1], 0);
}

/* A value equal to op's result, or -1; may rewrite op in place instead. */
static int simplify(Fold *F, TirOp *op) {
  const int *v = op->operands.data;
  Type *rt = tir_type(F->f, op->results.data[0]);
  int is_int = is_int_op(F, op);
  switch (op->code) {
  case TIR_ADD: return drop_identity(F, v, 1, 0, -0.0);
  case TIR_SUB: return drop_identity(F, v, 0, 0, 0.0);
  case TIR_MUL: return drop_identity(F, v, 1, 1, 1.0);
  case TIR_DIV: return is_int ? drop_identity(F, v, 0, 1, 0) : -1;
  case TIR_AND: return drop_identity(F, v, 1, -1, 0);
  case TIR_OR:
  case TIR_XOR: return drop_identity(F, v, 1, 0, 0);
  case TIR_SHL:
  case TIR_SHR:
  case TIR_ADDPTR: return is_int_const(F, v[1], 0) ? v[0] : -1;
  case TIR_MAXIMUM:
  case TIR_MINIMUM: return is_int && v[0] == v[1] ? v[0] : -1;
  case TIR_SELECT:
    if (v[1] == v[2]) return v[1];
    if (constant_def(F, v[0])) return is_int_const(F, v[0], 0) ? v[2] : v[1];
    return -1;
  case TIR_SPLIT: return split_of_join(F, op);
  case TIR_JOIN: return join_of_halves(F, op);
  case TIR_TRANS:
    if (is_identity_permutation(op)) return v[0];
    merge_shape_ops(F, op);
    return -1;
  case TIR_BROADCAST:
  case TIR_RESHAPE:
  case TIR_EXPAND_DIMS:
    merge_shape_ops(F, op);
    /* fall through */
  case TIR_CAST:
  case TIR_BITCAST: return type_equal(tir_type(F->f, op->operands.data[0]), rt) ? op->operands.data[0] : -1;
  default: return -1;
  }
}

static void fold_op(Fold *F, TirOp *op) {
  if (op->code == TIR_CONSTANT && op->results.len == 1) {
    DType t = result_elem(F->f, op);
    set_value(op, t, value_of(op, t));
    return;
  }
  if (!(tir_op_flags(op->code) & PURE) || op->results.len != 1 || fold_constant(F, op)) return;
  if (absorbs(F, op)) {
    make_constant(op, result_elem(F->f, op), (Const){0, 0});
    return;
  }
  int with = simplify(F, op);
  if (with >= 0 && type_equal(tir_type(F->f, with), tir_type(F->f, op->results.data[0])))
    F->subst[op->results.data[0]] = with;
}

/* ---- walking -------------------------------------------------------------- */

static void fold_block(Fold *F, TirBlock *b);

static int resolve(const Fold *F, int v) {
  while (F->subst[v] != v) v = F->subst[v];
  return v;
}

/* Replaces an `if` on a constant by the ops of the branch it takes, in the
 * parent block `into`; the if's results become the values that branch yields. */
static int splice_if(Fold *F, TirBlock *into, TirOp *op) {
  Const c;
  if (!constant_value(F, op->operands.data[0], &c)) return 0;
  TirBlock *taken = op->regions[c.i ? 0 : 1];
  if (!taken || !taken->ops.len) return 0;
  TirOp *yield = taken->ops.data[taken->ops.len - 1];
  if (yield->code != TIR_YIELD || yield->operands.len != op->results.len) return 0;
  fold_block(F, taken);
  for (int i = 0; i < taken->ops.len - 1; i++) vec_push(F->f->arena, &into->ops, taken->ops.data[i]);
  for (int i = 0; i < op->results.len; i++) F->subst[op->results.data[i]] = resolve(F, yield->operands.data[i]);
  return 1;
}

/* Folds b's ops in order, so that every operand is folded before its uses
 * (a value is used only after its definition, in the same or a nested block). */
static void fold_block(Fold *F, TirBlock *b) {
  int n;
  TirOp **ops = tir_take_ops(F->f, b, &n);
  for (int i = 0; i < n; i++) {
    TirOp *op = ops[i];
    for (int k = 0; k < op->operands.len; k++) op->operands.data[k] = resolve(F, op->operands.data[k]);
    if (op->code == TIR_IF && splice_if(F, b, op)) continue;
    if (op->regions[0] || op->regions[1]) {
      for (int r = 0; r < 2; r++)
        if (op->regions[r]) fold_block(F, op->regions[r]);
    } else {
      fold_op(F, op);
    }
    for (int k = 0; k < op->results.len; k++) F->def[op->results.data[k]] = op;
    vec_push(F->f->arena, &b->ops, op);
  }
}

void tir_fold(TirFunc *f) {
  Fold F = {f, NULL, NULL};
  size_t n = (size_t)f->types.len + 1;
  F.subst = arena_alloc(f->arena, sizeof *F.subst * n);
  F.def = arena_alloc(f->arena, sizeof *F.def * n);
  for (int v = 0; v < f->types.len; v++) F.subst[v] = v;
  fold_block(&F, f->body);
}
