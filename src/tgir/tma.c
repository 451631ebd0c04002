/* Which pipelined loads the tensor memory accelerator (TMA) can bring, and
 * the tensor map and box coordinates that do it (sm_90a; pipeline.c asks).
 *
 * A TMA copy moves a box of a 2-D tensor [dims[1]][dims[0]] (row stride in
 * elements, innermost dimension contiguous) into shared memory in wgmma's
 * swizzled form (the buffer's NVMMA layout: 128, 64 or 32-byte rows),
 * reading elements outside the tensor as 0.  The
 * launch encodes the map from the kernel's arguments, so the tensor's base,
 * row stride and dimensions must be parameters (or constants).  A load
 * qualifies when its pointer tile, mask and `other` say exactly that:
 *
 *     ptr  = base + rows[:, None] * stride + cols[None, :]   (either order)
 *            rows, cols: start + arange(n), or (start + arange(n)) % D
 *     the loop advances ptr by `inc` along one of the two, and
 *     mask = index < D - iv * c  along that one (c * step = inc, lb = 0),
 *            [& index < D' along the other], other = 0
 *
 * so iteration iv's box starts at (start + iv * c) along the moving
 * dimension, `start` along the other, and every element the mask keeps is
 * inside dims and every one it drops outside (the starts are >= 0, so no
 * index is negative).  A `% D` dimension without a mask is the tutorial's
 * `offs_am = (pid_m * BM + arange(BM)) % M`: where the pointers wrap to row
 * 0, TMA reads zeros.  That is the same result only if those rows reach
 * nothing but the same rows of a dot's result (A's rows, B's columns),
 * through element-wise ops and loops, to stores whose mask drops them:
 * a conjunct `(start + arange) < D` on that dimension (the tutorial's
 * c_mask).  wrap_is_masked checks it; anything else keeps cp.async.
 *
 * A tensor descriptor's load (desc.load([y, x]), made in the kernel or a
 * parameter) is the other form: its pointers are recomputed each
 * iteration from starts that move with the loop, and its mask bounds
 * every index on both sides, which is TMA's own rule:
 *
 *     ptr  = base + rows[:, None] * stride + cols[None, :]   (either order)
 *            rows, cols: start + arange(n), start loop-invariant, the
 *            induction variable (times a constant), or a carried value
 *            the loop advances by a constant multiple of its step
 *     mask = 0 <= index < D  along both dimensions (`0 <=` may be missing
 *            where the start is >= 0), other = 0
 *
 * A store of that form, in a loop or not (its starts whatever they are),
 * goes out by TMA too (tma_store.c), when `0 <=` is written on
 * every bounded dimension, as desc.store's mask has it: TMA writes no
 * element outside the tensor, which is what the mask says. */
#include "passes.h"

#include <string.h>

typedef struct Index1 {
  int start;             /* scalar value id, or -1: 0 */
  int wrap;              /* scalar value id D of `% D`, or -1 */
  int64_t n;             /* elements */
} Index1;

typedef struct Offset2 {
  int has[2];            /* per tile dimension: an index term */
  Index1 index[2];
  int coef[2];           /* its scalar coefficient (value id), or -1: the constant coef_c */
  int64_t coef_c[2];
  int coef_hinted[2];    /* that scalar before casts and hints (its AxisInfo has the hints' facts) */
} Offset2;

typedef struct Match {
  TirFunc *f;
  const TirOp **def;     /* per value id: its defining op (NULL: a parameter or block argument) */
} Match;

static void index_defs(Match *m, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++) m->def[op->results.data[k]] = op;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) index_defs(m, op->regions[r]);
  }
}

static const TirOp *def(Match *m, int v) { return v >= 0 ? m->def[v] : NULL; }

static const TirOp *def_is(Match *m, int v, TirCode code) {
  const TirOp *d = def(m, v);
  return d && d->code == code ? d : NULL;
}

/* Through integer casts (indices: no wrap assumed, as the pointer
 * arithmetic does), layout conversions and hints. */
static int uncast(Match *m, int v) {
  for (const TirOp *d;; v = d->operands.data[0]) {
    d = def(m, v);
    if (!d || !(d->code == TIR_CONVERT_LAYOUT || d->code == TIR_HINT ||
                (d->code == TIR_CAST && !dtype_is_float(tir_type(m->f, v)->elem))))
      return v;
  }
}

/* v before the integer casts that widen it (widen's i64 of an i32
 * index): an origin that fits i32 needs no clamp (tma_origin.c). */
static int unwidened(Match *m, int v) {
  for (const TirOp *d; (d = def_is(m, v, TIR_CAST));) {
    DType from = tir_type(m->f, d->operands.data[0])->elem, to = tir_type(m->f, v)->elem;
    if (dtype_is_float(from) || dtype_is_float(to) || dtype_bits(from) >= dtype_bits(to)) break;
    v = d->operands.data[0];
  }
  return v;
}

/* The scalar a tile splats (through broadcasts), or -1. */
static int splatted(Match *m, int v) {
  const TirOp *d;
  while ((d = def_is(m, uncast(m, v), TIR_BROADCAST))) v = d->operands.data[0];
  d = def_is(m, uncast(m, v), TIR_SPLAT);
  return d ? d->operands.data[0] : -1;
}

static int constant_of(Match *m, int v, int64_t *c) {
  const TirOp *d = def_is(m, uncast(m, v), TIR_CONSTANT);
  if (!d || dtype_is_float(tir_type(m->f, d->results.data[0])->elem)) return 0;
  *c = d->ival;
  return 1;
}

/* A constant tile or the splat of a constant. */
static int uniform_constant(Match *m, int v, int64_t *c) {
  if (constant_of(m, v, c)) return 1;
  int s = splatted(m, v);
  return s >= 0 && constant_of(m, s, c);
}

static int index1(Match *m, int v, Index1 *out) {
  const TirOp *d = def(m, uncast(m, v));
  if (!d) return 0;
  if (d->code == TIR_MAKE_RANGE && d->ival == 0) {
    *out = (Index1){-1, -1, d->ival2};
    return 1;
  }
  if (d->code == TIR_REM) {
    int by = splatted(m, d->operands.data[1]);
    if (by < 0 || !index1(m, d->operands.data[0], out) || out->wrap >= 0) return 0;
    out->wrap = uncast(m, by);
    return 1;
  }
  if (d->code == TIR_ADD)
    for (int k = 0; k < 2; k++) {
      int s = splatted(m, d->operands.data[k]);
      if (s >= 0 && index1(m, d->operands.data[1 - k], out) && out->start < 0 && out->wrap < 0) {
        out->start = s;
        return 1;
      }
    }
  return 0;
}

/* into += from, where they index different dimensions; 0 where both index one. */
static int merge(Offset2 *into, const Offset2 *from) {
  for (int k = 0; k < 2; k++) {
    if (into->has[k] && from->has[k]) return 0;
    if (from->has[k]) into->has[k] = 1, into->index[k] = from->index[k], into->coef[k] = from->coef[k],
                      into->coef_c[k] = from->coef_c[k], into->coef_hinted[k] = from->coef_hinted[k];
  }
  return 1;
}

/* Whether dimension k is indexed with coefficient 1. */
static int unit(const Offset2 *o, int k) { return o->has[k] && o->coef[k] < 0 && o->coef_c[k] == 1; }

/* The one dimension o indexes, with coefficient 1; -1 if not so. */
static int unit_only(const Offset2 *o) { return o->has[0] == o->has[1] ? -1 : unit(o, o->has[1]) ? o->has[1] : -1; }

static int offset2(Match *m, int v, Offset2 *o) {
  const TirOp *d = def(m, uncast(m, v));
  if (!d) return 0;
  if (d->code == TIR_BROADCAST) return offset2(m, d->operands.data[0], o);
  if (d->code == TIR_EXPAND_DIMS && tir_type(m->f, d->results.data[0])->rank == 2) {
    int dim = d->axis == 1 ? 0 : 1;
    memset(o, 0, sizeof *o);
    o->has[dim] = 1, o->coef[dim] = -1, o->coef_c[dim] = 1;
    return index1(m, d->operands.data[0], &o->index[dim]);
  }
  if (d->code == TIR_MUL)
    for (int k = 0; k < 2; k++) {
      int64_t c;
      int s = splatted(m, d->operands.data[k]);
      if ((s < 0 && !uniform_constant(m, d->operands.data[k], &c)) || !offset2(m, d->operands.data[1 - k], o)) continue;
      int dim = unit_only(o);
      if (dim < 0) return 0;
      if (s >= 0 && !constant_of(m, s, &c)) o->coef[dim] = uncast(m, s), o->coef_hinted[dim] = s;
      else o->coef_c[dim] = c;
      return 1;
    }
  if (d->code == TIR_ADD) {
    Offset2 y;
    return offset2(m, d->operands.data[0], o) && offset2(m, d->operands.data[1], &y) && merge(o, &y);
  }
  return 0;
}

/* ptr = splat(base) + offsets (nested addptr, broadcasts): base's value id and the offsets. */
static int pointer(Match *m, int v, int *base, Offset2 *o) {
  const TirOp *d = def(m, uncast(m, v));
  if (!d) return 0;
  if (d->code == TIR_BROADCAST) return pointer(m, d->operands.data[0], base, o);
  if (d->code == TIR_SPLAT) {
    *base = d->operands.data[0];
    memset(o, 0, sizeof *o);
    return 1;
  }
  Offset2 x;
  return d->code == TIR_ADDPTR && pointer(m, d->operands.data[0], base, o) && offset2(m, d->operands.data[1], &x) &&
         merge(o, &x);
}

/* The index in f->params of the parameter whose value v is; -1 if none. */
static int param_of(const TirFunc *f, int v) {
  for (int i = 0; i < f->params.len; i++)
    if (f->params.data[i].value == v) return i;
  return -1;
}

/* Multiplies the factors of v (through casts) into out: constants and
 * integer parameters.  An extent's box coordinates are i32: its
 * parameters may hold no more (not an i64, nor a u32). */
static int factors(Match *m, int v, int extent, TirMapField *out) {
  int64_t c;
  if (constant_of(m, v, &c)) return c >= 1 && !__builtin_mul_overflow(out->value, c, &out->value);
  v = uncast(m, v);
  const TirOp *mul = def_is(m, v, TIR_MUL);
  if (mul) return factors(m, mul->operands.data[0], extent, out) && factors(m, mul->operands.data[1], extent, out);
  const Type *t = tir_type(m->f, v);
  int bits = dtype_bits(t->elem), fits_i32 = bits < 32 || (bits == 32 && dtype_kind(t->elem) != DK_UINT);
  int p = param_of(m->f, v);
  if (p < 0 || t->is_ptr || (extent && !fits_i32) || out->n == ARCH_MAX_MAP_FACTORS) return 0;
  out->params[out->n++] = p;
  return 1;
}

/* A map field: a constant, or a product of integer parameters (times a constant). */
static int map_field(Match *m, int v, int extent, TirMapField *out) {
  *out = (TirMapField){1, 0, {0}};
  return factors(m, v, extent, out) && (!extent || out->n || out->value < ((int64_t)1 << 31));
}

/* One conjunct `index < bound` of a mask: the tile dimension and both sides. */
typedef struct Bound {
  int dim;
  Index1 index;
  int bound;
} Bound;

/* A mask's op, through broadcasts and layout conversions. */
static const TirOp *mask_op(Match *m, int v) {
  const TirOp *d = def(m, uncast(m, v));
  while (d && d->code == TIR_BROADCAST) d = def(m, uncast(m, d->operands.data[0]));
  return d;
}

/* d as `index < splat(bound)` (or a constant tile), the index along one dimension with coefficient 1. */
static int bound_of(Match *m, const TirOp *d, Bound *out) {
  Offset2 o;
  int64_t c;
  int s = d->code == TIR_CMP && d->kind == CMP_LT ? splatted(m, d->operands.data[1]) : -1;
  if (s < 0 && d->code == TIR_CMP && d->kind == CMP_LT && constant_of(m, d->operands.data[1], &c))
    s = d->operands.data[1];
  int dim = s >= 0 && offset2(m, d->operands.data[0], &o) ? unit_only(&o) : -1;
  if (dim >= 0) *out = (Bound){dim, o.index[dim], s};
  return dim >= 0;
}

static int same_index(const Index1 *a, const Index1 *b) { return a->start == b->start && a->wrap == b->wrap && a->n == b->n; }

/* d as `index >= 0`, the index along one dimension with coefficient 1. */
static int lower_bound_of(Match *m, const TirOp *d, int *dim, Index1 *index) {
  Offset2 o;
  int64_t zero;
  if (d->code != TIR_CMP || d->kind != CMP_GE || !uniform_constant(m, d->operands.data[1], &zero) || zero ||
      !offset2(m, d->operands.data[0], &o) || (*dim = unit_only(&o)) < 0)
    return 0;
  *index = o.index[*dim];
  return 1;
}

/* A mask's conjuncts: per dimension at most one `index < D` (extent[dim] =
 * D) and, where seen, `index >= 0` (has_floor[dim]); each index the
 * pointers' along its dimension. */
static int two_sided(Match *m, const Offset2 *o, int v, int *extent, int *has_floor) {
  const TirOp *d = mask_op(m, v);
  Bound b;
  int dim;
  Index1 index;
  if (d && d->code == TIR_AND)
    return two_sided(m, o, d->operands.data[0], extent, has_floor) &&
           two_sided(m, o, d->operands.data[1], extent, has_floor);
  if (d && bound_of(m, d, &b) && same_index(&b.index, &o->index[b.dim]) && extent[b.dim] < 0)
    return extent[b.dim] = b.bound, 1;
  if (d && lower_bound_of(m, d, &dim, &index) && same_index(&index, &o->index[dim]) && !has_floor[dim])
    return has_floor[dim] = 1;
  return 0;
}

/* bound = D - iv * c (or D - iv): D and c. */
static int moving_bound(Match *m, int bound, int iv, int *dim_value, int64_t *c) {
  const TirOp *d = def_is(m, uncast(m, bound), TIR_SUB);
  if (!d) return 0;
  *dim_value = d->operands.data[0];
  int t = uncast(m, d->operands.data[1]);
  if (t == iv) return *c = 1, 1;
  const TirOp *mul = def_is(m, t, TIR_MUL);
  if (!mul) return 0;
  for (int k = 0; k < 2; k++)
    if (uncast(m, mul->operands.data[k]) == iv && constant_of(m, mul->operands.data[1 - k], c)) return 1;
  return 0;
}

/* The :16 pointer parameter whose value v is, as an index in f->params; -1 if none. */
static int base_param(const TirFunc *f, int v) {
  int p = param_of(f, v);
  return p >= 0 && f->params.data[p].divisibility >= 16 ? p : -1;
}

/* The loop's advance of carried pointer `arg`: how far along which dimension per iteration. */
static int advance(Match *m, const TirOp *loop, int carried, const Offset2 *o, int *dim, int64_t *inc) {
  const TirBlock *body = loop->regions[0];
  const TirOp *yield = body->ops.data[body->ops.len - 1];
  const TirOp *d = def_is(m, yield->operands.data[carried], TIR_ADDPTR);
  if (!d || d->operands.data[0] != body->args.data[1 + carried]) return 0;
  int by = d->operands.data[1], s = splatted(m, by);
  for (int k = 0; k < 2; k++) /* along the unit-coefficient dimension: a constant */
    if (unit(o, k) && uniform_constant(m, by, inc)) return *dim = k, 1;
  const TirOp *mul = s >= 0 ? def_is(m, uncast(m, s), TIR_MUL) : NULL;
  for (int k = 0; mul && k < 2; k++) /* along the strided one: c * stride */
    for (int j = 0; j < 2; j++)
      if (o->coef[k] >= 0 && uncast(m, mul->operands.data[j]) == o->coef[k] && constant_of(m, mul->operands.data[1 - j], inc))
        return *dim = k, 1;
  return 0;
}

/* ---- the rows a `% D` wraps ---- */

typedef struct Wrap {
  int start, bound;      /* the index's start and D, through casts */
} Wrap;

/* Whether mask has a conjunct `(start + arange) < D` along tile dimension dim. */
static int drops(Match *m, int mask, int dim, const Wrap *w) {
  const TirOp *d = mask_op(m, mask);
  Bound b;
  if (d && d->code == TIR_AND) return drops(m, d->operands.data[0], dim, w) || drops(m, d->operands.data[1], dim, w);
  return d && bound_of(m, d, &b) && b.dim == dim && b.index.wrap < 0 && b.index.start >= 0 &&
         uncast(m, b.index.start) == w->start && uncast(m, b.bound) == w->bound;
}

typedef struct Taint {
  Match *m;
  const Wrap *w;
  char *dim;             /* per value: 0, or 1 + the dimension whose wrapped rows it may hold */
  int changed, failed;
} Taint;

static void taint(Taint *t, int v, int dim) {
  if (t->dim[v] == dim + 1) return;
  if (t->dim[v]) t->failed = 1;
  t->dim[v] = (char)(dim + 1), t->changed = 1;
}

/* What op makes of its tainted operands; failed if it may spread or keep them. */
static void spread(Taint *t, const TirOp *op, const TirOp *parent) {
  int k = 0;
  while (k < op->operands.len && !t->dim[op->operands.data[k]]) k++;
  if (k == op->operands.len) return;
  int dim = t->dim[op->operands.data[k]] - 1;
  switch (op->code) {
  case TIR_LOCAL_ALLOC:
  case TIR_CAST:
  case TIR_CONVERT_LAYOUT: taint(t, op->results.data[0], dim); return;
  case TIR_DOT: /* a result row reads A's row, a result column B's column */
    for (k = 0; k < 3; k++) {
      int d = t->dim[op->operands.data[k]] - 1;
      if (d >= 0 && k < 2 && d != k) t->failed = 1;
      if (d >= 0) taint(t, op->results.data[0], d);
    }
    return;
  case TIR_STORE:
    if (t->dim[op->operands.data[0]] || op->operands.len < 3 || !drops(t->m, op->operands.data[2], dim, t->w))
      t->failed = 1;
    return;
  case TIR_YIELD:
    if (!parent || parent->code != TIR_FOR) break;
    for (k = 0; k < op->operands.len; k++)
      if (t->dim[op->operands.data[k]]) {
        taint(t, parent->results.data[k], t->dim[op->operands.data[k]] - 1);
        taint(t, parent->regions[0]->args.data[1 + k], t->dim[op->operands.data[k]] - 1);
      }
    return;
  case TIR_FOR:
    for (k = 3; k < op->operands.len; k++)
      if (t->dim[op->operands.data[k]]) taint(t, op->regions[0]->args.data[k - 2], t->dim[op->operands.data[k]] - 1);
    return;
  default:
    if ((tir_op_flags(op->code) & EW) && op->results.len == 1 && tir_type(t->m->f, op->results.data[0])->rank == 2) {
      for (k = 0; k < op->operands.len; k++)
        if (t->dim[op->operands.data[k]] && t->dim[op->operands.data[k]] != dim + 1) t->failed = 1;
      taint(t, op->results.data[0], dim);
      return;
    }
  }
  t->failed = 1;
}

static void spread_block(Taint *t, const TirBlock *b, const TirOp *parent) {
  for (int i = 0; i < b->ops.len && !t->failed; i++) {
    const TirOp *op = b->ops.data[i];
    spread(t, op, parent);
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) spread_block(t, op->regions[r], op);
  }
}

/* Whether the rows (tile dimension dim) of load's tile that `% D` wraps are dropped wherever they go. */
static int wrap_is_masked(Match *m, const TirOp *load, int dim, const Wrap *w) {
  Taint t = {m, w, arena_alloc(m->f->arena, (size_t)m->f->types.len + 1), 0, 0};
  memset(t.dim, 0, (size_t)m->f->types.len + 1);
  taint(&t, load->results.data[0], dim);
  for (int rounds = 0; t.changed && !t.failed && rounds < 64; rounds++) {
    t.changed = 0;
    spread_block(&t, m->f->body, NULL);
  }
  return !t.failed && !t.changed;
}

static int nonneg(const AxisInfo *axis, int v) { return v < 0 || axis[v].nonneg; }

/* Where a box starts along one tile dimension at iteration iv:
 * origin + (iv - base) * per_iv, origin and base loop-invariant value ids
 * (-1: 0). */
typedef struct Start {
  int origin, base;
  int64_t per_iv;
} Start;

/* What a load's pointers and mask say: the tensor's base parameter, the
 * offsets, each dimension's extent (a value id) and start. */
typedef struct Plan {
  int base;
  Offset2 o;
  int extent[2];         /* -1: the constant whole_tile[dim] */
  int64_t whole_tile[2];
  int floor[2];          /* the recomputed form: the mask has `0 <= index` along the dimension */
  Start start[2];
} Plan;

/* The carried-pointer form (the header's first). */
static int plan_carried(Match *m, const AxisInfo *axis, const TirOp *loop, const TirOp *load, int carried,
                        int64_t step, Plan *p) {
  const TirBlock *body = loop->regions[0];
  Offset2 *o = &p->o;
  int64_t lb, inc, per_iv;
  int moving;
  if (!constant_of(m, loop->operands.data[0], &lb) || lb != 0) return 0;
  if (!pointer(m, loop->operands.data[3 + carried], &p->base, o) || !o->has[0] || !o->has[1]) return 0;
  if (!advance(m, loop, carried, o, &moving, &inc)) return 0;
  int bound[2] = {-1, -1}, has_floor[2] = {0, 0}, *dim_value = p->extent;
  dim_value[0] = dim_value[1] = -1;
  if (!(load->flags & LOAD_MASK) || !two_sided(m, o, load->operands.data[1], bound, has_floor) || has_floor[0] ||
      has_floor[1])
    return 0;
  for (int k = 0; k < 2; k++) {
    if (bound[k] < 0) continue;
    if (k != moving) {
      if (o->index[k].wrap >= 0) return 0;
      dim_value[k] = bound[k];
      continue;
    }
    if (o->index[moving].start >= 0 || o->index[moving].wrap >= 0 ||
        !moving_bound(m, bound[k], body->args.data[0], &dim_value[moving], &per_iv) || per_iv * step != inc)
      return 0;
  }
  if (dim_value[moving] < 0 || !nonneg(axis, o->index[0].start) || !nonneg(axis, o->index[1].start)) return 0;
  int fixed = 1 - moving;
  if (dim_value[fixed] < 0) {
    Wrap w = {uncast(m, o->index[fixed].start), uncast(m, o->index[fixed].wrap)};
    if (o->index[fixed].wrap < 0 || o->index[fixed].start < 0 || !wrap_is_masked(m, load, fixed, &w)) return 0;
    dim_value[fixed] = o->index[fixed].wrap;
  }
  p->start[fixed] = (Start){o->index[fixed].start, -1, 0};
  p->start[moving] = (Start){-1, -1, per_iv};
  return 1;
}

static void mark_defined(char *in, const TirBlock *b) {
  for (int k = 0; k < b->args.len; k++) in[b->args.data[k]] = 1;
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++) in[op->results.data[k]] = 1;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) mark_defined(in, op->regions[r]);
  }
}

/* Per value id: defined in the loop's body (its arguments included); none without a loop. */
static char *defined_in(Match *m, const TirOp *loop) {
  char *in = arena_alloc(m->f->arena, (size_t)m->f->types.len + 1);
  memset(in, 0, (size_t)m->f->types.len + 1);
  if (loop) mark_defined(in, loop->regions[0]);
  return in;
}

/* The start s (a value id, -1: 0) as a Start: loop-invariant, the
 * induction variable times a constant (plus a loop-invariant value), or a
 * carried value advanced by a constant multiple of the step. */
static int loop_start(Match *m, const TirOp *loop, const char *in_body, int s, int64_t step, Start *out) {
  if (s < 0) return *out = (Start){-1, -1, 0}, 1;
  if (!in_body[s]) return *out = (Start){s, -1, 0}, 1;
  const TirBlock *body = loop->regions[0];
  int iv = body->args.data[0];
  int64_t c;
  if ((s = uncast(m, s)) == iv) return *out = (Start){-1, -1, 1}, 1;
  const TirOp *mul = def_is(m, s, TIR_MUL), *sum = def_is(m, s, TIR_ADD);
  for (int k = 0; mul && k < 2; k++)
    if (uncast(m, mul->operands.data[k]) == iv && constant_of(m, mul->operands.data[1 - k], &c))
      return *out = (Start){-1, -1, c}, 1;
  for (int k = 0; sum && k < 2; k++) { /* offset_y + start_n */
    int at = sum->operands.data[k];
    if (!in_body[at] && loop_start(m, loop, in_body, sum->operands.data[1 - k], step, out) && out->origin < 0 &&
        out->base < 0)
      return out->origin = at, 1;
  }
  int carried = -1;
  for (int k = 1; k < body->args.len; k++)
    if (body->args.data[k] == s) carried = k - 1;
  if (carried < 0) return 0;
  const TirOp *yield = body->ops.data[body->ops.len - 1];
  const TirOp *add = def_is(m, uncast(m, yield->operands.data[carried]), TIR_ADD);
  for (int k = 0; add && k < 2; k++)
    if (uncast(m, add->operands.data[k]) == s && constant_of(m, add->operands.data[1 - k], &c) && c % step == 0)
      return *out = (Start){loop->operands.data[3 + carried], loop->operands.data[0], c / step}, 1;
  return 0;
}

/* The recomputed form (the header's second): a tensor descriptor's
 * pointers and mask (-1: none); without a loop (a store) every start is
 * taken as it is. */
static int plan_recomputed(Match *m, const AxisInfo *axis, const TirOp *loop, int ptr, int mask, int64_t step,
                           Plan *p) {
  Offset2 *o = &p->o;
  int *has_floor = p->floor, moving = 0;
  p->extent[0] = p->extent[1] = -1;
  has_floor[0] = has_floor[1] = 0;
  if (!pointer(m, ptr, &p->base, o) || !o->has[0] || !o->has[1] || o->index[0].wrap >= 0 ||
      o->index[1].wrap >= 0 || mask < 0 || !two_sided(m, o, mask, p->extent, has_floor))
    return 0;
  const char *in_body = defined_in(m, loop);
  for (int k = 0; k < 2; k++) {
    if (p->extent[k] < 0 && o->index[k].start < 0) { /* no mask on arange(n) (a constant extent folded it away) */
      p->whole_tile[k] = o->index[k].n;
      p->start[k] = (Start){-1, -1, 0};
      continue;
    }
    if (p->extent[k] < 0 || in_body[uncast(m, p->extent[k])] || !(has_floor[k] || nonneg(axis, o->index[k].start)) ||
        !loop_start(m, loop, in_body, o->index[k].start, step, &p->start[k]))
      return 0;
    moving += p->start[k].per_iv != 0;
  }
  return moving <= 1;
}

/* Whether stride (its factors' divisibility, or the hinted value's) is a multiple of 16 bytes. */
static int stride_aligned(const TirFunc *f, const AxisInfo *axis, const TirMapField *stride, int hinted, int elem) {
  int64_t divides = stride->value * elem;
  for (int i = 0; i < stride->n && divides % 16; i++) divides *= f->params.data[stride->params[i]].divisibility;
  return divides % 16 == 0 || (hinted >= 0 && axis[hinted].divisibility[0] * elem % 16 == 0);
}

static int extent_field(Match *m, const Plan *p, int dim, TirMapField *out) {
  if (p->extent[dim] >= 0) return map_field(m, p->extent[dim], 1, out);
  *out = (TirMapField){p->whole_tile[dim], 0, {0}};
  return 1;
}

/* The row stride: a scalar parameter, or a constant (a descriptor's strides=[HEAD_DIM, 1]). */
static int stride_field(Match *m, const Offset2 *o, int dim, TirMapField *out) {
  if (o->coef[dim] >= 0) return map_field(m, o->coef[dim], 0, out);
  *out = (TirMapField){o->coef_c[dim], 0, {0}};
  return o->coef_c[dim] >= 1;
}

/* The index of f's tensor map equal to `map`, added if none is; -1 when f
 * has as many as a kernel takes. */
static int map_index(TirFunc *f, const TirTensorMap *map) {
  for (int i = 0; i < f->tensor_maps.len; i++)
    if (!memcmp(&f->tensor_maps.data[i], map, sizeof *map)) return i;
  if (f->tensor_maps.len == ARCH_MAX_TENSOR_MAPS) return -1;
  vec_push(f->arena, &f->tensor_maps, *map);
  return f->tensor_maps.len - 1;
}

static void match_init(Match *m, TirFunc *f) {
  *m = (Match){f, arena_alloc(f->arena, sizeof(TirOp *) * (size_t)(f->types.len + 1))};
  memset(m->def, 0, sizeof(TirOp *) * (size_t)(f->types.len + 1));
  index_defs(m, f->body);
}

/* The tensor map of plan p for a tile of type t in `buffer` (NVMMA, its
 * contiguous dimension the pointers'), and the box origin's parts. */
static int plan_map(Match *m, const AxisInfo *axis, const Plan *p, const Type *t, const Layout *buffer, TmaLoad *out) {
  TirFunc *f = m->f;
  const Offset2 *o = &p->o;
  int base = base_param(f, p->base);
  int inner = unit(o, 1) ? 1 : unit(o, 0) ? 0 : -1;
  if (base < 0 || inner < 0 || buffer->order[0] != inner) return 0;
  int outer = 1 - inner;
  /* one box per block of the NVMMA layout: the hardware swizzles a box's rows as the layout does */
  int elem = dtype_bits(t->elem) / 8, width = buffer->swizzle_bytes / elem;
  TirTensorMap map;
  memset(&map, 0, sizeof map); /* padding too: maps are compared whole */
  map.base = base, map.box[0] = width, map.box[1] = (int)t->shape[outer], map.swizzle = buffer->swizzle_bytes;
  if (!extent_field(m, p, inner, &map.dims[0]) || !extent_field(m, p, outer, &map.dims[1]) ||
      !stride_field(m, o, outer, &map.stride))
    return 0;
  if (t->shape[inner] % width || t->shape[outer] > 256 ||
      !stride_aligned(f, axis, &map.stride, o->coef_hinted[outer], elem))
    return 0;
  if ((out->map = map_index(f, &map)) < 0) return 0;
  const Start *by_coord[2] = {&p->start[inner], &p->start[outer]};
  out->moving = by_coord[1]->per_iv != 0;
  for (int i = 0; i < 2; i++) out->origin[i] = unwidened(m, by_coord[i]->origin);
  out->per_iv = by_coord[out->moving]->per_iv;
  out->iv_base = by_coord[out->moving]->base;
  int extent_of[2] = {p->extent[inner], p->extent[outer]};
  for (int i = 0; i < 2; i++) /* the parameter itself, or the product the kernel computes */
    out->extent[i] = !map.dims[i].n ? -1 : map.dims[i].n == 1 && map.dims[i].value == 1
                                                ? f->params.data[map.dims[i].params[0]].value : extent_of[i];
  out->bytes = (int)(t->shape[0] * t->shape[1] * elem);
  return 1;
}

int tma_plan_load(TirFunc *f, const AxisInfo *axis, const TirOp *loop, const TirOp *load, const Layout *buffer,
                  TmaLoad *out) {
  Match m;
  match_init(&m, f);
  const TirBlock *body = loop->regions[0];
  const Type *t = tir_type(f, load->results.data[0]);
  int64_t step;
  if (t->rank != 2 || !buffer || buffer->kind != LAYOUT_NVMMA) return 0;
  if (!constant_of(&m, loop->operands.data[2], &step) || step <= 0) return 0;
  int carried = -1, ptr = load->operands.data[0], mask = load->flags & LOAD_MASK ? load->operands.data[1] : -1;
  for (int k = 1; k < body->args.len; k++)
    if (body->args.data[k] == ptr) carried = k - 1;
  Plan p;
  memset(&p, 0, sizeof p);
  if (!(carried >= 0 ? plan_carried(&m, axis, loop, load, carried, step, &p)
                     : plan_recomputed(&m, axis, loop, ptr, mask, step, &p)))
    return 0;
  return plan_map(&m, axis, &p, t, buffer, out);
}

/* A store in the descriptor form, `0 <=` written on every bounded
 * dimension (desc.store's and a block pointer's masks have it: a plain
 * pointer store keeps st.global). */
const Layout *tma_plan_store(TirFunc *f, const AxisInfo *axis, const TirOp *store, TmaLoad *out) {
  const Type *t = tir_type(f, store->operands.data[1]);
  if (t->rank != 2 || dtype_bits(t->elem) < 8 || store->operands.len != 3 || (store->flags & LOAD_VOLATILE))
    return NULL;
  Match m;
  match_init(&m, f);
  Plan p;
  memset(&p, 0, sizeof p);
  if (!plan_recomputed(&m, axis, NULL, store->operands.data[0], store->operands.data[2], 1, &p)) return NULL;
  for (int k = 0; k < 2; k++)
    if (p.extent[k] >= 0 && !p.floor[k]) return NULL;
  /* A bulk store whose box starts below 0 is an illegal instruction (an H200, at any negative coordinate),
   * where a load's reads zeros: only a start known not to be negative goes by TMA. */
  for (int k = 0; k < 2; k++)
    if (p.start[k].origin >= 0 && !axis[p.start[k].origin].nonneg) return NULL;
  int inner = unit(&p.o, 1) ? 1 : unit(&p.o, 0) ? 0 : -1, order[2] = {inner, 1 - inner};
  /* whole swizzle patterns (8 rows) per box: the hardware swizzles by address, the layout by row */
  if (inner < 0 || t->shape[1 - inner] % 8) return NULL;
  const Layout *buffer = layout_nvmma_for(f->layout_table, dtype_bits(t->elem), 2, t->shape, order);
  return buffer && plan_map(&m, axis, &p, t, buffer, out) ? buffer : NULL;
}
