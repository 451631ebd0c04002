/* Layouts and their linear form (see layout.h): blocked, slice and the FMA
 * dot operands here; tensor-core and shared-memory layouts in layout_tc.c. */
#include "layout_impl.h"

#include <string.h>

int layout_is_pow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/* The product, saturated at 2^40 (sizes come from text too). */
static int64_t product(const int *v, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) p = p * v[i] > ((int64_t)1 << 40) ? (int64_t)1 << 40 : p * v[i];
  return p;
}

static int is_permutation(const int *order, int rank) {
  int seen[MAX_RANK] = {0};
  for (int i = 0; i < rank; i++) {
    if (order[i] < 0 || order[i] >= rank || seen[order[i]]) return 0;
    seen[order[i]] = 1;
  }
  return 1;
}

/* ---- interning ---- */

const Layout *layout_intern(LayoutTable *t, const Layout *l) {
  for (int i = 0; i < t->list.len; i++) {
    Layout probe = *t->list.data[i];
    probe.id = l->id;
    if (!memcmp(&probe, l, sizeof probe)) return t->list.data[i];
  }
  Layout *copy = arena_alloc(t->arena, sizeof *copy);
  *copy = *l;
  int same_kind = 0;
  for (int i = 0; i < t->list.len; i++) same_kind += t->list.data[i]->kind == l->kind;
  copy->id = same_kind;
  vec_push(t->arena, &t->list, copy);
  return copy;
}

Layout layout_blank(LayoutKind kind, int rank, int num_warps) {
  Layout l;
  memset(&l, 0, sizeof l);
  l.kind = kind;
  l.rank = rank;
  l.num_warps = num_warps;
  return l;
}

const Layout *layout_blocked(LayoutTable *t, int rank, const int *spt, const int *tpw, const int *wpc,
                             const int *order, const char **why) {
  if (rank < 1 || rank > MAX_RANK) return *why = "a blocked layout needs a rank from 1 to 8", NULL;
  for (int i = 0; i < rank; i++)
    if (!layout_is_pow2(spt[i]) || !layout_is_pow2(tpw[i]) || !layout_is_pow2(wpc[i]))
      return *why = "sizes per thread, threads per warp and warps per CTA must be powers of two", NULL;
  if (product(tpw, rank) != WARP_SIZE) return *why = "threads per warp must multiply to 32", NULL;
  if (product(wpc, rank) > (1 << MAX_WARP_BITS)) return *why = "more than 32 warps", NULL;
  if (!is_permutation(order, rank)) return *why = "the order must be a permutation of the dimensions", NULL;
  Layout l = layout_blank(LAYOUT_BLOCKED, rank, (int)product(wpc, rank));
  memcpy(l.size_per_thread, spt, sizeof(int) * (size_t)rank);
  memcpy(l.threads_per_warp, tpw, sizeof(int) * (size_t)rank);
  memcpy(l.warps_per_cta, wpc, sizeof(int) * (size_t)rank);
  memcpy(l.order, order, sizeof(int) * (size_t)rank);
  return layout_intern(t, &l);
}

static int clamp(int64_t v, int64_t lo, int64_t hi) { return (int)(v < lo ? lo : v > hi ? hi : v); }

const Layout *layout_default(LayoutTable *t, int rank, const int64_t *shape, const int *size_per_thread,
                             const int *order, int num_warps) {
  if (rank < 1) return NULL; /* a scalar carried by a loop or an if */
  int spt[MAX_RANK], tpw[MAX_RANK], wpc[MAX_RANK], ord[MAX_RANK];
  for (int i = 0; i < rank; i++) {
    spt[i] = size_per_thread ? size_per_thread[i] : 1;
    ord[i] = order ? order[i] : rank - 1 - i;
  }
  int lanes = WARP_SIZE, warps = num_warps, threads = WARP_SIZE * num_warps, used_lanes = 1, used_warps = 1;
  for (int i = 0; i < rank - 1; i++) {
    int d = ord[i];
    int64_t wanted = shape[d] / spt[d] > 1 ? shape[d] / spt[d] : 1;
    int here = clamp(threads, 1, wanted);
    tpw[d] = clamp(here, 1, lanes);
    wpc[d] = clamp(here / tpw[d], 1, warps);
    lanes /= tpw[d];
    warps /= wpc[d];
    threads /= here;
    used_lanes *= tpw[d];
    used_warps *= wpc[d];
  }
  tpw[ord[rank - 1]] = WARP_SIZE / used_lanes;
  wpc[ord[rank - 1]] = num_warps / used_warps;
  const char *why;
  return layout_blocked(t, rank, spt, tpw, wpc, ord, &why);
}

const Layout *layout_slice(LayoutTable *t, int dim, const Layout *parent) {
  Layout l = layout_blank(LAYOUT_SLICE, parent->rank - 1, parent->num_warps);
  l.dim = dim;
  l.parent = parent;
  return layout_intern(t, &l);
}

const Layout *layout_dot_operand(LayoutTable *t, int op_index, const Layout *parent, int k_width) {
  Layout l = layout_blank(LAYOUT_DOT_OPERAND, parent->rank, parent->num_warps);
  l.op_index = op_index;
  l.parent = parent;
  l.k_width = k_width;
  return layout_intern(t, &l);
}

const Layout *layout_reintern(LayoutTable *t, const Layout *l) {
  Layout copy = *l;
  if (l->parent) copy.parent = layout_reintern(t, l->parent);
  return layout_intern(t, &copy);
}

const Layout *layout_transposed(LayoutTable *t, const Layout *l, const int64_t *perm, int inverse) {
  if (!l || l->kind != LAYOUT_BLOCKED) return NULL;
  int from[MAX_RANK], to[MAX_RANK], spt[MAX_RANK], tpw[MAX_RANK], wpc[MAX_RANK], order[MAX_RANK], p[MAX_RANK];
  for (int d = 0; d < l->rank; d++) p[d] = (int)perm[d];
  if (!is_permutation(p, l->rank)) return NULL;
  for (int d = 0; d < l->rank; d++) { /* new dimension j takes old dimension from[j] */
    if (inverse) from[perm[d]] = d;
    else from[d] = (int)perm[d];
  }
  for (int d = 0; d < l->rank; d++) to[from[d]] = d;
  for (int d = 0; d < l->rank; d++) {
    spt[d] = l->size_per_thread[from[d]];
    tpw[d] = l->threads_per_warp[from[d]];
    wpc[d] = l->warps_per_cta[from[d]];
    order[d] = to[l->order[d]];
  }
  const char *why;
  return layout_blocked(t, l->rank, spt, tpw, wpc, order, &why);
}

const Layout *layout_joined(LayoutTable *t, const Layout *l, int inverse) {
  if (!l || l->kind != LAYOUT_BLOCKED) return NULL;
  int rank = inverse ? l->rank - 1 : l->rank + 1, pair = inverse ? rank : l->rank;
  int spt[MAX_RANK], tpw[MAX_RANK], wpc[MAX_RANK], order[MAX_RANK];
  if (rank < 1 || rank > MAX_RANK) return NULL;
  if (inverse && (l->threads_per_warp[pair] != 1 || l->warps_per_cta[pair] != 1)) return NULL;
  for (int d = 0; d < rank; d++) {
    spt[d] = d == pair ? 2 : l->size_per_thread[d];
    tpw[d] = d == pair ? 1 : l->threads_per_warp[d];
    wpc[d] = d == pair ? 1 : l->warps_per_cta[d];
  }
  int n = 0;
  if (!inverse) order[n++] = pair;
  for (int i = 0; i < l->rank; i++)
    if (l->order[i] != pair || !inverse) order[n++] = l->order[i];
  const char *why;
  return layout_blocked(t, rank, spt, tpw, wpc, order, &why);
}

/* Elements a thread holds along dimension d (at least 1). */
static int64_t extent_per_thread(const int64_t *shape, const int *tpw, const int *wpc, int d) {
  int64_t e = shape[d] / ((int64_t)tpw[d] * wpc[d]);
  return e > 1 ? e : 1;
}

/* The dimension the next doubling of lanes or warps goes to: M or N,
 * whichever leaves a thread more elements, while it has elements to
 * spread; then a batch dimension; else M (replication). */
static int next_thread_dim(int rank, const int64_t *shape, const int *spt, const int *tpw, const int *wpc) {
  int m = rank - 2, n = rank - 1;
  int m_room = extent_per_thread(shape, tpw, wpc, m) > spt[m], n_room = extent_per_thread(shape, tpw, wpc, n) > spt[n];
  if (m_room && (!n_room || extent_per_thread(shape, tpw, wpc, m) > extent_per_thread(shape, tpw, wpc, n))) return m;
  if (n_room) return n;
  for (int d = 0; d < m; d++)
    if (extent_per_thread(shape, tpw, wpc, d) > 1) return d;
  return m;
}

const Layout *layout_fma_accumulator(LayoutTable *t, int rank, const int64_t *shape, int num_warps) {
  int spt[MAX_RANK], tpw[MAX_RANK], wpc[MAX_RANK], order[MAX_RANK];
  for (int d = 0; d < rank; d++) spt[d] = tpw[d] = wpc[d] = 1, order[d] = rank - 1 - d;
  int m = rank - 2, n = rank - 1;
  int64_t per_thread = shape_numel(rank, shape) / ((int64_t)WARP_SIZE * num_warps);
  while ((int64_t)spt[m] * spt[n] < per_thread) { /* a 4x4 block at most, squarest first */
    if (spt[n] <= spt[m] && spt[n] < 4 && spt[n] * 2 <= shape[n]) spt[n] *= 2;
    else if (spt[m] < 4 && spt[m] * 2 <= shape[m]) spt[m] *= 2;
    else if (spt[n] < 4 && spt[n] * 2 <= shape[n]) spt[n] *= 2;
    else break;
  }
  for (int lanes = 1; lanes < WARP_SIZE; lanes *= 2) tpw[next_thread_dim(rank, shape, spt, tpw, wpc)] *= 2;
  for (int warps = 1; warps < num_warps; warps *= 2) wpc[next_thread_dim(rank, shape, spt, tpw, wpc)] *= 2;
  const char *why;
  return layout_blocked(t, rank, spt, tpw, wpc, order, &why);
}

/* ---- linear layouts ---- */

void layout_strides(int rank, const int64_t *shape, int64_t *stride) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= shape[d];
  }
}

uint32_t layout_basis(const LinearLayout *ll, const int64_t *stride, int d, int64_t c) {
  return c < ll->shape[d] ? (uint32_t)(c * stride[d]) : 0;
}

int layout_push_reg(LinearLayout *ll, uint32_t b, const char **why) {
  if (!b) return 0; /* a register never repeats another */
  if (ll->n_reg == MAX_REG_BITS) return *why = "the tile needs more than 2^20 registers per thread", -1;
  ll->reg[ll->n_reg++] = b;
  return 0;
}

void layout_init_linear(LinearLayout *ll, int rank, const int64_t *shape) {
  memset(ll, 0, sizeof *ll);
  ll->rank = rank;
  if (rank) memcpy(ll->shape, shape, sizeof(int64_t) * (size_t)rank); /* scalars pass no shape */
}

static int blocked_linear(const Layout *l, LinearLayout *ll, const char **why) {
  int64_t stride[MAX_RANK];
  layout_strides(ll->rank, ll->shape, stride);
  const int *spt = l->size_per_thread, *tpw = l->threads_per_warp, *wpc = l->warps_per_cta;
  for (int i = 0; i < l->rank; i++) {
    int d = l->order[i];
    for (int64_t c = 1; c < spt[d]; c <<= 1)
      if (layout_push_reg(ll, layout_basis(ll, stride, d, c), why)) return -1;
  }
  for (int i = 0; i < l->rank; i++) {
    int d = l->order[i];
    for (int64_t c = spt[d]; c < (int64_t)spt[d] * tpw[d]; c <<= 1) ll->lane[ll->n_lane++] = layout_basis(ll, stride, d, c);
  }
  for (int i = 0; i < l->rank; i++) {
    int d = l->order[i];
    for (int64_t c = (int64_t)spt[d] * tpw[d]; c < (int64_t)spt[d] * tpw[d] * wpc[d]; c <<= 1)
      ll->warp[ll->n_warp++] = layout_basis(ll, stride, d, c);
  }
  for (int i = 0; i < l->rank; i++) { /* the tile is larger than one pass of the CTA: repeat in registers */
    int d = l->order[i];
    for (int64_t c = (int64_t)spt[d] * tpw[d] * wpc[d]; c < ll->shape[d]; c <<= 1)
      if (layout_push_reg(ll, layout_basis(ll, stride, d, c), why)) return -1;
  }
  return 0;
}

/* Re-expresses an offset of shape `from` in shape `to`, which has the same
 * dimensions except `dropped` (of size 1 in `from`) or `inserted`. */
static uint32_t reshape_offset(uint32_t off, int from_rank, const int64_t *from, int to_rank, const int64_t *to,
                               int dropped, int inserted, int64_t inserted_coord) {
  int64_t fstride[MAX_RANK], tstride[MAX_RANK], coords[MAX_RANK], out[MAX_RANK] = {0};
  layout_strides(from_rank, from, fstride);
  layout_strides(to_rank, to, tstride);
  for (int d = 0; d < from_rank; d++) coords[d] = (off / fstride[d]) % from[d];
  for (int d = 0, e = 0; e < to_rank; e++) {
    if (e == inserted) {
      out[e] = inserted_coord;
      continue;
    }
    if (d == dropped) d++;
    out[e] = coords[d++];
  }
  uint32_t r = 0;
  for (int e = 0; e < to_rank; e++) r += (uint32_t)(out[e] * tstride[e]);
  return r;
}

/* Maps every basis of `src` (over shape `from`) into `dst` (over `to`). */
static int rebase(const LinearLayout *src, LinearLayout *dst, int dropped, int inserted, const char **why) {
  for (int i = 0; i < src->n_reg; i++) {
    uint32_t b = reshape_offset(src->reg[i], src->rank, src->shape, dst->rank, dst->shape, dropped, inserted, 0);
    if (layout_push_reg(dst, b, why)) return -1;
  }
  dst->n_lane = src->n_lane;
  dst->n_warp = src->n_warp;
  for (int i = 0; i < src->n_lane; i++)
    dst->lane[i] = reshape_offset(src->lane[i], src->rank, src->shape, dst->rank, dst->shape, dropped, inserted, 0);
  for (int i = 0; i < src->n_warp; i++)
    dst->warp[i] = reshape_offset(src->warp[i], src->rank, src->shape, dst->rank, dst->shape, dropped, inserted, 0);
  return 0;
}

static int slice_linear(const Layout *l, LinearLayout *ll, const char **why) {
  int64_t pshape[MAX_RANK];
  for (int d = 0, e = 0; d < l->parent->rank; d++) pshape[d] = d == l->dim ? 1 : ll->shape[e++];
  LinearLayout parent;
  if (layout_linear(l->parent, l->parent->rank, pshape, &parent, why)) return -1;
  return rebase(&parent, ll, l->dim, -1, why);
}

/* FMA operands: a thread holds every K element of the rows (A) or columns
 * (B) of the accumulator elements it holds; the parent's threads along the
 * other operand's dimension hold copies. */
static int dot_operand_linear(const Layout *l, LinearLayout *ll, const char **why) {
  if (l->parent->kind == LAYOUT_MMA) return layout_mma_operand_linear(l, ll, why);
  if (l->parent->kind != LAYOUT_BLOCKED) return *why = "a dot operand's parent must be blocked or mma", -1;
  int r = ll->rank, kdim = l->op_index == 0 ? r - 1 : r - 2;
  int64_t pshape[MAX_RANK], stride[MAX_RANK];
  memcpy(pshape, ll->shape, sizeof(int64_t) * (size_t)r);
  pshape[kdim] = 1; /* the accumulator's layout along M (A) or N (B) */
  LinearLayout parent;
  if (layout_linear(l->parent, r, pshape, &parent, why) || rebase(&parent, ll, -1, -1, why)) return -1;
  layout_strides(r, ll->shape, stride);
  for (int64_t c = 1; c < ll->shape[kdim]; c <<= 1)
    if (layout_push_reg(ll, (uint32_t)(c * stride[kdim]), why)) return -1;
  return 0;
}

int layout_linear(const Layout *l, int rank, const int64_t *shape, LinearLayout *out, const char **why) {
  layout_init_linear(out, rank, shape);
  if (rank != l->rank) return *why = "the layout's rank differs from the tile's", -1;
  for (int d = 0; d < rank; d++) /* but a multi-buffer may hold any number of buffers (its slowest dimension) */
    if (!layout_is_pow2(shape[d]) && !(layout_is_shared(l) && d == l->order[rank - 1] && shape[d] > 0))
      return *why = "tile dimensions must be powers of two", -1;
  switch (l->kind) {
  case LAYOUT_BLOCKED: return blocked_linear(l, out, why);
  case LAYOUT_SLICE: return slice_linear(l, out, why);
  case LAYOUT_DOT_OPERAND: return dot_operand_linear(l, out, why);
  case LAYOUT_MMA: return layout_mma_linear(l, out, why);
  case LAYOUT_SHARED:
  case LAYOUT_NVMMA: return layout_shared_linear(l, out, why);
  }
  return *why = "unknown layout kind", -1;
}

int layout_linear_of(const Layout *l, const Type *t, LinearLayout *out, const char **why) {
  if (t->rank == 0 || !l) {
    layout_init_linear(out, 0, NULL);
    out->n_lane = LANE_BITS;
    return 0;
  }
  return layout_linear(l, t->rank, t->shape, out, why);
}

/* ---- using linear layouts ---- */

uint32_t ll_reg_offset(const LinearLayout *ll, uint32_t r) {
  uint32_t off = 0;
  for (int i = 0; i < ll->n_reg; i++)
    if (r >> i & 1) off ^= ll->reg[i];
  return off;
}

uint32_t ll_offset(const LinearLayout *ll, uint32_t r, uint32_t lane, uint32_t warp) {
  uint32_t off = ll_reg_offset(ll, r);
  for (int i = 0; i < ll->n_lane; i++)
    if (lane >> i & 1) off ^= ll->lane[i];
  for (int i = 0; i < ll->n_warp; i++)
    if (warp >> i & 1) off ^= ll->warp[i];
  return off;
}

/* Gaussian elimination over GF(2): each row keeps which registers bits
 * XOR to it. */
int ll_find_register(const LinearLayout *ll, uint32_t offset) {
  uint32_t rows[MAX_REG_BITS], which[MAX_REG_BITS];
  int n = ll->n_reg;
  for (int i = 0; i < n; i++) {
    rows[i] = ll->reg[i];
    which[i] = 1u << i;
  }
  for (int i = 0; i < n; i++) { /* reduce: row i gets a leading bit no later row has */
    int best = i;
    for (int j = i + 1; j < n; j++)
      if (rows[j] > rows[best]) best = j;
    uint32_t tr = rows[i], tw = which[i];
    rows[i] = rows[best], which[i] = which[best];
    rows[best] = tr, which[best] = tw;
    if (!rows[i]) break;
    uint32_t top = 1u << (31 - __builtin_clz(rows[i]));
    for (int j = 0; j < n; j++)
      if (j != i && (rows[j] & top)) rows[j] ^= rows[i], which[j] ^= which[i];
  }
  uint32_t r = 0;
  for (int i = 0; i < n && offset; i++) {
    if (!rows[i]) break;
    uint32_t top = 1u << (31 - __builtin_clz(rows[i]));
    if (offset & top) offset ^= rows[i], r ^= which[i];
  }
  return offset ? -1 : (int)r;
}

void ll_coords(const LinearLayout *ll, uint32_t offset, int64_t *coords) {
  int64_t stride[MAX_RANK];
  layout_strides(ll->rank, ll->shape, stride);
  for (int d = 0; d < ll->rank; d++) coords[d] = (offset / stride[d]) % ll->shape[d];
}

uint32_t ll_flat(const LinearLayout *ll, const int64_t *coords) {
  int64_t stride[MAX_RANK];
  layout_strides(ll->rank, ll->shape, stride);
  uint32_t off = 0;
  for (int d = 0; d < ll->rank; d++) off += (uint32_t)(coords[d] * stride[d]);
  return off;
}

int ll_same_threads(const LinearLayout *a, const LinearLayout *b) {
  if (a->n_lane != b->n_lane || a->n_warp != b->n_warp) return 0;
  return !memcmp(a->lane, b->lane, sizeof(uint32_t) * (size_t)a->n_lane) &&
         !memcmp(a->warp, b->warp, sizeof(uint32_t) * (size_t)a->n_warp);
}

int ll_contiguous_registers(const LinearLayout *ll, int dim) {
  int64_t stride[MAX_RANK];
  layout_strides(ll->rank, ll->shape, stride);
  int k = 0;
  while (k < ll->n_reg && ((int64_t)1 << k) < ll->shape[dim] && ll->reg[k] == (uint32_t)(stride[dim] << k)) k++;
  return 1 << k;
}

/* ---- reshapes: a linear layout's flat offsets read in another shape ---- */

/* The dimension whose coordinate a basis sets, if it sets one
 * coordinate only (blocked layouts' bases do); -1 otherwise. */
static int basis_dim(const LinearLayout *ll, uint32_t b) {
  int64_t c[MAX_RANK];
  int dim = -1;
  ll_coords(ll, b, c);
  for (int d = 0; d < ll->rank; d++)
    if (c[d]) {
      if (dim >= 0 || (c[d] & (c[d] - 1))) return -1;
      dim = d;
    }
  return dim;
}

/* How many low coordinates of dim d one thread holds in registers. */
static int registers_along(const LinearLayout *ll, int d) {
  int64_t stride[MAX_RANK], c = 1;
  layout_strides(ll->rank, ll->shape, stride);
  while (c < ll->shape[d] && ll_find_register(ll, (uint32_t)(c * stride[d])) >= 0) c <<= 1;
  return (int)c;
}

/* Counts one thread level's bases per dimension (threads[d] *= 2 each)
 * and appends dimensions to `order` as they first appear.  A zero basis
 * (replication) belongs to the dimension before it, as blocked layouts
 * replicate past a dimension's end; a leading one to `spare`. */
static int count_thread_bases(const LinearLayout *ll, const uint32_t *b, int n, int *last, int spare, int *threads,
                              int *order, int *n_order) {
  for (int i = 0; i < n; i++) {
    int d = b[i] ? basis_dim(ll, b[i]) : *last >= 0 ? *last : spare;
    if (d < 0) return -1;
    threads[d] *= 2;
    int seen = 0;
    for (int j = 0; j < *n_order; j++) seen |= order[j] == d;
    if (!seen) order[(*n_order)++] = d;
    *last = d;
  }
  return 0;
}

/* Completes `order` (its first n dimensions, those with threads, fixed)
 * with the others, which may go anywhere: merged in from the last
 * dimension down, so that the order is the default one (last dimension
 * fastest) where the threads allow, and re-splitting a default layout
 * gives it back. */
static void merge_free_dims(int rank, int *order, int n) {
  int fixed[MAX_RANK], used[MAX_RANK] = {0}, out = 0, next = 0;
  for (int i = 0; i < n; i++) fixed[i] = order[i], used[order[i]] = 1;
  for (int d = rank - 1; d >= 0; d--) {
    if (used[d]) continue;
    while (next < n && fixed[next] > d) order[out++] = fixed[next++];
    order[out++] = d;
  }
  while (next < n) order[out++] = fixed[next++];
}

/* Whether two linear layouts over one shape put the same elements in
 * each thread (registers in any order). */
static int same_elements(const LinearLayout *a, const LinearLayout *b) {
  if (a->n_reg != b->n_reg || !ll_same_threads(a, b)) return 0;
  for (int i = 0; i < a->n_reg; i++)
    if (ll_find_register(b, a->reg[i]) < 0) return 0;
  return 1;
}

/* The blocked layout whose linear form over ll's shape is ll (up to the
 * order of registers), or NULL. */
static const Layout *blocked_holding(LayoutTable *t, const LinearLayout *ll, int num_warps) {
  int rank = ll->rank, spt[MAX_RANK], tpw[MAX_RANK], wpc[MAX_RANK], order[MAX_RANK], n_order = 0, last = -1, spare = -1;
  for (int d = rank - 1; d >= 0; d--) {
    spt[d] = registers_along(ll, d);
    tpw[d] = wpc[d] = 1;
    if (spare < 0 && spt[d] >= ll->shape[d]) spare = d; /* where leading replicated threads can go */
  }
  if (count_thread_bases(ll, ll->lane, ll->n_lane, &last, spare, tpw, order, &n_order) ||
      count_thread_bases(ll, ll->warp, ll->n_warp, &last, spare, wpc, order, &n_order))
    return NULL;
  merge_free_dims(rank, order, n_order);
  const char *why;
  const Layout *l = layout_blocked(t, rank, spt, tpw, wpc, order, &why);
  LinearLayout check;
  if (!l || l->num_warps != num_warps || layout_linear(l, rank, ll->shape, &check, &why)) return NULL;
  return same_elements(&check, ll) ? l : NULL;
}

const Layout *layout_reshaped(LayoutTable *t, const Layout *l, int from_rank, const int64_t *from, int to_rank,
                              const int64_t *to) {
  if (!l || layout_is_shared(l) || from_rank < 1 || to_rank < 1) return NULL;
  if (from_rank == to_rank && !memcmp(from, to, sizeof(int64_t) * (size_t)to_rank)) return l;
  if (shape_numel(from_rank, from) != shape_numel(to_rank, to)) return NULL;
  for (int d = 0; d < to_rank; d++)
    if (!layout_is_pow2(to[d])) return NULL;
  LinearLayout ll;
  const char *why;
  if (layout_linear(l, from_rank, from, &ll, &why)) return NULL;
  ll.rank = to_rank; /* row-major flat offsets are the same in both shapes */
  memcpy(ll.shape, to, sizeof(int64_t) * (size_t)to_rank);
  return blocked_holding(t, &ll, l->num_warps);
}

/* ---- printing ---- */

static void print_ints(Buf *b, const char *name, const int *v, int n) {
  buf_printf(b, "%s = [", name);
  for (int i = 0; i < n; i++) buf_printf(b, "%s%d", i ? ", " : "", v[i]);
  buf_puts(b, "]");
}

static const char *kind_name(LayoutKind k) {
  switch (k) {
  case LAYOUT_BLOCKED: return "blocked";
  case LAYOUT_SLICE: return "slice";
  case LAYOUT_DOT_OPERAND: return "dot_op";
  case LAYOUT_MMA: return "mma";
  case LAYOUT_SHARED: return "shared";
  case LAYOUT_NVMMA: return "nvmma_shared";
  }
  return "?";
}

const char *layout_name(Arena *a, const Layout *l) { return arena_printf(a, "#%s%d", kind_name(l->kind), l->id); }

const char *layout_str(Arena *a, const Layout *l) {
  Buf b;
  buf_init(&b, a);
  buf_printf(&b, "#%s<{", kind_name(l->kind));
  switch (l->kind) {
  case LAYOUT_BLOCKED:
    print_ints(&b, "sizePerThread", l->size_per_thread, l->rank);
    print_ints(&b, ", threadsPerWarp", l->threads_per_warp, l->rank);
    print_ints(&b, ", warpsPerCTA", l->warps_per_cta, l->rank);
    print_ints(&b, ", order", l->order, l->rank);
    break;
  case LAYOUT_SLICE: buf_printf(&b, "dim = %d, parent = %s", l->dim, layout_name(a, l->parent)); break;
  case LAYOUT_DOT_OPERAND:
    buf_printf(&b, "opIdx = %d, parent = %s, kWidth = %d", l->op_index, layout_name(a, l->parent), l->k_width);
    break;
  case LAYOUT_MMA:
    buf_printf(&b, "versionMajor = %d, ", l->version);
    print_ints(&b, "warpsPerCTA", l->warps_per_cta, l->rank);
    print_ints(&b, ", instrShape", l->instr, l->version == 2 ? 2 : 3);
    break;
  case LAYOUT_SHARED:
    buf_printf(&b, "vec = %d, perPhase = %d, maxPhase = %d, ", l->vec, l->per_phase, l->max_phase);
    print_ints(&b, "order", l->order, l->rank);
    break;
  case LAYOUT_NVMMA:
    buf_printf(&b, "swizzlingByteWidth = %d, elementBitWidth = %d, ", l->swizzle_bytes, l->elem_bits);
    print_ints(&b, "order", l->order, l->rank);
    break;
  }
  buf_puts(&b, "}>");
  return buf_cstr(&b);
}

static void print_bases(Buf *b, const LinearLayout *ll, const char *name, const uint32_t *v, int n) {
  buf_printf(b, "%s = [", name);
  for (int i = 0; i < n; i++) {
    int64_t c[MAX_RANK];
    ll_coords(ll, v[i], c);
    buf_puts(b, i ? ", [" : "[");
    for (int d = 0; d < ll->rank; d++) buf_printf(b, "%s%lld", d ? ", " : "", (long long)c[d]);
    buf_puts(b, "]");
  }
  buf_puts(b, "]");
}

const char *ll_str(Arena *a, const LinearLayout *ll) {
  Buf b;
  buf_init(&b, a);
  print_bases(&b, ll, "reg", ll->reg, ll->n_reg);
  print_bases(&b, ll, ", lane", ll->lane, ll->n_lane);
  print_bases(&b, ll, ", warp", ll->warp, ll->n_warp);
  return buf_cstr(&b);
}
