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
 * c_mask).  wrap_is_masked checks it; anything else keeps cp.async. */
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
 * arithmetic does) and layout conversions. */
static int uncast(Match *m, int v) {
  for (const TirOp *d;; v = d->operands.data[0]) {
    d = def(m, v);
    if (!d || !(d->code == TIR_CONVERT_LAYOUT || (d->code == TIR_CAST && !dtype_is_float(tir_type(m->f, v)->elem))))
      return v;
  }
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
                      into->coef_c[k] = from->coef_c[k];
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
      if (s >= 0 && !constant_of(m, s, &c)) o->coef[dim] = uncast(m, s);
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

/* A function parameter (through casts) as a map field, or a constant.  An
 * extent's box coordinates are i32: its parameter may hold no more (not an
 * i64, nor a u32). */
static int map_field(Match *m, int v, int extent, TirMapField *out) {
  int64_t c;
  if (constant_of(m, v, &c)) {
    *out = (TirMapField){-1, c};
    return c >= 1 && (!extent || c < ((int64_t)1 << 31));
  }
  v = uncast(m, v);
  const Type *t = tir_type(m->f, v);
  int bits = dtype_bits(t->elem), fits_i32 = bits < 32 || (bits == 32 && dtype_kind(t->elem) != DK_UINT);
  *out = (TirMapField){param_of(m->f, v), 0};
  return out->param >= 0 && !t->is_ptr && (!extent || fits_i32);
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

/* d as `index < splat(bound)`, the index along one dimension with coefficient 1. */
static int bound_of(Match *m, const TirOp *d, Bound *out) {
  Offset2 o;
  int s = d->code == TIR_CMP && d->kind == CMP_LT ? splatted(m, d->operands.data[1]) : -1;
  int dim = s >= 0 && offset2(m, d->operands.data[0], &o) ? unit_only(&o) : -1;
  if (dim >= 0) *out = (Bound){dim, o.index[dim], s};
  return dim >= 0;
}

/* The mask's conjuncts, at most two, each a bound. */
static int bounds(Match *m, int v, Bound *out, int *n) {
  const TirOp *d = mask_op(m, v);
  if (d && d->code == TIR_AND) return bounds(m, d->operands.data[0], out, n) && bounds(m, d->operands.data[1], out, n);
  if (!d || *n == 2 || !bound_of(m, d, &out[*n])) return 0;
  ++*n;
  return 1;
}

static int same_index(const Index1 *a, const Index1 *b) { return a->start == b->start && a->wrap == b->wrap && a->n == b->n; }

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

int tma_plan_load(TirFunc *f, const AxisInfo *axis, const TirOp *loop, const TirOp *load, const Layout *buffer,
                  TmaLoad *out) {
  Match m = {f, arena_alloc(f->arena, sizeof(TirOp *) * (size_t)(f->types.len + 1))};
  memset(m.def, 0, sizeof(TirOp *) * (size_t)(f->types.len + 1));
  index_defs(&m, f->body);
  const TirBlock *body = loop->regions[0];
  const Type *t = tir_type(f, load->results.data[0]);
  int64_t lb, step;
  if (t->rank != 2 || !buffer || buffer->kind != LAYOUT_NVMMA) return 0;
  if (!constant_of(&m, loop->operands.data[0], &lb) || lb != 0 || !constant_of(&m, loop->operands.data[2], &step))
    return 0;
  int carried = -1, ptr = load->operands.data[0];
  for (int k = 1; k < body->args.len; k++)
    if (body->args.data[k] == ptr) carried = k - 1;
  if (carried < 0) return 0;
  int base;
  Offset2 o;
  if (!pointer(&m, loop->operands.data[3 + carried], &base, &o) || (base = base_param(f, base)) < 0 || !o.has[0] || !o.has[1])
    return 0;
  int inner = unit(&o, 1) ? 1 : unit(&o, 0) ? 0 : -1;
  if (inner < 0 || buffer->order[0] != inner) return 0;
  int outer = 1 - inner, moving;
  int64_t inc, per_iv;
  if (!advance(&m, loop, carried, &o, &moving, &inc)) return 0;
  Bound b[2];
  int nb = 0, dim_value[2] = {-1, -1};
  if (!(load->flags & LOAD_MASK) || !bounds(&m, load->operands.data[1], b, &nb)) return 0;
  for (int i = 0; i < nb; i++) {
    if (!same_index(&b[i].index, &o.index[b[i].dim]) || dim_value[b[i].dim] >= 0) return 0;
    if (b[i].dim != moving) {
      if (o.index[b[i].dim].wrap >= 0) return 0;
      dim_value[b[i].dim] = b[i].bound;
      continue;
    }
    if (o.index[moving].start >= 0 || o.index[moving].wrap >= 0 ||
        !moving_bound(&m, b[i].bound, body->args.data[0], &dim_value[moving], &per_iv) || per_iv * step != inc)
      return 0;
  }
  if (dim_value[moving] < 0 || !nonneg(axis, o.index[0].start) || !nonneg(axis, o.index[1].start)) return 0;
  int fixed = 1 - moving;
  if (dim_value[fixed] < 0) {
    Wrap w = {uncast(&m, o.index[fixed].start), uncast(&m, o.index[fixed].wrap)};
    if (o.index[fixed].wrap < 0 || o.index[fixed].start < 0 || !wrap_is_masked(&m, load, fixed, &w)) return 0;
    dim_value[fixed] = o.index[fixed].wrap;
  }
  /* one box per block of the NVMMA layout: the hardware swizzles a box's rows as the layout does */
  int elem = dtype_bits(t->elem) / 8, width = buffer->swizzle_bytes / elem;
  TirTensorMap map = {base, {{0}}, {0}, {width, (int)t->shape[outer]}, buffer->swizzle_bytes};
  if (!map_field(&m, dim_value[inner], 1, &map.dims[0]) || !map_field(&m, dim_value[outer], 1, &map.dims[1]) ||
      o.coef[outer] < 0 || !map_field(&m, o.coef[outer], 0, &map.stride))
    return 0;
  if (t->shape[inner] % width || t->shape[outer] > 256 || (map.stride.param < 0 && map.stride.value * elem % 16) ||
      (map.stride.param >= 0 && f->params.data[map.stride.param].divisibility * elem % 16))
    return 0;
  vec_push(f->arena, &f->tensor_maps, map);
  out->map = f->tensor_maps.len - 1;
  out->origin[0] = o.index[inner].start;
  out->origin[1] = o.index[outer].start;
  out->moving = moving == inner ? 0 : 1;
  out->per_iv = per_iv;
  for (int i = 0; i < 2; i++) out->extent[i] = map.dims[i].param >= 0 ? f->params.data[map.dims[i].param].value : -1;
  out->bytes = (int)(t->shape[0] * t->shape[1] * elem);
  return 1;
}
