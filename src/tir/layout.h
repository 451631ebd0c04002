/* Layouts: how a tile's elements are spread over the registers, lanes and
 * warps of one program (a CTA), as in Triton's TTGIR.
 *
 * A Layout is an encoding that does not depend on the tile's shape (a
 * blocked layout says "4 elements per thread along dim 1, 8x4 lanes, 4x1
 * warps, dim 1 fastest"); applied to a shape it gives a LinearLayout, the
 * one representation code generation works from.  Because every tile
 * dimension is a power of two, an element's row-major flat index has each
 * dimension's coordinate in its own bits, so a layout is linear over GF(2):
 * the element held in register r of lane l of warp w is the XOR of one
 * basis offset for each set bit of r, l and w.  Blocked, slice, dot-operand
 * and (next) tensor-core layouts all reduce to that form, so conversions,
 * reductions and broadcasts are written once, over bases.
 *
 * A zero lane or warp basis means those threads hold the same elements
 * (replication, as a small tile on many threads); register bases are never
 * zero, so every register of a thread holds a different element.
 *
 * Layouts are interned in a per-function table: two equal layouts are the
 * same pointer. */
#ifndef TILE_TGIR_LAYOUT_H
#define TILE_TGIR_LAYOUT_H

#include "../support/dtypes.h"

typedef enum {
  LAYOUT_BLOCKED,     /* size_per_thread x threads_per_warp x warps_per_cta tiles, order fastest first */
  LAYOUT_SLICE,       /* parent with dimension `dim` removed: a reduction's result, expand_dims' operand */
  LAYOUT_DOT_OPERAND, /* operand op_index of a dot whose result has layout `parent` */
  LAYOUT_MMA,         /* tensor-core accumulator: version 2 (mma.sync, per warp) or 3 (wgmma, per warpgroup) */
  LAYOUT_SHARED,      /* shared memory, swizzled: column group (c/vec) ^ ((r/per_phase) % max_phase) */
  LAYOUT_NVMMA,       /* shared memory in wgmma's canonical form: rows of swizzle_bytes, 16-byte chunks XORed */
} LayoutKind;

typedef struct Layout Layout;
struct Layout {
  LayoutKind kind;
  int rank;                        /* rank of the tiles it applies to */
  int num_warps;                   /* warps of the program */
  int size_per_thread[MAX_RANK];   /* BLOCKED */
  int threads_per_warp[MAX_RANK];  /* BLOCKED: product 32 */
  int warps_per_cta[MAX_RANK];     /* BLOCKED, MMA: product num_warps */
  int order[MAX_RANK];             /* BLOCKED, SHARED, NVMMA: dimensions, fastest-varying first */
  int dim;                         /* SLICE */
  const Layout *parent;            /* SLICE, DOT_OPERAND */
  int op_index;                    /* DOT_OPERAND: 0 for A, 1 for B */
  int k_width;                     /* DOT_OPERAND: consecutive K elements a thread holds (tensor cores) */
  int vec, per_phase, max_phase;   /* SHARED */
  int version;                     /* MMA: 2 or 3 */
  int instr[3];                    /* MMA: m, n, k of one warp's part (v2: 16, 8, 0; v3: 16, n, k) */
  int swizzle_bytes, elem_bits;    /* NVMMA: 32, 64 or 128; the element width it is laid out for */
  int id;                          /* position in its table; printed as #blocked<id> */
};

/* The layouts of one function, interned. */
typedef struct LayoutTable {
  Arena *arena;
  Vec(const Layout *) list;
} LayoutTable;

enum { WARP_SIZE = 32, LANE_BITS = 5, MAX_WARP_BITS = 5, MAX_REG_BITS = 20 };

/* A layout applied to a shape: bases as row-major flat element offsets. */
typedef struct LinearLayout {
  int n_reg, n_lane, n_warp;          /* bits of the register, lane and warp index */
  uint32_t reg[MAX_REG_BITS];         /* never 0 */
  uint32_t lane[LANE_BITS];           /* 0: lanes differing in this bit hold the same elements */
  uint32_t warp[MAX_WARP_BITS];
  int rank;
  int64_t shape[MAX_RANK];
} LinearLayout;

/* ---- making layouts (all interned in `t`) ---- */

/* Checks the parameters: products 32 and num_warps, powers of two, order a
 * permutation; NULL and a message in `why` if not. */
const Layout *layout_blocked(LayoutTable *t, int rank, const int *size_per_thread, const int *threads_per_warp,
                             const int *warps_per_cta, const int *order, const char **why);
/* Triton's default builder: `size_per_thread` along each dimension (NULL:
 * all 1), lanes then warps handed out along `order` (NULL: last dimension
 * fastest), each dimension taking at most what its size needs and the
 * slowest dimension the rest.  NULL for rank 0: scalars have no layout. */
const Layout *layout_default(LayoutTable *t, int rank, const int64_t *shape, const int *size_per_thread,
                             const int *order, int num_warps);
const Layout *layout_slice(LayoutTable *t, int dim, const Layout *parent);
const Layout *layout_dot_operand(LayoutTable *t, int op_index, const Layout *parent, int k_width);
const Layout *layout_intern(LayoutTable *t, const Layout *l);
/* `l` (from another table) interned in `t`, its parents first. */
const Layout *layout_reintern(LayoutTable *t, const Layout *l);
/* The layout of trans(x, perm) when x has blocked layout `l`: result
 * dimension d is operand dimension perm[d], with its sizes; NULL when `l`
 * is not blocked.  With `inverse`, the operand's layout for a result in `l`. */
const Layout *layout_transposed(LayoutTable *t, const Layout *l, const int64_t *perm, int inverse);
/* The layout of join(a, b) when a and b have blocked layout `l`: l with a
 * last dimension of 2 held in one thread's registers, fastest (so join and
 * split only rename registers); NULL when `l` is not blocked.  With
 * `inverse`, the operands' layout for a result in `l` (split's result for
 * an operand in `l`): its last dimension dropped; NULL unless that
 * dimension is in registers only. */
const Layout *layout_joined(LayoutTable *t, const Layout *l, int inverse);
/* The layout of reshape(x) from shape `from` to shape `to` when x has
 * layout `l`: a blocked layout whose linear form is l's over `from` with
 * the flat element index re-split into `to` (every thread holds the same
 * elements, so the reshape only renames registers), l itself when the
 * shapes are equal; NULL when no blocked layout holds the elements so (a
 * thread level in the middle of a dimension's registers: codegen moves
 * them). */
const Layout *layout_reshaped(LayoutTable *t, const Layout *l, int from_rank, const int64_t *from, int to_rank,
                              const int64_t *to);
/* The FMA dot's accumulator: blocked, each thread a block of up to 4x4
 * elements in the last two dimensions (as many as the tile has per thread),
 * so each K step reuses a thread's A and B registers across the block. */
const Layout *layout_fma_accumulator(LayoutTable *t, int rank, const int64_t *shape, int num_warps);

/* ---- tensor cores and shared memory (layout_tc.c) ---- */

/* The accumulator of mma.sync (version 2) or wgmma (version 3): each warp
 * holds 16 x instr[1] tiles as the PTX ISA's fragments say (lane l: rows
 * l/4 and l/4 + 8, columns 2(l%4) + {0, 1} of every 8 columns), warps
 * placed along M first (version 3: four consecutive warps make a
 * warpgroup of 64 rows), then along N, then the batch; a larger tile
 * repeats in registers along N first, a smaller one (as the parent of a
 * slice) is replicated.  instr: {16, 8, 0} for version 2,
 * {16, n, k} for version 3. */
const Layout *layout_mma(LayoutTable *t, int version, int rank, const int *warps_per_cta, const int *instr,
                         const char **why);
/* Swizzled shared memory (Triton's swizzled_shared): along order[0] groups
 * of `vec` elements stay together; row r (along order[1]) has its group
 * index XORed with (r / per_phase) % max_phase. */
const Layout *layout_shared(LayoutTable *t, int rank, int vec, int per_phase, int max_phase, const int *order,
                            const char **why);
/* wgmma's canonical shared layout: the contiguous dimension (order[0]) in
 * blocks of swizzle_bytes, each block [rows, swizzle_bytes] with row r's
 * 16-byte chunks XORed with (r / (128 / swizzle_bytes)) % (swizzle_bytes /
 * 16), blocks one after another. */
const Layout *layout_nvmma(LayoutTable *t, int rank, int swizzle_bytes, int elem_bits, const int *order,
                           const char **why);
/* The swizzled layout for an mma.sync operand staged through shared memory
 * (ldmatrix reads 8 rows of 16 bytes without bank conflicts): the tile's
 * shape, element width and order (order[0] its contiguous dimension). */
const Layout *layout_shared_for_dot(LayoutTable *t, int op_index, int elem_bits, int rank, const int64_t *shape,
                                    const int *order);
/* The NVMMA layout for a wgmma operand: the widest swizzle (128, 64, 32
 * bytes) the contiguous dimension fills; NULL if it is narrower than 32
 * bytes. */
const Layout *layout_nvmma_for(LayoutTable *t, int elem_bits, int rank, const int64_t *shape, const int *order);
/* The layout of a multi-buffer: `l` with a slowest dimension 0 in front. */
const Layout *layout_shared_buffers(LayoutTable *t, const Layout *l);
/* The layout of one buffer of a multi-buffer in layout `l`: dimension 0 dropped. */
const Layout *layout_shared_slot(LayoutTable *t, const Layout *l);
static inline int layout_is_shared(const Layout *l) { return l && (l->kind == LAYOUT_SHARED || l->kind == LAYOUT_NVMMA); }

/* ---- applying them ---- */

/* The linear layout of `l` over `shape`.  Returns 0, or -1 with a message
 * in `why` (a layout that cannot hold such a tile, more registers than
 * MAX_REG_BITS allows).
 *
 * A shared-memory layout (layout_is_shared) has no threads: its reg[i] is
 * the memory offset, in elements, of the element whose flat row-major
 * offset is 1 << i (n_lane = n_warp = 0), so the offset of any element is
 * the XOR of those of its set bits.  Swizzles make these bases other than
 * single bits. */
int layout_linear(const Layout *l, int rank, const int64_t *shape, LinearLayout *out, const char **why);
/* The same for a tile type (a scalar has no layout: all bases empty). */
int layout_linear_of(const Layout *l, const Type *t, LinearLayout *out, const char **why);

static inline int ll_registers(const LinearLayout *ll) { return 1 << ll->n_reg; }
/* Flat offset of the element in register r, lane `lane`, warp `warp`. */
uint32_t ll_offset(const LinearLayout *ll, uint32_t r, uint32_t lane, uint32_t warp);
/* The register-part offset of register r (lane and warp 0). */
uint32_t ll_reg_offset(const LinearLayout *ll, uint32_t r);
/* The register whose register-part offset is `offset`, or -1 if the
 * register bases do not span it. */
int ll_find_register(const LinearLayout *ll, uint32_t offset);
/* Coordinates of a flat offset in the layout's shape. */
void ll_coords(const LinearLayout *ll, uint32_t offset, int64_t *coords);
uint32_t ll_flat(const LinearLayout *ll, const int64_t *coords);
/* Whether the lanes and warps of two layouts over the same shape hold the
 * same elements up to registers (a conversion between them only moves
 * registers). */
int ll_same_threads(const LinearLayout *a, const LinearLayout *b);
/* How many consecutive registers, starting at register 0 of a run, hold
 * consecutive elements along dimension `dim`: the largest 2^k such that
 * reg[i] is the offset of coordinate 2^i along dim for i < k. */
int ll_contiguous_registers(const LinearLayout *ll, int dim);

/* ---- printing ---- */

/* "#blocked<{sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>" */
const char *layout_str(Arena *a, const Layout *l);
/* The short name a printed value refers to: "#blocked0", "#slice1". */
const char *layout_name(Arena *a, const Layout *l);
/* "reg = [[0, 1], [0, 2]], lane = [...], warp = [...]" in coordinates. */
const char *ll_str(Arena *a, const LinearLayout *ll);

#endif
