/* libFuzzer harness over the kernel bundle reader (src/runtime/bundle.c and
 * bundle_kernel.c, through tile_kernel_load_bundle on the interpreter): a
 * bundle is hostile input.  The input's checksum is made right again before
 * loading (the first 32 bytes and everything past 64 are the input's), so
 * mutations reach the header, the table, the manifest and the metadata
 * checks behind it, as unit.bundle's rewritten bundles do.  A bundle that
 * loads is launched once with arguments of the kernel's types (sizes from
 * the input), which must either run or fail with a message.  Never a crash,
 * a read past the input, a leak or a hang.  Seeds: fuzz_rt_seeds writes sound
 * bundles (fuzz-rt-seeds/bundle). */
#include "../../src/runtime/bundle.h"
#include "../../src/support/sha256.h"
#include "tile/tile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void digest(unsigned char *data, size_t size) {
  Sha256 h;
  sha256_init(&h);
  sha256_update(&h, data, BUNDLE_DIGEST_AT);
  sha256_update(&h, data + BUNDLE_HEADER_SIZE, size - BUNDLE_HEADER_SIZE);
  sha256_final(&h, data + BUNDLE_DIGEST_AT);
}

/* One launch of the loaded kernel with four small host buffers and n; the
 * seeds' kernels take (x, y, out, n). */
static void launch(tile_context *ctx, tile_kernel *k, unsigned n) {
  void *b[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++)
    if (tile_malloc(ctx, &b[i], 64 * sizeof(float)) != TILE_OK) goto done;
  tile_arg args[] = {tile_buffer(b[0], "fp32", 64), tile_buffer(b[1], "fp32", 64), tile_buffer(b[2], "fp32", 64),
                     tile_int(n % 65)};
  unsigned grid[3] = {1, 1, 1};
  if (tile_launch(k, grid, NULL, args, 4) != TILE_OK && !tile_error(ctx)[0]) __builtin_trap(); /* a failure says why */
done:
  for (int i = 0; i < 3; i++) tile_free(ctx, b[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned char *copy = malloc(size ? size : 1);
  if (!copy) return 0;
  memcpy(copy, data, size);
  if (size >= BUNDLE_HEADER_SIZE) digest(copy, size);
  tile_context *ctx;
  if (tile_context_create(&ctx) != TILE_OK || tile_context_use_cpu(ctx) != TILE_OK) {
    tile_context_destroy(ctx);
    free(copy);
    return 0;
  }
  tile_kernel *k = NULL;
  tile_status s = tile_kernel_load_bundle(ctx, "fuzz.tlk", copy, size, &k);
  if (s == TILE_OK) launch(ctx, k, size);
  else if (!tile_error(ctx)[0] || k) __builtin_trap(); /* a refusal says why, and leaves no kernel */
  tile_kernel_destroy(k);
  tile_context_destroy(ctx);
  free(copy);
  return 0;
}
