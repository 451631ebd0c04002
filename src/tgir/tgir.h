/* GPU-layout IR, as Triton's TTGIR: tile IR in which every tile value has a
 * layout (layout.h) saying which thread holds which element, with explicit
 * convert_layout ops where a value moves between layouts.  Scalars have no
 * layout: every thread holds them.
 *
 * The representation is a TirFunc whose `layouts` are filled in; the
 * printer shows them (#blocked0 = ... definitions, then ": fp32[1024]
 * #blocked0" on each tile value). */
#ifndef TILE_TGIR_H
#define TILE_TGIR_H

#include "../tir/tir.h"
#include "../support/arch.h"
#include "../tir/layout.h"
#include "tile/tile.h"

typedef struct TgirOptions {
  int compute_capability; /* 80, 86, 89, 90: what the layouts may assume (below 80: no tensor cores) */
  int wgmma;              /* sm_90a: wgmma may be used (compute_capability 90) */
  const char *passes;     /* optional steps (--passes): "remove-converts", "all", "none"; NULL: all */
  int refill;             /* tile_refill: when a pipelined loop refills its buffers (pipeline.c, plan_buffers) */
  int tma;                /* the GPU (not the simulator) takes TMA copies: pipelined wgmma operands may use them */
  int tma_store;          /* sm_90a, the GPU or the simulator: tensor descriptors' stores may go by TMA */
} TgirOptions;

/* Tile IR to GPU-layout IR, in place: assign-layouts gives every tile value
 * a layout (coalesced layouts for memory ops from AxisInfo, the FMA
 * accumulator layout for dots) and a convert_layout wherever a use needs
 * another.  The verifier and the optional steps (remove-converts,
 * accelerate-matmul, ...; src/tgir/passes.h) follow, run by the driver's
 * pass manager (passes_to_tgir), for the function's num_warps (set by the
 * pipeline from the options or the config, checked where it entered). */
void tgir_convert(TirFunc *f);

/* A fresh layout table holding only the layouts values use, in the old
 * order: what every step ends with, so printed definitions are used ones. */
void tgir_compact_layouts(TirFunc *f);

/* GPU-layout IR read from text (tir_read of tgir_print's output), made
 * ready for the steps: a layout table if the text had none, and the
 * verifier.  Returns 0 or the number of errors reported to `d`. */
int tgir_check_text(TirFunc *f, Diags *d);

/* Checks the GPU-layout IR: every tile value has a layout of its rank and
 * num_warps, elementwise operands share their result's layout, shape ops
 * relate their layouts as codegen expects.  Returns the number of problems
 * reported to `d`. */
int tgir_verify(const TirFunc *f, Diags *d);

/* Prints GPU-layout IR: the layout definitions, then the function with a
 * layout on every tile value (docs/tgir.md). */
void tgir_print(const TirFunc *f, Buf *out);

#endif
