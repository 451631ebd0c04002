/* Writes the seed corpora of the runtime's fuzzers (fuzz_metadata,
 * fuzz_cache, fuzz_api, fuzz_bundle) into DIR/metadata, DIR/cache, DIR/api and DIR/bundle: the
 * metadata of a few kernels as the compiler describes them (PTX for sm_90
 * and sm_90a, and the interpreter's), hand-written metadata with ':1'
 * arguments and a tensor map, each as a sound cache entry, an entry with a
 * dependency list and that list alone, and short call
 * programs for the API harness.  Built with the fuzzers; run before them. */
#include "../../src/runtime/cache.h"
#include "tile/tile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char vector_add[] =
    "import triton.language as tl\n@triton.jit\ndef add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n"
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)\n";

static const char with_map[] =
    "{\"format\": 1, \"name\": \"k\", \"signature\": \"*fp16:16,i32,i32:1,i32\", \"num_args\": 4,\n"
    " \"params\": [{\"name\": \"a\", \"type\": \"*fp16\", \"divisibility\": 16, \"position\": 0},\n"
    "   {\"name\": \"m\", \"type\": \"i32\", \"position\": 1}, {\"name\": \"s\", \"type\": \"i32\", \"position\": 3}],\n"
    " \"specialized\": [{\"name\": \"one\", \"type\": \"i32\", \"position\": 2}],\n"
    " \"constexprs\": {\"B\": 64, \"F\": 0.5, \"S\": \"x\", \"T\": true, \"N\": null},\n"
    " \"num_warps\": 4, \"num_stages\": 3, \"config\": -1, \"refill\": \"early\", \"shared\": 16384, \"registers\": 90,\n"
    " \"spills\": 0, \"arch\": \"sm_90a\", \"target\": \"cubin\", \"checks\": \"k.tl:3: x\",\n"
    " \"tensor_maps\": [{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 3}, {\"arg\": 1}], \"strides\": [{\"arg\": 3}],\n"
    "   \"box\": [64, 64], \"swizzle\": 128}]}\n";

static int write_file(const char *dir, const char *name, const void *data, size_t size) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f) return 1;
  int failed = fwrite(data, 1, size, f) != size;
  return fclose(f) != 0 || failed;
}

/* metadata/NAME and cache/NAME.tile (an entry of that metadata and `image`). */
static int seed_metadata(const char *dir, const char *name, const char *json, const char *image, int is_ptx) {
  char sub[512], why[256];
  snprintf(sub, sizeof sub, "%s/metadata", dir);
  int failed = write_file(sub, name, json, strlen(json));
  snprintf(sub, sizeof sub, "%s/cache", dir);
  CacheEntry e = {(unsigned char *)image, strlen(image), is_ptx, (char *)json, strlen(json), NULL, 0};
  return failed | (cache_write(sub, name, &e, why, sizeof why) != 0);
}

/* cache/deps.tile, an entry listing the files its kernel imported, and
 * cache/deps_list, the list alone (fuzz_cache reads every input as both). */
static int seed_deps(const char *dir) {
  static const char deps[] = "tile deps 1\n"
                             "absent 13 pkg/utils.tl\n"
                             "unreadable 9 pkg/a b.py\n"
                             "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef 12 pkg/\nutils.py\n";
  char sub[512], why[256];
  snprintf(sub, sizeof sub, "%s/cache", dir);
  CacheEntry e = {(unsigned char *)".version 8.0", 12, 1, "{}", 2, (char *)deps, sizeof deps - 1};
  return write_file(sub, "deps_list", deps, sizeof deps - 1) | (cache_write(sub, "deps", &e, why, sizeof why) != 0);
}

static int seed_compiled(tile_context *ctx, const char *dir) {
  static const char *defs[] = {"BLOCK=128"};
  const char *arch[] = {"sm_90", "sm_90a"}, *sigs[] = {"*fp32:16,*fp32:16,*fp32:16,i32", "*fp32,*fp32,*fp32,i32:1"};
  int failed = 0;
  for (int i = 0; i < 2; i++) {
    tile_options o;
    tile_options_init(&o);
    o.defines = defs, o.num_defines = 1, o.arch = arch[i], o.signature = sigs[i];
    const void *image;
    size_t size;
    const char *json;
    char name[32];
    snprintf(name, sizeof name, "compiled%d", i);
    if (tile_compile(ctx, "add.tl", vector_add, sizeof vector_add - 1, &o, 1, &image, &size, &json) != TILE_OK) {
      fprintf(stderr, "fuzz_rt_seeds: %s\n", tile_error(ctx));
      return 1;
    }
    failed |= seed_metadata(dir, name, json, (const char *)image, 1);
  }
  return failed;
}

/* The interpreter's metadata of the same kernel. */
static int seed_cpu(tile_context *ctx, const char *dir) {
  static const char *defs[] = {"BLOCK=128"};
  tile_options o;
  tile_options_init(&o);
  o.defines = defs, o.num_defines = 1;
  tile_kernel *k;
  float x[4];
  tile_arg args[] = {tile_buffer(x, "fp32", 4), tile_buffer(x, "fp32", 4), tile_buffer(x, "fp32", 4), tile_int(1)};
  if (tile_context_use_cpu(ctx) || tile_kernel_create(ctx, "add.tl", vector_add, sizeof vector_add - 1, &o, &k) ||
      tile_kernel_compile(k, args, 4))
    return 1;
  return seed_metadata(dir, "cpu", tile_kernel_metadata(k), "", 0);
}

/* bundle/add.tlk: the vector add packed for sm_80 with two signatures (fuzz_bundle's seed). */
static int seed_bundle(tile_context *ctx, const char *dir) {
  static const char *defs[] = {"BLOCK=128"}, *sigs[] = {"*fp32:16,*fp32:16,*fp32:16,i32", "*fp32,*fp32,*fp32,i32"};
  static const char *archs[] = {"sm_80"};
  tile_options o;
  tile_options_init(&o);
  o.defines = defs, o.num_defines = 1;
  const void *bundle;
  size_t size;
  char sub[512];
  snprintf(sub, sizeof sub, "%s/bundle", dir);
  if (tile_pack(ctx, "add.tl", vector_add, sizeof vector_add - 1, &o, sigs, 2, archs, 1, &bundle, &size)) return 1;
  return write_file(sub, "add.tlk", bundle, size);
}

/* Call programs: every byte value once as the first op, then a walk through the rest. */
static int seed_api(const char *dir) {
  char sub[512], name[32];
  unsigned char program[96];
  snprintf(sub, sizeof sub, "%s/api", dir);
  int failed = 0;
  for (int s = 0; s < 24; s++) {
    for (size_t i = 0; i < sizeof program; i++) program[i] = (unsigned char)(s * 37 + i * (2 * s + 1));
    program[0] = 1; /* on the interpreter */
    snprintf(name, sizeof name, "program%d", s);
    failed |= write_file(sub, name, program, sizeof program);
  }
  return failed;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz_rt_seeds DIR\n");
    return 2;
  }
  const char *subs[] = {"", "/metadata", "/cache", "/api", "/bundle"};
  for (int i = 0; i < 5; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s%s", argv[1], subs[i]);
    mkdir(path, 0777);
  }
  tile_context *ctx;
  if (tile_context_create(&ctx)) return 1;
  int failed = seed_compiled(ctx, argv[1]) | seed_metadata(argv[1], "with_map", with_map, "\x7f" "ELF", 0) |
               seed_bundle(ctx, argv[1]) | seed_cpu(ctx, argv[1]) | seed_api(argv[1]) |
               seed_deps(argv[1]);
  tile_context_destroy(ctx);
  return failed;
}
