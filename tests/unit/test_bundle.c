/* Kernel bundles (tile_pack, tile_kernel_load_bundle; docs/abi.md section
 * 12) without a GPU: packed for real (LLVM, ptxas), loaded on the fake
 * driver (fake_cuda.c) as a compute capability 9.0 GPU.  Checks the image
 * chosen (the sm_90a cubin over sm_80's; sm_80's PTX when no cubin runs),
 * the specialisation chosen for the arguments and the error naming those
 * bundled when none fits, tuning among three bundled configs once and the
 * choice read from the disk cache by another context, corrupt bundles
 * (truncated, flipped bytes, bad offsets and fields with a valid checksum:
 * clear errors, never a crash), and the bundled tile IR on the interpreter
 * against a C reference on irregular sizes. */
#include "check.h"
#include "fake_cuda.h"
#include "../../src/support/sha256.h"
#include "tile/tile.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_CUDA_PATH
#error "FAKE_CUDA_PATH: the fake driver's path"
#endif

static FakeCuda *fake;
static char cache_dir[64];

static const char add_source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    mask = offs < n\n"
    "    x = tl.load(x_ptr + offs, mask=mask)\n"
    "    y = tl.load(y_ptr + offs, mask=mask)\n"
    "    tl.store(out_ptr + offs, x * 2 + y, mask=mask)\n";

/* Three configs of 1, 2 and 4 warps: the fake's clock decides which is fastest. */
static const char tuned_source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=1),\n"
    "                          triton.Config({'BLOCK': 256}, num_warps=2),\n"
    "                          triton.Config({'BLOCK': 512}, num_warps=4)],\n"
    "                 key=['n'])\n"
    "@triton.jit\n"
    "def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
    "    tl.store(out_ptr + offs, x * 3, mask=offs < n)\n";

static const char *const aligned[] = {"*fp32:16,*fp32:16,*fp32:16,i32"};
static const char *const both[] = {"*fp32:16,*fp32:16,*fp32:16,i32", "*fp32,*fp32,*fp32,i32"};
static const char *const sm80_90a[] = {"sm_80", "sm_90a"};
static const char *const sm80[] = {"sm_80"};
static const char *const block_define[] = {"BLOCK=128"};

static double ms_by_warps[33];

static double on_launch(FakeCuda *state, void **params) { return ms_by_warps[state->block[0] / 32]; }

static tile_context *context(int on_cpu) {
  setenv("TILE_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
  setenv("TILE_CACHE_DIR", cache_dir, 1);
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  unsetenv("TILE_CUDA_LIBRARY"), unsetenv("TILE_CACHE_DIR");
  if (on_cpu) CHECK(tile_context_use_cpu(ctx) == TILE_OK);
  return ctx;
}

/* A malloc'd bundle of `source`; NULL (with the error said) if packing failed. */
static unsigned char *pack(const char *source, const char *const *defines, int num_defines, const char *const *sigs,
                           int num_sigs, const char *const *archs, int num_archs, size_t *size) {
  tile_context *ctx = context(0);
  tile_options o;
  tile_options_init(&o);
  o.defines = defines;
  o.num_defines = num_defines;
  const void *bytes = NULL;
  tile_status s = tile_pack(ctx, "k.tl", source, strlen(source), &o, sigs, num_sigs, archs, num_archs, &bytes, size);
  if (s != TILE_OK) fprintf(stderr, "tile_pack: %s\n", tile_error(ctx));
  CHECK(s == TILE_OK);
  unsigned char *copy = s == TILE_OK ? malloc(*size) : NULL;
  if (copy) memcpy(copy, bytes, *size);
  tile_context_destroy(ctx);
  return copy;
}

static const char *metadata_field(tile_kernel *k, const char *field, char *out, size_t size) {
  const char *m = tile_kernel_metadata(k), *at = m ? strstr(m, field) : NULL;
  out[0] = 0;
  if (at) sscanf(at + strlen(field), " : \"%63[^\"]\"", out);
  (void)size;
  return out;
}

static tile_status launch_add(tile_kernel *k, float *x, float *y, float *out, int n, int misalign) {
  tile_arg args[] = {tile_buffer(x + misalign, "fp32", (size_t)(n - misalign)), tile_buffer(y, "fp32", (size_t)n),
                     tile_buffer(out, "fp32", (size_t)n), tile_int(n - misalign)};
  unsigned grid[3] = {(unsigned)(n + 127) / 128, 1, 1};
  return tile_launch(k, grid, NULL, args, 4);
}

/* ---- the GPU, on the fake driver ----------------------------------------------------- */

static void test_images(void) {
  size_t size, size80;
  unsigned char *bundle = pack(add_source, block_define, 1, both, 2, sm80_90a, 2, &size);
  unsigned char *bundle80 = pack(add_source, block_define, 1, aligned, 1, sm80, 1, &size80);
  if (!bundle || !bundle80) return;
  fake->cc_major = 9, fake->cc_minor = 0;
  tile_context *ctx = context(0);
  tile_kernel *k = NULL, *k80 = NULL;
  CHECK(tile_kernel_load_bundle(ctx, "add.tlk", bundle, size, &k) == TILE_OK);
  float *x, *y, *out;
  CHECK(tile_malloc(ctx, (void **)&x, 4096) == TILE_OK);
  CHECK(tile_malloc(ctx, (void **)&y, 4096) == TILE_OK);
  CHECK(tile_malloc(ctx, (void **)&out, 4096) == TILE_OK);
  char field[64];
  /* aligned arguments: the ':16' specialisation, the sm_90a cubin */
  CHECK(launch_add(k, x, y, out, 1000, 0) == TILE_OK);
  CHECK(!strcmp(metadata_field(k, "\"arch\"", field, sizeof field), "sm_90a"));
  CHECK(!strcmp(metadata_field(k, "\"target\"", field, sizeof field), "cubin"));
  CHECK(!strcmp(metadata_field(k, "\"signature\"", field, sizeof field), "*fp32:16,*fp32:16,*fp32:16,i32"));
  CHECK(!strcmp(fake->function, "add"));
  /* x one float off 16 bytes: the general specialisation */
  CHECK(launch_add(k, x, y, out, 1000, 1) == TILE_OK);
  CHECK(!strcmp(metadata_field(k, "\"signature\"", field, sizeof field), "*fp32,*fp32,*fp32,i32"));
  /* sm_80 alone on a 9.0 GPU: no cubin runs, its PTX does */
  CHECK(tile_kernel_load_bundle(ctx, "add80.tlk", bundle80, size80, &k80) == TILE_OK);
  CHECK(launch_add(k80, x, y, out, 1000, 0) == TILE_OK);
  CHECK(!strcmp(metadata_field(k80, "\"arch\"", field, sizeof field), "sm_80"));
  CHECK(!strcmp(metadata_field(k80, "\"target\"", field, sizeof field), "ptx"));
  /* no bundled specialisation fits a misaligned x: the error names what is bundled */
  CHECK(launch_add(k80, x, y, out, 1000, 1) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "bundle 'add80.tlk'");
  CHECK_CONTAINS(tile_error(ctx), "*fp32,*fp32:16,*fp32:16,i32");
  CHECK_CONTAINS(tile_error(ctx), "it holds *fp32:16,*fp32:16,*fp32:16,i32");
  /* an 8.0 GPU: the sm_80 cubin */
  tile_context_destroy(ctx);
  fake->cc_major = 8, fake->cc_minor = 0;
  ctx = context(0);
  CHECK(tile_kernel_load_bundle(ctx, "add.tlk", bundle, size, &k) == TILE_OK);
  CHECK(tile_malloc(ctx, (void **)&x, 4096) == TILE_OK);
  CHECK(launch_add(k, x, x, x, 1000, 0) == TILE_OK);
  CHECK(!strcmp(metadata_field(k, "\"arch\"", field, sizeof field), "sm_80"));
  CHECK(!strcmp(metadata_field(k, "\"target\"", field, sizeof field), "cubin"));
  tile_context_destroy(ctx);
  fake->cc_major = 9, fake->cc_minor = 0;
  free(bundle), free(bundle80);
}

static tile_status launch_scale(tile_kernel *k, float *x, float *out, int n) {
  tile_arg args[] = {tile_buffer(x, "fp32", (size_t)n), tile_buffer(out, "fp32", (size_t)n), tile_int(n)};
  unsigned grid[3] = {(unsigned)(n + 127) / 128, 1, 1};
  return tile_launch(k, grid, NULL, args, 3);
}

/* Three configs: tuned by the first context, read from the disk cache by the second. */
static void test_tuning(void) {
  size_t size;
  static const char *const sig[] = {"*fp32:16,*fp32:16,i32"};
  unsigned char *bundle = pack(tuned_source, NULL, 0, sig, 1, sm80_90a, 2, &size);
  if (!bundle) return;
  fake->on_launch = on_launch;
  ms_by_warps[1] = 3, ms_by_warps[2] = 1, ms_by_warps[4] = 2; /* config 1 is fastest */
  for (int round = 0; round < 2; round++) {
    tile_context *ctx = context(0);
    tile_kernel *k = NULL;
    float *x, *out;
    CHECK(tile_kernel_load_bundle(ctx, "scale.tlk", bundle, size, &k) == TILE_OK);
    CHECK(tile_malloc(ctx, (void **)&x, 8192) == TILE_OK);
    CHECK(tile_malloc(ctx, (void **)&out, 8192) == TILE_OK);
    int launches = fake->launches;
    tile_status s = launch_scale(k, x, out, 2000);
    if (s != TILE_OK) fprintf(stderr, "launch: %s\n", tile_error(ctx));
    CHECK(s == TILE_OK);
    CHECK(tile_kernel_config(k) == 1);
    if (round == 0) {
      CHECK(fake->launches - launches > 3); /* each config timed */
      CHECK_CONTAINS(tile_diagnostics(ctx), "chose config 1");
    } else {
      CHECK(fake->launches - launches == 1); /* no tuning: the choice came from disk */
      CHECK_CONTAINS(tile_diagnostics(ctx), "tuned by an earlier run (disk cache)");
    }
    tile_context_destroy(ctx);
  }
  fake->on_launch = NULL;
  free(bundle);
}

/* ---- hostile bundles ------------------------------------------------------------------ */

static uint64_t get_le(const unsigned char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void put_le(unsigned char *p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* The file's checksum made right again, so that the check behind it is reached. */
static void reseal(unsigned char *b, size_t size) {
  Sha256 h;
  sha256_init(&h);
  sha256_update(&h, b, 32);
  sha256_update(&h, b + 64, size - 64);
  sha256_final(&h, b + 32);
}

/* Loading `b` fails with an error naming the bundle and containing `what`. */
static void refused(tile_context *ctx, const unsigned char *b, size_t size, const char *what) {
  tile_kernel *k = NULL;
  CHECK(tile_kernel_load_bundle(ctx, "bad.tlk", b, size, &k) == TILE_ERROR_ARGUMENT);
  CHECK(k == NULL);
  CHECK_CONTAINS(tile_error(ctx), "bundle 'bad.tlk'");
  if (what) CHECK_CONTAINS(tile_error(ctx), what);
}

static void test_hostile(void) {
  size_t size;
  unsigned char *bundle = pack(add_source, block_define, 1, aligned, 1, sm80_90a, 2, &size);
  if (!bundle) return;
  tile_context *ctx = context(0);
  unsigned char *b = malloc(size);
  for (size_t n = 0; n < size; n += n < 200 ? 1 : 997) refused(ctx, bundle, n, NULL); /* truncated */
  for (size_t at = 0; at < size; at += at < 400 ? 1 : 101) { /* each byte flipped: the header's checks or the checksum */
    memcpy(b, bundle, size);
    b[at] ^= 0x5a;
    refused(ctx, b, size, NULL);
  }
  uint64_t entries = get_le(bundle + 12, 4);
  CHECK(entries == 1 + 2 * 2 + 1); /* the manifest, a cubin and PTX for each arch, the tile IR */
  for (uint64_t e = 0; e < entries; e++) {
    unsigned char *entry = b + 64 + e * 56;
    static const uint64_t bad_offsets[] = {0, 63, UINT64_MAX, UINT64_MAX - 8};
    for (int i = 0; i < 4; i++) {
      memcpy(b, bundle, size);
      put_le(entry + 24, bad_offsets[i], 8);
      reseal(b, size);
      refused(ctx, b, size, "lies outside the file's data");
      if (i == 0) continue;
      memcpy(b, bundle, size);
      put_le(entry + 32, i == 1 ? size : bad_offsets[i], 8); /* lengths past the end */
      reseal(b, size);
      refused(ctx, b, size, "lies outside the file's data");
    }
    memcpy(b, bundle, size);
    put_le(entry, 9, 4); /* kind */
    reseal(b, size);
    refused(ctx, b, size, "kind 9");
    if (e == 0) continue;
    memcpy(b, bundle, size);
    put_le(entry + 4, 5, 4); /* specialisation */
    reseal(b, size);
    refused(ctx, b, size, "specialisation 5");
    memcpy(b, bundle, size);
    put_le(entry + 8, 2, 4); /* config: the kernel has none */
    reseal(b, size);
    refused(ctx, b, size, "config 2");
    memcpy(b, bundle, size);
    put_le(entry + 40, get_le(entry + 24, 8), 8); /* metadata: the data's bytes */
    put_le(entry + 48, get_le(entry + 32, 8), 8);
    reseal(b, size);
    refused(ctx, b, size, "entry");
  }
  memcpy(b, bundle, size);
  put_le(b + 8, 2, 4);
  reseal(b, size);
  refused(ctx, b, size, "format version 2");
  memcpy(b, bundle, size);
  put_le(b + 12, 100000, 4);
  reseal(b, size);
  refused(ctx, b, size, "entries");
  memcpy(b, bundle, size);
  b[size - 1] ^= 1;
  refused(ctx, b, size, "checksum mismatch");
  tile_kernel *k = NULL;
  CHECK(tile_kernel_load_bundle_file(ctx, "/nonexistent/k.tlk", &k) == TILE_ERROR_IO);
  CHECK(tile_kernel_load_bundle(ctx, "null", NULL, 0, &k) == TILE_ERROR_ARGUMENT);
  free(b);
  free(bundle);
  tile_context_destroy(ctx);
}

/* ---- the interpreter ---------------------------------------------------------------------- */

static void test_interpreter(void) {
  size_t size;
  unsigned char *bundle = pack(add_source, block_define, 1, both, 2, sm80_90a, 2, &size);
  if (!bundle) return;
  tile_context *ctx = context(1);
  tile_kernel *k = NULL;
  CHECK(tile_kernel_load_bundle(ctx, "add.tlk", bundle, size, &k) == TILE_OK);
  static const int sizes[] = {1, 127, 1000, 4099};
  for (int t = 0; t < 4; t++) {
    int n = sizes[t];
    float *x, *y, *out;
    CHECK(tile_malloc(ctx, (void **)&x, sizeof *x * (size_t)n + 16) == TILE_OK);
    CHECK(tile_malloc(ctx, (void **)&y, sizeof *y * (size_t)n) == TILE_OK);
    CHECK(tile_malloc(ctx, (void **)&out, sizeof *out * (size_t)n) == TILE_OK);
    for (int i = 0; i < n + 4; i++) x[i] = (float)(i % 17) - 3.5f;
    for (int i = 0; i < n; i++) y[i] = 0.25f * (float)i;
    for (int misalign = 0; misalign < 2; misalign++) {
      tile_arg args[] = {tile_buffer(x + misalign, "fp32", (size_t)n), tile_buffer(y, "fp32", (size_t)n),
                         tile_buffer(out, "fp32", (size_t)n), tile_int(n)};
      unsigned grid[3] = {(unsigned)(n + 127) / 128, 1, 1};
      tile_status s = tile_launch(k, grid, NULL, args, 4);
      if (s != TILE_OK) fprintf(stderr, "interpreter: %s\n", tile_error(ctx));
      CHECK(s == TILE_OK);
      int wrong = 0;
      for (int i = 0; i < n; i++) wrong += out[i] != x[i + misalign] * 2 + y[i];
      CHECK(wrong == 0);
    }
  }
  tile_context_destroy(ctx);
  free(bundle);
}

int main(void) {
  void *library;
  fake = fake_cuda_open(FAKE_CUDA_PATH, &library);
  if (!fake) return 1;
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tile-bundle-XXXXXX");
  if (!mkdtemp(cache_dir)) return 1;
  test_images();
  test_tuning();
  test_hostile();
  test_interpreter();
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", cache_dir);
  if (system(command)) fprintf(stderr, "could not remove %s\n", cache_dir);
  dlclose(library);
  return check_report();
}
