/* AxisInfo: for every value and dimension, what Triton's AxisInfo analysis
 * (lib/Analysis/AxisInfo.cpp) knows about the integers or pointers in it:
 *   contiguity    runs of this many consecutive values (v, v+1, ...);
 *   divisibility  the largest power of two dividing the first element of
 *                 every such run (every element when contiguity is 1);
 *   constancy     runs of this many equal values.
 * Runs start at multiples of their length along the dimension.  The
 * coalescing and vectorisation of loads and stores rely on these facts.
 *
 * Requires: a verified function.  Changes nothing.
 *
 * Conventions:
 *   - a scalar is one dimension of size 1: its facts are in entry [0] and
 *     AxisInfo.rank stays the type's rank, 0;
 *   - a pointer's divisibility is in bytes (as Triton's); its contiguity and
 *     constancy count elements.  addptr multiplies the offset's divisibility
 *     by the element size (at least one byte);
 *   - divisibility is capped at 2^30, which the constant 0 gets;
 *   - parameters: divisibility 16 when the signature says ':16', else 1, for
 *     pointers too.  Triton assumes no alignment of an unspecialised
 *     pointer (not even the element size), so neither do we;
 *   - float values have contiguity 1 and divisibility 1; only their
 *     constancy means something.
 *
 * The rules are Triton's, except where Triton's are unsound:
 *   - where an op's result has shorter runs than an operand, the operand is
 *     credited with the divisibility of its elements at the result's run
 *     starts (div_at), not of its own run starts (Triton does this only
 *     for mul and expand_dims);
 *   - c - contiguous is decreasing, so sub is contiguous only as x - const;
 *   - x / c constant in groups and x % c contiguous in groups need x
 *     non-negative: truncating division does not group values around
 *     zero (src/tir/assume.c turns Triton's silent assumption into a
 *     checked one).
 *     Non-negativity is tracked (program ids, ranges with a non-negative
 *     start, non-negative constants, unsigned types, and what +, *, /, %,
 *     min, max, select and integer casts keep), ignoring wrap-around as
 *     Triton does;
 *   - shl by an unknown amount keeps the operand's divisibility only
 *     (Triton multiplies it by 2^(the amount's divisibility)).
 * And where they lose information: a hint keeps what was computed when that
 * is more (max, where Triton overwrites); the comparison and division
 * grouping rules need the bound constant over the group, not over the
 * whole dimension.
 * Values carried by loops (and merged by ifs) are joined: per dimension,
 * gcd of contiguities and of constancies, gcd of the divisibilities at the
 * joined runs.  A loop's carried values start as the initial values and
 * are joined with what the body yields until nothing changes, as Triton's
 * dataflow solver does; each join only lowers a fact, so this ends.  A
 * for's induction variable has the gcd of its start's and step's
 * divisibilities. */
#include "../support/numeric.h"
#include "passes.h"

#include <string.h>

enum { MAX_DIVISIBILITY = 1 << 30, MAX_ROUNDS = 200 };

typedef struct Facts {
  int known;       /* every element is `value` */
  int64_t value;   /* canonical in the value's type (wrap_int) */
  int nonneg;      /* every element is >= 0 */
} Facts;

typedef struct Analysis {
  const TirFunc *f;
  AxisInfo *info;  /* per value */
  Facts *facts;    /* per value */
} Analysis;

static void analyze_block(Analysis *A, const TirBlock *b);

/* ---- arithmetic on facts -------------------------------------------------- */

static int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t cap(int64_t d) { return d < 1 ? 1 : min64(d, MAX_DIVISIBILITY); }
static int64_t multiply(int64_t a, int64_t b) { return a > MAX_DIVISIBILITY / b ? MAX_DIVISIBILITY : a * b; }

/* The largest power of two dividing v (capped; 0 is divisible by all). */
static int64_t pow2_divisor(int64_t v) {
  uint64_t u = (uint64_t)v, low = u & (~u + 1);
  return !u || low > MAX_DIVISIBILITY ? MAX_DIVISIBILITY : (int64_t)low;
}

static int ndims(const Type *t) { return t->rank ? t->rank : 1; }
static int64_t dim_size(const Type *t, int d) { return t->rank ? t->shape[d] : 1; }
static int64_t element_bytes(const Type *t) { return max64(1, dtype_bits(t->elem) / 8); }
static int is_integer(const Type *t) { return !t->is_ptr && dtype_is_int(t->elem); }

/* The divisibility of x's elements at the multiples of `run` along d:
 * x's run starts keep x's divisibility, an element k places into a run of
 * consecutive values only what k adds. */
static int64_t div_at(const AxisInfo *x, int d, int64_t run) {
  int64_t c = x->contiguity[d];
  if (run % c == 0) return x->divisibility[d];
  return gcd(x->divisibility[d], gcd(c, run));
}

/* The divisibility of every element: along a dimension of contiguity 1 every
 * element starts a run. */
static int64_t every_element_div(const AxisInfo *x, const Facts *facts, int n) {
  if (facts->known) return pow2_divisor(facts->value);
  int64_t d = 1;
  for (int i = 0; i < n; i++)
    if (x->contiguity[i] == 1) d = max64(d, x->divisibility[i]);
  return d;
}

static AxisInfo pessimistic(const Type *t) {
  AxisInfo a;
  memset(&a, 0, sizeof a);
  a.rank = t->rank;
  for (int d = 0; d < ndims(t); d++) a.contiguity[d] = a.divisibility[d] = a.constancy[d] = 1;
  return a;
}

/* What both x and y satisfy. */
static void join(AxisInfo *x, Facts *fx, const AxisInfo *y, const Facts *fy, int n) {
  for (int d = 0; d < n; d++) {
    int64_t c = gcd(x->contiguity[d], y->contiguity[d]);
    x->divisibility[d] = gcd(div_at(x, d, c), div_at(y, d, c));
    x->contiguity[d] = c;
    x->constancy[d] = gcd(x->constancy[d], y->constancy[d]);
  }
  fx->known = fx->known && fy->known && fx->value == fy->value;
  if (!fx->known) fx->value = 0;
  fx->nonneg = fx->nonneg && fy->nonneg;
}

/* ---- access --------------------------------------------------------------- */

static const Type *type_of(const Analysis *A, int v) { return tir_type(A->f, v); }
static const AxisInfo *in(const Analysis *A, const TirOp *op, int i) { return &A->info[op->operands.data[i]]; }
static const Facts *facts_in(const Analysis *A, const TirOp *op, int i) { return &A->facts[op->operands.data[i]]; }
static int known_is(const Facts *f, int64_t v) { return f->known && f->value == v; }
static int is_unsigned(DType t) { return dtype_kind(t) == DK_UINT || dtype_kind(t) == DK_BOOL; }

/* ---- values and shapes ---------------------------------------------------- */

static void visit_constant(const Analysis *A, const TirOp *op, Facts *fr) {
  DType t = type_of(A, op->results.data[0])->elem;
  if (dtype_is_float(t)) {
    fr->nonneg = op->fval >= 0;
    return;
  }
  fr->known = 1;
  fr->value = wrap_int(op->ival, t);
  fr->nonneg = is_unsigned(t) || fr->value >= 0;
}

static void visit_make_range(const TirOp *op, AxisInfo *r, Facts *fr) {
  r->contiguity[0] = op->ival2 - op->ival;
  r->divisibility[0] = pow2_divisor(op->ival);
  fr->nonneg = op->ival >= 0;
}

static void visit_splat(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const Type *t = type_of(A, op->results.data[0]);
  for (int d = 0; d < ndims(t); d++) {
    r->divisibility[d] = in(A, op, 0)->divisibility[0];
    r->constancy[d] = dim_size(t, d);
  }
}

static void visit_broadcast(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const Type *x = type_of(A, op->operands.data[0]), *t = type_of(A, op->results.data[0]);
  const AxisInfo *a = in(A, op, 0);
  for (int d = 0; d < t->rank; d++) {
    int grows = x->shape[d] == 1 && t->shape[d] != 1;
    r->contiguity[d] = grows ? 1 : a->contiguity[d];
    r->divisibility[d] = a->divisibility[d];
    r->constancy[d] = grows ? t->shape[d] : a->constancy[d];
  }
}

static void visit_expand_dims(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const Type *x = type_of(A, op->operands.data[0]), *t = type_of(A, op->results.data[0]);
  const AxisInfo *a = in(A, op, 0);
  for (int d = 0, j = 0; d < t->rank; d++) {
    if (d == op->axis || !x->rank) {
      r->divisibility[d] = every_element_div(a, facts_in(A, op, 0), ndims(x));
      continue;
    }
    r->contiguity[d] = a->contiguity[j];
    r->divisibility[d] = a->divisibility[j];
    r->constancy[d] = a->constancy[j];
    j++;
  }
}

/* Whether x and t have the same dimensions once those of size 1 are left out. */
static int same_but_ones(const Type *x, const Type *t) {
  int i = 0, j = 0;
  for (;;) {
    while (i < x->rank && x->shape[i] == 1) i++;
    while (j < t->rank && t->shape[j] == 1) j++;
    if (i == x->rank || j == t->rank) return i == x->rank && j == t->rank;
    if (x->shape[i++] != t->shape[j++]) return 0;
  }
}

static int all_equal(const AxisInfo *a, const Type *t) {
  for (int d = 0; d < ndims(t); d++)
    if (a->constancy[d] != dim_size(t, d)) return 0;
  return 1;
}

/* A reshape that only adds or drops size-1 dimensions keeps every other
 * dimension's facts; any other keeps what holds for every element, and
 * that all elements are equal. */
static void visit_reshape(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const Type *x = type_of(A, op->operands.data[0]), *t = type_of(A, op->results.data[0]);
  const AxisInfo *a = in(A, op, 0);
  int64_t every = every_element_div(a, facts_in(A, op, 0), ndims(x));
  int same = same_but_ones(x, t), equal = all_equal(a, x);
  for (int d = 0, i = 0; d < ndims(t); d++) {
    r->divisibility[d] = every;
    if (equal) r->constancy[d] = dim_size(t, d);
    if (!same || dim_size(t, d) == 1) continue;
    while (x->shape[i] == 1) i++;
    r->contiguity[d] = a->contiguity[i];
    r->divisibility[d] = a->divisibility[i];
    r->constancy[d] = a->constancy[i];
    i++;
  }
}

static void visit_trans(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const AxisInfo *a = in(A, op, 0);
  for (int d = 0; d < op->n_ints; d++) {
    r->contiguity[d] = a->contiguity[op->ints[d]];
    r->divisibility[d] = a->divisibility[op->ints[d]];
    r->constancy[d] = a->constancy[op->ints[d]];
  }
}

static void visit_hint(const Analysis *A, const TirOp *op, AxisInfo *r) {
  *r = *in(A, op, 0);
  for (int d = 0; d < ndims(type_of(A, op->results.data[0])); d++) {
    int64_t v = op->n_ints ? op->ints[d < op->n_ints ? d : op->n_ints - 1] : 1;
    int64_t *field = op->kind == HINT_MULTIPLE_OF ? r->divisibility : op->kind == HINT_MAX_CONTIGUOUS ? r->contiguity : r->constancy;
    field[d] = max64(field[d], op->kind == HINT_MULTIPLE_OF ? pow2_divisor(v) : v);
  }
}

/* ---- arithmetic ----------------------------------------------------------- */

/* add, sub, addptr: a run of consecutive values plus a constant run stays
 * consecutive; divisibility is the gcd (the offset's in bytes for addptr). */
static void visit_add(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const AxisInfo *x = in(A, op, 0), *y = in(A, op, 1);
  int64_t bytes = 1;
  if (op->code == TIR_ADDPTR) bytes = element_bytes(type_of(A, op->operands.data[0]));
  for (int d = 0; d < ndims(type_of(A, op->results.data[0])); d++) {
    int64_t c = gcd(x->contiguity[d], y->constancy[d]);
    if (op->code != TIR_SUB) c = max64(c, gcd(x->constancy[d], y->contiguity[d]));
    r->contiguity[d] = c;
    r->divisibility[d] = gcd(div_at(x, d, c), multiply(div_at(y, d, c), bytes));
    r->constancy[d] = gcd(x->constancy[d], y->constancy[d]);
  }
}

static void visit_mul(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const AxisInfo *x = in(A, op, 0), *y = in(A, op, 1);
  const Facts *fx = facts_in(A, op, 0), *fy = facts_in(A, op, 1);
  for (int d = 0; d < ndims(type_of(A, op->results.data[0])); d++) {
    int64_t c = known_is(fy, 1) ? x->contiguity[d] : known_is(fx, 1) ? y->contiguity[d] : 1;
    r->contiguity[d] = c;
    r->divisibility[d] = multiply(div_at(x, d, c), div_at(y, d, c));
    r->constancy[d] = gcd(x->constancy[d], y->constancy[d]);
  }
}

/* Aligned groups of g consecutive values that a constant divisible by g
 * does not split: x / y is constant on them and x % y consecutive, when
 * x is non-negative (truncation splits the groups around zero; y's sign
 * only flips the quotient's: x / -y = -(x / y), x % -y = x % y). */
static int64_t division_groups(const Analysis *A, const TirOp *op, int d) {
  const AxisInfo *x = in(A, op, 0), *y = in(A, op, 1);
  if (!facts_in(A, op, 0)->nonneg || y->contiguity[d] != 1) return 1;
  return gcd(gcd(x->contiguity[d], x->divisibility[d]), gcd(y->constancy[d], y->divisibility[d]));
}

static void visit_div_rem(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const AxisInfo *x = in(A, op, 0), *y = in(A, op, 1);
  int by_one = known_is(facts_in(A, op, 1), 1);
  for (int d = 0; d < ndims(type_of(A, op->results.data[0])); d++) {
    int64_t groups = division_groups(A, op, d), c = 1;
    r->constancy[d] = gcd(x->constancy[d], y->constancy[d]);
    if (op->code == TIR_DIV) {
      c = by_one ? x->contiguity[d] : 1;
      r->constancy[d] = max64(r->constancy[d], groups);
      r->divisibility[d] = by_one ? x->divisibility[d] : 1;
    } else {
      c = groups;
      r->divisibility[d] = gcd(div_at(x, d, c), div_at(y, d, c));
    }
    r->contiguity[d] = c;
  }
}

static void visit_shift(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const AxisInfo *x = in(A, op, 0), *y = in(A, op, 1);
  const Facts *fy = facts_in(A, op, 1);
  int bits = dtype_bits(type_of(A, op->results.data[0])->elem);
  int known = fy->known && fy->value >= 0 && fy->value < bits;
  for (int d = 0; d < ndims(type_of(A, op->results.data[0])); d++) {
    int64_t c = known && fy->value == 0 ? x->contiguity[d] : 1, div = div_at(x, d, c);
    if (known && op->code == TIR_SHL) div = fy->value >= 31 ? MAX_DIVISIBILITY : multiply(div, INT64_C(1) << fy->value);
    if (op->code == TIR_SHR) div = known ? max64(1, fy->value >= 63 ? 1 : div >> fy->value) : 1;
    r->contiguity[d] = c;
    r->divisibility[d] = div;
    r->constancy[d] = gcd(x->constancy[d], y->constancy[d]);
  }
}

/* and: the larger divisibility survives; or, xor: the smaller. */
static void visit_bitwise(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const AxisInfo *x = in(A, op, 0), *y = in(A, op, 1);
  for (int d = 0; d < ndims(type_of(A, op->results.data[0])); d++) {
    int64_t dx = div_at(x, d, 1), dy = div_at(y, d, 1);
    r->divisibility[d] = op->code == TIR_AND ? max64(dx, dy) : min64(dx, dy);
    r->constancy[d] = gcd(x->constancy[d], y->constancy[d]);
  }
}

/* Each element is x's or y's element at the same place (max, min, and
 * select, whose choice is the same on runs of the condition's constancy). */
static void visit_pick(const AxisInfo *x, const AxisInfo *y, const AxisInfo *cond, int n, AxisInfo *r) {
  for (int d = 0; d < n; d++) {
    int64_t c = gcd(x->contiguity[d], y->contiguity[d]), k = gcd(x->constancy[d], y->constancy[d]);
    if (cond) {
      c = gcd(c, cond->constancy[d]);
      k = gcd(k, cond->constancy[d]);
    }
    r->contiguity[d] = c;
    r->divisibility[d] = gcd(div_at(x, d, c), div_at(y, d, c));
    r->constancy[d] = k;
  }
}

static void visit_select(const Analysis *A, const TirOp *op, AxisInfo *r, Facts *fr) {
  const Facts *fc = facts_in(A, op, 0);
  if (fc->known) {
    int arm = fc->value ? 1 : 2;
    *r = *in(A, op, arm);
    *fr = *facts_in(A, op, arm);
    return;
  }
  visit_pick(in(A, op, 1), in(A, op, 2), in(A, op, 0), ndims(type_of(A, op->results.data[0])), r);
}

/* x < c and x >= c are constant on aligned groups of consecutive x that
 * contain no multiple of the constant c's divisibility but their first;
 * c > x and c <= x likewise. */
static int64_t comparison_groups(const AxisInfo *run, const AxisInfo *bound, int d) {
  if (bound->contiguity[d] != 1) return 1;
  return gcd(gcd(run->contiguity[d], run->divisibility[d]), gcd(bound->constancy[d], bound->divisibility[d]));
}

/* Pointers are left out: their runs step by the element size in bytes,
 * which a bound divisible by the group's length in bytes can split. */
static void visit_cmp(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const AxisInfo *x = in(A, op, 0), *y = in(A, op, 1);
  int integers = is_integer(type_of(A, op->operands.data[0]));
  for (int d = 0; d < ndims(type_of(A, op->results.data[0])); d++) {
    int64_t k = gcd(x->constancy[d], y->constancy[d]);
    if (integers && (op->kind == CMP_LT || op->kind == CMP_GE)) k = max64(k, comparison_groups(x, y, d));
    if (integers && (op->kind == CMP_GT || op->kind == CMP_LE)) k = max64(k, comparison_groups(y, x, d));
    r->constancy[d] = k;
  }
}


/* Whether a conversion keeps addresses or integer values: integer to
 * integer (Triton's ext/trunc rule: truncation keeps divisibility, and
 * contiguity as long as the values fit; not to i1, which is `!= 0`),
 * pointer to pointer, and bitcasts between pointers and i64. */
static int keeps_value(TirCode code, const Type *x, const Type *t) {
  if (t->elem == DT_I1 && !t->is_ptr) return 0;
  if (code == TIR_CAST) return (is_integer(x) && is_integer(t)) || (x->is_ptr && t->is_ptr);
  int x_bits = x->is_ptr ? 64 : dtype_bits(x->elem), t_bits = t->is_ptr ? 64 : dtype_bits(t->elem);
  return (is_integer(x) || x->is_ptr) && (is_integer(t) || t->is_ptr) && x_bits == t_bits;
}

/* A conversion that keeps the value keeps its facts, except contiguity
 * where a pointer's step in bytes changes (fp32 pointers as fp16 ones,
 * pointers as integers); any other keeps constancy. */
static void visit_cast(const Analysis *A, const TirOp *op, AxisInfo *r) {
  const Type *x = type_of(A, op->operands.data[0]), *t = type_of(A, op->results.data[0]);
  const AxisInfo *a = in(A, op, 0);
  int keeps = keeps_value(op->code, x, t);
  int64_t x_step = x->is_ptr ? element_bytes(x) : 1, t_step = t->is_ptr ? element_bytes(t) : 1;
  for (int d = 0; d < ndims(t); d++) {
    r->constancy[d] = a->constancy[d];
    if (!keeps) continue;
    r->divisibility[d] = a->divisibility[d];
    r->contiguity[d] = x_step == t_step ? a->contiguity[d] : 1;
  }
}

/* Any other elementwise op: equal operands give equal results. */
static void visit_elementwise(const Analysis *A, const TirOp *op, AxisInfo *r) {
  for (int d = 0; d < ndims(type_of(A, op->results.data[0])); d++) {
    int64_t k = in(A, op, 0)->constancy[d];
    for (int i = 1; i < op->operands.len; i++) k = gcd(k, in(A, op, i)->constancy[d]);
    r->constancy[d] = k;
  }
}

/* ---- known values and signs ---------------------------------------------- */

/* Whether an integer cast of a non-negative x is non-negative: extension
 * keeps the value; a truncation from a signed type that wraps is ignored,
 * as for + and *; an unsigned value may exceed the signed maximum. */
static int keeps_sign(const Type *from, const Type *to, const Facts *x) {
  if (!x->nonneg) return 0;
  return dtype_bits(to->elem) > dtype_bits(from->elem) || !is_unsigned(from->elem);
}

/* Known values and signs, which rules above consult (x * 1, x / 1, the
 * division groups).  Called after the rule, which sets the facts of
 * constants, ranges and selects on a known condition itself. */
static void combine_facts(const Analysis *A, const TirOp *op, Facts *fr) {
  const Type *rt = type_of(A, op->results.data[0]);
  if (!op->operands.len) {
    if (op->code == TIR_PROGRAM_ID || op->code == TIR_NUM_PROGRAMS) fr->nonneg = 1;
    return;
  }
  const Facts *x = facts_in(A, op, 0), *y = op->operands.len > 1 ? facts_in(A, op, 1) : x;
  uint64_t a = (uint64_t)x->value, b = (uint64_t)y->value;
  int both = x->known && y->known;
  switch (op->code) {
  case TIR_SPLAT: case TIR_BROADCAST: case TIR_EXPAND_DIMS: case TIR_RESHAPE: case TIR_TRANS: case TIR_HINT:
  case TIR_CONVERT_LAYOUT:
    *fr = *x;
    return;
  case TIR_SELECT:
    if (x->known) return;
    fr->nonneg = facts_in(A, op, 1)->nonneg && facts_in(A, op, 2)->nonneg;
    break;
  case TIR_ADD: fr->known = both, fr->value = (int64_t)(a + b), fr->nonneg = x->nonneg && y->nonneg; break;
  case TIR_SUB: fr->known = both, fr->value = (int64_t)(a - b); break;
  case TIR_MUL:
    fr->known = both || known_is(x, 0) || known_is(y, 0);
    fr->value = both ? (int64_t)(a * b) : 0;
    fr->nonneg = x->nonneg && y->nonneg;
    break;
  case TIR_DIV: fr->known = known_is(x, 0), fr->nonneg = x->nonneg && y->nonneg; break;
  case TIR_REM: fr->known = known_is(y, 1), fr->nonneg = x->nonneg; break;
  case TIR_AND: case TIR_MAXIMUM: fr->nonneg = x->nonneg || y->nonneg; break;
  case TIR_OR: case TIR_XOR: case TIR_MINIMUM: fr->nonneg = x->nonneg && y->nonneg; break;
  case TIR_SHR: fr->nonneg = x->nonneg; break;
  case TIR_CAST:
    if (!is_integer(type_of(A, op->operands.data[0])) || !is_integer(rt)) break;
    fr->known = x->known;
    fr->value = rt->elem == DT_I1 ? x->value != 0 : x->value;
    fr->nonneg = keeps_sign(type_of(A, op->operands.data[0]), rt, x);
    break;
  default: break;
  }
  if (!is_integer(rt)) fr->known = 0;
  fr->value = fr->known ? wrap_int(fr->value, rt->elem) : 0;
  fr->nonneg = fr->nonneg || (is_integer(rt) && is_unsigned(rt->elem)) || (fr->known && fr->value >= 0);
}

/* ---- ops ------------------------------------------------------------------ */

static void visit_rule(Analysis *A, const TirOp *op, AxisInfo *r, Facts *fr) {
  const Type *t = type_of(A, op->results.data[0]);
  if (op->code == TIR_INLINE_ASM && tir_asm_pack(op) > 1) return; /* an element may depend on its neighbours */
  if ((tir_op_flags(op->code) & EW) && dtype_is_float(t->elem) && !t->is_ptr) {
    visit_elementwise(A, op, r); /* floats: only constancy means something */
    return;
  }
  switch (op->code) {
  case TIR_CONSTANT: visit_constant(A, op, fr); break;
  case TIR_MAKE_RANGE: visit_make_range(op, r, fr); break;
  case TIR_SPLAT: visit_splat(A, op, r); break;
  case TIR_BROADCAST: visit_broadcast(A, op, r); break;
  case TIR_EXPAND_DIMS: visit_expand_dims(A, op, r); break;
  case TIR_RESHAPE: visit_reshape(A, op, r); break;
  case TIR_TRANS: visit_trans(A, op, r); break;
  case TIR_HINT: visit_hint(A, op, r); break;
  case TIR_CONVERT_LAYOUT: *r = *in(A, op, 0); break; /* GPU-layout IR: the same tile */
  case TIR_ADD: case TIR_SUB: case TIR_ADDPTR: visit_add(A, op, r); break;
  case TIR_MUL: visit_mul(A, op, r); break;
  case TIR_DIV: case TIR_REM: visit_div_rem(A, op, r); break;
  case TIR_SHL: case TIR_SHR: visit_shift(A, op, r); break;
  case TIR_AND: case TIR_OR: case TIR_XOR: visit_bitwise(A, op, r); break;
  case TIR_MAXIMUM: case TIR_MINIMUM:
    visit_pick(in(A, op, 0), in(A, op, 1), NULL, ndims(type_of(A, op->results.data[0])), r);
    break;
  case TIR_SELECT: visit_select(A, op, r, fr); break;
  case TIR_CMP: visit_cmp(A, op, r); break;
  case TIR_CAST: case TIR_BITCAST: visit_cast(A, op, r); break;
  case TIR_INLINE_ASM: /* asm with side effects may differ between equal operands */
    if (op->flags & ASM_PURE) visit_elementwise(A, op, r);
    break;
  default:
    if (tir_op_flags(op->code) & EW) visit_elementwise(A, op, r);
    break;
  }
}

/* Facts every value has whatever op made it: a known value is constant
 * everywhere; a float has no integer structure; no run outgrows its dimension. */
static void normalise(const Type *t, AxisInfo *r, const Facts *fr) {
  for (int d = 0; d < ndims(t); d++) {
    int64_t size = dim_size(t, d);
    if (fr->known) {
      r->contiguity[d] = 1;
      r->constancy[d] = size;
      r->divisibility[d] = max64(r->divisibility[d], pow2_divisor(fr->value));
    }
    if (dtype_is_float(t->elem) && !t->is_ptr) r->contiguity[d] = r->divisibility[d] = 1;
    r->contiguity[d] = gcd(max64(1, r->contiguity[d]), size);
    r->constancy[d] = gcd(max64(1, r->constancy[d]), size);
    r->divisibility[d] = cap(r->divisibility[d]);
  }
}

static void visit_op(Analysis *A, const TirOp *op) {
  if (op->results.len != 1) return;
  int v = op->results.data[0];
  const Type *t = type_of(A, v);
  AxisInfo r = pessimistic(t);
  Facts fr = {0, 0, 0};
  visit_rule(A, op, &r, &fr);
  combine_facts(A, op, &fr);
  r.rank = t->rank;
  normalise(t, &r, &fr);
  A->info[v] = r;
  A->facts[v] = fr;
}

/* ---- control flow --------------------------------------------------------- */

static const TirOp *terminator(const TirBlock *b) { return b->ops.len ? b->ops.data[b->ops.len - 1] : NULL; }

static void copy_values(Analysis *A, const int *dst, const int *src, int n) {
  for (int i = 0; i < n; i++) {
    A->info[dst[i]] = A->info[src[i]];
    A->facts[dst[i]] = A->facts[src[i]];
  }
}

static int same_facts(const AxisInfo *x, const Facts *fx, const AxisInfo *y, const Facts *fy, int n) {
  for (int d = 0; d < n; d++)
    if (x->contiguity[d] != y->contiguity[d] || x->divisibility[d] != y->divisibility[d] ||
        x->constancy[d] != y->constancy[d])
      return 0;
  return fx->known == fy->known && fx->value == fy->value && fx->nonneg == fy->nonneg;
}

/* Joins src into dst; whether dst changed. */
static int join_values(Analysis *A, const int *dst, const int *src, int n) {
  int changed = 0;
  for (int i = 0; i < n; i++) {
    int dims = ndims(type_of(A, dst[i]));
    AxisInfo before = A->info[dst[i]];
    Facts facts_before = A->facts[dst[i]];
    join(&A->info[dst[i]], &A->facts[dst[i]], &A->info[src[i]], &A->facts[src[i]], dims);
    changed |= !same_facts(&before, &facts_before, &A->info[dst[i]], &A->facts[dst[i]], dims);
  }
  return changed;
}

static void forget(Analysis *A, const int *values, int n) {
  for (int i = 0; i < n; i++) {
    A->info[values[i]] = pessimistic(type_of(A, values[i]));
    memset(&A->facts[values[i]], 0, sizeof A->facts[values[i]]);
  }
}

static void induction_variable(Analysis *A, const TirOp *op, int iv) {
  const AxisInfo *lb = in(A, op, 0), *step = in(A, op, 2);
  A->info[iv] = pessimistic(type_of(A, iv));
  A->info[iv].divisibility[0] = gcd(lb->divisibility[0], step->divisibility[0]);
  memset(&A->facts[iv], 0, sizeof A->facts[iv]);
  A->facts[iv].nonneg = facts_in(A, op, 0)->nonneg && facts_in(A, op, 2)->nonneg;
}

/* The body's arguments start as the initial values and are joined with
 * what the body yields until nothing changes (each join only lowers a
 * fact, so this ends; MAX_ROUNDS is a guard that falls back to nothing known). */
static void analyze_for(Analysis *A, const TirOp *op) {
  const TirBlock *body = op->regions[0];
  const int *carried = body->args.data + 1;
  int n = op->results.len;
  induction_variable(A, op, body->args.data[0]);
  copy_values(A, carried, op->operands.data + 3, n);
  for (int round = 0;; round++) {
    analyze_block(A, body);
    const TirOp *yield = terminator(body);
    if (!yield || !join_values(A, carried, yield->operands.data, n)) break;
    if (round == MAX_ROUNDS) {
      forget(A, carried, n);
      analyze_block(A, body);
      break;
    }
  }
  copy_values(A, op->results.data, carried, n);
}

static void while_round(Analysis *A, const TirOp *op) {
  const TirBlock *before = op->regions[0], *after = op->regions[1];
  analyze_block(A, before);
  const TirOp *cond = terminator(before);
  if (cond && cond->operands.len == after->args.len + 1) copy_values(A, after->args.data, cond->operands.data + 1, after->args.len);
  else forget(A, after->args.data, after->args.len);
  analyze_block(A, after);
}

static void analyze_while(Analysis *A, const TirOp *op) {
  const TirBlock *before = op->regions[0], *after = op->regions[1];
  int n = before->args.len;
  copy_values(A, before->args.data, op->operands.data, n);
  for (int round = 0;; round++) {
    while_round(A, op);
    const TirOp *yield = terminator(after);
    if (!yield || !join_values(A, before->args.data, yield->operands.data, n)) break;
    if (round == MAX_ROUNDS) {
      forget(A, before->args.data, n);
      while_round(A, op);
      break;
    }
  }
  copy_values(A, op->results.data, after->args.data, op->results.len);
}

static void analyze_if(Analysis *A, const TirOp *op) {
  const Facts *cond = facts_in(A, op, 0);
  analyze_block(A, op->regions[0]);
  analyze_block(A, op->regions[1]);
  const TirOp *then = terminator(op->regions[0]), *orelse = terminator(op->regions[1]);
  int n = op->results.len;
  if (!then || !orelse) return;
  if (cond->known) {
    copy_values(A, op->results.data, (cond->value ? then : orelse)->operands.data, n);
    return;
  }
  copy_values(A, op->results.data, then->operands.data, n);
  join_values(A, op->results.data, orelse->operands.data, n);
}

static void analyze_block(Analysis *A, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (op->code == TIR_FOR) analyze_for(A, op);
    else if (op->code == TIR_WHILE) analyze_while(A, op);
    else if (op->code == TIR_IF) analyze_if(A, op);
    else visit_op(A, op);
  }
}

AxisInfo *tir_axis_info(const TirFunc *f) {
  Analysis A = {f, NULL, NULL};
  size_t n = (size_t)f->types.len + 1;
  A.info = arena_alloc(f->arena, sizeof *A.info * n);
  A.facts = arena_alloc(f->arena, sizeof *A.facts * n);
  for (int v = 0; v < f->types.len; v++) A.info[v] = pessimistic(type_of(&A, v));
  for (int i = 0; i < f->params.len; i++) {
    const TirParam *p = &f->params.data[i];
    A.info[p->value].divisibility[0] = cap(p->divisibility);
    A.facts[p->value].nonneg = !type_of(&A, p->value)->is_ptr && is_unsigned(type_of(&A, p->value)->elem);
  }
  analyze_block(&A, f->body);
  for (int v = 0; v < f->types.len; v++) A.info[v].nonneg = A.facts[v].nonneg;
  return A.info;
}

/* ---- printing ------------------------------------------------------------- */

static void print_list(Buf *out, const char *name, const int64_t *v, int n) {
  buf_printf(out, " %s=[", name);
  for (int d = 0; d < n; d++) buf_printf(out, "%s%lld", d ? ", " : "", (long long)v[d]);
  buf_puts(out, "]");
}

static void print_value(const TirFunc *f, const AxisInfo *info, int v, const char *what, int depth, Buf *out) {
  const AxisInfo *a = &info[v];
  int n = ndims(tir_type(f, v));
  buf_printf(out, "%*s%%%d:", depth * 2, "", v);
  print_list(out, "contiguity", a->contiguity, n);
  print_list(out, "divisibility", a->divisibility, n);
  print_list(out, "constancy", a->constancy, n);
  buf_printf(out, "  // %s : %s\n", what, type_str(f->arena, tir_type(f, v)));
}

static void print_block(const TirFunc *f, const AxisInfo *info, const TirBlock *b, int depth, Buf *out) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++) {
      if (!op->regions[r]) continue;
      for (int k = 0; k < op->regions[r]->args.len; k++)
        print_value(f, info, op->regions[r]->args.data[k], k == 0 && op->code == TIR_FOR ? "for iv" : "block arg", depth + 1, out);
      print_block(f, info, op->regions[r], depth + 1, out);
    }
    for (int k = 0; k < op->results.len; k++) print_value(f, info, op->results.data[k], tir_op_name(op->code), depth, out);
  }
}

void tir_print_axis_info(const TirFunc *f, Buf *out) {
  AxisInfo *info = tir_axis_info(f);
  buf_printf(out, "axis info @%s\n", f->name);
  for (int i = 0; i < f->params.len; i++) print_value(f, info, f->params.data[i].value, f->params.data[i].name, 1, out);
  print_block(f, info, f->body, 1, out);
}
