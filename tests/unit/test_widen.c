/* Widening on the CPU interpreter, through the public API: index arithmetic
 * that feeds pointer offsets is exact (computed in i64 where i32 can
 * overflow), against an independent C computation in int64, and without the
 * pass (passes "none") the same kernels wrap at 32 bits as C's int32
 * arithmetic does.  Fresh random arguments every run, outputs poisoned. */
#include "check.h"
#include "tile/tile.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

enum { POISON = 0x5a };

/* Runs `source` on the interpreter with the given passes (NULL: all). */
static tile_status run(const char *source, const char *passes, const char **defines, int n_defines, unsigned programs,
                       tile_arg *args, int n_args, char *error, size_t error_size) {
  tile_context *ctx;
  tile_context_create(&ctx);
  tile_options o;
  tile_options_init(&o);
  o.passes = passes;
  o.defines = defines;
  o.num_defines = n_defines;
  unsigned grid[3] = {programs, 1, 1};
  tile_status s = tile_run_cpu(ctx, "widen.tl", source, strlen(source), &o, grid, args, n_args, NULL);
  snprintf(error, error_size, "%s", tile_error(ctx));
  if (s != TILE_OK && !strstr(error, "out-of-bounds")) fprintf(stderr, "%s\n", error);
  tile_context_destroy(ctx);
  return s;
}

static int32_t random_i32(void) { return (int32_t)(((uint32_t)rand() << 16) ^ (uint32_t)rand()); }

/* The int32 value with the low 32 bits of v: what i32 arithmetic keeps. */
static int64_t wrap32(int64_t v) { return (int32_t)(uint32_t)(uint64_t)v; }

/* x >> c on a signed value, as floor division (C leaves it to the implementation). */
static int64_t shift_right(int64_t x, int c) { return x >= 0 ? x >> c : -1 - ((-1 - x) >> c); }

/* ---- exact comparisons -------------------------------------------------------- */

static const char *exact_kernel =
    "@triton.jit\n"
    "def exact(out_ptr, in_ptr, flag_ptr, wide_ptr, narrow_ptr, base, n, BLOCK: tl.constexpr):\n"
    "    pid = tl.program_id(0)\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    big = (pid + base) * BLOCK + offs\n"
    "    mask = big < base * BLOCK + n\n"
    "    x = tl.load(in_ptr + (big - base * BLOCK), mask=mask)\n"
    "    tl.store(out_ptr + pid * BLOCK + offs, x, mask=mask)\n"
    "    tl.store(flag_ptr + pid * BLOCK + offs, (big > 0).to(tl.int32))\n"
    "    tl.store(wide_ptr + pid * BLOCK + offs, big.to(tl.int64))\n"
    "    tl.store(narrow_ptr + pid * BLOCK + offs, big)\n";

/* (pid + base) * 1024 + offs with base near 2^21 passes 2^31 for the last
 * programs: exact, it is positive; wrapped, negative.  The mask compares it
 * with a bound past 2^31 too (exact where the offset is), and the load's
 * offset leaves i32 and comes back.  n is not a multiple of the block. */
static void test_exact_comparison(const char *passes) {
  enum { BLOCK = 1024, PROGRAMS = 5, N = BLOCK * PROGRAMS };
  int wrapped = passes != NULL, n = N - 37 - rand() % 500;
  int64_t base = (INT64_C(1) << 21) - 1 - rand() % 3;
  float *in = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N), poison;
  int32_t *flag = malloc(sizeof(int32_t) * N), *narrow = malloc(sizeof(int32_t) * N);
  int64_t *wide = malloc(sizeof(int64_t) * N);
  for (int i = 0; i < N; i++) in[i] = (float)rand() / (float)RAND_MAX;
  memset(out, POISON, sizeof(float) * N), memset(flag, POISON, sizeof(int32_t) * N);
  memset(narrow, POISON, sizeof(int32_t) * N), memset(wide, POISON, sizeof(int64_t) * N);
  memset(&poison, POISON, sizeof poison);
  tile_arg args[] = {tile_buffer(out, "fp32", N), tile_buffer(in, "fp32", N), tile_buffer(flag, "i32", N),
                     tile_buffer(wide, "i64", N), tile_buffer(narrow, "i32", N), tile_int(base), tile_int(n)};
  const char *defs[] = {"BLOCK=1024"};
  char error[2048];
  CHECK(run(exact_kernel, passes, defs, 1, PROGRAMS, args, 7, error, sizeof error) == TILE_OK);
  int loads = 1, flags = 1, wides = 1, narrows = 1, both = 0;
  for (int pid = 0; pid < PROGRAMS; pid++)
    for (int k = 0; k < BLOCK; k++) {
      int i = pid * BLOCK + k;
      int64_t exact = (pid + base) * BLOCK + k, seen = wrapped ? wrap32(exact) : exact;
      int64_t bound = wrapped ? wrap32(base * BLOCK + n) : base * BLOCK + n;
      loads &= !memcmp(&out[i], seen < bound ? &in[i] : &poison, sizeof(float));
      flags &= flag[i] == (seen > 0);
      wides &= wide[i] == seen;
      narrows &= narrow[i] == wrap32(exact);
      both |= (exact > 0) != (wrap32(exact) > 0); /* the two semantics differ somewhere */
    }
  CHECK(loads);
  CHECK(flags);
  CHECK(wides);
  CHECK(narrows);
  CHECK(both);
  free(in), free(out), free(flag), free(narrow), free(wide);
}

/* ---- a pointer more than 2^31 elements away ------------------------------------ */

static const char *far_kernel =
    "@triton.jit\n"
    "def far(out_ptr, in_ptr, base, BLOCK: tl.constexpr):\n"
    "    pid = tl.program_id(0)\n"
    "    offs = tl.arange(0, BLOCK)\n"
    "    far = in_ptr + (pid + base) * BLOCK + offs\n"
    "    x = tl.load(far - base * BLOCK)\n"
    "    tl.store(out_ptr + pid * BLOCK + offs, x)\n";

/* far points 2^31 and more elements past in_ptr (8 GiB of fp32); coming
 * back by base * BLOCK, which fits i32, reaches in_ptr + pid * BLOCK.  In
 * 32 bits the first offset wraps and the load leaves the buffer. */
static void test_far_pointer(void) {
  enum { BLOCK = 1024, PROGRAMS = 4, N = BLOCK * PROGRAMS };
  int64_t base = (INT64_C(1) << 21) - 2; /* base * BLOCK < 2^31 <= (2 + base) * BLOCK */
  float *in = malloc(sizeof(float) * N), *out = malloc(sizeof(float) * N);
  for (int i = 0; i < N; i++) in[i] = (float)rand() / (float)RAND_MAX;
  memset(out, POISON, sizeof(float) * N);
  tile_arg args[] = {tile_buffer(out, "fp32", N), tile_buffer(in, "fp32", N), tile_int(base)};
  const char *defs[] = {"BLOCK=1024"};
  char error[2048];
  CHECK(run(far_kernel, NULL, defs, 1, PROGRAMS, args, 3, error, sizeof error) == TILE_OK);
  int same = 1;
  for (int i = 0; i < N; i++) same &= out[i] == in[i];
  CHECK(same);
  CHECK(run(far_kernel, "none", defs, 1, PROGRAMS, args, 3, error, sizeof error) == TILE_ERROR_RUNTIME);
  CHECK_CONTAINS(error, "out-of-bounds load");
  CHECK_CONTAINS(error, "(program 2, 0, 0)");
  free(in), free(out);
}

/* ---- index expressions against C ----------------------------------------------- */

/* Each expression feeds an address (a load that its mask turns off), so
 * the pass makes it exact; it is stored as i64. */
static const char *expressions_kernel =
    "@triton.jit\n"
    "def expressions(in_ptr, wide_ptr, a, b, c, BLOCK: tl.constexpr):\n"
    "    pid = tl.program_id(0)\n"
    "    k = tl.arange(0, BLOCK)\n"
    "    never = k < 0\n"
    "    acc = a\n"
    "    for i in range(0, 3):\n"
    "        acc = acc * 5 + b\n"
    "    if pid > 1:\n"
    "        m = a * 7\n"
    "    else:\n"
    "        m = b - c\n"
    "    e = (pid * a + k,\n"
    "         (a - b) * 3 + k,\n"
    "         (pid + a) * 4096 // 3 + k % 5,\n"
    "         tl.where(k < 4, a * b, -c * 8),\n"
    "         tl.minimum(a, b) * 65536 + tl.maximum(b, c) + k,\n"
    "         (a << 4) + (b >> 2) + k,\n"
    "         acc + k,\n"
    "         (a.to(tl.uint32) + b.to(tl.uint32)) * 2 + k,\n"
    "         m + k)\n"
    "    for j in tl.static_range(9):\n"
    "        tl.load(in_ptr + e[j], mask=never)\n"
    "        tl.store(wide_ptr + (j * tl.num_programs(0) + pid) * BLOCK + k, e[j].to(tl.int64))\n";

enum { EXPRESSIONS = 9 };

typedef struct Args {
  int64_t a, b, c;
} Args;

static int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }
static int64_t max64(int64_t x, int64_t y) { return x > y ? x : y; }

/* Expression j at (pid, k) in exact integers. */
static int64_t exact_value(int j, Args v, int64_t pid, int64_t k) {
  int64_t acc = v.a;
  for (int i = 0; i < 3; i++) acc = acc * 5 + v.b;
  switch (j) {
  case 0: return pid * v.a + k;
  case 1: return (v.a - v.b) * 3 + k;
  case 2: return wrap32((pid + v.a) * 4096) / 3 + k % 5; /* // reads the wrapped product: only ring ops are exact */
  case 3: return k < 4 ? v.a * v.b : -v.c * 8;
  case 4: return min64(v.a, v.b) * 65536 + max64(v.b, v.c) + k;
  case 5: return v.a * 16 + shift_right(v.b, 2) + k;
  case 6: return acc + k;
  case 7: return ((int64_t)(uint32_t)v.a + (int64_t)(uint32_t)v.b) * 2 + k;
  default: return (pid > 1 ? v.a * 7 : v.b - v.c) + k;
  }
}

/* The same in i32 arithmetic, op by op (u32 for expression 7), as stored in i64. */
static int64_t wrapped_value(int j, Args v, int64_t pid, int64_t k) {
  int64_t acc = v.a;
  for (int i = 0; i < 3; i++) acc = wrap32(wrap32(acc * 5) + v.b);
  switch (j) {
  case 0: return wrap32(wrap32(pid * v.a) + k);
  case 1: return wrap32(wrap32(wrap32(v.a - v.b) * 3) + k);
  case 2: return wrap32(wrap32(wrap32(pid + v.a) * 4096) / 3 + k % 5);
  case 3: return k < 4 ? wrap32(v.a * v.b) : wrap32(wrap32(-v.c) * 8);
  case 4: return wrap32(wrap32(wrap32(min64(v.a, v.b) * 65536) + max64(v.b, v.c)) + k);
  case 5: return wrap32(wrap32(wrap32(v.a * 16) + shift_right(v.b, 2)) + k);
  case 6: return wrap32(acc + k);
  case 7: return (uint32_t)((((uint32_t)v.a + (uint32_t)v.b) * 2u) + (uint32_t)k);
  default: return wrap32((pid > 1 ? wrap32(v.a * 7) : wrap32(v.b - v.c)) + k);
  }
}

static void test_expressions(const char *passes, Args v) {
  enum { BLOCK = 8, PROGRAMS = 3, N = BLOCK * PROGRAMS * EXPRESSIONS };
  float in[1] = {0};
  int64_t *wide = malloc(sizeof(int64_t) * N);
  memset(wide, POISON, sizeof(int64_t) * N);
  tile_arg args[] = {tile_buffer(in, "fp32", 1), tile_buffer(wide, "i64", N), tile_int(v.a), tile_int(v.b), tile_int(v.c)};
  const char *defs[] = {"BLOCK=8"};
  char error[2048];
  CHECK(run(expressions_kernel, passes, defs, 1, PROGRAMS, args, 5, error, sizeof error) == TILE_OK);
  for (int j = 0; j < EXPRESSIONS; j++) {
    int same = 1;
    for (int pid = 0; pid < PROGRAMS; pid++)
      for (int k = 0; k < BLOCK; k++) {
        int64_t want = passes ? wrapped_value(j, v, pid, k) : exact_value(j, v, pid, k);
        int64_t got = wide[(j * PROGRAMS + pid) * BLOCK + k];
        if (got != want && same)
          fprintf(stderr, "expression %d, a=%lld b=%lld c=%lld, pid %d k %d (%s): %lld, expected %lld\n", j,
                  (long long)v.a, (long long)v.b, (long long)v.c, pid, k, passes ? "wrapped" : "exact", (long long)got,
                  (long long)want);
        same &= got == want;
      }
    CHECK(same);
  }
  free(wide);
}

/* In -50..49 but not 1: an integer argument equal to 1 is specialised as a
 * constexpr (as Triton's are), and `a.to(...)` on a constexpr is an error. */
static int64_t small_arg(void) {
  int64_t x = rand() % 99 - 50;
  return x >= 1 ? x + 1 : x;
}

int main(void) {
  unsigned seed = (unsigned)time(NULL);
  printf("seed %u\n", seed);
  srand(seed);
  test_exact_comparison(NULL);
  test_exact_comparison("none");
  test_far_pointer();
  Args extremes = {INT32_MIN, INT32_MAX, INT32_MIN};
  test_expressions(NULL, extremes);
  test_expressions("none", extremes);
  for (int round = 0; round < 4; round++) {
    Args v = {random_i32(), random_i32(), random_i32()};
    test_expressions(NULL, v);
    test_expressions("none", v);
  }
  Args small = {small_arg(), small_arg(), small_arg()}; /* nothing overflows: both agree */
  test_expressions(NULL, small);
  test_expressions("none", small);
  return check_report();
}
