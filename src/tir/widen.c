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
 *     (on the step's side); + - * neg, << and >> by a constant, / and %
 *     (assuming a non-zero divisor: division by zero is undefined),
 *     minimum, maximum, & | ^, select, integer casts and the shape ops by
 *     interval arithmetic; values carried by loops and merged by ifs join
 *     their sources to a fixed point (after GIVE_UP changes a value takes
 *     the most it can hold); anything else its type's range;
 *   - the address slice: the integer values that feed an addptr's offset
 *     through ring arithmetic (+ - * neg << & | ^ select: see is_arith), shape ops, hints, integer casts
 *     and carried values (a loop's block argument, an if's result: then
 *     their initial and yielded values too), and the values compared with
 *     a wide value (then the ranges are computed again).  A value of the
 *     slice narrower than 64 bits (not i1) whose exact range leaves its
 *     type is "wide": it is computed in i64 (it keeps its value id; its
 *     type becomes i64 of the same shape), and so is every shape op or
 *     hint of a wide value.  A wide carried value makes its loop or if carry i64.
 *     Arithmetic of the slice whose exact range fits but that has a wide
 *     operand computes in i64 too, and its result is cast back at once
 *     (exact, since it fits).  Operands that are not wide are sign- or
 *     zero-extended by their signedness (constants become i64 constants, a
 *     splat the splat of its scalar's extension);
 *   - the users of a wide value: ops of the slice, addptr, comparisons (the
 *     other operand extended) and integer casts take the exact value (a
 *     cast to i64 is dropped); any other user (a store of the value, a
 *     loop's bounds, a load's `other`, arithmetic outside the slice, a
 *     carried value that is not wide, ...) takes a cast back to the
 *     original type: the wrapped value the program computed before;
 *   - nothing changes where the ranges prove the original types exact;
 *   - an add, sub or mul whose exact result the ranges prove within the
 *     type it computes in (i64 for what is widened) is marked nowrap
 *     (NO_WRAP), widened or not: LLVM's nsw, or nuw for unsigned types.
 * Extensions and casts back are placed just after the definition of what
 * they convert (first in the block for parameters and block arguments), so
 * they dominate every use; cse, licm and dce tidy them.
 * Invalidates: nothing cached. */
#include "../support/numeric.h"
#include "passes.h"

#include <string.h>

enum { GIVE_UP = 8 };  /* changes of a carried value's range before it takes the most it can hold */

typedef struct Range {
  int64_t lo, hi;
} Range;

static const Range UNKNOWN = {INT64_MIN, INT64_MAX};
static const Range NOTHING = {INT64_MAX, INT64_MIN}; /* empty: the start of a join */

typedef struct Widen {
  TirFunc *f;
  int n_values;      /* before the rewrite: the per-value arrays' length */
  Type **type;       /* per value: its type before the rewrite */
  const TirOp **def; /* per value: its defining op; NULL for parameters and block arguments */
  char *addressing;  /* per value: in the address slice */
  char *wide;        /* per value: computed in i64 from now on */
  char *no_wrap;     /* per value: an add, sub or mul whose exact result fits the type it is computed in */
  Range *range;      /* per value: the exact value's range (wide) or the computed one's */
  int *changes;      /* per carried value: how often its range grew */
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

/* Integer arithmetic whose exact result i64 computes (while it fits): the
 * ring operations only, whose low bits equal the wrapped result's, so that a
 * user given the value cast back sees what the program computed.  Division,
 * remainder, right shifts, minimum and maximum of a wrapped value differ
 * from those of the exact one (a u32 hash `(k * C) >> 22` relies on the
 * wrap): they read the wrapped value and end the slice. */
static int is_arith(const Widen *W, const TirOp *op) {
  int v = result_of(op);
  if (v < 0 || !is_int_value(type_of(W, v)) || type_of(W, v)->elem == DT_I1) return 0;
  switch (op->code) {
  case TIR_ADD: case TIR_SUB: case TIR_MUL: case TIR_NEG: case TIR_AND: case TIR_OR: case TIR_XOR: case TIR_SELECT:
    return 1;
  case TIR_SHL: return shift_amount(W, op) >= 0;
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
  return op->code == TIR_CAST && is_int_value(type_of(W, op->operands.data[0])) &&
         is_int_value(type_of(W, op->results.data[0]));
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

/* ---- carried values ---------------------------------------------------------- */

/* A structured op's carried values share a type: a for's block argument and
 * result, a while's block arguments and results, an if's result.  Each is
 * set from its sources (the initial value and what the body yields, or what
 * the branches yield); the member named here decides for all whether they
 * become wide. */

/* The member that operand i of op (a for's or while's initial value) sets, or -1. */
static int init_member(const TirOp *op, int i) {
  if (op->code == TIR_FOR) return i >= 3 ? op->regions[0]->args.data[i - 2] : -1;
  if (op->code == TIR_WHILE) return op->regions[0]->args.data[i];
  return -1;
}

/* The member that operand i of a terminator sets, in the op `parent` that owns its block. */
static int yield_member(const TirOp *term, const TirOp *parent, int i) {
  if (!parent || !(tir_op_flags(term->code) & TERM)) return -1;
  switch (parent->code) {
  case TIR_FOR: return parent->regions[0]->args.data[i + 1];
  case TIR_IF: return parent->results.data[i];
  case TIR_WHILE:
    if (term->code == TIR_YIELD) return parent->regions[0]->args.data[i];
    return i > 0 ? parent->regions[1]->args.data[i - 1] : -1; /* condition: the flag, then the values */
  default: return -1;
  }
}

static int carried_member(const TirOp *op, const TirOp *parent, int i) {
  int m = init_member(op, i);
  return m >= 0 ? m : yield_member(op, parent, i);
}

/* ---- the address slice ------------------------------------------------------ */

static int mark(Widen *W, int v) {
  if (W->addressing[v]) return 0;
  W->addressing[v] = 1;
  return 1;
}

/* The values that set a member of the slice join it; a for's result in it
 * puts its block argument in it (they share a type).  Whether anything changed. */
static int mark_carried(Widen *W, const TirOp *op, const TirOp *parent) {
  int changed = 0;
  if (op->code == TIR_FOR)
    for (int i = 0; i < op->results.len; i++)
      if (W->addressing[op->results.data[i]]) changed |= mark(W, op->regions[0]->args.data[i + 1]);
  if (op->code == TIR_WHILE)
    for (int i = 0; i < op->results.len; i++)
      if (W->addressing[op->results.data[i]]) changed |= mark(W, op->regions[1]->args.data[i]);
  for (int i = 0; i < op->operands.len; i++) {
    int m = carried_member(op, parent, i);
    if (m >= 0 && W->addressing[m]) changed |= mark(W, op->operands.data[i]);
  }
  return changed;
}

/* Backwards, uses before definitions (the ops of a block last to first, a
 * region's ops after the op that owns it): from each addptr's offset
 * through the ops of the slice.  Whether anything changed. */
static int mark_block(Widen *W, const TirBlock *b, const TirOp *parent) {
  int changed = 0;
  for (int i = b->ops.len - 1; i >= 0; i--) {
    const TirOp *op = b->ops.data[i];
    changed |= mark_carried(W, op, parent);
    for (int r = 1; r >= 0; r--)
      if (op->regions[r]) changed |= mark_block(W, op->regions[r], op);
    if (op->code == TIR_ADDPTR) changed |= mark(W, op->operands.data[1]);
    if (!in_slice_op(W, op)) continue;
    for (int k = 0; k < op->operands.len; k++)
      if (carries_value(op, k)) changed |= mark(W, op->operands.data[k]);
  }
  return changed;
}

/* A comparison with a wide value compares exact values: its other operand's
 * computation joins the slice too (`big < base * BLOCK + n`).  Whether
 * anything changed; the ranges are then computed again. */
static int mark_bounds(Widen *W, const TirBlock *b) {
  int changed = 0;
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) changed |= mark_bounds(W, op->regions[r]);
    if (op->code != TIR_CMP || !(W->wide[op->operands.data[0]] || W->wide[op->operands.data[1]])) continue;
    for (int k = 0; k < 2; k++) changed |= mark(W, op->operands.data[k]);
  }
  return changed;
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
  if (c < 0 || (op->code == TIR_SHL && c > 62)) return UNKNOWN; /* 2^63 is not an int64 */
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

/* The ops LLVM takes a no-wrap promise on, of the integer types whose
 * ranges are exact (not i1, not u64). */
static int takes_no_wrap(const Widen *W, const TirOp *op) {
  const Type *t = type_of(W, op->results.data[0]);
  if (!is_int_value(t) || t->elem == DT_I1 || t->elem == DT_U64) return 0;
  return op->code == TIR_ADD || op->code == TIR_SUB || op->code == TIR_MUL;
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
  W->no_wrap[v] = takes_no_wrap(W, op) && !same_range(r, UNKNOWN) && (W->wide[v] || !leaves);
}

/* How far from lb the steps of `step` (> 0) get without passing `bound`,
 * `bound`'s own distance when the arithmetic would overflow: a loop over
 * blocks with a constant start stops a whole block short of ub's largest
 * value, so `i + tl.arange(0, BLOCK)` stays in i32 when ub is one. */
static int64_t steps_within(int64_t lb, int64_t step, int64_t bound) {
  int64_t span;
  if (__builtin_sub_overflow(bound, lb, &span) || span == INT64_MIN) return -1;
  int64_t distance = span < 0 ? -span : span;
  return distance / step * step;
}

/* for i in range(lb, ub, step): between lb and ub, on the step's side;
 * with a constant start and step, on the steps themselves. */
static Range induction_range(const Widen *W, const TirOp *op) {
  Range lb = seen(W, op->operands.data[0], 0), ub = seen(W, op->operands.data[1], 0);
  Range step = seen(W, op->operands.data[2], 0);
  int exact = lb.lo == lb.hi && step.lo == step.hi && step.lo != INT64_MIN;
  if (step.lo > 0 && ub.hi > INT64_MIN) {
    int64_t last = max64(lb.lo, ub.hi - 1), within = exact ? steps_within(lb.lo, step.lo, last) : -1;
    return make(lb.lo, within >= 0 ? lb.lo + within : last);
  }
  if (step.hi < 0 && ub.lo < INT64_MAX) {
    int64_t first = min64(lb.hi, ub.lo + 1), within = exact ? steps_within(lb.lo, -step.lo, first) : -1;
    return make(within >= 0 ? lb.lo - within : first, lb.hi);
  }
  return hull(lb, ub);
}

/* A carried value of the slice takes its sources' exact values and becomes
 * wide where they leave its type; any other takes the wrapped values.
 * Carried values only grow, from nothing, also across the analyses of an
 * inner loop that an outer one repeats (what the outer loop's values were
 * before is within what they are now), so each changes at most GIVE_UP
 * times before it takes the most it can hold: i64's range where it may
 * become wide, else its type's.  This bounds the work of nested loops.
 * Whether a member changed. */
static int join_members(Widen *W, const int *members, const int *sources, int n) {
  int changed = 0;
  for (int i = 0; i < n; i++) {
    int m = members[i];
    const Type *t = type_of(W, m);
    Range old = W->range[m], joined = hull(old, seen(W, sources[i], W->addressing[m]));
    if (same_range(old, joined)) continue;
    int may_widen = W->addressing[m] && is_narrow(t);
    W->range[m] = ++W->changes[m] <= GIVE_UP ? joined : may_widen ? UNKNOWN : type_range(t);
    W->wide[m] = may_widen && !fits(W->range[m], type_range(t));
    changed = 1;
  }
  return changed;
}

static void copy_members(Widen *W, const int *dst, const int *src, int n) {
  for (int i = 0; i < n; i++) {
    W->range[dst[i]] = W->range[src[i]];
    W->wide[dst[i]] = W->wide[src[i]];
  }
}

static const TirOp *terminator(const TirBlock *b) { return b && b->ops.len ? b->ops.data[b->ops.len - 1] : NULL; }

static void analyze_for(Widen *W, const TirOp *op) {
  const TirBlock *body = op->regions[0];
  const int *carried = body->args.data + 1;
  int n = op->results.len;
  W->range[body->args.data[0]] = induction_range(W, op);
  join_members(W, carried, op->operands.data + 3, n);
  for (;;) {
    analyze_block(W, body);
    const TirOp *yield = terminator(body);
    if (!yield || !join_members(W, carried, yield->operands.data, n)) break;
  }
  copy_members(W, op->results.data, carried, n);
}

static void while_round(Widen *W, const TirOp *op) {
  const TirBlock *before = op->regions[0], *after = op->regions[1];
  analyze_block(W, before);
  const TirOp *cond = terminator(before);
  if (cond && cond->operands.len == after->args.len + 1)
    join_members(W, after->args.data, cond->operands.data + 1, after->args.len);
  analyze_block(W, after);
}

static void analyze_while(Widen *W, const TirOp *op) {
  const TirBlock *before = op->regions[0], *after = op->regions[1];
  int n = before->args.len;
  join_members(W, before->args.data, op->operands.data, n);
  for (;;) {
    while_round(W, op);
    const TirOp *yield = terminator(after);
    if (!yield || !join_members(W, before->args.data, yield->operands.data, n)) break;
  }
  copy_members(W, op->results.data, after->args.data, (int)min64(op->results.len, after->args.len));
}

static void analyze_if(Widen *W, const TirOp *op) {
  analyze_block(W, op->regions[0]);
  analyze_block(W, op->regions[1]);
  const TirOp *then = terminator(op->regions[0]), *orelse = terminator(op->regions[1]);
  if (!then || !orelse) return;
  join_members(W, op->results.data, then->operands.data, op->results.len);
  join_members(W, op->results.data, orelse->operands.data, op->results.len);
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

/* ---- how each op takes its operands ----------------------------------------- */

typedef enum {
  FORM_SAME,    /* as it is (a wide value stays wide: addptr, integer casts) */
  FORM_WIDE,    /* in i64: a value that is not wide is extended */
  FORM_NARROW,  /* in its own type: a wide value is cast back */
} Form;

static int any_wide_operand(const Widen *W, const TirOp *op) {
  for (int i = 0; i < op->operands.len; i++)
    if (W->wide[op->operands.data[i]]) return 1;
  return 0;
}

/* Whether op computes in i64: its result is wide, or it is arithmetic of
 * the slice with a wide operand (the result fits and is cast back). */
static int computes_wide(const Widen *W, const TirOp *op) {
  int v = result_of(op);
  if (v < 0 || !(is_arith(W, op) || is_shape(W, op))) return 0;
  return W->wide[v] || (is_arith(W, op) && W->addressing[v] && any_wide_operand(W, op));
}

/* How op, in a block owned by `parent`, takes operand i: ops of the slice
 * and comparisons exact values, carried values their member's type, and
 * anything else a wide value's cast back. */
static Form form_of(const Widen *W, const TirOp *op, const TirOp *parent, int i) {
  if (computes_wide(W, op)) return op->code == TIR_SELECT && i == 0 ? FORM_SAME : FORM_WIDE;
  if (op->code == TIR_CMP) return any_wide_operand(W, op) ? FORM_WIDE : FORM_SAME;
  if (op->code == TIR_ADDPTR || is_int_cast(W, op)) return FORM_SAME;
  int m = carried_member(op, parent, i);
  if (m >= 0 && W->wide[m]) return FORM_WIDE;
  return W->wide[op->operands.data[i]] ? FORM_NARROW : FORM_SAME;
}

/* ---- the plan: which values need an extension or a cast back ---------------- */

static void need_ext(Widen *W, int u) {
  if (W->wide[u] || !is_narrow(type_of(W, u))) return;
  W->needs_ext[u] = 1;
  const TirOp *d = W->def[u];
  if (d && d->code == TIR_SPLAT) need_ext(W, d->operands.data[0]); /* extended as its scalar */
}

static void plan_block(Widen *W, const TirBlock *b, const TirOp *parent) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->operands.len; k++) {
      Form form = form_of(W, op, parent, k);
      if (form == FORM_WIDE) need_ext(W, op->operands.data[k]);
      if (form == FORM_NARROW) W->needs_narrow[op->operands.data[k]] = 1;
    }
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) plan_block(W, op->regions[r], op);
  }
}

/* ---- no-wrap promises --------------------------------------------------------- */

/* Before the rewrite, which renumbers what compute_then_narrow computes in i64. */
static void mark_no_wrap(const Widen *W, TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    int v = result_of(op);
    if (v >= 0 && v < W->n_values && W->no_wrap[v]) op->flags |= NO_WRAP;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) mark_no_wrap(W, op->regions[r]);
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

/* A definition: a wide value takes i64 in place, then come its cast back or
 * its extension if some user needs them. */
static void define(Widen *W, TirBlock *b, int v, Loc loc) {
  if (W->wide[v]) W->f->types.data[v] = wide_type(W, v);
  if (W->needs_ext[v] && W->ext[v] < 0) tir_append(W->f, b, extension(W, v, loc));
  if (W->needs_narrow[v]) tir_append(W->f, b, cast_back(W, v, loc));
}

static int operand_for(const Widen *W, const TirOp *op, const TirOp *parent, int i) {
  int u = op->operands.data[i];
  Form form = form_of(W, op, parent, i);
  if (form == FORM_WIDE && !W->wide[u] && is_narrow(type_of(W, u))) return W->ext[u];
  if (form == FORM_NARROW) return W->narrow[u];
  return resolve(W, u);
}

/* Arithmetic in i64 whose exact result fits: a new i64 value, cast back
 * into the op's own value id.  The i64 value serves as its extension. */
static void compute_then_narrow(Widen *W, TirBlock *b, TirOp *op) {
  int v = op->results.data[0], v64 = tir_value_new(W->f, wide_type(W, v), NULL);
  op->results.data[0] = v64;
  tir_append(W->f, b, op);
  TirOp *back = tir_op_new(W->f, TIR_CAST, op->loc);
  tir_add_operand(W->f, back, v64);
  vec_push(W->f->arena, &back->results, v);
  tir_append(W->f, b, back);
  W->ext[v] = v64;
}

static void rewrite_block(Widen *W, TirBlock *b, const int *args, int n_args, const TirOp *parent);

static void rewrite_op(Widen *W, TirBlock *b, TirOp *op, const TirOp *parent) {
  int v = result_of(op), n = op->results.len, wide = computes_wide(W, op);
  int *results = arena_alloc(W->f->arena, sizeof *results * (size_t)(n + 1)); /* compute_then_narrow renumbers */
  if (n) memcpy(results, op->results.data, sizeof *results * (size_t)n);
  int drop = is_int_cast(W, op) && W->wide[op->operands.data[0]] && type_equal(wide_type(W, v), type_of(W, v));
  int *operands = arena_alloc(W->f->arena, sizeof *operands * (size_t)(op->operands.len + 1));
  for (int i = 0; i < op->operands.len; i++) operands[i] = operand_for(W, op, parent, i);
  for (int i = 0; i < op->operands.len; i++) op->operands.data[i] = operands[i]; /* forms read the originals */
  for (int r = 0; r < 2; r++)
    if (op->regions[r]) rewrite_block(W, op->regions[r], op->regions[r]->args.data, op->regions[r]->args.len, op);
  if (wide && !W->wide[v]) compute_then_narrow(W, b, op);
  else if (drop) W->subst[v] = operands[0]; /* the exact value cast to i64 is that value */
  else tir_append(W->f, b, op);
  for (int k = 0; k < n; k++) define(W, b, results[k], op->loc);
}

/* Rebuilds b's op list: the block's arguments (or the function's
 * parameters) defined first, then each op and what follows it. */
static void rewrite_block(Widen *W, TirBlock *b, const int *args, int n_args, const TirOp *parent) {
  int n;
  TirOp **ops = tir_take_ops(W->f, b, &n);
  Loc start = n ? ops[0]->loc : (Loc){0};
  for (int i = 0; i < n_args; i++) define(W, b, args[i], start);
  for (int i = 0; i < n; i++) rewrite_op(W, b, ops[i], parent);
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
  W->no_wrap = zeroed(W, 1);
  W->needs_ext = zeroed(W, 1);
  W->needs_narrow = zeroed(W, 1);
  W->range = zeroed(W, sizeof *W->range);
  W->changes = zeroed(W, sizeof *W->changes);
  W->ext = zeroed(W, sizeof *W->ext);
  W->narrow = zeroed(W, sizeof *W->narrow);
  W->subst = zeroed(W, sizeof *W->subst);
  for (int v = 0; v < W->n_values; v++) {
    W->ext[v] = W->narrow[v] = -1;
    W->subst[v] = v;
  }
}

/* Ranges start from nothing (carried values grow from it; every other
 * value is set before its uses), parameters from their type's. */
static void reset_ranges(Widen *W) {
  for (int v = 0; v < W->n_values; v++) {
    W->range[v] = NOTHING;
    W->wide[v] = W->no_wrap[v] = 0;
    W->changes[v] = 0;
  }
  for (int i = 0; i < W->f->params.len; i++) {
    int v = W->f->params.data[i].value;
    W->range[v] = type_range(W->type[v]);
  }
}

static int any_wide(const Widen *W) {
  for (int v = 0; v < W->n_values; v++)
    if (W->wide[v]) return 1;
  return 0;
}

static int *param_values(TirFunc *f) {
  int *values = arena_alloc(f->arena, sizeof *values * (size_t)(f->params.len + 1));
  for (int i = 0; i < f->params.len; i++) values[i] = f->params.data[i].value;
  return values;
}

void tir_widen(TirFunc *f) {
  Widen W;
  init(&W, f);
  tir_index_values(f->body, NULL, W.def);
  do {
    while (mark_block(&W, f->body, NULL)) {
      /* again: a carried value can join the slice after its sources were passed */
    }
    reset_ranges(&W);
    analyze_block(&W, f->body);
  } while (mark_bounds(&W, f->body));
  mark_no_wrap(&W, f->body);
  if (!any_wide(&W)) return;
  plan_block(&W, f->body, NULL);
  rewrite_block(&W, f->body, param_values(f), f->params.len, NULL);
}
