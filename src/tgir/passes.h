/* The steps of the conversion to GPU-layout IR and the layout rules they
 * share (internal to src/tgir; tgir.h is the interface).  The steps, in
 * order (convert.c runs assign-layouts, the driver's pass manager the rest,
 * with the verifier after each):
 *   assign-layouts   assign.c: a layout for every tile value, anchors
 *                    (memory ops coalesced, dots) first, a convert_layout
 *                    wherever a use needs another layout;
 *   remove-converts  propagate.c chooses one layout per value from the
 *                    anchors, remove_converts.c rebuilds the function with
 *                    them, rematerialising cheap producers, converting
 *                    only where a value must change layout. */
#ifndef TILE_TGIR_PASSES_H
#define TILE_TGIR_PASSES_H

#include "../tir/passes.h"
#include "tgir.h"

/* The ops a rewrite is emitting, in order. */
typedef Vec(TirOp *) OpList;

/* ---- rules.c: what each op needs of its operands' layouts ---- */

/* The layout op's operand k must have when the op's own layout is `own`
 * (tgir_own_layout's, or the one a step is giving it).  `parent` is the
 * op whose region ends with op (for yield and condition).  NULL when the
 * operand is a scalar or may have any layout.  With `rule`, a phrase
 * naming the rule, for diagnostics. */
const Layout *tgir_operand_need(const TirFunc *f, const TirOp *op, int k, const Layout *own, const TirOp *parent,
                                const char **rule);
/* An op's own layout: its first result's, or for store and assert, their
 * first operand's; NULL for ops on scalars and ops without a layout. */
const Layout *tgir_own_layout(const TirFunc *f, const TirOp *op);
/* The layout reduce and trans give their result when the operand has
 * `operand` (NULL if there is none: trans of a non-blocked layout). */
const Layout *tgir_result_layout(const TirFunc *f, const TirOp *op, const Layout *operand);
/* Whether the value is a tile (has a layout in GPU-layout IR). */
int tgir_is_tile(const TirFunc *f, int value);
/* Whether buffer `view` (rank 2) holds each element [i, j] at the bytes where buffer `of` holds [j, i]. */
int tgir_views_transposed(const TirFunc *f, int of, int view);

/* ---- the steps ---- */

/* coalesce.c: per value id, the layout chosen for each memory op's
 * pointer operand (NULL elsewhere). */
const Layout **tgir_coalesce(TirFunc *f, LayoutTable *table);
/* assign.c */
void tgir_assign(TirFunc *f, LayoutTable *table, const Layout **coalesced);

/* propagate.c: one layout per value, from the anchors. */
typedef struct LayoutEntry {
  TirOp *op;
  const TirOp *parent;   /* the op whose region holds op; NULL at the top */
  const Layout *own;     /* op's own layout (result's, a store's anchor); NULL: none */
  int depth;             /* loops (for, while) around op */
  int exit;              /* 1: after a structured op's regions (its results become known) */
} LayoutEntry;

typedef struct Propagation {
  Vec(LayoutEntry) entries; /* every op in program order; structured ops twice (enter, exit) */
  const Layout **layout;    /* per value id: the chosen layout (NULL: scalar, convert result) */
  int *root;                /* per value id: itself, or for a convert_layout result what it converts */
} Propagation;
/* Chooses the layouts of f, which it does not change. */
void tgir_propagate(TirFunc *f, Propagation *out);

/* tma.c: how the tensor memory accelerator brings a pipelined load of
 * `loop` into a buffer of layout `buffer`: the tensor map it adds to
 * f->tensor_maps, and iteration iv's box origin, innermost coordinate
 * first: origin[i] (a loop-invariant scalar value id, -1: 0), plus
 * (iv - iv_base) * per_iv along coordinate `moving` (iv_base a
 * loop-invariant value id, -1: 0; `load` is one the pipeliner copies by cp.async, so
 * its `other` is 0 if any); extent[i]: the parameter giving the tensor's
 * extent along coordinate i (-1: a constant >= 1).  0 (nothing added) if
 * it cannot. */
typedef struct TmaLoad {
  int map;
  int origin[2];
  int moving;
  int64_t per_iv;
  int iv_base;
  int extent[2];
  int bytes;             /* the tile's */
} TmaLoad;
int tma_plan_load(TirFunc *f, const AxisInfo *axis, const TirOp *loop, const TirOp *load, const Layout *buffer,
                  TmaLoad *out);

/* tma.c: how TMA writes a store of the descriptor form (a tensor
 * descriptor's, `0 <=` in its mask): the buffer layout its tile goes
 * through (NVMMA, the widest swizzle the tile's rows fill), the tensor
 * map it adds and the box origin as a TmaLoad's (moving, per_iv unused);
 * NULL (nothing added) if it cannot. */
const Layout *tma_plan_store(TirFunc *f, const AxisInfo *axis, const TirOp *store, TmaLoad *out);

/* tma_origin.c: coordinate i of t's box origin, as the i32 TMA takes, the
 * ops appended to `out`: t->origin[i] plus, with iv >= 0 (a load's
 * iteration), (iv - iv_base) * per_iv along `moving`; an i64 one beyond
 * the i32 range kept out of bounds; `empty_at` where the tensor's extent
 * along i is below 1 (a load's: the box or more below 0; a store's, which
 * must not start below 0: ARCH_MAX_TENSOR_MAP_DIM, past every extent). */
int tgir_tma_origin(TirFunc *f, OpList *out, const TmaLoad *t, int i, int iv, int64_t empty_at, Loc loc);

/* The steps --passes can name (src/driver/passes.def says their order). */
void tgir_remove_converts(TirFunc *f, const TgirOptions *o);
void tgir_accelerate_matmul(TirFunc *f, const TgirOptions *o);
void tgir_stage_operands(TirFunc *f, const TgirOptions *o);
void tgir_pipeline(TirFunc *f, const TgirOptions *o);
void tgir_tma_store(TirFunc *f, const TgirOptions *o);

#endif
