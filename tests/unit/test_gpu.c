/* The runtime on a GPU (ctest -L gpu; skipped, saying why, without one):
 * JIT kernels launched with grid functions on fresh random data with
 * poisoned outputs at irregular sizes, checked against C references; the
 * disk cache (a second context compiles nothing; a corrupt entry is rebuilt;
 * an unwritable directory is only a note); AOT (tile_compile, files,
 * tile_kernel_load_file, launch, the ':16' promise); PTX through the driver
 * when there is no ptxas; streams and events; and the host time per launch
 * of a cached kernel (printed, not asserted). */
#include "check.h"
#include "tile/tile.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

enum { SKIP = 77 };

static float frand(void) { return (float)rand() / (float)RAND_MAX * 2.0f - 1.0f; }

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const char *seed_path(const char *file) {
  static char path[512];
  snprintf(path, sizeof path, "%s/tests/seeds/%s", TILE_SOURCE_DIR, file);
  return path;
}

static tile_kernel *vector_add(tile_context *ctx, const char *signature) {
  const char *defs[] = {"BLOCK_SIZE=1024"};
  tile_options o;
  tile_options_init(&o);
  o.defines = defs;
  o.num_defines = 1;
  o.signature = signature;
  tile_kernel *k = NULL;
  if (tile_kernel_create_file(ctx, seed_path("vector_add.tl"), &o, &k)) fprintf(stderr, "%s\n", tile_error(ctx));
  return k;
}

static void grid_add(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  long long block = 0;
  tile_kernel_constexpr(k, "BLOCK_SIZE", &block);
  grid[0] = block ? (unsigned)((args[3].i + block - 1) / block) : 0;
}

/* x + y on the GPU at n, exact, the element past the end untouched. */
/* tile_diagnostics right after run_vector_add's launch (each later call starts it afresh). */
static char launch_notes[4096];

static int run_vector_add(tile_context *ctx, tile_kernel *k, int n, tile_stream stream) {
  size_t bytes = sizeof(float) * (size_t)n;
  float *x = malloc(bytes), *y = malloc(bytes), *z = malloc(bytes + 4);
  for (int i = 0; i < n; i++) x[i] = frand(), y[i] = frand();
  void *dx = NULL, *dy = NULL, *dz = NULL;
  int ok = tile_malloc(ctx, &dx, bytes) == TILE_OK && tile_malloc(ctx, &dy, bytes) == TILE_OK &&
           tile_malloc(ctx, &dz, bytes + 4) == TILE_OK && tile_memcpy_to_device(ctx, dx, x, bytes) == TILE_OK &&
           tile_memcpy_to_device(ctx, dy, y, bytes) == TILE_OK && tile_memset(ctx, dz, 0xFF, bytes + 4) == TILE_OK;
  tile_arg args[] = {tile_buffer(dx, "fp32", n), tile_buffer(dy, "fp32", n), tile_buffer(dz, "fp32", n), tile_int(n)};
  ok = ok && tile_launch_grid(k, grid_add, NULL, stream, args, 4) == TILE_OK;
  snprintf(launch_notes, sizeof launch_notes, "%s", tile_diagnostics(ctx));
  ok = ok && tile_synchronize(ctx) == TILE_OK && tile_memcpy_to_host(ctx, z, dz, bytes + 4) == TILE_OK;
  if (!ok) fprintf(stderr, "vector add %d: %s\n", n, tile_error(ctx));
  for (int i = 0; i < n && ok; i++) ok &= z[i] == x[i] + y[i];
  ok &= isnan(z[n]);
  tile_free(ctx, dx), tile_free(ctx, dy), tile_free(ctx, dz);
  free(x), free(y), free(z);
  return ok;
}

static void test_jit(tile_context *ctx) {
  tile_kernel *k = vector_add(ctx, NULL);
  CHECK(k && run_vector_add(ctx, k, 98432, NULL));
  CHECK(k && run_vector_add(ctx, k, 1000003, NULL));
  CHECK(k && run_vector_add(ctx, k, 7, NULL));
  const char *meta = k ? tile_kernel_metadata(k) : NULL;
  CHECK_CONTAINS(meta, "\"name\": \"add_kernel\"");
  CHECK_CONTAINS(meta, "\"target\": \"cubin\"");
  printf("vector add metadata:\n%s", meta ? meta : "(none)\n");
  CHECK(k && tile_kernel_text(k, TILE_STAGE_PTX) != NULL);
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tile") != NULL && !strstr(e->d_name, ".tmp-");
  if (d) closedir(d);
  return n;
}

/* A context whose cache is `dir` (the environment is read at creation). */
static tile_context *context_with_cache(const char *dir) {
  setenv("TILE_CACHE_DIR", dir, 1);
  tile_context *ctx = NULL;
  tile_context_create(&ctx);
  unsetenv("TILE_CACHE_DIR");
  return ctx;
}

static void corrupt_entries(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strstr(e->d_name, ".tile")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "r+b");
    if (f) fseek(f, 100, SEEK_SET), fputc('#', f), fclose(f);
  }
  if (d) closedir(d);
}

static int write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(data, 1, size, f) == size;
  return f && fclose(f) == 0 && ok;
}

/* Elements of a vector add of more programs than any GPU has multiprocessors: one specialisation, so one
 * cache entry (a launch of one wave may add a variant with more registers: docs/abi.md, section 6). */
enum { MANY_PROGRAMS = 1024 * 1024 };

static void test_disk_cache(void) {
  char dir[] = "/tmp/tile-gpu-cache-XXXXXX";
  if (!mkdtemp(dir)) return;
  tile_context *ctx = context_with_cache(dir);
  tile_kernel *k = vector_add(ctx, NULL);
  double t0 = seconds();
  CHECK(k && run_vector_add(ctx, k, MANY_PROGRAMS, NULL));
  double cold = seconds() - t0;
  CHECK(count_entries(dir) == 1);
  CHECK(k && tile_kernel_text(k, TILE_STAGE_TIR) != NULL); /* compiled here */
  tile_context_destroy(ctx);
  ctx = context_with_cache(dir); /* a new process, as far as the kernel knows */
  k = vector_add(ctx, NULL);
  t0 = seconds();
  CHECK(k && run_vector_add(ctx, k, MANY_PROGRAMS, NULL));
  double warm = seconds() - t0;
  CHECK(k && tile_kernel_text(k, TILE_STAGE_TIR) == NULL); /* from the cache */
  printf("first launch: %.2f ms compiling, %.2f ms from the disk cache\n", cold * 1e3, warm * 1e3);
  tile_context_destroy(ctx);
  corrupt_entries(dir);
  ctx = context_with_cache(dir);
  k = vector_add(ctx, NULL);
  CHECK(k && run_vector_add(ctx, k, MANY_PROGRAMS, NULL));
  CHECK_CONTAINS(launch_notes, "cache: ignored the entry");
  CHECK(k && tile_kernel_text(k, TILE_STAGE_TIR) != NULL); /* rebuilt */
  tile_context_destroy(ctx);
  char unwritable[600];
  snprintf(unwritable, sizeof unwritable, "%s/x.tile", dir);
  CHECK(write_file(unwritable, "x", 1));
  snprintf(unwritable, sizeof unwritable, "%s/x.tile/sub", dir); /* under a file: not even root can create it */
  ctx = context_with_cache(unwritable);
  k = vector_add(ctx, NULL);
  CHECK(k && run_vector_add(ctx, k, MANY_PROGRAMS, NULL));
  CHECK_CONTAINS(launch_notes, "the kernel was compiled but not cached");
  tile_context_destroy(ctx);
  char command[700];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  if (system(command)) fprintf(stderr, "could not remove %s\n", dir);
}

/* tile_compile's cubin and metadata in files, loaded and launched in a fresh context. */
static void test_aot(int ptx) {
  tile_context *ctx;
  tile_context_create(&ctx);
  size_t len = 0, size = 0;
  const void *image;
  const char *metadata;
  char *source = NULL;
  FILE *f = fopen(seed_path("vector_add.tl"), "rb");
  if (f) {
    source = calloc(1, 1 << 16);
    len = fread(source, 1, (1 << 16) - 1, f);
    fclose(f);
  }
  tile_options o;
  tile_options_init(&o);
  const char *defs[] = {"BLOCK_SIZE=1024"};
  o.defines = defs;
  o.num_defines = 1;
  o.signature = "*fp32:16,*fp32:16,*fp32:16,i32";
  char path[] = "/tmp/tile-aot-gpu-XXXXXX", image_path[128], json_path[128];
  CHECK(source && mkdtemp(path));
  snprintf(image_path, sizeof image_path, "%s/add.%s", path, ptx ? "ptx" : "cubin");
  snprintf(json_path, sizeof json_path, "%s/add.json", path);
  tile_status s = tile_compile(ctx, "vector_add.tl", source, len, &o, ptx, &image, &size, &metadata);
  if (s) fprintf(stderr, "tile_compile: %s\n", tile_error(ctx));
  CHECK(s == TILE_OK && write_file(image_path, image, size) && write_file(json_path, metadata, strlen(metadata)));
  tile_context_destroy(ctx);
  tile_context_create(&ctx);
  tile_kernel *k = NULL;
  CHECK(tile_kernel_load_file(ctx, image_path, NULL, &k) == TILE_OK);
  CHECK(k && run_vector_add(ctx, k, 123457, NULL));
  void *d = NULL;
  tile_malloc(ctx, &d, 4096);
  tile_arg args[] = {tile_buffer((char *)d + 4, "fp32", 16), tile_buffer(d, "fp32", 16), tile_buffer(d, "fp32", 16), tile_int(16)};
  unsigned grid[3] = {1, 1, 1};
  CHECK(k && tile_launch(k, grid, NULL, args, 4) == TILE_ERROR_ARGUMENT);
  CHECK_CONTAINS(tile_error(ctx), "is not 16-byte aligned, as the kernel's ':16' specialisation promises");
  tile_context_destroy(ctx);
  unlink(image_path), unlink(json_path), rmdir(path);
  free(source);
}

/* Without ptxas the image is PTX and the driver compiles it. */
static void test_without_ptxas(void) {
  setenv("TILE_PTXAS_PATH", "/nonexistent/ptxas", 1);
  setenv("TILE_CACHE_DIR", "/dev/null/tile-cache", 1); /* not even root can create it */
  tile_context *ctx;
  tile_context_create(&ctx);
  unsetenv("TILE_PTXAS_PATH");
  unsetenv("TILE_CACHE_DIR");
  tile_kernel *k = vector_add(ctx, NULL);
  CHECK(k && run_vector_add(ctx, k, 77777, NULL));
  CHECK_CONTAINS(launch_notes, "the CUDA driver will compile the PTX");
  CHECK_CONTAINS(k ? tile_kernel_metadata(k) : NULL, "\"target\": \"ptx\"");
  tile_context_destroy(ctx);
}

static void test_streams_and_events(tile_context *ctx) {
  tile_stream s = NULL;
  tile_event a = NULL, b = NULL;
  float ms = -1;
  tile_kernel *k = vector_add(ctx, NULL);
  CHECK(tile_stream_create(ctx, &s) == TILE_OK && tile_event_create(ctx, &a) == TILE_OK && tile_event_create(ctx, &b) == TILE_OK);
  CHECK(tile_event_record(ctx, a, s) == TILE_OK);
  CHECK(k && run_vector_add(ctx, k, 1 << 22, s));
  CHECK(tile_event_record(ctx, b, s) == TILE_OK && tile_stream_synchronize(ctx, s) == TILE_OK);
  CHECK(tile_event_elapsed(ctx, a, b, &ms) == TILE_OK && ms > 0);
  tile_event_destroy(ctx, a), tile_event_destroy(ctx, b), tile_stream_destroy(ctx, s);
}

/* Host time per launch of a cached specialisation: the runtime's part plus cuLaunchKernel. */
static void test_launch_overhead(tile_context *ctx) {
  enum { LAUNCHES = 20000 };
  tile_kernel *k = vector_add(ctx, NULL);
  void *d = NULL;
  CHECK(k && tile_malloc(ctx, &d, 4096) == TILE_OK);
  tile_arg args[] = {tile_buffer(d, "fp32", 16), tile_buffer(d, "fp32", 16), tile_buffer(d, "fp32", 16), tile_int(16)};
  unsigned grid[3] = {1, 1, 1};
  int ok = k && tile_launch(k, grid, NULL, args, 4) == TILE_OK && tile_synchronize(ctx) == TILE_OK;
  double t0 = seconds();
  for (int i = 0; i < LAUNCHES && ok; i++) ok = tile_launch(k, grid, NULL, args, 4) == TILE_OK;
  double fixed = (seconds() - t0) / LAUNCHES;
  tile_synchronize(ctx);
  t0 = seconds();
  for (int i = 0; i < LAUNCHES && ok; i++) ok = tile_launch_grid(k, grid_add, NULL, NULL, args, 4) == TILE_OK;
  double with_fn = (seconds() - t0) / LAUNCHES;
  CHECK(ok && tile_synchronize(ctx) == TILE_OK);
  printf("host time per launch of a cached kernel: %.2f us (tile_launch), %.2f us (tile_launch_grid); goal < 5 us, "
         "Triton 19.6 us\n", fixed * 1e6, with_fn * 1e6);
  tile_free(ctx, d);
}

int main(void) {
  srand((unsigned)time(NULL));
  tile_context *ctx;
  tile_context_create(&ctx);
  if (tile_device_open(ctx, 0) != TILE_OK) {
    printf("SKIP: no GPU: %s\n", tile_error(ctx));
    tile_context_destroy(ctx);
    return SKIP;
  }
  printf("GPU: %s\n", tile_device_name(ctx));
  test_jit(ctx);
  test_streams_and_events(ctx);
  test_launch_overhead(ctx);
  tile_context_destroy(ctx);
  test_disk_cache();
  test_aot(0);
  test_aot(1);
  test_without_ptxas();
  return check_report();
}
