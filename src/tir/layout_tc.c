/* Tensor-core and shared-memory layouts (layout.h) and their linear forms.
 *
 * The accumulator and operand layouts follow the PTX ISA's fragment tables
 * of mma.sync.m16n8k{8,16,32} and wgmma.m64nNk*: in every warp, lane l
 * holds rows l/4 and l/4 + 8 of each 16-row tile, and along the other
 * dimension the pair, single or quad of elements at (l % 4) * kWidth.  The
 * shared layouts map each element to a memory offset with XOR swizzles, so
 * their linear forms have bases that are not single bits. */
#include "layout_impl.h"

#include <string.h>

static int64_t product_of(const int *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p *= v[i];
  return p;
}

/* ---- making them ---- */

const Layout *layout_mma(LayoutTable *t, int version, int rank, const int *wpc, const int *instr, const char **why) {
  if (version != 2 && version != 3) return *why = "an mma layout has versionMajor 2 or 3", NULL;
  if (rank < 2 || rank > 3 || (version == 3 && rank != 2))
    return *why = "an mma layout has rank 2 (version 2 also 3, batched)", NULL;
  for (int i = 0; i < rank; i++)
    if (!layout_is_pow2(wpc[i]) || wpc[i] > 32) return *why = "warps per CTA must be powers of two", NULL;
  if (product_of(wpc, rank) > 32) return *why = "more than 32 warps", NULL;
  if (version == 3 && wpc[0] % 4) return *why = "a version 3 mma layout has warps along M in groups of 4", NULL;
  if (instr[0] != 16 || (version == 2 && instr[1] != 8) || instr[1] < 8 || instr[1] > 256 || !layout_is_pow2(instr[1]))
    return *why = "an mma instruction shape is 16 x 8 (version 2) or 16 x n, n a power of two from 8 to 256", NULL;
  if (version == 3 && instr[2] != 8 && instr[2] != 16 && instr[2] != 32)
    return *why = "a version 3 instruction's k is 8, 16 or 32", NULL;
  Layout l = layout_blank(LAYOUT_MMA, rank, (int)product_of(wpc, rank));
  l.version = version;
  memcpy(l.warps_per_cta, wpc, sizeof(int) * (size_t)rank);
  l.instr[0] = 16;
  l.instr[1] = instr[1];
  l.instr[2] = version == 3 ? instr[2] : 0;
  return layout_intern(t, &l);
}

static int valid_order(const int *order, int rank) {
  int seen[MAX_RANK] = {0};
  for (int i = 0; i < rank; i++) {
    if (order[i] < 0 || order[i] >= rank || seen[order[i]]) return 0;
    seen[order[i]] = 1;
  }
  return 1;
}

const Layout *layout_shared(LayoutTable *t, int rank, int vec, int per_phase, int max_phase, const int *order,
                            const char **why) {
  if (rank < 1 || rank > MAX_RANK || !valid_order(order, rank))
    return *why = "a shared layout's order is a permutation of its dimensions", NULL;
  if (!layout_is_pow2(vec) || !layout_is_pow2(per_phase) || !layout_is_pow2(max_phase) || vec > 1024 ||
      per_phase > 1024 || max_phase > 1024)
    return *why = "vec, perPhase and maxPhase must be powers of two", NULL;
  Layout l = layout_blank(LAYOUT_SHARED, rank, 0);
  l.vec = vec;
  l.per_phase = per_phase;
  l.max_phase = max_phase;
  memcpy(l.order, order, sizeof(int) * (size_t)rank);
  return layout_intern(t, &l);
}

const Layout *layout_nvmma(LayoutTable *t, int rank, int swizzle_bytes, int elem_bits, const int *order,
                           const char **why) {
  if (rank < 2 || rank > MAX_RANK || !valid_order(order, rank))
    return *why = "an nvmma_shared layout has rank 2 or more and an order that is a permutation", NULL;
  if (swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)
    return *why = "swizzlingByteWidth is 32, 64 or 128", NULL;
  if (elem_bits != 8 && elem_bits != 16 && elem_bits != 32) return *why = "elementBitWidth is 8, 16 or 32", NULL;
  Layout l = layout_blank(LAYOUT_NVMMA, rank, 0);
  l.swizzle_bytes = swizzle_bytes;
  l.elem_bits = elem_bits;
  memcpy(l.order, order, sizeof(int) * (size_t)rank);
  return layout_intern(t, &l);
}

/* ldmatrix reads an 8 x 8 matrix of 16-bit words as 8 rows of 16 bytes:
 * rows that share a 128-byte line go to one phase, and each following
 * phase XORs the 16-byte groups with the next row index, so the 8 rows
 * of one ldmatrix land in 8 different groups of banks.  Along K, a group
 * is the 16 bytes of one fragment row; along M or N, 8 elements. */
const Layout *layout_shared_for_dot(LayoutTable *t, int op_index, int elem_bits, int rank, const int64_t *shape,
                                    const int *order) {
  int kdim = op_index == 0 ? rank - 1 : rank - 2, k_width = 32 / elem_bits;
  int64_t row_bytes = shape[order[0]] * elem_bits / 8;
  int per_phase = row_bytes >= 128 ? 1 : (int)(128 / row_bytes);
  int vec = order[0] == kdim ? 4 * k_width : 8, rows = order[0] == kdim ? 8 : 4 * k_width;
  int max_phase = rows / per_phase > 1 ? rows / per_phase : 1;
  const char *why;
  return layout_shared(t, rank, vec, per_phase, max_phase, order, &why);
}

const Layout *layout_nvmma_for(LayoutTable *t, int elem_bits, int rank, const int64_t *shape, const int *order) {
  int64_t bytes = shape[order[0]] * elem_bits / 8;
  int swizzle = bytes >= 128 ? 128 : bytes >= 64 ? 64 : bytes >= 32 ? 32 : 0;
  const char *why;
  return swizzle ? layout_nvmma(t, rank, swizzle, elem_bits, order, &why) : NULL;
}

const Layout *layout_shared_buffers(LayoutTable *t, const Layout *l) {
  Layout b = *l;
  b.rank = l->rank + 1;
  for (int i = 0; i < l->rank; i++) b.order[i] = l->order[i] + 1;
  b.order[l->rank] = 0;
  return layout_intern(t, &b);
}

const Layout *layout_shared_slot(LayoutTable *t, const Layout *l) {
  Layout s = *l;
  s.rank = l->rank - 1;
  memset(s.order, 0, sizeof s.order);
  for (int i = 0, j = 0; i < l->rank; i++)
    if (l->order[i]) s.order[j++] = l->order[i] - 1;
  return layout_intern(t, &s);
}

/* ---- accumulators ---- */

typedef struct Bases {
  LinearLayout *ll;
  int64_t stride[MAX_RANK];
  const char **why;
} Bases;

static int reg(Bases *B, int d, int64_t c) { return layout_push_reg(B->ll, layout_basis(B->ll, B->stride, d, c), B->why); }
static void lane(Bases *B, int d, int64_t c) { B->ll->lane[B->ll->n_lane++] = d < 0 ? 0 : layout_basis(B->ll, B->stride, d, c); }
static void warp(Bases *B, int d, int64_t c) { B->ll->warp[B->ll->n_warp++] = d < 0 ? 0 : layout_basis(B->ll, B->stride, d, c); }

/* Registers repeating a pass of `pass` elements along d over the tile. */
static int repeat(Bases *B, int d, int64_t pass) {
  for (int64_t c = pass; c < B->ll->shape[d]; c <<= 1)
    if (reg(B, d, c)) return -1;
  return 0;
}

/* Warp bases of the parent's warps: along M (as `m_dim`, 16 rows each),
 * then N (as `n_dim`, `n_step` columns each), then the batch; -1: copies. */
static void mma_warps(Bases *B, const Layout *p, int m_dim, int n_dim, int64_t n_step) {
  int r = p->rank, wm = p->warps_per_cta[r - 2], wn = p->warps_per_cta[r - 1], wb = r == 3 ? p->warps_per_cta[0] : 1;
  for (int64_t c = 1; c < wm; c <<= 1) warp(B, m_dim, 16 * c);
  for (int64_t c = 1; c < wn; c <<= 1) warp(B, n_dim, n_step * c);
  for (int64_t c = 1; c < wb; c <<= 1) warp(B, 0, c);
}

int layout_mma_linear(const Layout *l, LinearLayout *ll, const char **why) {
  Bases B = {ll, {0}, why};
  layout_strides(ll->rank, ll->shape, B.stride);
  int r = ll->rank, m = r - 2, n = r - 1, tn = l->instr[1];
  int wm = l->warps_per_cta[m], wn = l->warps_per_cta[n], wb = r == 3 ? l->warps_per_cta[0] : 1;
  /* a tile smaller than the instruction (a slice's parent over a size-1 dimension) drops those bases:
   * its elements are replicated; dots check that their tiles hold whole instructions */
  if (reg(&B, n, 1) || reg(&B, m, 8)) return -1;
  for (int64_t c = 8; c < tn; c <<= 1)
    if (reg(&B, n, c)) return -1;
  lane(&B, n, 2), lane(&B, n, 4), lane(&B, m, 1), lane(&B, m, 2), lane(&B, m, 4);
  mma_warps(&B, l, m, n, tn);
  if (repeat(&B, n, (int64_t)tn * wn) || repeat(&B, m, 16 * (int64_t)wm)) return -1;
  return r == 3 ? repeat(&B, 0, wb) : 0;
}

/* ---- operands of mma.sync (and wgmma's register A) ----
 * One instruction's A is 16 x 8kWidth, B 8kWidth x 8: registers hold kWidth
 * consecutive K elements, then (A) the row 8 below, then the K half 4kWidth
 * further; lanes hold K groups (l % 4) and rows or columns (l / 4). */
int layout_mma_operand_linear(const Layout *l, LinearLayout *ll, const char **why) {
  const Layout *p = l->parent;
  Bases B = {ll, {0}, why};
  layout_strides(ll->rank, ll->shape, B.stride);
  int r = ll->rank, a = l->op_index == 0, kw = l->k_width;
  int kd = a ? r - 1 : r - 2, od = a ? r - 2 : r - 1, m = r - 2, n = r - 1;
  if (kw != 1 && kw != 2 && kw != 4) return *why = "an mma operand's kWidth is 1, 2 or 4", -1;
  if (!a && p->version == 3) return *why = "a version 3 dot reads B from shared memory", -1;
  if (ll->shape[kd] < 8 * kw || ll->shape[od] < (a ? 16 : 8))
    return *why = "an mma operand's tile must hold one instruction's operand", -1;
  for (int64_t c = 1; c < kw; c <<= 1)
    if (reg(&B, kd, c)) return -1;
  if ((a && reg(&B, od, 8)) || reg(&B, kd, 4 * kw)) return -1;
  lane(&B, kd, kw), lane(&B, kd, 2 * kw), lane(&B, od, 1), lane(&B, od, 2), lane(&B, od, 4);
  mma_warps(&B, p, a ? m : -1, a ? -1 : n, p->instr[1]);
  if (repeat(&B, kd, 8 * kw)) return -1;
  int w_other = p->warps_per_cta[od];
  if (repeat(&B, od, (a ? 16 : p->instr[1]) * (int64_t)w_other)) return -1;
  return r == 3 ? repeat(&B, 0, p->warps_per_cta[0]) : 0;
}

/* ---- shared memory ---- */

/* The memory offset, in elements, of the element at `coord`. */
static int64_t shared_offset(const Layout *l, const int64_t *shape, const int64_t *coord) {
  if (l->rank == 1) return coord[0];
  int c = l->order[0], row = l->order[1];
  int64_t x = coord[c], y = coord[row], cols = shape[c], in_rows;
  if (l->kind == LAYOUT_SHARED) {
    int64_t groups = cols / l->vec > 1 ? cols / l->vec : 1;
    int64_t group = (x / l->vec) ^ (((y / l->per_phase) % l->max_phase) & (groups - 1));
    in_rows = y * cols + group * l->vec + x % l->vec;
  } else {
    int64_t width = l->swizzle_bytes * 8 / l->elem_bits, chunk = 128 / l->elem_bits, in = x % width;
    int64_t swizzled = (in / chunk) ^ ((y / (128 / l->swizzle_bytes)) % (l->swizzle_bytes / 16));
    in_rows = (x / width) * shape[row] * width + y * width + swizzled * chunk + in % chunk;
  }
  int64_t off = in_rows, stride = cols * shape[row];
  for (int i = 2; i < l->rank; i++) {
    off += coord[l->order[i]] * stride;
    stride *= shape[l->order[i]];
  }
  return off;
}

int layout_shared_linear(const Layout *l, LinearLayout *ll, const char **why) {
  int c = l->order[0];
  if (l->kind == LAYOUT_NVMMA && ll->shape[c] * l->elem_bits < l->swizzle_bytes * 8)
    return *why = "the tile's contiguous dimension is narrower than the swizzle", -1;
  int64_t stride[MAX_RANK];
  layout_strides(ll->rank, ll->shape, stride);
  for (int d = ll->rank - 1; d >= 0; d--) /* element bits from the lowest */
    for (int64_t x = 1; x < ll->shape[d]; x <<= 1) {
      int64_t coord[MAX_RANK] = {0};
      coord[d] = x;
      if (ll->n_reg == MAX_REG_BITS) return *why = "a shared buffer of more than 2^20 elements", -1;
      ll->reg[ll->n_reg++] = (uint32_t)shared_offset(l, ll->shape, coord);
    }
  return 0;
}
