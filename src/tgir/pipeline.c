/* pipeline: software pipelining of the k-loop of a dot (Triton's
 * pipeliner for plain pointer loads: cp.async, multi-buffering).
 *
 * In an innermost `for` with constant positive step and num_stages S > 1
 * (the loop's own num_stages from tl.range, else the kernel's), a load
 * whose tile only goes to shared memory (local_alloc, read by local_load
 * or a wgmma dot) becomes an async_copy into one of S buffers, issued
 * D = S - 1 iterations ahead:
 *
 *     bufs = local_alloc : T[S, ...]               (per pipelined load)
 *     for j in 0 .. D-1:                           (prologue)
 *       the load's address and mask for iteration j; async_copy into
 *       bufs[j], issued only if iteration j exists; async_commit
 *     for iv ... iter(..., ins = D % S, ext = 0):
 *       async_wait pending=D-1                     (iteration iv's copies are in; barrier)
 *       address and mask for iteration iv + D*step; async_copy into
 *       bufs[ins], issued only if that iteration exists; async_commit
 *       the rest, reading bufs[ext] where it read the local_alloc
 *       yield ..., ins + 1 mod S, ext + 1 mod S
 *
 * Copies for iterations past the end are not issued (not merely masked:
 * a masked-off cp.async still writes zeros), so when the loop ends every
 * copy it issued has been waited for and the buffers are free at once.
 *
 * The ops computing a pipelined load's pointers and mask (stage 0: its
 * backward slice in the body, and the advances of the loop-carried values
 * it uses) run D iterations ahead; their carried values start D advances
 * on, so they must not be used by the rest of the body or after the loop.
 * A stage-0 value the rest also uses is recomputed there if it depends on
 * the induction variable and invariants only.  Slot D of the buffers is
 * written while iteration iv reads slot iv % S: the barrier of the wait
 * separates the reads of the slot from its rewrite one iteration later.
 * (A wgmma left in flight changes that, and occupancy may ask for a
 * buffer more or less: plan_buffers.)
 *
 * A carried value stage 0 advances that the rest of the body or the code
 * after the loop also uses is carried twice: ahead for stage 0, and for
 * this iteration, its advance recomputed from that copy.
 *
 * A small load whose tile the loop uses in registers on its way to a dot
 * (an attention backward's row statistics) is staged: copied by cp.async
 * into buffers of its own and read back by local_load where it was, where
 * the loop's accumulators leave registers for its addresses ahead.
 *
 * A load cp.async cannot move (a vector narrower than 4 bytes, a
 * non-zero `other`) is copied through registers where that pays
 * (register_copies_pay): stage 0 loads it, and a local_store marked
 * free_slot puts it in slot `ins` at the end of the iteration, which the
 * next iteration's barrier makes visible.  A volatile load is not
 * pipelined, nor one whose slice reads memory or depends on another
 * pipelined load.
 *
 * Requires: GPU-layout IR after stage-operands (and accelerate-matmul).
 * Guarantees: the same values computed; masked-off copies write zeros as
 *   `other` 0 does; every copy of a buffer completes before it is read.
 * Invalidates: the pipelined loops' ops and value ids. */
#include "passes.h"

#include <string.h>

typedef struct Pipe {
  TirFunc *f;
  const AxisInfo *axis;
  int n;                     /* value ids before this loop's rewrite */
  TirOp **def;               /* per value: its defining op in the loop body (NULL elsewhere) */
  int *uses;                 /* per value: uses in the whole function */
  char *stage0;              /* per value: computed by stage 0 */
  int *map;                  /* per value: its copy in the code being made */
  TirOp *loop;
  TirBlock *body;
  Vec(TirOp *) loads;        /* the pipelined loads */
  char through_registers[64]; /* per pipelined load: copied by ld.global and st.shared, not cp.async */
  char staged[64];           /* per pipelined load: its tile is used in registers, read back by local_load */
  char *staged_slice;        /* per value: computed for a staged load's copy (its address, mask, the load) */
  char dual[64];             /* per carried value running ahead: the rest uses it too, carried twice */
  const char *ahead;         /* per carried value: stage 0 advances it */
  int ahead_arg[64], dual_arg[64]; /* per carried value: the new body's argument, and its second one if dual */
  OpList out;                /* ops being emitted */
  int stages, distance;      /* buffers per load; iterations a copy runs ahead */
  const TgirOptions *o;
  TirOp *async_dot;          /* a wgmma dot left in flight across iterations (dot_wait pending=1), or NULL */
  TirOp *carried_dot;        /* a register-A wgmma dot left in flight to the next iteration's first wait, or NULL */
  int carried;               /* its result's place among the carried values */
  int carried_value;         /* that value in the body, or its copy in another layout that only renames registers */
  const TirOp *carried_use;  /* the op of the body using carried_value, the one use of the chain */
  const TirOp *carried_waiter; /* the last wgmma dot before it, whose wait waits for both, or NULL */
  int late_refill;           /* the copies are issued after the iteration's reads (an async dot's wait) and a barrier */
  int tma;                   /* the loads come by TMA copies (tma_loads), completing on mbarriers */
  TmaLoad tma_loads[64];
} Pipe;

static Type *T(Pipe *P, int v) { return tir_type(P->f, v); }

static int64_t tile_bytes(Pipe *P, int v) { return type_numel(T(P, v)) * dtype_bits(T(P, v)->elem) / 8; }

/* ---- building ops ---- */

static int emit_value(Pipe *P, TirCode code, Type *t, const Layout *l, const int *operands, int n, Loc loc) {
  TirOp *op = tir_op_new(P->f, code, loc);
  for (int i = 0; i < n; i++) tir_add_operand(P->f, op, operands[i]);
  int r = tir_add_result(P->f, op, t);
  tir_set_layout(P->f, r, l);
  vec_push(P->f->arena, &P->out, op);
  return r;
}

static int constant(Pipe *P, DType dt, int64_t v, Loc loc) {
  TirOp *op = tir_op_new(P->f, TIR_CONSTANT, loc);
  op->ival = v;
  op->fval = (double)v;
  int r = tir_add_result(P->f, op, type_scalar(P->f->arena, dt));
  vec_push(P->f->arena, &P->out, op);
  return r;
}

static int binary(Pipe *P, TirCode code, int kind, int x, int y, Loc loc) {
  int ops[2] = {x, y};
  Type *t = code == TIR_CMP ? type_with_elem(P->f->arena, T(P, x), DT_I1, 0) : T(P, x);
  int r = emit_value(P, code, t, tir_layout(P->f, x), ops, 2, loc);
  P->out.data[P->out.len - 1]->kind = kind;
  return r;
}

static void emit_plain(Pipe *P, TirCode code, int64_t ival, const int *operands, int n, Loc loc) {
  TirOp *op = tir_op_new(P->f, code, loc);
  op->ival = ival;
  for (int i = 0; i < n; i++) tir_add_operand(P->f, op, operands[i]);
  vec_push(P->f->arena, &P->out, op);
}

static int mapped(Pipe *P, int v) { return v < P->n && P->map[v] >= 0 ? P->map[v] : v; }

/* Emission goes to a new list; the one it went to comes back. */
static OpList begin_list(Pipe *P) {
  OpList outer = P->out;
  memset(&P->out, 0, sizeof P->out);
  return outer;
}

/* The ops emitted since begin_list become b's; emission goes back to `outer`. */
static void end_list(Pipe *P, TirBlock *b, OpList outer) {
  b->ops.data = P->out.data, b->ops.len = P->out.len, b->ops.cap = P->out.cap;
  P->out = outer;
}

/* A copy of op with its operands mapped; its results map to the copy's. */
static TirOp *clone(Pipe *P, const TirOp *op) {
  TirOp *c = tir_op_new(P->f, op->code, op->loc);
  *c = *op;
  memset(&c->operands, 0, sizeof c->operands);
  memset(&c->results, 0, sizeof c->results);
  for (int k = 0; k < op->operands.len; k++) tir_add_operand(P->f, c, mapped(P, op->operands.data[k]));
  for (int k = 0; k < op->results.len; k++) {
    int r = tir_add_result(P->f, c, T(P, op->results.data[k]));
    tir_set_layout(P->f, r, tir_layout(P->f, op->results.data[k]));
    P->map[op->results.data[k]] = r;
  }
  vec_push(P->f->arena, &P->out, c);
  return c;
}

/* ---- which loops and loads ---- */

/* The widest vector of elements a thread of the load's layout copies at
 * once, in bytes, as the lowering will choose it. */
static int vector_bytes(Pipe *P, const TirOp *load) {
  int ptr = load->operands.data[0];
  const Layout *l = tir_layout(P->f, ptr);
  const Type *t = T(P, ptr);
  if (!l || l->kind != LAYOUT_BLOCKED) return 0;
  int d = l->order[0], elem = dtype_bits(t->elem) / 8;
  const AxisInfo *a = &P->axis[ptr];
  int64_t n = l->size_per_thread[d];
  if (a->contiguity[d] < n) n = a->contiguity[d];
  if (a->divisibility[d] / elem < n) n = a->divisibility[d] / elem;
  if (load->flags & LOAD_MASK && P->axis[load->operands.data[1]].constancy[d] < n)
    n = P->axis[load->operands.data[1]].constancy[d];
  if (16 / elem < n) n = 16 / elem;
  return (int)n * elem;
}

static const TirOp *def_anywhere(const TirBlock *b, int v) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++)
      if (op->results.data[k] == v) return op;
    for (int r = 0; r < 2; r++) {
      const TirOp *d = op->regions[r] ? def_anywhere(op->regions[r], v) : NULL;
      if (d) return d;
    }
  }
  return NULL;
}

static int is_zero(Pipe *P, int v) {
  const TirOp *d = def_anywhere(P->f->body, v);
  return d && d->code == TIR_CONSTANT && d->ival == 0 && d->fval == 0.0;
}

/* The local_alloc in the body that takes the load's tile, if that is its only use. */
static TirOp *staging_of(Pipe *P, const TirOp *load) {
  int v = load->results.data[0];
  if (P->uses[v] != 1) return NULL;
  for (int i = 0; i < P->body->ops.len; i++) {
    TirOp *op = P->body->ops.data[i];
    if (op->code == TIR_LOCAL_ALLOC && op->operands.len == 1 && op->operands.data[0] == v) return op;
  }
  return NULL;
}

/* How a load is pipelined: COPY_ASYNC by cp.async; COPY_REGISTERS where
 * cp.async cannot move it (vectors narrower than 4 bytes, a non-zero
 * `other`): loaded into registers with the cp.async copies and stored to
 * its buffer at the end of the iteration; NOT_PIPELINED when volatile or
 * when its tile goes elsewhere than shared memory. */
enum { NOT_PIPELINED, COPY_ASYNC, COPY_REGISTERS, COPY_NARROW, COPY_STAGED };

/* The most bytes a load used in registers takes through shared memory:
 * row statistics and scales, not operands. */
enum { STAGED_BYTES = 4096 };

/* Whether the loop's dots use v, through any ops of the body. */
static int feeds_dot(Pipe *P, int v) {
  char *reached = arena_alloc(P->f->arena, (size_t)P->n + 1);
  memset(reached, 0, (size_t)P->n + 1);
  reached[v] = 1;
  for (int i = 0; i < P->body->ops.len; i++) {
    const TirOp *op = P->body->ops.data[i];
    int in = 0;
    for (int k = 0; k < op->operands.len; k++) in |= op->operands.data[k] < P->n && reached[op->operands.data[k]];
    if (in && op->code == TIR_DOT) return 1;
    for (int k = 0; in && k < op->results.len; k++) reached[op->results.data[k]] = 1;
  }
  return 0;
}

/* COPY_STAGED: a small load whose tile the loop uses in registers (an
 * attention backward's m and Di) on its way to a dot, copied by cp.async
 * with the operands and read back by local_load where it was loaded, as
 * Triton's pipeliner moves every load feeding a dot.  Elements of 4 bytes
 * or more: any vector of them is one cp.async. */
static int staged_kind(Pipe *P, const TirOp *load) {
  int v = load->results.data[0];
  if ((load->flags & LOAD_OTHER) && !is_zero(P, load->operands.data[2])) return NOT_PIPELINED;
  if (T(P, v)->rank >= MAX_RANK || dtype_bits(T(P, v)->elem) < 32 || tile_bytes(P, v) > STAGED_BYTES || !feeds_dot(P, v))
    return NOT_PIPELINED;
  return COPY_STAGED;
}

/* COPY_NARROW: cp.async cannot move it (vectors narrower than 4 bytes, as
 * the masks of a descriptor's load with unhinted extents leave them) but a
 * TMA copy may: zero `other`. */
static int copy_kind(Pipe *P, const TirOp *load) {
  if (load->code != TIR_LOAD || (load->flags & LOAD_VOLATILE)) return NOT_PIPELINED;
  if (!staging_of(P, load)) return T(P, load->results.data[0])->rank ? staged_kind(P, load) : NOT_PIPELINED;
  if ((load->flags & LOAD_OTHER) && !is_zero(P, load->operands.data[2])) return COPY_REGISTERS;
  return vector_bytes(P, load) >= 4 ? COPY_ASYNC : COPY_NARROW;
}

/* ---- stage 0: what moves ahead ---- */

/* Marks the body ops v depends on as stage 0; 0 if one cannot move (side
 * effects, regions, loads other than pipelined ones). */
static int mark(Pipe *P, int v) {
  TirOp *d = v < P->n ? P->def[v] : NULL;
  if (!d || P->stage0[v]) return 1;
  int pipelined = 0;
  for (int i = 0; i < P->loads.len; i++) pipelined |= P->loads.data[i] == d;
  if ((!(tir_op_flags(d->code) & PURE) && !pipelined) || d->regions[0] || d->code == TIR_DOT) return 0;
  for (int k = 0; k < d->results.len; k++) P->stage0[d->results.data[k]] = 1;
  for (int k = 0; k < d->operands.len; k++)
    if (!mark(P, d->operands.data[k])) return 0;
  return 1;
}

static int carried_index(Pipe *P, int v) {
  for (int k = 1; k < P->body->args.len; k++)
    if (P->body->args.data[k] == v) return k - 1;
  return -1;
}

static int load_index(Pipe *P, const TirOp *op) {
  for (int i = 0; i < P->loads.len; i++)
    if (P->loads.data[i] == op) return i;
  return -1;
}

static const TirOp *terminator(const TirBlock *b) { return b->ops.data[b->ops.len - 1]; }

/* Stage 0: the loads' slices and the advances of the carried values they
 * use, to a fixed point; ahead[k]: carried value k runs ahead. */
static int stage0(Pipe *P, char *ahead) {
  for (int i = 0; i < P->loads.len; i++)
    if (!mark(P, P->loads.data[i]->results.data[0])) return 0;
  const TirOp *yield = terminator(P->body);
  for (int changed = 1; changed;) {
    changed = 0;
    for (int i = 0; i < P->body->ops.len; i++) {
      const TirOp *op = P->body->ops.data[i];
      if (!op->results.len || !P->stage0[op->results.data[0]]) continue;
      for (int k = 0; k < op->operands.len; k++) {
        int c = carried_index(P, op->operands.data[k]);
        if (c < 0 || ahead[c]) continue;
        ahead[c] = changed = 1;
        if (!mark(P, yield->operands.data[c])) return 0;
      }
    }
  }
  return 1;
}

/* The rest of the body (or the yield of a value that does not run ahead)
 * uses v: a stage-0 value is recomputed there (any value of the body with
 * `whole`, in a recomputed value's slice), a carried value stage 0
 * advances is carried twice, for stage 0 and for the rest.  Whether that
 * marked something new. */
static int used_by_rest(Pipe *P, int v, const char *ahead, char *recompute, int whole) {
  int c = carried_index(P, v);
  if (c >= 0 && ahead[c] && !P->dual[c]) return P->dual[c] = 1;
  if (v >= P->n || !P->def[v] || recompute[v] || (!P->stage0[v] && !whole) || P->def[v]->code == TIR_LOAD) return 0;
  return recompute[v] = 1;
}

/* Every other use of a value stage 0 computes or advances is allowed:
 * stage-0 values (but loads) are recomputed where the rest uses them, with
 * the slices they need; a carried value that runs ahead and that the rest
 * or the code after the loop uses is carried twice (dual), its advance
 * recomputed for the rest too (an attention backward's row offset, which
 * gives both m's address and the causal mask). */
static int stage0_is_private(Pipe *P, const char *ahead, char *recompute) {
  const TirOp *yield = terminator(P->body);
  memset(P->dual, 0, sizeof P->dual);
  for (int k = 0; k < P->loop->results.len; k++) {
    int y = yield->operands.data[k];
    if (ahead[k] && y < P->n && P->def[y] && !P->stage0[y]) return 0;
    if (ahead[k] && P->uses[P->loop->results.data[k]]) P->dual[k] = 1;
    if (!ahead[k]) used_by_rest(P, y, ahead, recompute, 0);
  }
  for (int i = 0; i < P->body->ops.len - 1; i++) {
    const TirOp *op = P->body->ops.data[i];
    if (op->results.len && P->stage0[op->results.data[0]]) continue;
    for (int k = 0; k < op->operands.len; k++) used_by_rest(P, op->operands.data[k], ahead, recompute, 0);
  }
  for (int changed = 1; changed;) { /* a recomputed value's slice is recomputed whole */
    changed = 0;
    for (int c = 0; c < P->loop->results.len; c++)
      if (P->dual[c]) changed |= used_by_rest(P, yield->operands.data[c], ahead, recompute, 1);
    for (int i = P->body->ops.len - 1; i >= 0; i--) {
      const TirOp *op = P->body->ops.data[i];
      if (!op->results.len || !recompute[op->results.data[0]]) continue;
      for (int k = 0; k < op->operands.len; k++) changed |= used_by_rest(P, op->operands.data[k], ahead, recompute, 1);
    }
  }
  return 1;
}

/* Whether stage 0 uses a staged load's tile, which it cannot have ahead. */
static int stage0_uses_staged(Pipe *P) {
  for (int i = 0; i < P->body->ops.len; i++) {
    const TirOp *op = P->body->ops.data[i];
    if (!op->results.len || !P->stage0[op->results.data[0]]) continue;
    for (int k = 0; k < op->operands.len; k++) {
      int v = op->operands.data[k], j = v < P->n && P->def[v] ? load_index(P, P->def[v]) : -1;
      if (j >= 0 && P->staged[j]) return 1;
    }
  }
  return 0;
}

/* ---- the rewrite ---- */

typedef struct Ahead {
  int iv;                    /* the iteration stage 0 computes for */
  int valid;                 /* i1: that iteration exists (iv < ub) */
} Ahead;

static int iv_plus(Pipe *P, int iv, int64_t delta) {
  if (!delta) return iv;
  return binary(P, TIR_ADD, 0, iv, constant(P, T(P, iv)->elem, delta, P->loop->loc), P->loop->loc);
}

static int widened(Pipe *P, int v) {
  if (dtype_bits(T(P, v)->elem) >= 64) return v;
  DType wide = dtype_kind(T(P, v)->elem) == DK_UINT ? DT_U64 : DT_I64;
  return emit_value(P, TIR_CAST, type_scalar(P->f->arena, wide), NULL, &v, 1, P->loop->loc);
}

/* Iteration iv + delta, and whether it exists: compared in 64 bits, where
 * iv + delta cannot wrap past the bound.  (The shorter unsigned 32-bit
 * ub - iv > delta made the branch around the copies non-uniform: D2 of
 * docs/decisions.md.) */
static Ahead ahead_of(Pipe *P, int iv, int64_t delta) {
  Ahead a;
  a.iv = iv_plus(P, iv, delta);
  int wide = delta ? iv_plus(P, widened(P, iv), delta) : iv, ub = P->loop->operands.data[1];
  a.valid = binary(P, TIR_CMP, CMP_LT, wide, delta ? widened(P, ub) : ub, P->loop->loc);
  return a;
}

/* The load's mask (mapped), or all true, in the pointers' layout. */
static int copy_mask(Pipe *P, const TirOp *load) {
  if (load->flags & LOAD_MASK) return mapped(P, load->operands.data[1]);
  int ptr = load->operands.data[0];
  TirOp *op = tir_op_new(P->f, TIR_CONSTANT, load->loc);
  op->ival = 1;
  op->fval = 1;
  int r = tir_add_result(P->f, op, type_with_elem(P->f->arena, T(P, ptr), DT_I1, 0));
  tir_set_layout(P->f, r, tir_layout(P->f, ptr));
  vec_push(P->f->arena, &P->out, op);
  return r;
}

/* What stage 0 issued for one iteration, for the copies made later: per
 * pipelined load its pointers and mask (mapped then: the rest of the body
 * may map them again) and, copied through registers, its loaded tile. */
typedef struct Issued {
  int valid, slot;
  int ptr[64], mask[64], tile[64];
} Issued;

enum { COPIES_NOW = 1, STORES_NOW = 2 };

static int slot_view(Pipe *P, const TirOp *load, int buffers, int slot) {
  const Layout *bl = tir_layout(P->f, buffers);
  int view_ops[2] = {buffers, slot};
  return emit_value(P, TIR_MEMDESC_INDEX, T(P, load->results.data[0]), layout_shared_slot(P->f->layout_table, bl),
                    view_ops, 2, load->loc);
}

static void emit_copy(Pipe *P, int k, const Issued *is, const int *bufs) {
  const TirOp *load = P->loads.data[k];
  int view = slot_view(P, load, bufs[k], is->slot);
  if (P->through_registers[k]) {
    int store[2] = {is->tile[k], view};
    emit_plain(P, TIR_LOCAL_STORE, 0, store, 2, load->loc);
    P->out.data[P->out.len - 1]->flags = FREE_SLOT;
    return;
  }
  int copy[4] = {is->ptr[k], view, is->mask[k], is->valid};
  emit_plain(P, TIR_ASYNC_COPY, 0, copy, 4, load->loc);
  P->out.data[P->out.len - 1]->flags = LOAD_MASK;
}

/* The load of a copy through registers, masked off where the iteration
 * does not exist: the load cloned, with the mask and `other` it had. */
static int emit_register_load(Pipe *P, const TirOp *load, const Issued *is, int k) {
  int ptr = load->operands.data[0];
  int valid = emit_value(P, TIR_SPLAT, type_with_elem(P->f->arena, T(P, ptr), DT_I1, 0), tir_layout(P->f, ptr),
                         &is->valid, 1, load->loc);
  int mask = binary(P, TIR_AND, 0, is->mask[k], valid, load->loc);
  TirOp *c = clone(P, load);
  int other = load->flags & LOAD_OTHER ? c->operands.data[2] : -1;
  c->operands.len = 0;
  tir_add_operand(P->f, c, is->ptr[k]);
  tir_add_operand(P->f, c, mask);
  if (other >= 0) tir_add_operand(P->f, c, other);
  c->flags |= LOAD_MASK;
  return c->results.data[0];
}

/* The body's ops `marked` (stage 0, or a TMA loop's staged slices) for
 * iteration a->iv into slot `slot` of each buffer; the ops map the body's
 * iv to a->iv.  The cp.async copies (and their commit) go out now with
 * COPIES_NOW, the stores of the copies through registers with
 * STORES_NOW; the others are left to emit_copies. */
static void emit_marked(Pipe *P, const char *marked, const Ahead *a, int slot, const int *bufs, Issued *is, int now) {
  P->map[P->body->args.data[0]] = a->iv;
  is->valid = a->valid;
  is->slot = slot;
  for (int i = 0; i < P->body->ops.len; i++) {
    const TirOp *op = P->body->ops.data[i];
    if (!op->results.len || !marked[op->results.data[0]]) continue;
    int k = load_index(P, op);
    if (k < 0) { /* for an iteration that may not exist, where widen's ranges do not hold */
      clone(P, op)->flags &= ~NO_WRAP;
      continue;
    }
    is->ptr[k] = mapped(P, op->operands.data[0]);
    is->mask[k] = copy_mask(P, op);
    if (P->through_registers[k]) is->tile[k] = emit_register_load(P, op, is, k);
    if (now & (P->through_registers[k] ? STORES_NOW : COPIES_NOW)) emit_copy(P, k, is, bufs);
  }
  if (now & COPIES_NOW) emit_plain(P, TIR_ASYNC_COMMIT, 0, NULL, 0, P->loop->loc);
}

static void emit_stage0(Pipe *P, const Ahead *a, int slot, const int *bufs, Issued *is, int now) {
  emit_marked(P, P->stage0, a, slot, bufs, is, now);
}

static int has_register_copies(const Pipe *P) {
  for (int k = 0; k < P->loads.len; k++)
    if (P->through_registers[k]) return 1;
  return 0;
}

/* The copies emit_stage0 left: cp.async (and the commit) with `copies`,
 * the stores of copies through registers with `stores`. */
static void emit_copies(Pipe *P, const Issued *is, const int *bufs, int copies, int stores) {
  for (int k = 0; k < P->loads.len; k++)
    if (P->through_registers[k] ? stores : copies) emit_copy(P, k, is, bufs);
  if (copies) emit_plain(P, TIR_ASYNC_COMMIT, 0, NULL, 0, P->loop->loc);
}

/* x + 1, back to 0 at S. */
static int next_slot(Pipe *P, int x) {
  Loc loc = P->loop->loc;
  int one = binary(P, TIR_ADD, 0, x, constant(P, DT_I32, 1, loc), loc);
  int wrap = binary(P, TIR_CMP, CMP_GE, one, constant(P, DT_I32, P->stages, loc), loc);
  int sel[3] = {wrap, constant(P, DT_I32, 0, loc), one};
  return emit_value(P, TIR_SELECT, T(P, x), NULL, sel, 3, loc);
}

/* The previous iteration's carried dot is done: one dot_wait pending=0
 * after `waiter` (this iteration's wgmma before the first use of the
 * carried value; wgmma groups complete in order) takes both results, or
 * one before that use takes the carried value alone. */
static void wait_carried(Pipe *P, const TirOp *waiter) {
  int ops[2], n = 0;
  if (waiter) ops[n++] = waiter->results.data[0];
  ops[n++] = P->carried_value;
  TirOp *w = tir_op_new(P->f, TIR_DOT_WAIT, (waiter ? waiter : P->carried_use)->loc);
  w->ival = 0;
  for (int i = 0; i < n; i++) {
    int v = mapped(P, ops[i]);
    tir_add_operand(P->f, w, v);
    int r = tir_add_result(P->f, w, T(P, v));
    tir_set_layout(P->f, r, tir_layout(P->f, v));
    P->map[ops[i]] = r;
  }
  vec_push(P->f->arena, &P->out, w);
}

/* A staged load's tile, read back from this iteration's slot where the
 * load was. */
static void read_staged(Pipe *P, const TirOp *load, int buffers, int slot) {
  int v = load->results.data[0], view = slot_view(P, load, buffers, slot);
  P->map[v] = emit_value(P, TIR_LOCAL_LOAD, T(P, v), tir_layout(P->f, v), &view, 1, load->loc);
}

static void emit_rest(Pipe *P, const char *recompute, const int *bufs, int ext) {
  for (int i = 0; i < P->body->ops.len; i++) { /* stage-0 values the rest uses, for this iteration */
    const TirOp *op = P->body->ops.data[i];
    if (op->results.len && recompute[op->results.data[0]]) clone(P, op);
  }
  for (int i = 0; i < P->body->ops.len - 1; i++) {
    const TirOp *op = P->body->ops.data[i];
    if (op->results.len && P->stage0[op->results.data[0]]) {
      int k = load_index(P, op);
      if (k >= 0 && P->staged[k]) read_staged(P, op, bufs[k], ext);
      continue;
    }
    int k = -1;
    for (int j = 0; j < P->loads.len && op->code == TIR_LOCAL_ALLOC; j++)
      if (staging_of(P, P->loads.data[j]) == op) k = j;
    if (k < 0) {
      if (P->carried_dot && op == P->carried_use && !P->carried_waiter) wait_carried(P, NULL);
      clone(P, op);
      if (P->carried_dot && op == P->carried_waiter) wait_carried(P, op);
      if (op == P->async_dot) { /* the previous iteration's wgmma is done: its buffers can be refilled */
        int d = P->map[op->results.data[0]];
        int w = emit_value(P, TIR_DOT_WAIT, T(P, d), tir_layout(P->f, d), &d, 1, op->loc);
        P->out.data[P->out.len - 1]->ival = 1;
        P->map[op->results.data[0]] = w;
      }
      continue;
    }
    int view_ops[2] = {bufs[k], ext};
    P->map[op->results.data[0]] = emit_value(P, TIR_MEMDESC_INDEX, T(P, op->results.data[0]),
                                             tir_layout(P->f, op->results.data[0]), view_ops, 2, op->loc);
  }
}

/* A staged load's buffer: row-major, unswizzled (its reads are a few
 * words a thread, mostly broadcasts). */
static const Layout *staged_layout(Pipe *P, const Type *t) {
  int order[MAX_RANK];
  const char *why;
  for (int d = 0; d < t->rank; d++) order[d] = t->rank - 1 - d;
  return layout_shared(P->f->layout_table, t->rank, 1, 1, 1, order, &why);
}

static int emit_buffers(Pipe *P, int k) {
  const TirOp *load = P->loads.data[k], *alloc = P->staged[k] ? NULL : staging_of(P, load);
  int tile = alloc ? alloc->results.data[0] : load->results.data[0];
  const Type *t = T(P, tile);
  int64_t shape[MAX_RANK];
  shape[0] = P->stages;
  for (int d = 0; d < t->rank; d++) shape[d + 1] = t->shape[d];
  Type *bt = type_tile(P->f->arena, type_scalar(P->f->arena, t->elem), t->rank + 1, shape);
  const Layout *l = alloc ? tir_layout(P->f, tile) : staged_layout(P, t);
  return emit_value(P, TIR_LOCAL_ALLOC, bt, layout_shared_buffers(P->f->layout_table, l), NULL, 0,
                    alloc ? alloc->loc : load->loc);
}

/* The prologue: stage 0 of iterations 0 .. D-1, the advanced carried
 * values left in map. */
static void emit_prologue(Pipe *P, const int *bufs, const char *ahead, int64_t step) {
  const TirOp *yield = terminator(P->body);
  for (int c = 0; c < P->loop->results.len; c++) P->map[P->body->args.data[1 + c]] = P->loop->operands.data[3 + c];
  for (int j = 0; j < P->distance; j++) {
    Ahead a = ahead_of(P, P->loop->operands.data[0], j * step);
    Issued is;
    emit_stage0(P, &a, constant(P, DT_I32, j, P->loop->loc), bufs, &is, COPIES_NOW | STORES_NOW);
    int next[64];
    for (int c = 0; c < P->loop->results.len && c < 64; c++) next[c] = mapped(P, yield->operands.data[c]);
    for (int c = 0; c < P->loop->results.len && c < 64; c++)
      if (ahead[c]) P->map[P->body->args.data[1 + c]] = next[c];
  }
}

/* The new body: wait, stage 0 for iv + D*step, the rest, the stores of the
 * copies through registers, rotated slots; with late_refill, the copies
 * after the rest (its reads done, the previous iteration's wgmma waited
 * for) and a barrier: no thread refills a slot another warp may still be
 * reading.  There stage 0 stays after the barrier too, unless loads
 * through registers are to start at the top. */
/* The new body's arguments: the induction variable (*iv), the carried
 * values but those `dropped` marks (NULL: none), to which the old ones map,
 * with `dual` a second one for each carried value running ahead that the
 * rest uses (P->dual_arg), then n_slots i32 values (slots). */
static TirBlock *new_body(Pipe *P, const char *dropped, int dual, int n_slots, int *iv, int *slots) {
  TirBlock *nb = tir_block_new(P->f);
  const TirBlock *old = P->body;
  *iv = tir_value_new(P->f, T(P, old->args.data[0]), NULL);
  vec_push(P->f->arena, &nb->args, *iv);
  for (int pass = 0; pass < 2; pass++)
    for (int c = 1; c < old->args.len; c++) {
      if (pass ? !dual || !P->dual[c - 1] : dropped && dropped[c - 1]) continue;
      int a = tir_value_new(P->f, T(P, old->args.data[c]), NULL);
      tir_set_layout(P->f, a, tir_layout(P->f, old->args.data[c]));
      vec_push(P->f->arena, &nb->args, a);
      if (pass) P->dual_arg[c - 1] = a;
      else P->map[old->args.data[c]] = P->ahead_arg[c - 1] = a;
    }
  for (int i = 0; i < n_slots; i++) {
    slots[i] = tir_value_new(P->f, type_scalar(P->f->arena, DT_I32), NULL);
    vec_push(P->f->arena, &nb->args, slots[i]);
  }
  return nb;
}

/* The rest computes with the carried values of this iteration: the dual
 * ones' second arguments; stage 0 with the first. */
static void use_current(Pipe *P, int current) {
  for (int c = 1; c < P->body->args.len; c++)
    if (P->dual[c - 1]) P->map[P->body->args.data[c]] = current ? P->dual_arg[c - 1] : P->ahead_arg[c - 1];
}

/* The old yield's operands as the code emitted so far computes them. */
static void take_yield(Pipe *P, int *values) {
  const TirOp *yield = terminator(P->body);
  for (int k = 0; k < yield->operands.len && k < 64; k++) values[k] = mapped(P, yield->operands.data[k]);
}

/* The new body's yield: per carried value but those `dropped` marks, its
 * next value (`ahead_next` for those stage 0 advances when given, else
 * `current`), the dual ones' current next values, then the slots' next
 * values. */
static void emit_yield(Pipe *P, const char *dropped, const int *ahead_next, const int *current, const int *slots,
                       int n_slots) {
  const TirOp *yield = terminator(P->body);
  TirOp *y = tir_op_new(P->f, TIR_YIELD, yield->loc);
  for (int k = 0; k < yield->operands.len; k++)
    if (!dropped || !dropped[k]) tir_add_operand(P->f, y, ahead_next && P->ahead[k] ? ahead_next[k] : current[k]);
  for (int k = 0; ahead_next && k < yield->operands.len; k++)
    if (P->dual[k]) tir_add_operand(P->f, y, current[k]);
  for (int i = 0; i < n_slots; i++) tir_add_operand(P->f, y, slots[i]);
  vec_push(P->f->arena, &P->out, y);
}

static TirBlock *emit_body(Pipe *P, int *bufs, const char *recompute, int64_t step, int *ins, int *ext) {
  const TirBlock *old = P->body;
  int iv, slots[2], ahead_next[64], current[64];
  TirBlock *nb = new_body(P, NULL, 1, 2, &iv, slots);
  *ins = slots[0], *ext = slots[1];
  emit_plain(P, TIR_ASYNC_WAIT, P->distance - 1, bufs, P->loads.len, P->loop->loc);
  Ahead a = ahead_of(P, iv, P->distance * step);
  Issued is;
  int early = !P->late_refill || has_register_copies(P);
  if (early) {
    emit_stage0(P, &a, *ins, bufs, &is, P->late_refill ? 0 : COPIES_NOW);
    take_yield(P, ahead_next);
  }
  P->map[old->args.data[0]] = iv;
  use_current(P, 1);
  emit_rest(P, recompute, bufs, *ext);
  take_yield(P, current);
  use_current(P, 0);
  if (P->late_refill) emit_plain(P, TIR_BARRIER, 0, NULL, 0, P->loop->loc);
  if (early) emit_copies(P, &is, bufs, P->late_refill, 1);
  else {
    emit_stage0(P, &a, *ins, bufs, &is, COPIES_NOW);
    take_yield(P, ahead_next);
  }
  int next[2] = {next_slot(P, *ins), next_slot(P, *ext)};
  emit_yield(P, NULL, ahead_next, current, next, 2);
  return nb;
}

/* The carried accumulator of the in-flight wgmma, ready after the loop;
 * results: the loop's results as the old body's yield orders them. */
static void finish_async_dot(Pipe *P, const TirOp *dot, const int *results) {
  const TirOp *yield = terminator(P->body);
  for (int k = 0; k < yield->operands.len; k++) {
    if (yield->operands.data[k] != dot->results.data[0]) continue;
    int r = results[k];
    int w = emit_value(P, TIR_DOT_WAIT, T(P, r), tir_layout(P->f, r), &r, 1, P->loop->loc);
    TirOp *wait = P->out.data[P->out.len - 1];
    wait->ival = 0;
    tir_replace_uses(P->f->body, r, w, wait);
  }
}

static void rewrite_loop(Pipe *P, const char *ahead, const char *recompute, int64_t step) {
  TirOp *loop = P->loop;
  int bufs[64];
  for (int k = 0; k < P->loads.len; k++) bufs[k] = emit_buffers(P, k);
  int carried = loop->results.len, init[64];
  for (int c = 0; c < carried; c++) init[c] = loop->operands.data[3 + c];
  emit_prologue(P, bufs, ahead, step);
  for (int c = 0; c < carried; c++)
    if (ahead[c]) loop->operands.data[3 + c] = P->map[P->body->args.data[1 + c]];
  for (int c = 0; c < carried; c++)
    if (P->dual[c]) tir_add_operand(P->f, loop, init[c]);
  tir_add_operand(P->f, loop, constant(P, DT_I32, P->distance % P->stages, loop->loc));
  tir_add_operand(P->f, loop, constant(P, DT_I32, 0, loop->loc));
  OpList outer = begin_list(P);
  int ins, ext;
  TirBlock *nb = emit_body(P, bufs, recompute, step, &ins, &ext);
  end_list(P, nb, outer);
  loop->regions[0] = nb;
  for (int c = 0; c < carried; c++) { /* the code after the loop takes the dual values' second copies */
    if (!P->dual[c]) continue;
    int r = tir_add_result(P->f, loop, T(P, loop->results.data[c]));
    tir_set_layout(P->f, r, tir_layout(P->f, loop->results.data[c]));
    tir_replace_uses(P->f->body, loop->results.data[c], r, NULL);
  }
  tir_add_result(P->f, loop, type_scalar(P->f->arena, DT_I32));
  tir_add_result(P->f, loop, type_scalar(P->f->arena, DT_I32));
  vec_push(P->f->arena, &P->out, loop);
  if (P->async_dot) finish_async_dot(P, P->async_dot, loop->results.data);
  if (P->carried_dot) finish_async_dot(P, P->carried_dot, loop->results.data);
}

/* ---- TMA copies ----
 *
 * With every pipelined load a TMA box (tma.c), the copies need no
 * pointers: one thread issues each (with its barrier's expected bytes)
 * from the box origin, and the loop waits on the slot's mbarrier instead
 * of cp.async groups.  Stage 0 is then only the origins, computed from the
 * iteration ahead; the carried pointers that ran ahead are dropped.
 *
 *     bars = mbarrier_alloc : i64[S]               (one arrival per load)
 *     tma_copy bufs[j], bars, j, (j exists), origin(j)      j < D
 *     for iv ... iter(..., ins, ext, phase):
 *       mbarrier_wait bars, ext, phase             (iteration iv's boxes are in)
 *       [barrier; tma_copy ... for iv + D*step into ins]    early refill
 *       the rest
 *       [barrier; tma_copy ...]                    late refill
 *       yield ..., ins + 1, ext + 1, phase ^ (ext + 1 wrapped)
 *     mbarrier_inval bars */

/* Load k's box origin, innermost first, for iteration iv. */
static void tma_origin(Pipe *P, int k, int iv, int *coord) {
  const TmaLoad *t = &P->tma_loads[k];
  const TirTensorMap *map = &P->f->tensor_maps.data[t->map];
  for (int i = 0; i < 2; i++) coord[i] = tgir_tma_origin(P->f, &P->out, t, i, iv, -map->box[i], P->loop->loc);
}

static void emit_tma_copies(Pipe *P, const Ahead *a, int slot, const int *bufs, int bars) {
  for (int k = 0; k < P->loads.len; k++) {
    const TirOp *load = P->loads.data[k];
    if (P->staged[k]) continue;
    int coord[2];
    tma_origin(P, k, a->iv, coord);
    int ops[6] = {slot_view(P, load, bufs[k], slot), bars, slot, a->valid, coord[0], coord[1]};
    emit_plain(P, TIR_TMA_COPY, P->tma_loads[k].map, ops, 6, load->loc);
  }
}

static int staged_count(const Pipe *P) {
  int n = 0;
  for (int k = 0; k < P->loads.len; k++) n += P->staged[k];
  return n;
}

/* TMA loops: the staged loads' stage 0 alone for iteration a->iv (their
 * addresses depend on the induction variable and invariants only), their
 * cp.async copies into `slot`, and a commit. */
static void emit_staged_copies(Pipe *P, const Ahead *a, int slot, const int *bufs) {
  Issued is;
  emit_marked(P, P->staged_slice, a, slot, bufs, &is, COPIES_NOW);
}

/* A wait for the staged copies but the `pending` last groups, and the
 * barrier after it. */
static void emit_staged_wait(Pipe *P, const int *bufs, int pending) {
  int staged[64], n = 0;
  for (int k = 0; k < P->loads.len; k++)
    if (P->staged[k]) staged[n++] = bufs[k];
  emit_plain(P, TIR_ASYNC_WAIT, pending, staged, n, P->loop->loc);
}

/* Where a TMA loop refills its buffers, after the barrier that frees
 * them: with staged loads the barrier is their wait's, which retires
 * the copies of iteration iv (refilled early) or iv + 1 (late, after the
 * reads of iv; the wait before the loop covers iteration 0). */
static void emit_refill(Pipe *P, const Ahead *a, int ins, const int *bufs, int bars) {
  if (staged_count(P)) emit_staged_wait(P, bufs, P->distance - 1 - P->late_refill);
  else emit_plain(P, TIR_BARRIER, 0, NULL, 0, P->loop->loc);
  emit_tma_copies(P, a, ins, bufs, bars);
  if (staged_count(P)) emit_staged_copies(P, a, ins, bufs);
}

/* Carried values stage 0 advances are dropped with TMA copies, but the
 * dual ones, which the rest uses: they stay, this iteration's. */
static void tma_dropped(Pipe *P, const char *ahead, char *dropped) {
  for (int c = 0; c < P->loop->results.len; c++) dropped[c] = ahead[c] && !P->dual[c];
}

static TirBlock *emit_body_tma(Pipe *P, const char *ahead, const char *recompute, int64_t step, const int *bufs,
                               int bars) {
  const TirBlock *old = P->body;
  Loc loc = P->loop->loc;
  int iv, slots[3], current[64];
  char dropped[64];
  tma_dropped(P, ahead, dropped);
  TirBlock *nb = new_body(P, dropped, 0, 3, &iv, slots);
  int ins = slots[0], ext = slots[1], phase = slots[2];
  int wait[3] = {bars, ext, phase};
  emit_plain(P, TIR_MBAR_WAIT, 0, wait, 3, loc);
  Ahead a = ahead_of(P, iv, P->distance * step);
  if (!P->late_refill) emit_refill(P, &a, ins, bufs, bars); /* every warp is past the wgmma that read slot ins */
  P->map[old->args.data[0]] = iv;
  emit_rest(P, recompute, bufs, ext);
  take_yield(P, current);
  if (P->late_refill) emit_refill(P, &a, ins, bufs, bars);
  int next[3] = {next_slot(P, ins), next_slot(P, ext), -1};
  int wrapped = binary(P, TIR_CMP, CMP_EQ, next[1], constant(P, DT_I32, 0, loc), loc);
  int flipped = binary(P, TIR_SUB, 0, constant(P, DT_I32, 1, loc), phase, loc);
  int sel[3] = {wrapped, flipped, phase};
  next[2] = emit_value(P, TIR_SELECT, T(P, phase), NULL, sel, 3, loc);
  emit_yield(P, dropped, NULL, current, next, 3);
  return nb;
}

static void rewrite_loop_tma(Pipe *P, const char *ahead, const char *recompute, int64_t step) {
  TirOp *loop = P->loop;
  Loc loc = loop->loc;
  int bufs[64], n_slots = 1;
  while (n_slots < P->stages) n_slots *= 2; /* tile shapes are powers of two: a spare barrier or so */
  int64_t shape[2] = {n_slots, 1};
  int order[2] = {1, 0};
  const char *why;
  const Layout *plain = layout_shared(P->f->layout_table, 2, 1, 1, 1, order, &why);
  for (int k = 0; k < P->loads.len; k++) bufs[k] = emit_buffers(P, k);
  /* after the buffers, which take 1024-byte aligned offsets from 0: no bytes lost to alignment */
  int bars = emit_value(P, TIR_MBAR_ALLOC, type_tile(P->f->arena, type_scalar(P->f->arena, DT_I64), 2, shape), plain,
                        NULL, 0, loc);
  P->out.data[P->out.len - 1]->ival = P->loads.len - staged_count(P);
  for (int j = 0; j < P->distance; j++) {
    Ahead a = ahead_of(P, loop->operands.data[0], j * step);
    int slot = constant(P, DT_I32, j, loc);
    emit_tma_copies(P, &a, slot, bufs, bars);
    if (staged_count(P)) emit_staged_copies(P, &a, slot, bufs);
  }
  if (staged_count(P) && P->late_refill) emit_staged_wait(P, bufs, P->distance - 1);
  char dropped[64];
  tma_dropped(P, ahead, dropped);
  int kept = 3; /* lb, ub, step, then the carried values that stay */
  for (int c = 0; c < loop->results.len; c++)
    if (!dropped[c]) loop->operands.data[kept++] = loop->operands.data[3 + c];
  loop->operands.len = kept;
  tir_add_operand(P->f, loop, constant(P, DT_I32, P->distance % P->stages, loc));
  tir_add_operand(P->f, loop, constant(P, DT_I32, 0, loc));
  tir_add_operand(P->f, loop, constant(P, DT_I32, 0, loc));
  OpList outer = begin_list(P);
  TirBlock *nb = emit_body_tma(P, ahead, recompute, step, bufs, bars);
  end_list(P, nb, outer);
  loop->regions[0] = nb;
  int results = 0, *old_results = arena_alloc(P->f->arena, sizeof(int) * (size_t)(loop->results.len + 1));
  memcpy(old_results, loop->results.data, sizeof(int) * (size_t)loop->results.len);
  for (int c = 0; c < loop->results.len; c++)
    if (!dropped[c]) loop->results.data[results++] = loop->results.data[c];
  loop->results.len = results;
  for (int i = 0; i < 3; i++) tir_add_result(P->f, loop, type_scalar(P->f->arena, DT_I32));
  vec_push(P->f->arena, &P->out, loop);
  emit_plain(P, TIR_MBAR_INVAL, 0, &bars, 1, loc);
  if (P->async_dot) finish_async_dot(P, P->async_dot, old_results);
  if (P->carried_dot) finish_async_dot(P, P->carried_dot, old_results);
}

/* ---- which loops ---- */

static int64_t constant_step(Pipe *P, const TirOp *loop) {
  const TirOp *d = def_anywhere(P->f->body, loop->operands.data[2]);
  return d && d->code == TIR_CONSTANT && !dtype_is_float(T(P, loop->operands.data[2])->elem) ? d->ival : 0;
}

static int simple_body(const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (op->regions[0] || op->code == TIR_ASYNC_COPY || op->code == TIR_ASYNC_WAIT || op->code == TIR_TMA_COPY) return 0;
  }
  return 1;
}

/* Whether op's operand k is a pipelined load's buffer (wgmma reads it in
 * place, or a transposed view of it) or, with `loaded`, a local_load of
 * one in the body (ldmatrix). */
static int reads_pipelined(Pipe *P, const TirOp *op, int k, int loaded) {
  int v = op->operands.data[k];
  const TirOp *d = P->def[v];
  if (d && d->code == TIR_MEMDESC_TRANS) v = d->operands.data[0];
  if (loaded && d && d->code == TIR_LOCAL_LOAD) v = d->operands.data[0];
  for (int i = 0; i < P->loads.len; i++)
    if (!P->staged[i] && v == staging_of(P, P->loads.data[i])->results.data[0]) return 1;
  return 0;
}

/* Whether `more` bytes of shared memory a program instead of `fewer` fit
 * and keep as many programs on an SM (registers estimated as the
 * accumulator's plus 64 a thread). */
static int costs_nothing(Pipe *P, int64_t more, int64_t fewer, int64_t acc_numel) {
  const Arch *sm = arch_of_cc(P->o->compute_capability);
  int64_t threads = 32 * (int64_t)P->f->num_warps, regs = acc_numel / threads + 64;
  return more <= arch_smem_per_program(sm) &&
         arch_programs_per_sm(sm, more, regs, threads) >= arch_programs_per_sm(sm, fewer, regs, threads);
}

static int64_t smem_per_program(Pipe *P) { return arch_smem_per_program(arch_of_cc(P->o->compute_capability)); }

/* Bytes of the buffers made before the loop that its body reads
 * (attention's q, staged once): live beside the loop's own. */
static int64_t read_from_outside(Pipe *P) {
  int64_t bytes = 0;
  char *seen = arena_alloc(P->f->arena, (size_t)P->n + 1);
  memset(seen, 0, (size_t)P->n + 1);
  for (int i = 0; i < P->body->ops.len; i++)
    for (int k = 0; k < P->body->ops.data[i]->operands.len; k++) {
      int v = P->body->ops.data[i]->operands.data[k];
      const TirOp *d = v < P->n && !P->def[v] && !seen[v] ? def_anywhere(P->f->body, v) : NULL;
      if (d && d->code == TIR_LOCAL_ALLOC) bytes += tile_bytes(P, v), seen[v] = 1;
    }
  return bytes;
}

static int is_wgmma(Pipe *P, const TirOp *op) {
  const Layout *l = op->code == TIR_DOT ? tir_layout(P->f, op->results.data[0]) : NULL;
  return l && l->kind == LAYOUT_MMA && l->version == 3;
}

/* The op of the body that uses v, when it is v's one use. */
static const TirOp *only_user(Pipe *P, int v) {
  if (P->uses[v] != 1) return NULL;
  for (int i = 0; i < P->body->ops.len; i++)
    for (int k = 0; k < P->body->ops.data[i]->operands.len; k++)
      if (P->body->ops.data[i]->operands.data[k] == v) return P->body->ops.data[i];
  return NULL;
}

/* Whether op is a convert_layout whose lanes and warps hold the same
 * elements before and after: code generation only renames registers. */
static int renames(Pipe *P, const TirOp *op) {
  LinearLayout from, to;
  const char *why;
  if (op->code != TIR_CONVERT_LAYOUT) return 0;
  const Type *t = T(P, op->results.data[0]);
  return !layout_linear_of(tir_layout(P->f, op->operands.data[0]), t, &from, &why) &&
         !layout_linear_of(tir_layout(P->f, op->results.data[0]), t, &to, &why) && ll_same_threads(&from, &to);
}

/* A wgmma dot with A in registers (attention's P @ V) whose B is
 * pipelined and whose result only goes round the loop may stay in flight
 * until the next iteration first uses that value, as Triton leaves it:
 * its wgmmas then overlap the end of the iteration and the next one's
 * first dot.  The wait goes after the last wgmma dot before that use
 * (sets P->carried_*).  The value may first pass through conversions
 * that only rename registers (no instruction reads it there), and its
 * use may be the dot itself (an accumulator chained straight in). */
static void plan_carried_dot(Pipe *P) {
  const TirOp *yield = terminator(P->body);
  P->carried_dot = NULL;
  for (int i = 0; i < P->body->ops.len; i++) { /* the last: in flight the longest */
    TirOp *op = P->body->ops.data[i];
    if (!is_wgmma(P, op) || layout_is_shared(tir_layout(P->f, op->operands.data[0])) || !reads_pipelined(P, op, 1, 0) ||
        P->uses[op->results.data[0]] != 1)
      continue;
    for (int k = 0; k < yield->operands.len; k++)
      if (yield->operands.data[k] == op->results.data[0]) P->carried_dot = op, P->carried = k;
  }
  if (!P->carried_dot) return;
  int v = P->body->args.data[1 + P->carried];
  const TirOp *user;
  while ((user = only_user(P, v)) && renames(P, user)) v = user->results.data[0];
  P->carried_value = v;
  P->carried_use = user;
  P->carried_waiter = NULL;
  for (int i = 0; i < P->body->ops.len && P->body->ops.data[i] != user; i++)
    if (is_wgmma(P, P->body->ops.data[i])) P->carried_waiter = P->body->ops.data[i];
  if (!user || P->stage0[v]) P->carried_dot = NULL;
}

/* How many buffers a pipelined loop holds, and when it refills them.
 *
 * A wgmma dot whose operands are both pipelined and whose result only goes
 * round the loop can stay in flight while the next iteration starts
 * (Triton: wgmma.wait_group 1).  A buffer is then refilled only after the
 * wgmma that read it is done, one iteration later.  With S + 1 buffers the
 * copies for iteration i + S - 1 go out at the top of iteration i, into the
 * slot iteration i - 2 read (waited for by every warpgroup before this
 * iteration's barrier).  When that extra buffer would leave fewer programs
 * on an SM, or not fit, the loop keeps S buffers and issues those copies
 * late, as Triton does: after the wgmma wait and a barrier, into the slot
 * iteration i - 1 read.  So does a dot over two or more warpgroups (8+
 * warps), where the early copies hold back both warpgroups' wgmma (D3 of
 * docs/decisions.md).
 *
 * Other dots read their operands from shared memory before they compute
 * (ldmatrix, loads).  S buffers let the copies go out at the top of
 * iteration i into the slot iteration i - 1 read.  When S - 1 buffers would
 * hold more programs on an SM (or S do not fit), the loop keeps S - 1, and
 * the copies for iteration i + S - 1 go out after iteration i's reads and a
 * barrier, into the slot it read: Triton's schedule for mma.sync.  Not
 * below two buffers: with one, no copy overlaps the math.
 *
 * A register-A dot carried to the next iteration (plan_carried_dot) reads
 * its B slot until then, so it needs S + 1 buffers refilled early; where
 * they do not fit or would leave fewer programs on an SM (counting the
 * buffers read from before the loop, and every dot's result as live
 * registers), or late refills are asked for, it waits at once instead.
 *
 * Which schedule runs faster also depends on the grid, unknown here (D4),
 * so o->refill may ask for either (the autotuner times both): early keeps
 * the extra buffer wherever it fits, late drops it. */
static void plan_buffers(Pipe *P) {
  P->async_dot = NULL;
  P->carried_dot = NULL;
  P->late_refill = 0;
  const TirOp *yield = terminator(P->body), *dot = NULL;
  int64_t bytes = 0;
  for (int i = 0; i < P->body->ops.len; i++) {
    TirOp *op = P->body->ops.data[i];
    if (op->code == TIR_LOCAL_ALLOC) bytes += tile_bytes(P, op->results.data[0]);
    if (op->code != TIR_DOT || !reads_pipelined(P, op, 0, 1) || !reads_pipelined(P, op, 1, 1)) continue;
    dot = op;
    const Layout *l = tir_layout(P->f, op->results.data[0]);
    if (!l || l->kind != LAYOUT_MMA || l->version != 3 || !reads_pipelined(P, op, 0, 0) || !reads_pipelined(P, op, 1, 0))
      continue;
    int uses_in_yield = 0;
    for (int k = 0; k < yield->operands.len; k++) uses_in_yield += yield->operands.data[k] == op->results.data[0];
    if (uses_in_yield == 1 && P->uses[op->results.data[0]] == 1) P->async_dot = op;
  }
  if (!P->async_dot) plan_carried_dot(P);
  if (!dot && !P->carried_dot) return;
  const TirOp *acc_of = P->async_dot ? P->async_dot : P->carried_dot ? P->carried_dot : dot;
  int64_t pipelined = 0, acc = type_numel(T(P, acc_of->results.data[0])), s = P->stages;
  for (int i = 0; i < P->loads.len; i++) {
    pipelined += tile_bytes(P, P->loads.data[i]->results.data[0]);
    if (P->staged[i]) bytes += tile_bytes(P, P->loads.data[i]->results.data[0]); /* as if staged in the body */
  }
  /* bytes counts the pipelined loads' own local_allocs, which the buffers replace */
  int64_t with_s = bytes + pipelined * (s - 1);
  int refill = P->o->refill, fits = with_s + (P->async_dot ? pipelined : 0) <= smem_per_program(P);
  if (P->async_dot) {
    int early = refill == TILE_REFILL_AUTO ? P->f->num_warps < 8 && costs_nothing(P, with_s + pipelined, with_s, acc)
                                      : refill == TILE_REFILL_EARLY && fits;
    if (early) P->stages++;
    else P->late_refill = 1;
  } else if (P->carried_dot) { /* S + 1 buffers refilled early, or the dot waits at once */
    int64_t all = with_s + read_from_outside(P), results = 0;
    for (int i = 0; i < P->body->ops.len; i++) /* every dot's result is live in registers at once */
      if (P->body->ops.data[i]->code == TIR_DOT) results += type_numel(T(P, P->body->ops.data[i]->results.data[0]));
    if (refill != TILE_REFILL_LATE && fits && costs_nothing(P, all + pipelined, all, results)) P->stages++;
    else P->carried_dot = NULL;
  } else if (s >= 3) {
    P->late_refill = refill == TILE_REFILL_AUTO ? !costs_nothing(P, with_s, with_s - pipelined, acc)
                                           : refill == TILE_REFILL_LATE || !fits;
    P->stages -= P->late_refill;
  }
  P->f->refills |= P->late_refill ? TILE_REFILL_LATE : TILE_REFILL_EARLY;
}

/* Copies through registers pay where the loads they start early have a
 * thread's share of a big dot to hide behind; where many programs per SM
 * already hide the loads they cost (D5 of docs/decisions.md has the
 * thresholds' measurements). */
static int register_copies_pay(Pipe *P) {
  int64_t threads = 32 * (int64_t)P->f->num_warps;
  for (int i = 0; i < P->body->ops.len; i++) {
    const TirOp *op = P->body->ops.data[i];
    if (op->code != TIR_DOT) continue;
    const Layout *l = tir_layout(P->f, op->results.data[0]);
    int64_t enough = l && l->kind == LAYOUT_MMA && l->version == 3 ? 64 : 128;
    if (type_numel(T(P, op->results.data[0])) / threads >= enough) return 1;
  }
  return 0;
}

/* The registers a thread holds for the dots' accumulators the loop
 * carries. */
static int64_t carried_accumulators(Pipe *P) {
  const TirOp *yield = terminator(P->body);
  int64_t threads = 32 * (int64_t)P->f->num_warps, carried = 0;
  for (int i = 0; i < P->body->ops.len; i++) {
    const TirOp *op = P->body->ops.data[i];
    for (int k = 0; op->code == TIR_DOT && k < yield->operands.len; k++)
      if (yield->operands.data[k] == op->results.data[0]) carried += type_numel(T(P, op->results.data[0])) / threads;
  }
  return carried;
}

/* Staged loads keep their copies' addresses in registers for D iterations
 * ahead.  Where the accumulators the loop carries already take three
 * quarters of a thread's registers (an attention backward's dK and dV at
 * head dim 128: 256 a thread on 4 warps), those spill, and the loads keep
 * their place.  Beside TMA copies, which need no address registers, every
 * staged copy's are new: there a quarter is the bar (D11 of
 * docs/decisions.md has the measurements). */
enum { STAGED_ACCUMULATORS = 192, STAGED_ACCUMULATORS_BESIDE_TMA = 64 };

static int registers_to_spare(Pipe *P, int by_tma) {
  return carried_accumulators(P) <= (by_tma ? STAGED_ACCUMULATORS_BESIDE_TMA : STAGED_ACCUMULATORS);
}

/* Whether a wgmma dot reads a pipelined buffer in place. */
static int wgmma_reads_buffers(Pipe *P) {
  for (int i = 0; i < P->body->ops.len; i++) {
    const TirOp *op = P->body->ops.data[i];
    if (is_wgmma(P, op) && (reads_pipelined(P, op, 0, 0) || reads_pipelined(P, op, 1, 0))) return 1;
  }
  return 0;
}

/* Whether every pipelined load can come by TMA (P->tma_loads then set). */
static int plan_tma(Pipe *P) {
  if (!P->o->tma || !wgmma_reads_buffers(P) || has_register_copies(P)) return 0;
  int maps = P->f->tensor_maps.len;
  for (int k = 0; k < P->loads.len; k++) {
    if (P->staged[k]) continue; /* by cp.async */
    const TirOp *alloc = staging_of(P, P->loads.data[k]);
    if (!tma_plan_load(P->f, P->axis, P->loop, P->loads.data[k], tir_layout(P->f, alloc->results.data[0]),
                       &P->tma_loads[k])) {
      P->f->tensor_maps.len = maps;
      return 0;
    }
  }
  return 1;
}

/* Marks v's slice in the body as computed for a staged copy; 0 if it
 * reaches a carried value (a TMA loop computes no carried value ahead). */
static int mark_staged_slice(Pipe *P, int v) {
  if (carried_index(P, v) >= 0) return 0;
  const TirOp *d = v < P->n ? P->def[v] : NULL;
  if (!d || P->staged_slice[v]) return 1;
  for (int k = 0; k < d->results.len; k++) P->staged_slice[d->results.data[k]] = 1;
  for (int k = 0; k < d->operands.len; k++)
    if (!mark_staged_slice(P, d->operands.data[k])) return 0;
  return 1;
}

/* Whether a TMA loop can take its staged loads by cp.async beside the
 * boxes: their addresses from the induction variable and invariants
 * alone, and, refilled late, copies two iterations ahead at least (the
 * wait before the refill retires the next iteration's copies). */
static int staged_beside_tma(Pipe *P) {
  P->staged_slice = arena_alloc(P->f->arena, (size_t)P->n + 1);
  memset(P->staged_slice, 0, (size_t)P->n + 1);
  for (int k = 0; k < P->loads.len; k++)
    if (P->staged[k] && !mark_staged_slice(P, P->loads.data[k]->results.data[0])) return 0;
  return !staged_count(P) || !P->late_refill || P->distance >= 2;
}

/* Sets up P for `loop`; 0 if it is not pipelined.  by_tma: every dot
 * operand, those cp.async cannot move included, for TMA to bring;
 * `stage`: loads used in registers staged (*staged: some were). */
static int plan_loop_as(Pipe *P, TirOp *loop, char **ahead, char **recompute, int by_tma, int stage, int *staged) {
  P->loop = loop;
  P->body = loop->regions[0];
  P->stages = (int)(loop->ival > 0 ? loop->ival : P->f->num_stages);
  P->distance = P->stages - 1;
  int64_t step = constant_step(P, loop);
  if (P->stages < 2 || step <= 0 || !simple_body(P->body) || loop->results.len > 64) return 0;
  P->n = P->f->types.len;
  size_t n = (size_t)P->n + 1;
  P->def = arena_alloc(P->f->arena, sizeof *P->def * n);
  P->uses = arena_alloc(P->f->arena, sizeof *P->uses * n);
  P->stage0 = arena_alloc(P->f->arena, n);
  P->map = arena_alloc(P->f->arena, sizeof *P->map * n);
  for (size_t v = 0; v < n; v++) P->map[v] = -1;
  tir_index_values(P->f->body, P->uses, NULL);
  P->loads.len = 0;
  for (int i = 0; i < P->body->ops.len; i++) {
    TirOp *op = P->body->ops.data[i];
    for (int k = 0; k < op->results.len; k++) P->def[op->results.data[k]] = op;
  }
  int async_copies = 0, register_copies = register_copies_pay(P);
  stage = stage && registers_to_spare(P, by_tma);
  for (int i = 0; i < P->body->ops.len && P->loads.len < 64; i++) {
    int kind = copy_kind(P, P->body->ops.data[i]);
    if (kind == COPY_NARROW) kind = by_tma ? COPY_ASYNC : COPY_REGISTERS;
    if (kind == NOT_PIPELINED || (kind == COPY_REGISTERS && !register_copies) || (kind == COPY_STAGED && !stage))
      continue;
    *staged |= kind == COPY_STAGED;
    P->through_registers[P->loads.len] = kind == COPY_REGISTERS;
    P->staged[P->loads.len] = kind == COPY_STAGED;
    async_copies += kind == COPY_ASYNC;
    vec_push(P->f->arena, &P->loads, P->body->ops.data[i]);
  }
  if (!async_copies) return 0; /* loads through registers alone keep their place, staged loads too */
  *ahead = arena_alloc(P->f->arena, (size_t)loop->results.len + 1);
  *recompute = arena_alloc(P->f->arena, n);
  P->ahead = *ahead;
  if (!stage0(P, *ahead) || stage0_uses_staged(P) || !stage0_is_private(P, *ahead, *recompute)) return 0;
  plan_buffers(P);
  int maps = P->f->tensor_maps.len;
  P->tma = P->distance >= 1 && by_tma && plan_tma(P);
  if (P->tma && !staged_beside_tma(P)) {
    P->f->tensor_maps.len = maps;
    return 0;
  }
  return P->distance >= 1;
}

/* Planned first for TMA copies of every load, those cp.async cannot move
 * included, then for cp.async, each first with the loads used in
 * registers staged and, where that fails, without them. */
static int plan_loop(Pipe *P, TirOp *loop, char **ahead, char **recompute) {
  int refills = P->f->refills;
  for (int by_tma = !!P->o->tma; by_tma >= 0; by_tma--)
    for (int stage = 1; stage >= 0; stage--) {
      int staged = 0;
      if (plan_loop_as(P, loop, ahead, recompute, by_tma, stage, &staged) && (P->tma || !by_tma)) return 1;
      P->f->refills = refills;
      if (!staged) break; /* without staged loads the plan is the same */
    }
  return 0;
}

static void pipeline_block(Pipe *P, TirBlock *b) {
  OpList saved = begin_list(P);
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) pipeline_block(P, op->regions[r]);
    char *ahead, *recompute;
    if (op->code == TIR_FOR && plan_loop(P, op, &ahead, &recompute))
      (P->tma ? rewrite_loop_tma : rewrite_loop)(P, ahead, recompute, constant_step(P, op));
    else vec_push(P->f->arena, &P->out, op);
  }
  end_list(P, b, saved);
}

void tgir_pipeline(TirFunc *f, const TgirOptions *o) {
  Pipe P;
  memset(&P, 0, sizeof P);
  P.f = f;
  P.o = o;
  P.axis = tir_axis_info(f);
  pipeline_block(&P, f->body);
  tir_dce(f); /* the loads' `other` constants */
}
