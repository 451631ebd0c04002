/* The JIT's GPU path end to end on a machine without a GPU: the LLVM
 * lowering is replaced by a stand-in that writes an empty PTX kernel with
 * the function's ABI (so ptxas, the metadata, the disk cache, loading and
 * launching are the real ones), and the driver by the fake of fake_cuda.c.
 * Checks the specialisation's metadata (target chosen from the GPU's
 * compute capability, registers from ptxas), the disk cache across contexts
 * (hit, a new entry per specialisation, a corrupt entry rebuilt, an
 * unwritable directory only noted, many processes compiling one kernel at
 * once, a kernel's imported files edited or corrupt in its entry, and in
 * its autotuner's choice), PTX
 * for the driver when there is no ptxas, and tile_compile's cubin loaded
 * back. */
#include "check.h"
#include "fake_cuda.h"
#include "../../src/driver/driver.h"
#include "../../src/llvm/generate.h"
#include "../../src/runtime/cache.h"
#include "../../src/tir/tir.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FAKE_CUDA_PATH
#error "FAKE_CUDA_PATH: the fake driver's path"
#endif
#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

static FakeCuda *fake;
static char libdevice_seen[512]; /* the libdevice path the last compilation was given */
static char cache_dir[128];
static char notes[2048], error[2048]; /* the last launch's tile_diagnostics and tile_error */

/* ---- the stand-in for src/llvm: an empty kernel with f's parameters ------------------------------ */

static const char *ptx_type(const Type *t) {
  if (t->is_ptr) return ".u64";
  if (dtype_is_float(t->elem)) return t->elem == DT_FP32 ? ".f32" : t->elem == DT_FP64 ? ".f64" : ".b16";
  int bits = dtype_bits(t->elem);
  return bits <= 8 ? ".u8" : bits == 16 ? ".u16" : bits == 32 ? ".u32" : ".u64";
}

int llvm_generate(const TirFunc *f, const GpuTarget *t, int want_llir, int want_ptx, Arena *a, GpuCode *out,
                  Diags *d) {
  snprintf(libdevice_seen, sizeof libdevice_seen, "%s", t->libdevice ? t->libdevice : "(null)");
  Buf b;
  buf_init(&b, a);
  buf_printf(&b, ".version 8.0\n.target %s\n.address_size 64\n.visible .entry %s(", t->arch, f->name);
  for (int i = 0; i < f->params.len; i++)
    buf_printf(&b, "%s.param %s p%d", i ? ", " : "", ptx_type(tir_type(f, f->params.data[i].value)), i);
  buf_puts(&b, ")\n{\n  ret;\n}\n");
  out->llir = "; the test's stand-in for the lowering\n";
  out->ptx = want_ptx ? buf_cstr(&b) : NULL;
  out->ptx_len = b.len;
  out->shared_bytes = 0;
  return 0;
}

/* ---- helpers ------------------------------------------------------------------------------ */

static tile_context *context(const char *cache, const char *ptxas) {
  setenv("TILE_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
  if (cache) setenv("TILE_CACHE_DIR", cache, 1);
  if (ptxas) setenv("TILE_PTXAS_PATH", ptxas, 1);
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  unsetenv("TILE_CUDA_LIBRARY"), unsetenv("TILE_CACHE_DIR"), unsetenv("TILE_PTXAS_PATH");
  return ctx;
}

/* The options every vector add of these tests starts from: BLOCK_SIZE 512. */
static tile_options vector_add_options(void) {
  static const char *defs[] = {"BLOCK_SIZE=512"};
  tile_options o;
  tile_options_init(&o);
  o.defines = defs;
  o.num_defines = 1;
  return o;
}

static tile_kernel *vector_add_from(tile_context *ctx, const tile_options *o) {
  tile_kernel *k = NULL;
  CHECK(tile_kernel_create_file(ctx, TILE_SOURCE_DIR "/tests/seeds/vector_add.tl", o, &k) == TILE_OK);
  return k;
}

static tile_kernel *vector_add_with(tile_context *ctx, const char *libdevice) {
  tile_options o = vector_add_options();
  o.libdevice = libdevice;
  return vector_add_from(ctx, &o);
}

static tile_kernel *vector_add(tile_context *ctx) { return vector_add_with(ctx, NULL); }

static void grid_add(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  long long block = 0; /* a failed lookup launches nothing, which launch_add notices */
  tile_kernel_constexpr(k, "BLOCK_SIZE", &block);
  grid[0] = block ? (unsigned)((args[3].i + block - 1) / block) : 0;
}

/* Launches vector add at n (offset elements into x) and checks what the driver received. */
static int launch_add(tile_context *ctx, tile_kernel *k, int n, int offset) {
  void *x = NULL;
  if (tile_malloc(ctx, &x, 4 * (size_t)(n + offset)) != TILE_OK) return 0;
  tile_arg args[] = {tile_buffer((float *)x + offset, "fp32", n), tile_buffer(x, "fp32", n), tile_buffer(x, "fp32", n),
                     tile_int(n)};
  fake->params_to_copy = 4;
  int before = fake->launches;
  tile_status s = tile_launch_grid(k, grid_add, NULL, NULL, args, 4);
  if (s != TILE_OK) fprintf(stderr, "launch: %s\n", tile_error(ctx));
  int ok = s == TILE_OK && fake->launches == before + 1 && fake->grid[0] == (unsigned)(n + 511) / 512 &&
           fake->block[0] == 128 && fake->params[0] == (uint64_t)(uintptr_t)((float *)x + offset) &&
           (uint32_t)fake->params[3] == (uint32_t)n && !strcmp(fake->function, "add_kernel");
  snprintf(notes, sizeof notes, "%s", tile_diagnostics(ctx));
  snprintf(error, sizeof error, "%s", tile_error(ctx));
  tile_free(ctx, x);
  return ok;
}

static int same(const char *a, const char *b) { return a && b && !strcmp(a, b); }

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tile") && !strstr(e->d_name, ".tmp-");
  if (d) closedir(d);
  return n;
}

static void corrupt_entries(const char *dir) {
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (strstr(e->d_name, ".tile")) CHECK(truncate(path, 100) == 0);
  }
  if (d) closedir(d);
}

/* Rewrites each entry of `dir` through cache_write (so its checksum holds),
 * changed by change(e, how) first; the buffers it points e to are its own. */
static void rewrite_entries(const char *dir, void (*change)(CacheEntry *e, const void *how), const void *how) {
  DIR *d = opendir(dir);
  for (struct dirent *ent; d && (ent = readdir(d));) {
    char key[256], why[256];
    CacheEntry e;
    if (!strstr(ent->d_name, ".tile") || strstr(ent->d_name, ".tmp-")) continue;
    snprintf(key, sizeof key, "%.*s", (int)(strlen(ent->d_name) - 5), ent->d_name);
    if (cache_read(dir, key, &e, why, sizeof why) != 1) continue;
    CacheEntry changed = e;
    change(&changed, how);
    CHECK(cache_write(dir, key, &changed, why, sizeof why) == 0);
    cache_entry_free(&e);
  }
  if (d) closedir(d);
}

/* Its metadata's "cubin" said to be "ptx" (how NULL), or its metadata cut in half. */
static void miswrite(CacheEntry *e, const void *how) {
  char *target = strstr(e->metadata, "\"cubin\"");
  if (how) e->metadata_len /= 2;
  else if (target) memcpy(target, "\"ptx\"  ", 7);
}

static void miswrite_entries(const char *dir, int cut) { rewrite_entries(dir, miswrite, cut ? "cut" : NULL); }

/* ---- tests --------------------------------------------------------------------------------- */

static void test_compile_and_cache(void) {
  tile_context *ctx = context(cache_dir, NULL);
  tile_kernel *k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 5000, 0));
  const char *meta = tile_kernel_metadata(k);
  CHECK_CONTAINS(meta, "\"arch\": \"sm_90a\"");
  CHECK_CONTAINS(meta, "\"target\": \"cubin\"");
  CHECK_CONTAINS(meta, "\"signature\": \"*fp32:16,*fp32:16,*fp32:16,i32\"");
  CHECK(meta && !strstr(meta, "\"registers\": -1")); /* ptxas said how many */
  CHECK(tile_kernel_text(k, TILE_STAGE_TIR) && tile_kernel_text(k, TILE_STAGE_TGIR) && tile_kernel_text(k, TILE_STAGE_PTX));
  const void *image;
  size_t size;
  CHECK(tile_kernel_image(k, &image, &size) == TILE_OK && size > 4 && !memcmp(image, "\x7f" "ELF", 4));
  CHECK(count_entries(cache_dir) == 1);
  char first[4096];
  snprintf(first, sizeof first, "%s", meta ? meta : "");
  CHECK(k && launch_add(ctx, k, 4999, 1)); /* unaligned: a second specialisation, a second entry */
  CHECK_CONTAINS(tile_kernel_metadata(k), "\"signature\": \"*fp32,*fp32:16,*fp32:16,i32\"");
  CHECK(count_entries(cache_dir) == 2);
  tile_context_destroy(ctx);
  ctx = context(cache_dir, NULL); /* from the disk cache: nothing compiled, the same metadata */
  k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 5000, 0));
  CHECK(k && tile_kernel_text(k, TILE_STAGE_TIR) == NULL && same(tile_kernel_metadata(k), first));
  CHECK(count_entries(cache_dir) == 2);
  tile_context_destroy(ctx);
  corrupt_entries(cache_dir);
  ctx = context(cache_dir, NULL);
  k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 5000, 0));
  CHECK_CONTAINS(notes, "cache: ignored the entry");
  CHECK_CONTAINS(notes, "(lengths do not match the file (truncated?)) and compiled again");
  CHECK(k && tile_kernel_text(k, TILE_STAGE_TIR) != NULL);
  tile_context_destroy(ctx);
  ctx = context(cache_dir, NULL); /* rebuilt in place */
  k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 5000, 0) && tile_kernel_text(k, TILE_STAGE_TIR) == NULL);
  CHECK(same(notes, ""));
  tile_context_destroy(ctx);
  /* entries whose checksum holds but whose contents are wrong: named, and rebuilt (once: a
   * compile error at every launch) */
  for (int cut = 0; cut < 2; cut++) {
    miswrite_entries(cache_dir, cut);
    ctx = context(cache_dir, NULL);
    k = vector_add(ctx);
    CHECK(k && launch_add(ctx, k, 5000, 0) && tile_kernel_text(k, TILE_STAGE_TIR) != NULL);
    CHECK_CONTAINS(notes, "cache: ignored the entry ");
    CHECK_CONTAINS(notes, cache_dir);
    CHECK_CONTAINS(notes, cut ? "(metadata: not JSON: " : "(its metadata says ptx, its header the other) and compiled again");
    tile_context_destroy(ctx);
  }
}

static void test_unwritable_cache(void) {
  tile_context *ctx = context("/dev/null/cache", NULL);
  tile_kernel *k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 100, 0));
  CHECK_CONTAINS(notes, "cache: cannot create '/dev/null/cache': Not a directory");
  CHECK_CONTAINS(notes, "; the kernel was compiled but not cached");
  tile_context_destroy(ctx);
}

static void test_targets(void) {
  struct { int major, minor; const char *arch, *target; } gpus[] = {
      {8, 0, "sm_80", "cubin"}, {8, 6, "sm_86", "cubin"}, {8, 7, "sm_86", "cubin"}, {8, 9, "sm_89", "cubin"},
      {9, 0, "sm_90a", "cubin"}, {10, 0, "sm_90", "ptx"}, {12, 0, "sm_90", "ptx"}};
  for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
    fake->cc_major = gpus[i].major, fake->cc_minor = gpus[i].minor;
    tile_context *ctx = context(NULL, NULL);
    tile_kernel *k = vector_add(ctx);
    CHECK(k && launch_add(ctx, k, 100, 0));
    char arch[64], target[64];
    snprintf(arch, sizeof arch, "\"arch\": \"%s\"", gpus[i].arch);
    snprintf(target, sizeof target, "\"target\": \"%s\"", gpus[i].target);
    CHECK_CONTAINS(k ? tile_kernel_metadata(k) : NULL, arch);
    CHECK_CONTAINS(k ? tile_kernel_metadata(k) : NULL, target);
    tile_context_destroy(ctx);
  }
  fake->cc_major = 9, fake->cc_minor = 0;
}

/* An asked-for target against the GPU present: a cubin of the GPU's major version, the PTX of an
 * older one (the driver compiles it: cubins do not carry across major versions), an error for a
 * newer one or another GPU's 'a' target. */
static void test_asked_targets(void) {
  struct { int major, minor; const char *arch, *target; } cases[] = {
      {9, 0, "sm_90a", "cubin"}, {9, 0, "sm_90", "cubin"}, {9, 0, "sm_80", "ptx"}, {8, 6, "sm_80", "cubin"},
      {8, 6, "sm_86", "cubin"}, {8, 0, "sm_86", NULL}, {8, 0, "sm_90a", NULL}, {10, 0, "sm_90a", NULL},
      {10, 0, "sm_90", "ptx"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    fake->cc_major = cases[i].major, fake->cc_minor = cases[i].minor;
    tile_context *ctx = context(NULL, NULL);
    tile_options o = vector_add_options();
    o.arch = cases[i].arch;
    tile_kernel *k = vector_add_from(ctx, &o);
    int launched = k && launch_add(ctx, k, 100, 0);
    if (cases[i].target) {
      char target[64];
      snprintf(target, sizeof target, "\"target\": \"%s\"", cases[i].target);
      CHECK(launched);
      CHECK_CONTAINS(tile_kernel_metadata(k), target);
    } else {
      char message[128];
      snprintf(message, sizeof message, "code for %s cannot run on this GPU", cases[i].arch);
      CHECK(!launched);
      CHECK_CONTAINS(error, message);
    }
    tile_kernel_destroy(k);
    tile_context_destroy(ctx);
  }
  fake->cc_major = 9, fake->cc_minor = 0;
}

static void test_without_ptxas(void) {
  tile_context *ctx = context(NULL, "/nonexistent/ptxas");
  tile_kernel *k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 100, 0));
  CHECK_CONTAINS(notes, "TILE_PTXAS_PATH is '/nonexistent/ptxas', which is not an executable file: "
                                        "the CUDA driver will compile the PTX");
  CHECK_CONTAINS(k ? tile_kernel_metadata(k) : NULL, "\"target\": \"ptx\"");
  CHECK_CONTAINS(k ? tile_kernel_metadata(k) : NULL, "\"registers\": -1");
  const void *image;
  size_t size;
  CHECK(tile_kernel_image(k, &image, &size) == TILE_OK && !memcmp(image, ".version", 8) && strlen(image) == size);
  tile_context_destroy(ctx);
}

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

/* A context made with TILE_LIBDEVICE_PATH and CUDA_HOME set to these (NULL: unset). */
static tile_context *context_with_libdevice(const char *cache, const char *libdevice, const char *cuda_home) {
  if (libdevice) setenv("TILE_LIBDEVICE_PATH", libdevice, 1);
  if (cuda_home) setenv("CUDA_HOME", cuda_home, 1);
  tile_context *ctx = context(cache, NULL);
  unsetenv("TILE_LIBDEVICE_PATH"), unsetenv("CUDA_HOME");
  return ctx;
}

/* The libdevice path comes from the context's environment (read at creation) or the options, reaches the
 * lowering, and is part of the cache key: another libdevice file, or the same path changed, misses. */
static void test_libdevice(void) {
  char dir[200], a[256], b[256];
  snprintf(dir, sizeof dir, "%s/libdevice", cache_dir);
  snprintf(a, sizeof a, "%s/a.bc", cache_dir);
  snprintf(b, sizeof b, "%s/b.bc", cache_dir);
  write_file(a, "libdevice a");
  write_file(b, "libdevice b");
  char *saved_home = getenv("CUDA_HOME") ? strdup(getenv("CUDA_HOME")) : NULL;
  tile_context *ctx = context_with_libdevice(dir, NULL, "/opt/cuda-test"); /* a fresh cache: compiled */
  setenv("CUDA_HOME", "/elsewhere", 1); /* too late: the context has read it */
  tile_kernel *k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 100, 0));
  CHECK(same(libdevice_seen, "/opt/cuda-test/nvvm/libdevice/libdevice.10.bc"));
  unsetenv("CUDA_HOME");
  tile_context_destroy(ctx);
  ctx = context_with_libdevice(dir, a, "/opt/cuda-test");
  k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 100, 0) && same(libdevice_seen, a) && count_entries(dir) == 2);
  tile_context_destroy(ctx);
  ctx = context_with_libdevice(dir, a, NULL); /* the same libdevice: a hit */
  k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 100, 0) && tile_kernel_text(k, TILE_STAGE_TIR) == NULL && count_entries(dir) == 2);
  k = vector_add_with(ctx, b); /* the options' libdevice wins, and is another key */
  CHECK(k && launch_add(ctx, k, 100, 0) && same(libdevice_seen, b) && tile_kernel_text(k, TILE_STAGE_TIR) != NULL);
  CHECK(count_entries(dir) == 3);
  tile_context_destroy(ctx);
  write_file(a, "libdevice a, another version");
  ctx = context_with_libdevice(dir, a, NULL);
  k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 100, 0) && tile_kernel_text(k, TILE_STAGE_TIR) != NULL && count_entries(dir) == 4);
  tile_context_destroy(ctx);
  if (saved_home) setenv("CUDA_HOME", saved_home, 1);
  free(saved_home);
}

/* The source's name is compiled into the kernel (device_assert's file), so it is part of the cache key. */
static void test_source_name_in_key(void) {
  char dir[200];
  snprintf(dir, sizeof dir, "%s/names", cache_dir);
  tile_context *ctx = context(dir, NULL);
  char *text = NULL;
  size_t len = 0;
  CHECK(context_read_file(ctx, TILE_SOURCE_DIR "/tests/seeds/vector_add.tl", 1 << 20, &text, &len) == TILE_OK);
  const char *names[] = {"first/vector_add.tl", "second/vector_add.tl", "first/vector_add.tl"};
  for (int i = 0; i < 3; i++) {
    tile_options o = vector_add_options();
    tile_kernel *k = NULL;
    CHECK(text && tile_kernel_create(ctx, names[i], text, len, &o, &k) == TILE_OK);
    CHECK(k && launch_add(ctx, k, 100, 0));
    CHECK(k && (tile_kernel_text(k, TILE_STAGE_TIR) != NULL) == (i < 2)); /* the third hits the first's entry */
    CHECK(count_entries(dir) == (i < 2 ? i + 1 : 2));
  }
  free(text);
  tile_context_destroy(ctx);
}

/* ---- a kernel importing a module of its package ------------------------------------------------------- */

#define PACKAGE_IMPORTS "import triton\nimport triton.language as tl\nfrom .helpers import f\n\n"
#define PACKAGE_ADD                                                                     \
  "@triton.jit\n"                                                                      \
  "def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):\n"  \
  "    offsets = tl.program_id(axis=0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"     \
  "    mask = offsets < n_elements\n"                                                  \
  "    tl.store(output_ptr + offsets, f(tl.load(x_ptr + offsets, mask=mask)), mask=mask)\n"

static const char package_kernel[] = PACKAGE_IMPORTS PACKAGE_ADD;
/* The same, tuned over two block sizes. */
static const char tuned_package_kernel[] =
    PACKAGE_IMPORTS "@triton.autotune(configs=[triton.Config({'BLOCK_SIZE': 512}, num_warps=4),\n"
    "                          triton.Config({'BLOCK_SIZE': 256}, num_warps=4)], key=['n_elements'])\n" PACKAGE_ADD;

/* helpers.tl's f, computing x * factor (one digit). */
static void write_helper(const char *path, int factor) {
  char text[200];
  snprintf(text, sizeof text, "import triton\n\n@triton.jit\ndef f(x):\n    return x * %d.0\n", factor);
  write_file(path, text);
}

/* The kernel of package `pkg` compiled (or taken from the cache `dir`) in
 * a fresh context and launched; its tile IR (into tir, "" on a cache hit). */
static int launch_package(const char *dir, const char *pkg, char *tir, size_t tirsize) {
  char kernel[300];
  snprintf(kernel, sizeof kernel, "%s/kernel.tl", pkg);
  tile_context *ctx = context(dir, NULL);
  tile_options o = vector_add_options();
  tile_kernel *k = NULL;
  int ok = tile_kernel_create_file(ctx, kernel, &o, &k) == TILE_OK && launch_add(ctx, k, 1000, 0);
  const char *text = ok ? tile_kernel_text(k, TILE_STAGE_TIR) : NULL;
  snprintf(tir, tirsize, "%s", text ? text : "");
  if (!ok) snprintf(error, sizeof error, "%s", tile_error(ctx));
  tile_context_destroy(ctx);
  return ok;
}

/* An entry records the files its kernel imported: edit one, or make one
 * that the import would find first, and the entry is compiled again
 * (before, such kernels were never cached: the key sees the source alone). */
static void test_imports_in_key(void) {
  char dir[200], pkg[200], helper_tl[250], helper_py[250], tir[1 << 16], first[1 << 16];
  snprintf(dir, sizeof dir, "%s/imports", cache_dir);
  snprintf(pkg, sizeof pkg, "%s/pkg", cache_dir);
  snprintf(helper_tl, sizeof helper_tl, "%s/helpers.tl", pkg);
  snprintf(helper_py, sizeof helper_py, "%s/helpers.py", pkg);
  CHECK(mkdir(pkg, 0755) == 0);
  char kernel[300];
  snprintf(kernel, sizeof kernel, "%s/kernel.tl", pkg);
  write_file(kernel, package_kernel);
  write_helper(helper_tl, 2);
  CHECK(launch_package(dir, pkg, first, sizeof first) && first[0] && count_entries(dir) == 1); /* compiled */
  CHECK(launch_package(dir, pkg, tir, sizeof tir) && !tir[0]);                               /* a hit */
  write_helper(helper_tl, 3); /* the same size, maybe the same second: the bytes tell */
  CHECK(launch_package(dir, pkg, tir, sizeof tir) && tir[0] && strcmp(tir, first) && count_entries(dir) == 1);
  CHECK_CONTAINS(first, "constant 2 : fp32");
  CHECK_CONTAINS(tir, "constant 3 : fp32");
  CHECK(launch_package(dir, pkg, tir, sizeof tir) && !tir[0]); /* the entry rewritten: a hit again */
  CHECK(rename(helper_tl, helper_py) == 0); /* now helpers.py, helpers.tl looked for and absent */
  CHECK(launch_package(dir, pkg, tir, sizeof tir) && tir[0]);
  write_helper(helper_tl, 4); /* found before helpers.py */
  CHECK(launch_package(dir, pkg, tir, sizeof tir) && tir[0]);
  CHECK_CONTAINS(tir, "constant 4 : fp32");
  CHECK(unlink(helper_tl) == 0 && unlink(helper_py) == 0); /* gone: an error, not the old code */
  CHECK(!launch_package(dir, pkg, tir, sizeof tir));
  write_helper(helper_tl, 2);
}

/* Its dependency list `how`, or its own cut short by one byte (how NULL). */
static void rewrite_deps(CacheEntry *e, const void *how) {
  if (how) e->deps = (char *)how, e->deps_len = strlen(how);
  else e->deps_len -= e->deps_len > 0;
}

/* An entry whose dependency list does not read is compiled again and replaced, with a note. */
static void test_corrupt_dependencies(void) {
  char dir[200], pkg[200], tir[1 << 16];
  snprintf(dir, sizeof dir, "%s/imports", cache_dir);
  snprintf(pkg, sizeof pkg, "%s/pkg", cache_dir);
  const char *bad[] = {NULL, "tile deps 1\n", "tile deps 2\nabsent 3 a.tl\n", "tile deps 1\nabsent 0 \n",
                       "tile deps 1\nabsent 99999999999999999999 a\n", "tile deps 1\nABSENT 4 a.tl\n"};
  CHECK(launch_package(dir, pkg, tir, sizeof tir)); /* an entry for the package as it is now */
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rewrite_entries(dir, rewrite_deps, bad[i]);
    CHECK(launch_package(dir, pkg, tir, sizeof tir) && tir[0]);
    CHECK_CONTAINS(notes, "cache: ignored the entry ");
    CHECK_CONTAINS(notes, i == 1 || i == 2 ? "(its dependency list has no header, or nothing after it) and compiled again"
                                           : "(its dependency list is malformed at byte ");
    CHECK(launch_package(dir, pkg, tir, sizeof tir) && !tir[0] && !strstr(notes, "cache:")); /* rebuilt in place */
  }
}

/* The tuned kernel of package `pkg` created in a fresh context (the cache `dir`, one compile thread: the
 * stand-in lowering writes a global) and launched; *from_disk: whether its choice came from the cache. */
static int tune_package(const char *dir, const char *pkg, int *from_disk) {
  char kernel[300];
  snprintf(kernel, sizeof kernel, "%s/kernel.tl", pkg);
  setenv("TILE_COMPILE_THREADS", "1", 1);
  tile_context *ctx = context(dir, NULL);
  unsetenv("TILE_COMPILE_THREADS");
  tile_options o;
  tile_options_init(&o);
  tile_kernel *k = NULL;
  void *x = NULL;
  int ok = tile_kernel_create_file(ctx, kernel, &o, &k) == TILE_OK && tile_malloc(ctx, &x, 4 * 1000) == TILE_OK;
  tile_arg args[] = {tile_buffer(x, "fp32", 1000), tile_buffer(x, "fp32", 1000), tile_buffer(x, "fp32", 1000),
                     tile_int(1000)};
  fake->params_to_copy = 4;
  ok = ok && tile_launch_grid(k, grid_add, NULL, NULL, args, 4) == TILE_OK;
  snprintf(notes, sizeof notes, "%s", tile_diagnostics(ctx));
  if (!ok) fprintf(stderr, "tune_package: %s\n", tile_error(ctx));
  *from_disk = strstr(notes, "tuned by an earlier run (disk cache)") != NULL;
  if (x) tile_free(ctx, x);
  tile_context_destroy(ctx);
  return ok;
}

/* rewrite_deps on the autotuner's choices only (their image is their tag). */
static void rewrite_choice_deps(CacheEntry *e, const void *how) {
  static const char tag[] = "tile autotune choice";
  if (e->image_size == sizeof tag - 1 && !memcmp(e->image, tag, sizeof tag - 1)) rewrite_deps(e, how);
}

/* The autotuner's choice lists the files its variants imported, as their
 * entries do: an edited helper has the kernel tuned again and the choice
 * replaced (before, the choice made from the old text was kept); a list
 * that does not read is a miss with a note. */
static void test_imports_in_choice(void) {
  char dir[200], pkg[200], path[250];
  int from_disk = 0;
  snprintf(dir, sizeof dir, "%s/tuned", cache_dir);
  snprintf(pkg, sizeof pkg, "%s/tuned_pkg", cache_dir);
  CHECK(mkdir(pkg, 0755) == 0);
  snprintf(path, sizeof path, "%s/kernel.tl", pkg);
  write_file(path, tuned_package_kernel);
  snprintf(path, sizeof path, "%s/helpers.tl", pkg);
  write_helper(path, 2);
  CHECK(tune_package(dir, pkg, &from_disk) && !from_disk && count_entries(dir) == 3); /* two configs and the choice */
  CHECK(tune_package(dir, pkg, &from_disk) && from_disk);
  write_helper(path, 3);
  CHECK(tune_package(dir, pkg, &from_disk) && !from_disk && count_entries(dir) == 3);
  CHECK(tune_package(dir, pkg, &from_disk) && from_disk); /* the choice replaced */
  const char *bad[] = {NULL, "tile deps 2\nabsent 3 a.tl\n"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rewrite_entries(dir, rewrite_choice_deps, bad[i]);
    CHECK(tune_package(dir, pkg, &from_disk) && !from_disk);
    CHECK_CONTAINS(notes, "cache: ignored the autotuner's choice ");
    CHECK_CONTAINS(notes, i ? "(its dependency list has no header, or nothing after it)"
                            : "(its dependency list is malformed at byte ");
    CHECK(tune_package(dir, pkg, &from_disk) && from_disk && !strstr(notes, "cache:")); /* rewritten */
  }
}

/* Processes compiling the same kernel into one cache at once all succeed, and leave one sound entry. */
static void test_concurrent_processes(void) {
  char dir[200];
  snprintf(dir, sizeof dir, "%s/shared", cache_dir);
  pid_t pids[6];
  for (int p = 0; p < 6; p++) {
    if ((pids[p] = fork()) == 0) {
      tile_context *ctx = context(dir, NULL);
      tile_kernel *k = vector_add(ctx);
      int ok = k && launch_add(ctx, k, 777, 0) && !strstr(notes, "cache:");
      tile_context_destroy(ctx);
      _exit(ok ? 0 : 1);
    }
  }
  int failures = 0;
  for (int p = 0; p < 6; p++) {
    int status = 1;
    waitpid(pids[p], &status, 0);
    failures += !WIFEXITED(status) || WEXITSTATUS(status);
  }
  CHECK(failures == 0);
  CHECK(count_entries(dir) == 1);
  tile_context *ctx = context(dir, NULL);
  tile_kernel *k = vector_add(ctx);
  CHECK(k && launch_add(ctx, k, 777, 0) && tile_kernel_text(k, TILE_STAGE_TIR) == NULL && same(notes, ""));
  tile_context_destroy(ctx);
}

/* Host time of a JIT launch that hits (key, lookup, checks, packing, the grid function), with a driver
 * that does nothing: the runtime's own share, printed. */
static void test_launch_cost(void) {
  enum { LAUNCHES = 200000 };
  tile_context *ctx = context(NULL, NULL);
  tile_kernel *k = vector_add(ctx);
  void *x = NULL;
  CHECK(tile_malloc(ctx, &x, 4096) == TILE_OK);
  tile_arg args[] = {tile_buffer(x, "fp32", 1024), tile_buffer(x, "fp32", 1024), tile_buffer(x, "fp32", 1024), tile_int(1000)};
  fake->params_to_copy = 0;
  int ok = k && tile_launch_grid(k, grid_add, NULL, NULL, args, 4) == TILE_OK;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < LAUNCHES && ok; i++) ok = tile_launch_grid(k, grid_add, NULL, NULL, args, 4) == TILE_OK;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  CHECK(ok);
  double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / LAUNCHES;
  printf("the runtime's host time per JIT launch (vector add, grid function, a driver that does nothing): %.0f ns\n", ns);
  tile_context_destroy(ctx);
}

/* tile_compile's cubin and metadata, loaded back as an AOT kernel. */
static void test_ahead_of_time(void) {
  tile_context *ctx = context(NULL, NULL);
  char *source;
  size_t len, size;
  const void *image;
  const char *metadata;
  CHECK(context_read_file(ctx, TILE_SOURCE_DIR "/tests/seeds/vector_add.tl", 1 << 20, &source, &len) == TILE_OK);
  tile_options o = vector_add_options();
  o.signature = "*fp32:16,*fp32:16,*fp32:16,i32";
  o.arch = "sm_80";
  CHECK(tile_compile(ctx, "vector_add.tl", source, len, &o, 0, &image, &size, &metadata) == TILE_OK);
  CHECK_CONTAINS(metadata, "\"arch\": \"sm_80\"");
  char *image_copy = malloc(size), *metadata_copy = strdup(metadata);
  memcpy(image_copy, image, size);
  tile_kernel *k = NULL;
  CHECK(tile_kernel_load(ctx, image_copy, size, metadata_copy, &k) == TILE_OK);
  CHECK(k && launch_add(ctx, k, 3000, 0));
  CHECK(k && !launch_add(ctx, k, 3000, 1)); /* the ':16' promise */
  CHECK_CONTAINS(error, "is not 16-byte aligned");
  CHECK(tile_compile(ctx, "vector_add.tl", source, len, &o, 1, &image, &size, &metadata) == TILE_OK);
  CHECK(!memcmp(image, ".version", 8) && strstr(metadata, "\"target\": \"ptx\""));
  free(source), free(image_copy), free(metadata_copy);
  tile_context_destroy(ctx);
}

int main(void) {
  void *library;
  fake = fake_cuda_open(FAKE_CUDA_PATH, &library);
  if (!fake) return 1;
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tile-jit-test-XXXXXX");
  if (!mkdtemp(cache_dir)) return 1;
  test_compile_and_cache();
  test_unwritable_cache();
  test_targets();
  test_asked_targets();
  test_without_ptxas();
  test_libdevice();
  test_source_name_in_key();
  test_imports_in_key();
  test_corrupt_dependencies();
  test_imports_in_choice();
  test_concurrent_processes();
  test_ahead_of_time();
  test_launch_cost();
  char command[200];
  snprintf(command, sizeof command, "rm -rf '%s'", cache_dir);
  if (system(command)) fprintf(stderr, "could not remove %s\n", cache_dir);
  dlclose(library);
  return check_report();
}
