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
#include "layout.h"

typedef struct TgirOptions {
  int num_warps;          /* warps per program (a power of two, 1..32) */
  int compute_capability; /* 80, 86, 89, 90: what the layouts may assume */
} TgirOptions;

/* Tile IR to GPU-layout IR, in place: assigns a layout to every tile value
 * (coalesced layouts for memory ops from AxisInfo, propagated through the
 * computations that feed and use them, FMA dot operand layouts), inserts
 * convert_layout where a use needs another layout, then removes needless
 * conversions.  With `dump`, prints the IR after each step into it.
 * Returns 0, or the number of errors reported to `d`. */
int tgir_convert(TirFunc *f, const TgirOptions *o, Diags *d, Buf *dump);

/* Checks the GPU-layout IR: every tile value has a layout of its rank and
 * num_warps, elementwise operands share their result's layout, shape ops
 * relate their layouts as codegen expects.  Returns the number of problems
 * reported to `d`. */
int tgir_verify(const TirFunc *f, Diags *d);

/* Prints GPU-layout IR: the layout definitions, then the function with a
 * layout on every tile value (docs/tgir.md). */
void tgir_print(const TirFunc *f, Buf *out);

#endif
