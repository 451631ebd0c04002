/* Issue #21's acceptance for kernel bundles, on a GPU: packs a kernel with
 * three @triton.autotune configs for the architectures given (sm_80,sm_90a;
 * or sm_80 alone, where an H100 or H200 runs its PTX), then in a first
 * process loads it, launches (it tunes), checks the result and the image
 * chosen; in a second process launches again and checks it did not tune
 * (the choice came from the disk cache); in a third runs it on the CPU
 * interpreter.  Exits 77 without a GPU.
 *   aot_bundle ARCH[,ARCH]... */
#include "tile/tile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char source[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.autotune(configs=[triton.Config({'BLOCK': 128}, num_warps=1),\n"
    "                          triton.Config({'BLOCK': 256}, num_warps=2),\n"
    "                          triton.Config({'BLOCK': 1024}, num_warps=4)],\n"
    "                 key=['n'])\n"
    "@triton.jit\n"
    "def axpy(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    mask = offs < n\n"
    "    tl.store(out_ptr + offs, 2 * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)\n";

enum { N = 1000003 };

static int fail(tile_context *ctx, const char *what) {
  fprintf(stderr, "aot_bundle: %s: %s\n", what, ctx ? tile_error(ctx) : "");
  return 1;
}

static void grid(const tile_kernel *k, const tile_arg *args, int n, unsigned g[3], void *user) {
  long long block = 1;
  tile_kernel_constexpr(k, "BLOCK", &block);
  g[0] = (unsigned)((args[3].i + block - 1) / block), g[1] = g[2] = 1;
}

/* One process: load, launch, check; `round` 0 tunes, 1 must not, 2 runs on the interpreter. */
static int run(const char *path, int round, const char *want_arch, const char *want_target) {
  tile_context *ctx;
  if (tile_context_create(&ctx) != TILE_OK) return fail(NULL, "context");
  if (round == 2 && tile_context_use_cpu(ctx) != TILE_OK) return fail(ctx, "use_cpu");
  tile_kernel *k;
  float *x, *y, *out, *hx = malloc(sizeof(float) * N), *hy = malloc(sizeof(float) * N), *ho = malloc(sizeof(float) * N);
  if (tile_kernel_load_bundle_file(ctx, path, &k) != TILE_OK) return fail(ctx, "load");
  for (int i = 0; i < N; i++) hx[i] = (float)(i % 101) * 0.5f, hy[i] = (float)(i % 7);
  if (tile_malloc(ctx, (void **)&x, sizeof(float) * N) || tile_malloc(ctx, (void **)&y, sizeof(float) * N) ||
      tile_malloc(ctx, (void **)&out, sizeof(float) * N) || tile_memcpy_to_device(ctx, x, hx, sizeof(float) * N) ||
      tile_memcpy_to_device(ctx, y, hy, sizeof(float) * N))
    return fail(ctx, "memory");
  tile_arg args[] = {tile_buffer(x, "fp32", N), tile_buffer(y, "fp32", N), tile_buffer(out, "fp32", N), tile_int(N)};
  if (tile_memset(ctx, out, 0xff, sizeof(float) * N) != TILE_OK) return fail(ctx, "poison");
  if (tile_launch_grid(k, grid, NULL, NULL, args, 4) != TILE_OK) return fail(ctx, "launch");
  const char *diagnostics = tile_diagnostics(ctx);
  if (tile_memcpy_to_host(ctx, ho, out, sizeof(float) * N) != TILE_OK) return fail(ctx, "copy back");
  for (int i = 0; i < N; i++)
    if (ho[i] != 2 * hx[i] + hy[i]) return fprintf(stderr, "aot_bundle: out[%d] = %g, not %g\n", i, ho[i], 2 * hx[i] + hy[i]), 1;
  const char *meta = tile_kernel_metadata(k);
  char arch[80], target[80];
  snprintf(arch, sizeof arch, "\"arch\": \"%s\"", round == 2 ? "cpu" : want_arch);
  snprintf(target, sizeof target, "\"target\": \"%s\"", round == 2 ? "cpu" : want_target);
  if (!strstr(meta, arch) || !strstr(meta, target)) return fprintf(stderr, "aot_bundle: expected %s, %s:\n%s\n", arch, target, meta), 1;
  if (round == 0 && !strstr(diagnostics, "chose config")) return fprintf(stderr, "aot_bundle: did not tune:\n%s\n", diagnostics), 1;
  if (round == 1 && !strstr(diagnostics, "disk cache")) return fprintf(stderr, "aot_bundle: tuned again:\n%s\n", diagnostics), 1;
  printf("round %d: config %d, %s %s\n", round, tile_kernel_config(k), round == 2 ? "cpu" : want_arch, round == 2 ? "" : want_target);
  tile_context_destroy(ctx);
  free(hx), free(hy), free(ho);
  return 0;
}

/* Runs f(path, ...) in a child process and returns its exit status: the parent never
 * initialises CUDA, which a forked child could not use after it. */
static int in_child(int (*f)(const char *, int, const char *, const char *), const char *path, int round,
                    const char *want_arch, const char *want_target) {
  fflush(stdout), fflush(stderr);
  pid_t child = fork();
  if (child == 0) {
    int r = f(path, round, want_arch, want_target);
    fflush(stdout), fflush(stderr);
    _exit(r);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 1;
  return WEXITSTATUS(status);
}

/* Packs the bundle for archs (comma-separated) to path; the GPU's name goes to path.gpu.
 * 77 without a GPU. */
static int pack(const char *path, int unused, const char *archs_text, const char *unused2) {
  char text[128];
  const char *archs[8];
  int num_archs = 0;
  snprintf(text, sizeof text, "%s", archs_text);
  for (char *a = strtok(text, ","); a && num_archs < 8; a = strtok(NULL, ",")) archs[num_archs++] = a;
  tile_context *ctx;
  if (tile_context_create(&ctx) != TILE_OK) return 1;
  const char *name = tile_device_name(ctx);
  if (!name || !name[0]) return printf("SKIP: aot_bundle: no GPU\n"), 77;
  static const char *const signatures[] = {"*fp32:16,*fp32:16,*fp32:16,i32", "*fp32,*fp32,*fp32,i32"};
  const void *bundle;
  size_t size;
  if (tile_pack(ctx, "axpy.tl", source, sizeof source - 1, NULL, signatures, 2, archs, num_archs, &bundle, &size) != TILE_OK)
    return fail(ctx, "pack");
  char gpu[300];
  snprintf(gpu, sizeof gpu, "%s.gpu", path);
  FILE *f = fopen(path, "wb"), *g = fopen(gpu, "w");
  if (!f || !g || fwrite(bundle, 1, size, f) != size || fputs(name, g) < 0 || fclose(f) || fclose(g))
    return fail(NULL, "write the bundle");
  tile_context_destroy(ctx);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return fprintf(stderr, "usage: aot_bundle ARCH[,ARCH]...\n"), 2;
  char dir[] = "/tmp/tile-aot-bundle-XXXXXX", path[256], gpu_path[300], name[256] = "";
  if (!mkdtemp(dir)) return 1;
  setenv("TILE_CACHE_DIR", dir, 1);
  snprintf(path, sizeof path, "%s/axpy.tlk", dir);
  snprintf(gpu_path, sizeof gpu_path, "%s.gpu", path);
  int status = in_child(pack, path, 0, argv[1], NULL);
  FILE *g = status ? NULL : fopen(gpu_path, "r");
  if (g && !fgets(name, sizeof name, g)) name[0] = 0;
  if (g) fclose(g);
  /* sm_90a where the bundle has it and the GPU is a Hopper; else sm_80's cubin on an A100, its PTX elsewhere */
  int hopper = strstr(name, "H100") || strstr(name, "H200") || strstr(name, "H800") || strstr(name, "H20");
  const char *want_arch = strstr(argv[1], "sm_90a") && hopper ? "sm_90a" : "sm_80";
  const char *want_target = !strcmp(want_arch, "sm_90a") || strstr(name, "A100") ? "cubin" : "ptx";
  if (!status) printf("aot_bundle: %s, bundle of %s: expecting the %s %s\n", name, argv[1], want_arch, want_target);
  for (int round = 0; round < 3 && !status; round++)
    if ((status = in_child(run, path, round, want_arch, want_target)))
      fprintf(stderr, "aot_bundle: round %d failed\n", round);
  char command[300];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  if (system(command) != 0) status = status ? status : 1;
  return status;
}
