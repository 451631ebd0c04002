/* Conversion removal (step remove-converts): the function rebuilt with the
 * layouts propagation chose (propagate.c), every convert_layout of the
 * input dropped, and a value that a use needs in another layout
 *   - rematerialised in that layout when it is cheap to recompute: made by
 *     constant, make_range, splat, broadcast, expand_dims, hint, trans or
 *     elementwise ops, or by a load of no more elements than threads (the
 *     original goes if nothing else reads it), from values already
 *     available in the layouts they need, at most REMAT_BUDGET ops
 *     (address arithmetic, masks, `other`);
 *   - else converted once, by one convert_layout.
 * Both are placed right after the value's definition and shared by all
 * uses that need that layout, so what is defined outside a loop is
 * converted outside it, and nothing is converted twice.
 *
 * Requires: verified GPU-layout IR (anchors with their layouts).
 * Guarantees: verified GPU-layout IR computing the same values; every
 *   convert_layout is one no rematerialisation could avoid: a dot's
 *   operands (FMA), a value between two anchors of different layouts, a
 *   carried value whose users disagree; no pure op is left unused; run
 *   again on its own output it changes nothing, value numbers included.
 * Invalidates: value ids of removed ops (gone), layouts of the rest. */
#include "passes.h"

enum { REMAT_BUDGET = 32 };

typedef struct Copy {
  const Layout *layout;
  int value;
  TirOp *remat;                /* the op that recomputes it; NULL: a conversion */
} Copy;

typedef struct Rewrite {
  TirFunc *f;
  Propagation p;
  int n;                       /* values before the rewrite: the ones propagation chose for */
  TirOp **def;                 /* per value: its defining op (NULL: region argument) */
  OpList *after;               /* per value: ops to place right after its definition */
  Vec(Copy) *copies;           /* per value: its copies in other layouts */
  Vec(Copy) *old_converts;     /* per value: the input's conversions of it, reused when needed again */
} Rewrite;

static int root(Rewrite *W, int v) { return W->p.root[v]; }

static int copy_of(Rewrite *W, int v, const Layout *l) {
  for (int i = 0; i < W->copies[v].len; i++)
    if (W->copies[v].data[i].layout == l) return W->copies[v].data[i].value;
  return -1;
}

/* A load of no more elements than the program has threads: recomputed in
 * another layout it reads the same few lines again, which the L1 cache
 * holds, where moving it costs a trip through shared memory and two
 * barriers (attention's backward converted its row statistics so every
 * iteration).  Triton's rule too (isExpensiveLoadOrStore). */
static int small_load(Rewrite *W, const TirOp *op) {
  if (op->code != TIR_LOAD || (op->flags & LOAD_VOLATILE)) return 0;
  return type_numel(tir_type(W->f, op->results.data[0])) <= 32 * (int64_t)W->f->num_warps;
}

/* Ops worth recomputing instead of moving a tile between threads. */
static int cheap(Rewrite *W, const TirOp *op, const Layout *l) {
  if (small_load(W, op)) return 1;
  if (op->code == TIR_INLINE_ASM) return op->results.len == 1 && tir_asm_pack(op) == 1; /* a copy makes one result */
  if (tir_op_flags(op->code) & EW) return 1;
  switch (op->code) {
  case TIR_CONSTANT:
  case TIR_MAKE_RANGE:
  case TIR_SPLAT:
  case TIR_BROADCAST:
  case TIR_EXPAND_DIMS:
  case TIR_HINT: return 1;
  case TIR_TRANS: return l->kind == LAYOUT_BLOCKED;
  default: return 0;
  }
}

static int has_tile_operand(Rewrite *W, const TirOp *op) {
  for (int k = 0; k < op->operands.len; k++)
    if (tgir_is_tile(W->f, op->operands.data[k])) return 1;
  return 0;
}

/* Whether v can be recomputed in layout l from values available in the
 * layouts its producers need, within *budget ops. */
static int rematerialisable(Rewrite *W, int v, const Layout *l, int *budget) {
  const TirOp *op = W->def[v];
  if (!op || !cheap(W, op, l) || --*budget < 0) return 0;
  if (l->kind == LAYOUT_DOT_OPERAND && has_tile_operand(W, op)) return 0; /* only constants and splats */
  for (int k = 0; k < op->operands.len; k++) {
    int x = root(W, op->operands.data[k]);
    const Layout *need = tgir_operand_need(W->f, op, k, l, NULL, NULL);
    if (!tgir_is_tile(W->f, x)) continue;
    if (!need) return 0;
    if (W->p.layout[x] == need || copy_of(W, x, need) >= 0) continue;
    if (!rematerialisable(W, x, need, budget)) return 0;
  }
  return 1;
}

static int materialise(Rewrite *W, int v, const Layout *l, Loc loc);

static TirOp *rematerialise(Rewrite *W, int v, const Layout *l) {
  const TirOp *op = W->def[v];
  TirOp *c = tir_op_new(W->f, op->code, op->loc);
  *c = *op;
  c->operands.data = NULL;
  c->operands.len = c->operands.cap = 0;
  c->results.data = NULL;
  c->results.len = c->results.cap = 0;
  for (int k = 0; k < op->operands.len; k++) {
    int x = root(W, op->operands.data[k]);
    tir_add_operand(W->f, c, materialise(W, x, tgir_operand_need(W->f, op, k, l, NULL, NULL), op->loc));
  }
  tir_set_layout(W->f, tir_add_result(W->f, c, tir_type(W->f, v)), l);
  vec_push(W->f->arena, &W->after[v], c);
  return c;
}

/* The input's conversion of v to l, if it had one: kept, with its value
 * number, so the step changes nothing on its own output. */
static TirOp *old_convert(Rewrite *W, int v, const Layout *l) {
  for (int i = 0; i < W->old_converts[v].len; i++) {
    Copy *c = &W->old_converts[v].data[i];
    if (c->layout == l && c->value >= 0) {
      TirOp *op = W->def[c->value];
      c->value = -1;
      op->operands.data[0] = v;
      tir_set_layout(W->f, op->results.data[0], l);
      return op;
    }
  }
  return NULL;
}

static int convert(Rewrite *W, int v, const Layout *l, Loc loc) {
  TirOp *old = old_convert(W, v, l);
  if (old) {
    vec_push(W->f->arena, &W->after[v], old);
    return old->results.data[0];
  }
  TirOp *c = tir_op_new(W->f, TIR_CONVERT_LAYOUT, W->def[v] ? W->def[v]->loc : loc);
  tir_add_operand(W->f, c, v);
  int copy = tir_add_result(W->f, c, tir_type(W->f, v));
  tir_set_layout(W->f, copy, l);
  vec_push(W->f->arena, &W->after[v], c);
  return copy;
}

/* Value v in layout l (v itself when it has it); `loc` places a
 * conversion of a region argument. */
static int materialise(Rewrite *W, int v, const Layout *l, Loc loc) {
  if (!l || W->p.layout[v] == l) return v;
  int copy = copy_of(W, v, l);
  if (copy >= 0) return copy;
  int budget = REMAT_BUDGET;
  TirOp *remat = rematerialisable(W, v, l, &budget) ? rematerialise(W, v, l) : NULL;
  Copy c = {l, remat ? remat->results.data[0] : convert(W, v, l, loc), remat};
  vec_push(W->f->arena, &W->copies[v], c);
  return c.value;
}

/* Every operand of every op (convert_layout results looked through) in
 * the layout the op needs.  The new operands are set at the end: until
 * then rematerialisation reads the ops as they were. */
static void rewrite_operands(Rewrite *W) {
  Vec(int) fresh = {0};
  for (int i = 0; i < W->p.entries.len; i++) {
    const LayoutEntry *e = &W->p.entries.data[i];
    for (int k = 0; !e->exit && k < e->op->operands.len; k++) {
      const Layout *need = tgir_operand_need(W->f, e->op, k, e->own, e->parent, NULL);
      vec_push(W->f->arena, &fresh, materialise(W, root(W, e->op->operands.data[k]), need, e->op->loc));
    }
  }
  for (int i = 0, next = 0; i < W->p.entries.len; i++) {
    const LayoutEntry *e = &W->p.entries.data[i];
    for (int k = 0; !e->exit && k < e->op->operands.len; k++) e->op->operands.data[k] = fresh.data[next++];
  }
}

static void append(Rewrite *W, OpList *out, int v) {
  for (int i = 0; i < W->after[v].len; i++) vec_push(W->f->arena, out, W->after[v].data[i]);
}

/* b's ops without the old conversions, each followed by the copies of
 * its results. */
static void rebuild(Rewrite *W, TirBlock *b) {
  OpList out = {0};
  for (int i = 0; i < b->args.len; i++) append(W, &out, b->args.data[i]);
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    if (op->code == TIR_CONVERT_LAYOUT) continue;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) rebuild(W, op->regions[r]);
    vec_push(W->f->arena, &out, op);
    for (int k = 0; k < op->results.len; k++) append(W, &out, op->results.data[k]);
  }
  b->ops.data = out.data;
  b->ops.len = out.len;
  b->ops.cap = out.cap;
}

static void record_definitions(Rewrite *W, TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++) W->def[op->results.data[k]] = op;
    if (op->code == TIR_CONVERT_LAYOUT) {
      Copy c = {tir_layout(W->f, op->results.data[0]), op->results.data[0], NULL};
      vec_push(W->f->arena, &W->old_converts[root(W, op->operands.data[0])], c);
    }
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) record_definitions(W, op->regions[r]);
  }
}

/* A small load recomputed in every layout its users need is left with
 * none: it goes (tir_dce keeps unused loads, as they may fault; the
 * copies read the same addresses under the same mask). */
static void drop_replaced_loads(Rewrite *W, TirBlock *b, const int *uses) {
  int kept = 0;
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) drop_replaced_loads(W, op->regions[r], uses);
    int v = op->code == TIR_LOAD ? op->results.data[0] : -1;
    if (v >= 0 && v < W->n && !uses[v] && W->copies[v].len && W->copies[v].data[0].remat) continue;
    b->ops.data[kept++] = op;
  }
  b->ops.len = kept;
}

/* A value whose op died once it was recomputed in another layout gives
 * its number to its first recomputation, so the step changes nothing on
 * its own output (propagation would otherwise put that op back in its
 * operand's layout and recompute it under a new number each time), as
 * old_convert keeps conversions' numbers. */
static void keep_numbers(Rewrite *W) {
  const TirOp **defs = arena_alloc(W->f->arena, sizeof *defs * ((size_t)W->f->types.len + 1));
  tir_index_values(W->f->body, NULL, defs);
  for (int v = 0; v < W->n; v++) {
    const Copy *c = W->copies[v].len ? &W->copies[v].data[0] : NULL;
    if (!W->def[v] || defs[v] || !c || !c->remat || defs[c->value] != c->remat) continue;
    c->remat->results.data[0] = v;
    tir_set_layout(W->f, v, c->layout);
    tir_replace_uses(W->f->body, c->value, v, NULL);
  }
}

void tgir_remove_converts(TirFunc *f, const TgirOptions *o) {
  Rewrite W = {0};
  W.f = f;
  W.n = f->types.len;
  tgir_propagate(f, &W.p);
  size_t n = (size_t)W.n + 1;
  W.def = arena_alloc(f->arena, sizeof *W.def * n);
  W.after = arena_alloc(f->arena, sizeof *W.after * n);
  W.copies = arena_alloc(f->arena, sizeof *W.copies * n);
  W.old_converts = arena_alloc(f->arena, sizeof *W.old_converts * n);
  record_definitions(&W, f->body);
  for (int v = 0; v < W.n; v++) tir_set_layout(f, v, W.p.layout[v]);
  rewrite_operands(&W);
  rebuild(&W, f->body);
  tir_dce(f);
  int *uses = arena_alloc(f->arena, sizeof(int) * ((size_t)f->types.len + 1));
  tir_index_values(f->body, uses, NULL);
  drop_replaced_loads(&W, f->body, uses);
  tir_dce(f); /* the dropped loads' address arithmetic */
  keep_numbers(&W);
}
