/* An installed tile seen from outside: tutorial 01's vector add compiled from a string and launched
 * with a grid function, on the interpreter (TILE_INTERPRET=1) or a GPU, checked against C's sums at
 * a size that is not a multiple of the block, the output poisoned first.  Exit 0 when every element
 * is right and the poison past the end is untouched. */
#include <tile/tile.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    mask = offsets < n\n"
    "    x = tl.load(x_ptr + offsets, mask=mask)\n"
    "    y = tl.load(y_ptr + offsets, mask=mask)\n"
    "    tl.store(out_ptr + offsets, x + y, mask=mask)\n";

enum { N = 1000, GUARD = 8 };

static void grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned g[3], void *user) {
  long long block = 1;
  tile_kernel_constexpr(k, "BLOCK", &block);
  g[0] = (unsigned)((args[3].i + block - 1) / block), g[1] = g[2] = 1;
}

static int fail(tile_context *ctx, const char *what) {
  fprintf(stderr, "consumer: %s: %s\n", what, tile_error(ctx));
  return 1;
}

int main(void) {
  tile_context *ctx;
  if (tile_context_create(&ctx) != TILE_OK) return 1;
  float x[N], y[N], out[N + GUARD];
  srand(12345);
  for (int i = 0; i < N; i++) x[i] = (float)rand() / RAND_MAX, y[i] = (float)rand() / RAND_MAX;
  memset(out, 0xff, sizeof out);
  const char *defines[] = {"BLOCK=128"};
  tile_options o;
  tile_options_init(&o);
  o.defines = defines, o.num_defines = 1;
  tile_kernel *k;
  void *dx, *dy, *dout;
  if (tile_kernel_create(ctx, "add.tl", source, sizeof source - 1, &o, &k) != TILE_OK) return fail(ctx, "compile");
  if (tile_malloc(ctx, &dx, sizeof x) || tile_malloc(ctx, &dy, sizeof y) || tile_malloc(ctx, &dout, sizeof out) ||
      tile_memcpy_to_device(ctx, dx, x, sizeof x) || tile_memcpy_to_device(ctx, dy, y, sizeof y) ||
      tile_memcpy_to_device(ctx, dout, out, sizeof out))
    return fail(ctx, "memory");
  tile_arg args[] = {tile_buffer(dx, "fp32", N), tile_buffer(dy, "fp32", N), tile_buffer(dout, "fp32", N), tile_int(N)};
  if (tile_launch_grid(k, grid, NULL, NULL, args, 4) || tile_synchronize(ctx) ||
      tile_memcpy_to_host(ctx, out, dout, sizeof out))
    return fail(ctx, "launch");
  int bad = 0;
  for (int i = 0; i < N; i++) bad += out[i] != x[i] + y[i];
  for (int i = N; i < N + GUARD; i++) {
    unsigned bits;
    memcpy(&bits, &out[i], 4);
    bad += bits != 0xffffffffu;
  }
  printf("consumer: tile %s on the %s: %d of %d elements wrong\n", tile_version(),
         tile_context_on_cpu(ctx) ? "interpreter" : "GPU", bad, N + GUARD);
  tile_free(ctx, dx), tile_free(ctx, dy), tile_free(ctx, dout);
  tile_kernel_destroy(k);
  tile_context_destroy(ctx);
  return bad != 0;
}
