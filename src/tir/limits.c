/* Tile-size limits, checked once num_warps is known and before LLVM: a tile
 * lives in its program's registers, spread over 32 * num_warps threads, and
 * LLVM and ptxas take time that grows faster than linearly with the
 * registers a thread holds (a 2^20-element vector add spent 725 s in ptxas;
 * a 1024x1024 fp32 dot on one warp did not leave LLVM's InstCombine in
 * 600 s).  Measurements behind the numbers: docs/language.md, "Limits".
 *
 * Requires: verified tile IR, num_warps set.  Reports the first tile (in
 * program order) over a limit; changes nothing. */
#include "tir.h"

enum {
  MAX_TILE_NUMEL = MAX_TILE_ELEMENTS,   /* Triton's TRITON_MAX_TENSOR_NUMEL, 2^20 */
  MAX_ELEMENTS_PER_THREAD = 512,
};

typedef struct Limits {
  const TirFunc *f;
  Diags *diags;
  int threads;
} Limits;

static int tile_too_large(Limits *L, const TirOp *op, int value) {
  const Type *t = tir_type(L->f, value);
  int64_t numel = type_numel(t), per_thread = (numel + L->threads - 1) / L->threads;
  if (numel <= MAX_TILE_NUMEL && per_thread <= MAX_ELEMENTS_PER_THREAD) return 0;
  const char *shape = shape_str(L->f->arena, t);
  if (numel > MAX_TILE_NUMEL)
    diag_error(L->diags, op->loc, "a tile of shape %s has %lld elements, more than the 2^20 a tile may have", shape,
               (long long)numel);
  else
    diag_error(L->diags, op->loc,
               "a tile of shape %s has %lld elements per thread with num_warps=%d, more than the %d this compiler "
               "allows (compiling it would take minutes)",
               shape, (long long)per_thread, L->f->num_warps, MAX_ELEMENTS_PER_THREAD);
  diag_note(L->diags, op->loc, "use more warps or a smaller block");
  return 1;
}

static int block_too_large(Limits *L, const TirBlock *b) {
  if (!b) return 0;
  for (int i = 0; i < b->args.len; i++)
    if (b->ops.len && tile_too_large(L, b->ops.data[0], b->args.data[i])) return 1;
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int r = 0; r < op->results.len; r++)
      if (tile_too_large(L, op, op->results.data[r])) return 1;
    if (block_too_large(L, op->regions[0]) || block_too_large(L, op->regions[1])) return 1;
  }
  return 0;
}

int tir_check_limits(const TirFunc *f, Diags *d) {
  Limits L = {f, d, 32 * (f->num_warps > 0 ? f->num_warps : 1)};
  return block_too_large(&L, f->body);
}
