/* Widening: 64-bit index arithmetic where 32 bits can overflow.
 *
 * Triton computes `pid * BLOCK + tl.arange(0, BLOCK)` and `row * stride` in
 * i32: past 2^31 elements the offset wraps, `offsets < n_elements` still
 * holds, and the kernel reads and writes out of bounds.  This pass rewrites
 * in i64 the integer computations that feed pointer offsets wherever their
 * exact result can leave their type, so that addresses are exact.
 *
 * Requires: a verified function (after fold, constants are canonical).
 * Guarantees:
 *   - ranges: every integer value gets an interval of int64, or unknown
 *     (where an endpoint would overflow int64, and for u64): program_id
 *     axis 0 in [0, 2^31-2], axes 1 and 2 in [0, 65534] (CUDA's grid
 *     limits), num_programs the same plus one; make_range [start, end-1];
 *     constants; a parameter its type's whole range (a ':1' one is a
 *     constant already); a for's induction variable between its bounds
 *     (by the sign of the step); + - * neg, << and >> by a constant, / %
 *     (assuming a non-zero divisor: division by zero is undefined),
 *     minimum, maximum, & | ^, select, integer casts and the shape ops by
 *     interval arithmetic; values carried by loops (and merged by ifs) join
 *     to a fixed point, or after GIVE_UP rounds their type's whole range;
 *     anything else its type's range;
 *   - the address slice: the integer values that feed an addptr's offset
 *     through arithmetic (the ops above), shape ops, hints and integer
 *     casts.  A value of the slice narrower than 64 bits (not i1) whose
 *     exact range leaves its type is "wide": its op computes it in i64
 *     (the value keeps its id; its type becomes i64 of the same shape), and
 *     so does every shape op or hint of a wide value.  An op of the slice
 *     whose exact range fits but that has a wide operand computes in i64
 *     too, and its result is cast back at once (exact, since it fits);
 *     operands that are not wide are sign- or zero-extended (by their
 *     signedness; constants become i64 constants; a splat is extended as
 *     its scalar);
 *   - the users of a wide value: ops of the slice, comparisons (the other
 *     operand extended) and integer casts take the exact value (a cast to
 *     i64 is dropped); any other user (a store of the value, a yield, a
 *     loop bound, a load's `other`, arithmetic outside the slice, ...) takes
 *     a cast back to the original type: the wrapped value the program
 *     computed before;
 *   - nothing changes where the ranges prove the original types exact.
 * The extensions and casts back are placed just after the definition of
 * what they convert (at the start of the block for parameters and block
 * arguments), so they dominate every use; cse, licm and dce tidy them.
 * Invalidates: nothing cached. */
#include "numeric.h"
#include "passes.h"

#include <string.h>

enum { GIVE_UP = 8 };  /* rounds of joining loop-carried ranges before falling back to the type's */

typedef struct Range {
  int64_t lo, hi;
} Range;

static const Range UNKNOWN = {INT64_MIN, INT64_MAX};

typedef enum {
  USE_PLAIN,   /* no wide operand, not wide: unchanged */
  USE_WIDE,    /* computed in i64 */
  USE_EXACT,   /* addptr, cmp and integer casts: take wide operands as they are */
  USE_NARROW,  /* takes the cast back of each wide operand */
} Use;

typedef Vec(TirOp *) OpList;

typedef struct Widen {
  TirFunc *f;
  int n_values;      /* before the rewrite: the per-value arrays' length */
  Type **type;       /* per value: its type before the rewrite */
  TirOp **def;       /* per value: its defining op; NULL for parameters and block arguments */
  char *addressing;  /* per value: in the address slice */
  char *wide;        /* per value: computed in i64 from now on */
  Range *range;      /* per value: the exact value's range (wide) or the computed one's */
  char *needs_ext, *needs_narrow;
  int *ext;          /* per value: its extension to i64, once made (-1 before) */
  int *narrow;       /* per wide value: its cast back, once made */
  int *subst;        /* per value: the value that replaces it (a dropped cast) */
} Widen;

/* ---- intervals ------------------------------------------------------------ */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static Range make(int64_t lo, int64_t hi) { return (Range){lo, hi}; }
static int fits(Range r, Range in) { return r.lo >= in.lo && r.hi <= in.hi; }
static int same_range(Range a, Range b) { return a.lo == b.lo && a.hi == b.hi; }
static Range hull(Range a, Range b) { return make(min64(a.lo, b.lo), max64(a.hi, b.hi)); }

static Range range_add(Range a, Range b) {
  Range r;
  if (__builtin_add_overflow(a.lo, b.lo, &r.lo) || __builtin_add_overflow(a.hi, b.hi, &r.hi)) return UNKNOWN;
  return r;
}

static Range range_sub(Range a, Range b) {
  Range r;
  if (__builtin_sub_overflow(a.lo, b.hi, &r.lo) || __builtin_sub_overflow(a.hi, b.lo, &r.hi)) return UNKNOWN;
  return r;
}

/* The hull of x op y over the corners of two intervals; UNKNOWN if one overflows. */
static Range corners(Range a, Range b, int (*op)(int64_t, int64_t, int64_t *)) {
  int64_t x[2] = {a.lo, a.hi}, y[2] = {b.lo, b.hi}, v;
  Range r = {INT64_MAX, INT64_MIN};
  for (int i = 0; i < 4; i++) {
    if (!op(x[i / 2], y[i % 2], &v)) return UNKNOWN;
    r = hull(r, make(v, v));
  }
  return r;
}

static int times(int64_t x, int64_t y, int64_t *r) { return !__builtin_mul_overflow(x, y, r); }
static int quotient(int64_t x, int64_t y, int64_t *r) { return (x != INT64_MIN || y != -1) && (*r = x / y, 1); }

static Range range_mul(Range a, Range b) { return corners(a, b, times); }

/* Truncating division is monotone in each operand on either side of zero,
 * so the extremes are at the corners of the divisor's negative and
 * positive parts.  A zero divisor is undefined and left out. */
static Range range_div(Range a, Range b) {
  Range r = {INT64_MAX, INT64_MIN};
  if (b.lo < 0) r = corners(a, make(b.lo, min64(b.hi, -1)), quotient);
  if (b.hi > 0) r = hull(r, corners(a, make(max64(b.lo, 1), b.hi), quotient));
  return r.lo > r.hi ? UNKNOWN : r;
}

/* C's remainder: smaller in magnitude than both operands, with the
 * dividend's sign.  A zero divisor is undefined and left out. */
static Range range_rem(Range a, Range b) {
  int64_t below = b.lo == INT64_MIN ? INT64_MAX : max64(-b.lo, b.hi) - 1;
  if (below < 0) return UNKNOWN; /* only a zero divisor */
  return make(a.lo >= 0 ? 0 : max64(a.lo, -below), a.hi <= 0 ? 0 : min64(a.hi, below));
}

static Range range_neg(Range a) { return a.lo == INT64_MIN ? UNKNOWN : make(-a.hi, -a.lo); }

/* x >> c on int64 (arithmetic): floor division by 2^c, monotone. */
static int64_t shift_right(int64_t x, int c) { return x >= 0 ? x >> c : -1 - ((-1 - x) >> c); }

/* Bits of a two's complement integer that holds every value of a and b. */
static int signed_bits(Range a, Range b) {
  int k = 1;
  while (k < 64 && (a.lo < -(INT64_C(1) << (k - 1)) || b.lo < -(INT64_C(1) << (k - 1)) ||
                    a.hi >= INT64_C(1) << (k - 1) || b.hi >= INT64_C(1) << (k - 1)))
    k++;
  return k;
}

/* &, |, ^: the result needs no more bits than the operands; & with a
 * non-negative operand is between 0 and it. */
static Range range_bitwise(TirCode code, Range a, Range b) {
  int k = signed_bits(a, b);
  if (code == TIR_AND && (a.lo >= 0 || b.lo >= 0))
    return make(0, a.lo >= 0 && b.lo >= 0 ? min64(a.hi, b.hi) : a.lo >= 0 ? a.hi : b.hi);
  if (k == 64) return UNKNOWN;
  if (a.lo >= 0 && b.lo >= 0) return make(0, (INT64_C(1) << (k - 1)) - 1);
  return make(-(INT64_C(1) << (k - 1)), (INT64_C(1) << (k - 1)) - 1);
}

/* ---- types ---------------------------------------------------------------- */

static int is_int_value(const Type *t) { return !t->is_ptr && dtype_is_int(t->elem); }

/* Integer types the pass may widen: narrower than 64 bits, not i1. */
static int is_narrow(const Type *t) { return is_int_value(t) && t->elem != DT_I1 && dtype_bits(t->elem) < 64; }

/* Every value of t; UNKNOWN for non-integers and u64 (above int64). */
static Range type_range(const Type *t) {
  if (!is_int_value(t) || t->elem == DT_U64) return UNKNOWN;
  int bits = dtype_bits(t->elem);
  if (t->elem == DT_I1) return make(0, 1);
  if (dtype_kind(t->elem) == DK_UINT) return make(0, (INT64_C(1) << bits) - 1);
  return bits == 64 ? UNKNOWN : make(-(INT64_C(1) << (bits - 1)), (INT64_C(1) << (bits - 1)) - 1);
}

static Type *type_of(const Widen *W, int v) { return W->type[v]; }
static int result_of(const TirOp *op) { return op->results.len == 1 ? op->results.data[0] : -1; }

/* ---- which ops ------------------------------------------------------------ */

/* The constant amount of a shift by less than the width, or -1. */
static int shift_amount(const Widen *W, const TirOp *op) {
  const TirOp *d = W->def[op->operands.data[1]];
  int bits = dtype_bits(type_of(W, op->results.data[0])->elem);
  if (!d || d->code != TIR_CONSTANT) return -1;
  int64_t c = wrap_int(d->ival, type_of(W, op->results.data[0])->elem);
  return c >= 0 && c < bits ? (int)c : -1;
}

/* Integer arithmetic whose exact result i64 computes (while it fits). */
static int is_arith(const Widen *W, const TirOp *op) {
  int v = result_of(op);
  if (v < 0 || !is_int_value(type_of(W, v)) || type_of(W, v)->elem == DT_I1) return 0;
  switch (op->code) {
  case TIR_ADD: case TIR_SUB: case TIR_MUL: case TIR_DIV: case TIR_REM: case TIR_NEG: case TIR_MAXIMUM:
  case TIR_MINIMUM: case TIR_AND: case TIR_OR: case TIR_XOR: case TIR_SELECT:
    return 1;
  case TIR_SHL: case TIR_SHR: return shift_amount(W, op) >= 0;
  default: return 0;
  }
}

/* Ops that move integers without computing: their result is the operand's value. */
static int is_shape(const Widen *W, const TirOp *op) {
  switch (op->code) {
  case TIR_SPLAT: case TIR_BROADCAST: case TIR_EXPAND_DIMS: case TIR_RESHAPE: case TIR_TRANS: case TIR_HINT:
    return is_int_value(type_of(W, op->results.data[0]));
  default: return 0;
  }
}

static int is_int_cast(const Widen *W, const TirOp *op) {
  return op->code == TIR_CAST && is_int_value(type_of(W, op->operands.data[0])) && is_int_value(type_of(W, op->results.data[0]));
}

/* The operands an op of the slice passes the slice to: not a select's
 * condition, not a shift's amount. */
static int carries_value(const TirOp *op, int i) {
  if (op->code == TIR_SELECT) return i > 0;
  if (op->code == TIR_SHL || op->code == TIR_SHR) return i == 0;
  return 1;
}

static int in_slice_op(const Widen *W, const TirOp *op) {
  int v = result_of(op);
  return v >= 0 && W->addressing[v] && (is_arith(W, op) || is_shape(W, op) || is_int_cast(W, op));
}

/* Whether op sees its operands' exact values (wide ones included). */
static int reads_exact(const Widen *W, const TirOp *op) {
  return (is_arith(W, op) && W->addressing[op->results.data[0]]) || is_shape(W, op) || is_int_cast(W, op) ||
         op->code == TIR_CMP;
}

/* ---- the address slice ------------------------------------------------------ */

static void record_defs(Widen *W, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++) W->def[op->results.data[k]] = op;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) record_defs(W, op->regions[r]);
  }
}

/* Every op after the ops of its regions: definitions come before uses. */
static void list_ops(Widen *W, const TirBlock *b, OpList *out) {
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) list_ops(W, op->regions[r], out);
    vec_push(W->f->arena, out, op);
  }
}

/* Backwards from the addptr offsets, uses before definitions. */
static void mark_slice(Widen *W) {
  OpList ops = {0};
  list_ops(W, W->f->body, &ops);
  for (int i = ops.len - 1; i >= 0; i--) {
    const TirOp *op = ops.data[i];
    if (op->code == TIR_ADDPTR) W->addressing[op->operands.data[1]] = 1;
    if (!in_slice_op(W, op)) continue;
    for (int k = 0; k < op->operands.len; k++)
      if (carries_value(op, k)) W->addressing[op->operands.data[k]] = 1;
  }
}

/* ---- ranges ---------------------------------------------------------------- */

static void analyze_block(Widen *W, const TirBlock *b);

/* The range a user sees: a wide value's exact one if it reads exact values,
 * else the wrapped value's (the type's range where the exact one leaves it). */
static Range seen(const Widen *W, int v, int exact) {
  Range r = W->range[v], t = type_range(type_of(W, v));
  return exact || fits(r, t) ? r : t;
}

static Range constant_range(const TirOp *op, const Type *t) {
  if (!is_int_value(t) || t->elem == DT_U64) return UNKNOWN;
  int64_t c = wrap_int(op->ival, t->elem);
  return make(c, c);
}

static Range grid_range(const TirOp *op) {
  int64_t most = op->axis == 0 ? (INT64_C(1) << 31) - 1 : 65535; /* programs along the axis */
  return op->code == TIR_PROGRAM_ID ? make(0, most - 1) : make(1, most);
}

static Range shift_range(const Widen *W, const TirOp *op, Range a) {
  int c = shift_amount(W, op);
  if (c < 0) return UNKNOWN;
  if (op->code == TIR_SHL) return range_mul(a, make(INT64_C(1) << c, INT64_C(1) << c));
  return make(shift_right(a.lo, c), shift_right(a.hi, c));
}

static Range arith_range(const TirOp *op, Range a, Range b) {
  switch (op->code) {
  case TIR_ADD: return range_add(a, b);
  case TIR_SUB: return range_sub(a, b);
  case TIR_MUL: return range_mul(a, b);
  case TIR_DIV: return range_div(a, b);
  case TIR_REM: return range_rem(a, b);
  case TIR_NEG: return range_neg(a);
  case TIR_MAXIMUM: return make(max64(a.lo, b.lo), max64(a.hi, b.hi));
  case TIR_MINIMUM: return make(min64(a.lo, b.lo), min64(a.hi, b.hi));
  case TIR_AND: case TIR_OR: case TIR_XOR: return range_bitwise(op->code, a, b);
  default: return UNKNOWN;
  }
}

/* The range of op's result before the wrap to its type. */
static Range compute(const Widen *W, const TirOp *op) {
  int exact = reads_exact(W, op), n = op->operands.len;
  Range a = n > 0 ? seen(W, op->operands.data[0], exact) : UNKNOWN;
  Range b = n > 1 ? seen(W, op->operands.data[1], exact) : UNKNOWN;
  switch (op->code) {
  case TIR_CONSTANT: return constant_range(op, type_of(W, op->results.data[0]));
  case TIR_PROGRAM_ID: case TIR_NUM_PROGRAMS: return grid_range(op);
  case TIR_MAKE_RANGE: return make(op->ival, op->ival2 - 1);
  case TIR_SELECT: return hull(b, seen(W, op->operands.data[2], exact));
  case TIR_SHL: case TIR_SHR: return shift_range(W, op, a);
  case TIR_CMP: return make(0, 1);
  case TIR_CAST: return is_int_cast(W, op) ? a : UNKNOWN;
  default:
    if (is_shape(W, op)) return a;
    return is_int_value(type_of(W, op->results.data[0])) ? arith_range(op, a, b) : UNKNOWN;
  }
}

/* A value of the slice whose exact range leaves its type becomes wide, and
 * so does a shape op of a wide value; any other value wraps to its type. */
static void visit_op(Widen *W, const TirOp *op) {
  int v = result_of(op);
  if (v < 0) return;
  const Type *t = type_of(W, v);
  Range r = compute(W, op), tr = type_range(t);
  int leaves = !fits(r, tr);
  W->wide[v] = leaves && is_narrow(t) && ((is_arith(W, op) && W->addressing[v]) || is_shape(W, op));
  W->range[v] = leaves && !W->wide[v] ? tr : r;
}

/* for i in range(lb, ub, step): between lb and ub, on the step's side. */
static Range induction_range(const Widen *W, const TirOp *op) {
  Range lb = seen(W, op->operands.data[0], 0), ub = seen(W, op->operands.data[1], 0);
  Range step = seen(W, op->operands.data[2], 0);
  if (step.lo > 0 && ub.hi > INT64_MIN) return make(lb.lo, max64(lb.lo, ub.hi - 1));
  if (step.hi < 0 && ub.lo < INT64_MAX) return make(min64(lb.hi, ub.lo + 1), lb.hi);
  return hull(lb, ub);
}

/* Joins what src holds into dst; after GIVE_UP rounds a value that still
 * grows takes its type's whole range, so this ends.  Whether dst changed. */
static int join_into(Widen *W, const int *dst, const int *src, int n, int round) {
  int changed = 0;
  for (int i = 0; i < n; i++) {
    Range old = W->range[dst[i]], joined = hull(old, seen(W, src[i], 0));
    if (same_range(old, joined)) continue;
    W->range[dst[i]] = round >= GIVE_UP ? type_range(type_of(W, dst[i])) : joined;
    changed = 1;
  }
  return changed;
}

static void copy_seen(Widen *W, const int *dst, const int *src, int n) {
  for (int i = 0; i < n; i++) W->range[dst[i]] = seen(W, src[i], 0);
}

static const TirOp *terminator(const TirBlock *b) { return b && b->ops.len ? b->ops.data[b->ops.len - 1] : NULL; }

static void analyze_for(Widen *W, const TirOp *op) {
  const TirBlock *body = op->regions[0];
  const int *carried = body->args.data + 1;
  int n = op->results.len;
  W->range[body->args.data[0]] = induction_range(W, op);
  copy_seen(W, carried, op->operands.data + 3, n);
  for (int round = 0;; round++) {
    analyze_block(W, body);
    const TirOp *yield = terminator(body);
    if (!yield || !join_into(W, carried, yield->operands.data, n, round)) break;
  }
  for (int i = 0; i < n; i++) W->range[op->results.data[i]] = W->range[carried[i]];
}

static void analyze_while(Widen *W, const TirOp *op) {
  const TirBlock *before = op->regions[0], *after = op->regions[1];
  int n = before->args.len;
  copy_seen(W, before->args.data, op->operands.data, n);
  for (int round = 0;; round++) {
    analyze_block(W, before);
    const TirOp *cond = terminator(before);
    if (cond && cond->operands.len == after->args.len + 1) copy_seen(W, after->args.data, cond->operands.data + 1, after->args.len);
    analyze_block(W, after);
    const TirOp *yield = terminator(after);
    if (!yield || !join_into(W, before->args.data, yield->operands.data, n, round)) break;
  }
  for (int i = 0; i < op->results.len && i < after->args.len; i++) W->range[op->results.data[i]] = W->range[after->args.data[i]];
}

static void analyze_if(Widen *W, const TirOp *op) {
  analyze_block(W, op->regions[0]);
  analyze_block(W, op->regions[1]);
  const TirOp *then = terminator(op->regions[0]), *orelse = terminator(op->regions[1]);
  if (!then || !orelse) return;
  copy_seen(W, op->results.data, then->operands.data, op->results.len);
  join_into(W, op->results.data, orelse->operands.data, op->results.len, 0);
}

static void analyze_block(Widen *W, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (op->code == TIR_FOR) analyze_for(W, op);
    else if (op->code == TIR_WHILE) analyze_while(W, op);
    else if (op->code == TIR_IF) analyze_if(W, op);
    else visit_op(W, op);
  }
}

/* ---- the plan: which values need an extension or a cast back ---------------- */

static Use use_of(const Widen *W, const TirOp *op) {
  int v = result_of(op), any_wide = 0;
  if (v >= 0 && W->wide[v]) return USE_WIDE;
  for (int i = 0; i < op->operands.len; i++) any_wide |= W->wide[op->operands.data[i]];
  if (!any_wide) return USE_PLAIN;
  if (is_arith(W, op) && W->addressing[v]) return USE_WIDE; /* fits: computed in i64, cast back */
  if (op->code == TIR_ADDPTR || op->code == TIR_CMP || is_int_cast(W, op)) return USE_EXACT;
  return USE_NARROW;
}

/* Whether operand i is taken in i64. */
static int takes_wide(const TirOp *op, Use use, int i) {
  if (use == USE_WIDE) return op->code != TIR_SELECT || i > 0;
  return use == USE_EXACT && op->code == TIR_CMP;
}

static void need_ext(Widen *W, int u) {
  if (W->wide[u] || !is_narrow(type_of(W, u))) return;
  W->needs_ext[u] = 1;
  const TirOp *d = W->def[u];
  if (d && d->code == TIR_SPLAT) need_ext(W, d->operands.data[0]); /* extended as its scalar */
}

static void plan_block(Widen *W, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    Use use = use_of(W, op);
    for (int k = 0; k < op->operands.len; k++) {
      int u = op->operands.data[k];
      if (takes_wide(op, use, k)) need_ext(W, u);
      if (use == USE_NARROW && W->wide[u]) W->needs_narrow[u] = 1;
    }
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) plan_block(W, op->regions[r]);
  }
}

/* ---- the rewrite ------------------------------------------------------------ */

static Type *wide_type(const Widen *W, int v) { return type_with_elem(W->f->arena, type_of(W, v), DT_I64, 0); }

static int resolve(const Widen *W, int v) {
  while (W->subst[v] != v) v = W->subst[v];
  return v;
}

/* u's extension to i64: a constant of i64, the splat of its scalar's
 * extension, or a cast (sign- or zero-extending by u's type). */
static TirOp *extension(Widen *W, int u, Loc loc) {
  const TirOp *d = W->def[u];
  TirOp *op = tir_op_new(W->f, d && (d->code == TIR_CONSTANT || d->code == TIR_SPLAT) ? d->code : TIR_CAST, loc);
  if (op->code == TIR_CONSTANT) {
    op->ival = wrap_int(d->ival, type_of(W, u)->elem);
    op->fval = (double)op->ival;
  } else {
    tir_add_operand(W->f, op, op->code == TIR_SPLAT ? W->ext[d->operands.data[0]] : u);
  }
  W->ext[u] = tir_add_result(W->f, op, wide_type(W, u));
  return op;
}

static TirOp *cast_back(Widen *W, int v, Loc loc) {
  TirOp *op = tir_op_new(W->f, TIR_CAST, loc);
  tir_add_operand(W->f, op, v);
  W->narrow[v] = tir_add_result(W->f, op, type_of(W, v));
  return op;
}

/* What follows a definition: the value's extension or its cast back, if used. */
static void after_def(Widen *W, TirBlock *b, int v, Loc loc) {
  if (W->needs_ext[v] && W->ext[v] < 0) tir_append(W->f, b, extension(W, v, loc));
  if (W->needs_narrow[v]) tir_append(W->f, b, cast_back(W, v, loc));
}

static int operand_for(const Widen *W, const TirOp *op, Use use, int i) {
  int u = op->operands.data[i];
  if (takes_wide(op, use, i) && !W->wide[u] && is_narrow(type_of(W, u))) return W->ext[u];
  if (use == USE_NARROW && W->wide[u]) return W->narrow[u];
  return resolve(W, u);
}

/* An op computed in i64: a wide result takes i64 in place; one that fits
 * gets a new i64 value, and its own id becomes the cast back, which is
 * exact.  The i64 value then serves as its extension. */
static void rewrite_wide(Widen *W, TirBlock *b, TirOp *op) {
  int v = op->results.data[0];
  if (W->wide[v]) {
    W->f->types.data[v] = wide_type(W, v);
    tir_append(W->f, b, op);
    return;
  }
  int v64 = tir_value_new(W->f, wide_type(W, v), NULL);
  op->results.data[0] = v64;
  tir_append(W->f, b, op);
  TirOp *back = tir_op_new(W->f, TIR_CAST, op->loc);
  tir_add_operand(W->f, back, v64);
  vec_push(W->f->arena, &back->results, v);
  tir_append(W->f, b, back);
  W->ext[v] = v64;
}

static void rewrite_block(Widen *W, TirBlock *b, const int *args, int n_args);

static void rewrite_op(Widen *W, TirBlock *b, TirOp *op) {
  Use use = use_of(W, op);
  int v = result_of(op), n = op->results.len;
  int *results = arena_alloc(W->f->arena, sizeof *results * (size_t)(n + 1)); /* rewrite_wide may renumber */
  if (n) memcpy(results, op->results.data, sizeof *results * (size_t)n);
  for (int i = 0; i < op->operands.len; i++) op->operands.data[i] = operand_for(W, op, use, i);
  for (int r = 0; r < 2; r++)
    if (op->regions[r]) rewrite_block(W, op->regions[r], op->regions[r]->args.data, op->regions[r]->args.len);
  if (use == USE_WIDE) rewrite_wide(W, b, op);
  else if (use == USE_EXACT && op->code == TIR_CAST && type_equal(tir_type(W->f, op->operands.data[0]), type_of(W, v)))
    W->subst[v] = op->operands.data[0]; /* a cast of the exact value to i64 is that value */
  else tir_append(W->f, b, op);
  for (int k = 0; k < n; k++) after_def(W, b, results[k], op->loc);
}

/* Rebuilds b's op list: the extensions of `args` first, then each op with
 * what follows its definition. */
static void rewrite_block(Widen *W, TirBlock *b, const int *args, int n_args) {
  int n = b->ops.len;
  TirOp **ops = arena_alloc(W->f->arena, sizeof *ops * (size_t)(n + 1));
  if (n) memcpy(ops, b->ops.data, sizeof *ops * (size_t)n);
  b->ops.len = 0;
  Loc start = n ? ops[0]->loc : (Loc){0};
  for (int i = 0; i < n_args; i++) after_def(W, b, args[i], start);
  for (int i = 0; i < n; i++) rewrite_op(W, b, ops[i]);
}

/* ---- the pass --------------------------------------------------------------- */

static void *zeroed(Widen *W, size_t each) { return arena_alloc(W->f->arena, each * (size_t)(W->n_values + 1)); }

static void init(Widen *W, TirFunc *f) {
  W->f = f;
  W->n_values = f->types.len;
  W->type = zeroed(W, sizeof *W->type);
  memcpy(W->type, f->types.data, sizeof *W->type * (size_t)W->n_values);
  W->def = zeroed(W, sizeof *W->def);
  W->addressing = zeroed(W, 1);
  W->wide = zeroed(W, 1);
  W->needs_ext = zeroed(W, 1);
  W->needs_narrow = zeroed(W, 1);
  W->range = zeroed(W, sizeof *W->range);
  W->ext = zeroed(W, sizeof *W->ext);
  W->narrow = zeroed(W, sizeof *W->narrow);
  W->subst = zeroed(W, sizeof *W->subst);
  for (int v = 0; v < W->n_values; v++) {
    W->range[v] = type_range(W->type[v]);
    W->ext[v] = W->narrow[v] = -1;
    W->subst[v] = v;
  }
}

static int any_wide(const Widen *W) {
  for (int v = 0; v < W->n_values; v++)
    if (W->wide[v]) return 1;
  return 0;
}

void tir_widen(TirFunc *f) {
  Widen W;
  init(&W, f);
  record_defs(&W, f->body);
  mark_slice(&W);
  analyze_block(&W, f->body);
  if (!any_wide(&W)) return;
  plan_block(&W, f->body);
  int *params = arena_alloc(f->arena, sizeof *params * (size_t)(f->params.len + 1));
  for (int i = 0; i < f->params.len; i++) params[i] = f->params.data[i].value;
  rewrite_block(&W, f->body, params, f->params.len);
}
