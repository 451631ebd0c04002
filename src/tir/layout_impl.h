/* What layout.c and layout_tc.c share (internal to src/tgir). */
#ifndef TILE_TGIR_LAYOUT_IMPL_H
#define TILE_TGIR_LAYOUT_IMPL_H

#include "layout.h"

int layout_is_pow2(int64_t x);
/* A zeroed layout, so interning can compare bytes. */
Layout layout_blank(LayoutKind kind, int rank, int num_warps);
/* Row-major strides of a shape. */
void layout_strides(int rank, const int64_t *shape, int64_t *stride);
/* The flat offset of coordinate c along dim d, 0 when the tile is smaller. */
uint32_t layout_basis(const LinearLayout *ll, const int64_t *stride, int d, int64_t c);
/* Appends a register basis; a zero one is dropped (registers never repeat). */
int layout_push_reg(LinearLayout *ll, uint32_t b, const char **why);
void layout_init_linear(LinearLayout *ll, int rank, const int64_t *shape);

/* layout_tc.c: the linear forms of the tensor-core and shared layouts */
int layout_mma_linear(const Layout *l, LinearLayout *ll, const char **why);
int layout_mma_operand_linear(const Layout *l, LinearLayout *ll, const char **why);
int layout_shared_linear(const Layout *l, LinearLayout *ll, const char **why);

#endif
