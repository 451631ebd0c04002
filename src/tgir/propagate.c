/* Layout propagation: one layout for every tile value, chosen so that as
 * few values as possible must change layout (Triton's
 * RemoveLayoutConversions, simplified; docs/tgir.md).
 *
 * convert_layout ops are looked through: a conversion's result stands for
 * the value it converts, so the choice starts afresh from the anchors,
 * the ops whose layouts are kept as the IR has them:
 *   - load and atomics: their result's layout (the coalesced one);
 *   - store: its pointer operand's layout;
 *   - dot: its result's layout (the accumulator's);
 *   - inline_asm with pack > 1: its results' (a thread holds `pack` consecutive elements);
 *   - the shared-memory ops: local_alloc, memdesc_index, local_load and
 *     dot_wait their results' layouts, async_copy its pointers'.  No other
 *     value takes a shared layout.
 * From them, in this order of preference:
 *   1. forward: an anchor's result layout flows to users that derive
 *      theirs from their operands (elementwise, broadcast, expand_dims of
 *      a matching slice, reduce -> slice, trans -> permuted, scan, and
 *      carried values through yield), so a dot's accumulator stays in its
 *      layout through the loop and a loaded row through the softmax.
 *      Values defined in deeper loops flow first: a loop's carried values
 *      take the layout of what the loop computes, and a value from before
 *      the loop is converted there, once, rather than in every iteration;
 *   2. backward: what an op needs of its operands (rules.c) flows to the
 *      operands that have no layout yet: address arithmetic, masks,
 *      `other`, stored values, loop inits.  Needs from ops inside deeper
 *      loops are applied first, so values defined outside a loop take the
 *      layout the loop uses and any conversion lands outside it.
 *      Dot-operand layouts never flow back: a dot's operand is converted.
 *   3. forward again from what backward reached, then, for computations
 *      no anchor reaches, the default blocked layout of the first such
 *      value, and around again.
 * When values meet in different layouts (an elementwise op whose operands
 * come from two anchors), the operand defined in the deepest loop wins.
 * Loop-carried values are tied: a for's result and its region argument
 * (a while's result and body argument) get one layout.
 *
 * Requires: GPU-layout IR whose anchors have layouts (after assign-layouts
 *   or as read from text).
 * Guarantees: out->layout holds a layout for every tile value that is not
 *   a convert result, of its rank, never a dot-operand layout except on an
 *   anchor; reduce results the slice of their operand's along the axis and
 *   trans results the permuted blocked layout of their operand's (every
 *   other rule is met by remove_converts.c).  The function is unchanged.
 * Invalidates: nothing. */
#include "passes.h"

#include <string.h>

typedef struct Prop {
  TirFunc *f;
  Propagation *out;
  int n;                   /* value ids */
  int *tie;                /* union-find over values: carried values share a representative */
  const Layout **chosen;   /* per representative */
  TirOp **def;             /* per value: its defining op, NULL for region arguments and parameters */
  int *depth;              /* per value: loops around its definition */
  int max_depth;
  int assigned;            /* how many representatives have a layout */
  Vec(int) *users;         /* per value: the entries of the anchors that use it */
} Prop;

/* ---- values ---- */

static int find(Prop *P, int v) {
  while (P->tie[v] != v) v = P->tie[v] = P->tie[P->tie[v]];
  return v;
}

static void tie(Prop *P, int a, int b) { P->tie[find(P, a)] = find(P, b); }

static int root(Prop *P, int v) { return P->out->root[v]; }

static const Layout *get(Prop *P, int v) { return P->chosen[find(P, root(P, v))]; }

/* v's layout if v is defined in a loop at least min_depth deep. */
static const Layout *get_from(Prop *P, int v, int min_depth) {
  return P->depth[root(P, v)] >= min_depth ? get(P, v) : NULL;
}

/* Whether v may take layout l: reduce, trans, join and split results only
 * the layouts their operand can give them; nothing takes a dot-operand
 * layout. */
static int acceptable(Prop *P, int v, const Layout *l) {
  const Type *t = tir_type(P->f, v);
  if (!l || t->rank == 0 || l->rank != t->rank || l->kind == LAYOUT_DOT_OPERAND || layout_is_shared(l)) return 0;
  const TirOp *op = P->def[v];
  if (op && (op->code == TIR_REDUCE || op->code == TIR_REDUCE_COMBINE)) return l->kind == LAYOUT_SLICE && l->dim == op->axis;
  if (op && op->code == TIR_TRANS) return l->kind == LAYOUT_BLOCKED;
  if (op && op->code == TIR_SPLIT) return l->kind == LAYOUT_BLOCKED;
  if (op && op->code == TIR_JOIN) /* only a joined layout: the one its operands' layout joins back to */
    return layout_joined(P->f->layout_table, layout_joined(P->f->layout_table, l, 1), 0) == l;
  return 1;
}

/* Gives v (and what it is tied to) layout l if it has none and may. */
static int choose(Prop *P, int v, const Layout *l) {
  v = root(P, v);
  int r = find(P, v);
  if (P->chosen[r] || !acceptable(P, v, l)) return 0;
  P->chosen[r] = l;
  P->assigned++;
  return 1;
}

/* ---- the ops in program order ---- */

static void define(Prop *P, int v, TirOp *op, int depth) {
  P->def[v] = op;
  P->depth[v] = depth;
}

/* The anchor layout of op, as the IR has it; NULL if op is no anchor. */
static const Layout *anchor(Prop *P, const TirOp *op) {
  switch (op->code) {
  case TIR_LOAD:
  case TIR_ATOMIC_RMW:
  case TIR_ATOMIC_CAS:
  case TIR_DOT:
  case TIR_STORE:
  case TIR_LOCAL_ALLOC:
  case TIR_MBAR_ALLOC:
  case TIR_MEMDESC_INDEX:
  case TIR_MEMDESC_TRANS:
  case TIR_LOCAL_LOAD:
  case TIR_ASYNC_COPY:
  case TIR_DOT_WAIT: return tgir_own_layout(P->f, op);
  case TIR_INLINE_ASM: return tir_asm_pack(op) > 1 ? tgir_own_layout(P->f, op) : NULL; /* its registers grouped */
  default: return NULL;
  }
}

static void push(Prop *P, TirOp *op, const TirOp *parent, const Layout *own, int depth, int exit) {
  LayoutEntry e = {op, parent, own, depth, exit};
  for (int k = 0; own && k < op->operands.len; k++)
    vec_push(P->f->arena, &P->users[root(P, op->operands.data[k])], P->out->entries.len);
  vec_push(P->f->arena, &P->out->entries, e);
}

static void flatten(Prop *P, TirBlock *b, const TirOp *parent, int depth) {
  if (depth > P->max_depth) P->max_depth = depth;
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    if (op->code == TIR_CONVERT_LAYOUT) { /* looked through: its result stands for its operand */
      P->out->root[op->results.data[0]] = root(P, op->operands.data[0]);
      continue;
    }
    if (!op->regions[0]) {
      push(P, op, parent, anchor(P, op), depth, 0);
    } else {
      int inner = depth + (op->code == TIR_FOR || op->code == TIR_WHILE);
      push(P, op, parent, NULL, depth, 0);
      for (int r = 0; r < 2; r++) {
        if (!op->regions[r]) continue;
        for (int a = 0; a < op->regions[r]->args.len; a++) define(P, op->regions[r]->args.data[a], NULL, inner);
        flatten(P, op->regions[r], op, inner);
      }
      push(P, op, parent, NULL, depth, 1);
    }
    for (int k = 0; k < op->results.len; k++) define(P, op->results.data[k], op, depth);
  }
}

static void tie_carried(Prop *P) {
  for (int i = 0; i < P->out->entries.len; i++) {
    const TirOp *op = P->out->entries.data[i].op;
    if (op->code == TIR_FOR)
      for (int k = 0; k < op->results.len; k++) tie(P, op->results.data[k], op->regions[0]->args.data[1 + k]);
    if (op->code == TIR_WHILE)
      for (int k = 0; k < op->results.len; k++) tie(P, op->results.data[k], op->regions[1]->args.data[k]);
    if (op->code == TIR_REDUCE_COMBINE || op->code == TIR_SCAN_COMBINE || op->code == TIR_INLINE_ASM) /* one layout for all N results */
      for (int k = 1; k < op->results.len; k++) tie(P, op->results.data[k], op->results.data[0]);
  }
}

/* Anchors keep their layouts as they are, whatever kind (every result of
 * a dot_wait). */
static void seed_anchors(Prop *P) {
  for (int i = 0; i < P->out->entries.len; i++) {
    const LayoutEntry *e = &P->out->entries.data[i];
    for (int k = 0; e->own && k < e->op->results.len; k++) {
      int r = find(P, e->op->results.data[k]);
      if (!P->chosen[r]) P->assigned++;
      P->chosen[r] = tir_layout(P->f, e->op->results.data[k]);
    }
  }
}

/* ---- forward: results from operands ---- */

/* Whether an anchor using v needs it in layout l. */
static int anchor_needs(Prop *P, int v, const Layout *l) {
  for (int i = 0; i < P->users[v].len; i++) {
    const LayoutEntry *e = &P->out->entries.data[P->users[v].data[i]];
    for (int k = 0; k < e->op->operands.len; k++)
      if (root(P, e->op->operands.data[k]) == v && tgir_operand_need(P->f, e->op, k, e->own, e->parent, NULL) == l)
        return 1;
  }
  return 0;
}

/* The layout of an op whose operands have layouts: when they differ, the
 * one an anchor using the result needs (that saves converting it), else
 * the one of the operand defined in the deepest loop (converting the
 * others happens outside it), else the first. */
static const Layout *operands_layout(Prop *P, const TirOp *op, int min_depth) {
  const Layout *best = NULL;
  int best_score = -1;
  for (int k = 0; k < op->operands.len; k++) {
    int v = root(P, op->operands.data[k]);
    if (!tgir_is_tile(P->f, v) || !get_from(P, v, min_depth)) continue;
    int score = P->depth[v] + (anchor_needs(P, op->results.data[0], get(P, v)) ? 1000 : 0);
    if (score > best_score) {
      best = get(P, v);
      best_score = score;
    }
  }
  return best;
}

/* reshape's result from its operand's layout, unless threads hold copies
 * of the operand: re-split, such a layout puts all threads on the few
 * elements, and a broadcast after it (an index range reshaped to
 * [1, G, 1] then met by a [R, G, S] tile) would hold the whole tile in
 * each thread's registers. */
static const Layout *reshape_forward(Prop *P, const TirOp *op, const Layout *in) {
  LinearLayout ll;
  const char *why;
  if (!in || layout_linear_of(in, tir_type(P->f, op->operands.data[0]), &ll, &why)) return NULL;
  for (int i = 0; i < ll.n_lane; i++)
    if (!ll.lane[i]) return NULL;
  for (int i = 0; i < ll.n_warp; i++)
    if (!ll.warp[i]) return NULL;
  return tgir_result_layout(P->f, op, in);
}

static const Layout *derived_layout(Prop *P, const TirOp *op, int min_depth) {
  const Layout *in = op->operands.len ? get_from(P, op->operands.data[0], min_depth) : NULL;
  if (tir_op_flags(op->code) & EW) return operands_layout(P, op, min_depth);
  switch (op->code) {
  case TIR_HINT:
  case TIR_RAND:
  case TIR_SCAN:
  case TIR_SCAN_COMBINE: return operands_layout(P, op, min_depth);
  case TIR_BROADCAST: return in;
  case TIR_GATHER: return get_from(P, op->operands.data[1], min_depth); /* the index's */
  case TIR_EXPAND_DIMS: return in && in->kind == LAYOUT_SLICE && in->dim == op->axis ? in->parent : NULL;
  case TIR_RESHAPE: return reshape_forward(P, op, in);
  case TIR_REDUCE:
  case TIR_REDUCE_COMBINE:
  case TIR_TRANS:
  case TIR_JOIN:
  case TIR_SPLIT: return tgir_result_layout(P->f, op, in);
  default: return NULL;
  }
}

/* The value a terminator's carried operand k becomes; -1 for none. */
static int carried_target(const TirOp *op, int k, const TirOp *parent) {
  if (!parent) return -1;
  if (op->code == TIR_CONDITION) return k ? parent->regions[1]->args.data[k - 1] : -1;
  if (op->code != TIR_YIELD) return -1;
  if (parent->code == TIR_WHILE) return parent->regions[0]->args.data[k];
  return k < parent->results.len ? parent->results.data[k] : -1;
}

static int forward_entry(Prop *P, const LayoutEntry *e, int min_depth) {
  const TirOp *op = e->op;
  int changed = 0;
  if (tir_op_flags(op->code) & TERM) {
    for (int k = 0; k < op->operands.len; k++) {
      int target = carried_target(op, k, e->parent);
      if (target >= 0 && tgir_is_tile(P->f, target))
        changed |= choose(P, target, get_from(P, op->operands.data[k], min_depth));
    }
  } else if (e->exit && (op->code == TIR_FOR || op->code == TIR_WHILE)) { /* inits last: the loop's own layouts first */
    int first = op->code == TIR_FOR ? 3 : 0;
    for (int k = first; k < op->operands.len; k++) {
      int target = op->code == TIR_FOR ? op->results.data[k - 3] : op->regions[0]->args.data[k];
      if (tgir_is_tile(P->f, target)) changed |= choose(P, target, get_from(P, op->operands.data[k], min_depth));
    }
  } else if (!op->regions[0] && op->results.len && tgir_is_tile(P->f, op->results.data[0])) {
    changed |= choose(P, op->results.data[0], derived_layout(P, op, min_depth));
  }
  return changed;
}

/* From values defined in loops at least `min_depth` deep, first op first. */
static int forward_sweep(Prop *P, int min_depth) {
  int changed = 0;
  for (int i = 0; i < P->out->entries.len; i++) changed |= forward_entry(P, &P->out->entries.data[i], min_depth);
  return changed;
}

static void forward(Prop *P) {
  for (int d = P->max_depth; d >= 0; d--)
    while (forward_sweep(P, d)) continue;
}

/* ---- backward: operands from what their users need ---- */

static const Layout *own_of(Prop *P, const LayoutEntry *e) {
  if (e->own) return e->own;
  const TirOp *op = e->op;
  if (op->results.len) return tgir_is_tile(P->f, op->results.data[0]) ? get(P, op->results.data[0]) : NULL;
  if (op->code == TIR_ASSERT && tgir_is_tile(P->f, op->operands.data[0])) return get(P, op->operands.data[0]);
  return NULL;
}

static int backward_entry(Prop *P, const LayoutEntry *e) {
  const TirOp *op = e->op;
  int changed = 0;
  if (e->exit || op->code == TIR_IF) return 0;
  if (tir_op_flags(op->code) & TERM) {
    for (int k = 0; k < op->operands.len; k++) {
      int target = carried_target(op, k, e->parent);
      if (target >= 0 && tgir_is_tile(P->f, target)) changed |= choose(P, op->operands.data[k], get(P, target));
    }
  } else if (op->code == TIR_FOR || op->code == TIR_WHILE) {
    int first = op->code == TIR_FOR ? 3 : 0;
    for (int k = first; k < op->operands.len; k++) {
      int target = op->code == TIR_FOR ? op->results.data[k - 3] : op->regions[0]->args.data[k];
      if (tgir_is_tile(P->f, target)) changed |= choose(P, op->operands.data[k], get(P, target));
    }
  } else {
    const Layout *own = own_of(P, e);
    for (int k = 0; own && k < op->operands.len; k++)
      changed |= choose(P, op->operands.data[k], tgir_operand_need(P->f, op, k, own, e->parent, NULL));
  }
  return changed;
}

/* Needs from ops in loops at least `min_depth` deep, last op first. */
static int backward_sweep(Prop *P, int min_depth) {
  int changed = 0;
  for (int i = P->out->entries.len - 1; i >= 0; i--) {
    const LayoutEntry *e = &P->out->entries.data[i];
    if (e->depth >= min_depth) changed |= backward_entry(P, e);
  }
  return changed;
}

static void backward(Prop *P) {
  for (int d = P->max_depth; d >= 0; d--)
    while (backward_sweep(P, d)) continue;
}

/* ---- what no anchor reaches ---- */

static const Layout *default_layout(Prop *P, const Type *t) {
  return layout_default(P->f->layout_table, t->rank, t->shape, NULL, NULL, P->f->num_warps);
}

/* The default layout of v's shape; for a join's result, the joined
 * default of its operands' (the only kind it may take). */
static int seed_value(Prop *P, int v) {
  const Type *t = tir_type(P->f, v);
  if (t->rank == 0 || root(P, v) != v || get(P, v)) return 0;
  const TirOp *op = P->def[v];
  if (op && op->code == TIR_JOIN)
    return choose(P, v, layout_joined(P->f->layout_table, default_layout(P, tir_type(P->f, op->operands.data[0])), 0));
  return choose(P, v, default_layout(P, t));
}

/* The default layout for the first value in program order without one. */
static int seed_first(Prop *P) {
  for (int i = 0; i < P->out->entries.len; i++) {
    const LayoutEntry *e = &P->out->entries.data[i];
    if (e->op->regions[0] && !e->exit)
      for (int r = 0; r < 2; r++)
        for (int a = 0; e->op->regions[r] && a < e->op->regions[r]->args.len; a++)
          if (seed_value(P, e->op->regions[r]->args.data[a])) return 1;
    for (int k = 0; k < e->op->results.len && (!e->op->regions[0] || e->exit); k++)
      if (seed_value(P, e->op->results.data[k])) return 1;
  }
  return 0;
}

/* ---- the result ---- */

static void finish(Prop *P) {
  Propagation *out = P->out;
  out->layout = arena_alloc(P->f->arena, sizeof *out->layout * (size_t)(P->n + 1));
  for (int v = 0; v < P->n; v++)
    if (root(P, v) == v && tgir_is_tile(P->f, v)) out->layout[v] = get(P, v);
  for (int i = 0; i < out->entries.len; i++) {
    LayoutEntry *e = &out->entries.data[i];
    if (!e->own && !e->exit) e->own = own_of(P, e);
  }
}

void tgir_propagate(TirFunc *f, Propagation *out) {
  memset(out, 0, sizeof *out);
  Prop P = {0};
  P.f = f;
  P.out = out;
  P.n = f->types.len;
  size_t n = (size_t)P.n + 1;
  P.tie = arena_alloc(f->arena, sizeof *P.tie * n);
  P.chosen = arena_alloc(f->arena, sizeof *P.chosen * n);
  P.def = arena_alloc(f->arena, sizeof *P.def * n);
  P.depth = arena_alloc(f->arena, sizeof *P.depth * n);
  P.users = arena_alloc(f->arena, sizeof *P.users * n);
  out->root = arena_alloc(f->arena, sizeof *out->root * n);
  for (int v = 0; v < P.n; v++) P.tie[v] = out->root[v] = v;
  flatten(&P, f->body, NULL, 0);
  tie_carried(&P);
  seed_anchors(&P);
  for (;;) {
    int before = P.assigned;
    forward(&P);
    backward(&P);
    if (P.assigned == before && !seed_first(&P)) break;
  }
  finish(&P);
}
