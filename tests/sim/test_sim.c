/* The thread simulator's runtime, on kernels written by hand against
 * tile_sim.h (c/runtime_kernels.c, built by the harness as generated code
 * is): shuffles and barriers, the checks on global and shared memory with
 * the place they report, deadlocks and divergence, vprintf, assert,
 * atomics under contention, the program order and geometry. */
#include "../unit/check.h"
#include "hand_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* A launch with 1 KiB of shared memory. */
static SimLaunch launch_of(const char *name, unsigned grid, int num_warps, void **params, const SimBuffer *buffers,
                           int n_buffers) {
  return hand_launch(name, grid, num_warps, params, buffers, n_buffers, 1024);
}

/* ---- shuffles and barriers ------------------------------------------------------ */

static void test_block_sum(int num_warps) {
  int T = 32 * num_warps, n = 37 * T + 11, programs = (n + T - 1) / T;
  int32_t *in = malloc(4u * n), *out = malloc(4u * programs);
  float *fin = malloc(4u * n), *fout = malloc(4u * programs);
  for (int i = 0; i < n; i++) in[i] = rand() % 2001 - 1000, fin[i] = (float)(rand() % 64) / 8.0f;
  for (int i = 0; i < programs; i++) out[i] = -1, fout[i] = NAN;
  void *params[] = {&in, &fin, &out, &fout, &n, &num_warps};
  SimBuffer buffers[] = {{"in", in, 4u * n}, {"fin", fin, 4u * n}, {"out", out, 4u * programs}, {"fout", fout, 4u * programs}};
  SimLaunch L = launch_of("block_sum", (unsigned)programs, num_warps, params, buffers, 4);
  CHECK(sim_run(&L) == 0);
  if (L.error[0]) fprintf(stderr, "%s\n", L.error);
  int exact = 1;
  for (int p = 0; p < programs; p++) {
    int32_t sum = 0;
    float fsum = 0; /* multiples of 1/8 below 2^21: every order gives the same float */
    for (int i = p * T; i < (p + 1) * T && i < n; i++) sum += in[i], fsum += fin[i];
    exact &= out[p] == sum && fout[p] == fsum;
  }
  CHECK(exact);
  free(in), free(out), free(fin), free(fout);
}

static void test_warp_scan(void) {
  int num_warps = 2, T = 64, programs = 3, n = T * programs;
  int32_t *in = malloc(4u * n), *scan = malloc(4u * n), *total = malloc(4u * n), *own = malloc(4u * n);
  for (int i = 0; i < n; i++) in[i] = rand() % 100 - 50;
  void *params[] = {&in, &scan, &total, &own, &num_warps};
  SimBuffer buffers[] = {{"in", in, 4u * n}, {"scan", scan, 4u * n}, {"total", total, 4u * n}, {"own", own, 4u * n}};
  SimLaunch L = launch_of("warp_scan", (unsigned)programs, num_warps, params, buffers, 4);
  CHECK(sim_run(&L) == 0);
  int ok = 1;
  for (int w = 0; w < n / 32; w++) {
    int32_t acc = 0, sum = 0;
    for (int l = 0; l < 32; l++) sum += in[w * 32 + l];
    for (int l = 0; l < 32; l++) {
      acc += in[w * 32 + l];
      ok &= scan[w * 32 + l] == acc && total[w * 32 + l] == sum && own[w * 32 + l] == l * 1000;
    }
  }
  CHECK(ok);
  free(in), free(scan), free(total), free(own);
}

/* ---- global memory checks ------------------------------------------------------------ */

static void test_out_of_bounds_load(void) {
  int num_warps = 4, n = 1000; /* 8 programs of 128: the last reads 24 floats past the end */
  float *in = calloc((size_t)n, 4), *out = calloc(1024, 4);
  for (int i = 0; i < n; i++) in[i] = (float)(i + 1);
  void *params[] = {&in, &out, &num_warps};
  SimBuffer buffers[] = {{"in", in, 4u * n}, {"out", out, 4096}};
  SimLaunch L = launch_of("unmasked_copy", 8, num_warps, params, buffers, 2);
  CHECK(sim_run(&L) == -1);
  char expected[256];
  snprintf(expected, sizeof expected, "out-of-bounds load of 4 bytes at %p: 0 bytes past the end of buffer 'in' (4000 bytes)",
           (void *)(in + 1000));
  CHECK_CONTAINS(L.error, "kernel 'unmasked_copy' (program 7, 0, 0), thread 104 (warp 3, lane 8): ");
  CHECK_CONTAINS(L.error, expected);
  int copied = 1; /* threads run in order: 0-103 of program 7 finished before 104 failed */
  for (int i = 0; i < 1024; i++) copied &= out[i] == (i < n ? (float)(i + 1) : 0.0f);
  CHECK(copied);
  free(in), free(out);
}

static void access_at(int64_t offset, int32_t bytes, const char *expected) {
  char *in = aligned_alloc(64, 64);
  void *params[] = {&in, &offset, &bytes};
  SimBuffer buffers[] = {{"x", in, 40}};
  SimLaunch L = launch_of("access_at", 2, 1, params, buffers, 1);
  CHECK(sim_run(&L) == (expected ? -1 : 0));
  if (expected) CHECK_CONTAINS(L.error, expected);
  if (expected) CHECK_CONTAINS(L.error, "(program 1, 0, 0), thread 3 (warp 0, lane 3)");
  free(in);
}

static void test_access_checks(void) {
  access_at(36, 4, NULL);
  access_at(16, 16, NULL);
  access_at(38, 2, NULL);
  access_at(2, 4, "misaligned load of 4 bytes");
  access_at(2, 4, "(byte 2 of buffer 'x')");
  access_at(4, 16, "misaligned load of 16 bytes");
  access_at(32, 16, "runs 8 bytes past the end of buffer 'x' (40 bytes)");
  access_at(48, 8, "8 bytes past the end of buffer 'x' (40 bytes)");
  access_at(-8, 4, "8 bytes before buffer 'x'");
  access_at(0, 3, "load of 3 bytes");
  access_at(0, 32, "not a size the GPU moves in one access");
}

static void test_store_check(void) {
  int32_t *out = calloc(16, 4);
  int64_t offset = 64;
  void *params[] = {&out, &offset};
  SimBuffer buffers[] = {{"out", out, 64}};
  SimLaunch L = launch_of("store_at", 3, 1, params, buffers, 1);
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, "(program 0, 0, 0), thread 0 (warp 0, lane 0): out-of-bounds store of 4 bytes");
  CHECK_CONTAINS(L.error, "0 bytes past the end of buffer 'out' (64 bytes)");
  offset = 60;
  L = launch_of("store_at", 3, 1, params, buffers, 1);
  CHECK(sim_run(&L) == 0);
  CHECK(out[15] == 7);
  free(out);
}

/* ---- deadlocks and divergence ---------------------------------------------------------- */

static void misbehave(int32_t mode, int num_warps, const char *expected) {
  void *params[] = {&mode};
  SimLaunch L = launch_of("misbehave", 2, num_warps, params, NULL, 0);
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, expected);
}

static void test_misbehaviour(void) {
  misbehave(0, 2, "kernel 'misbehave' (program 0, 0, 0), thread 1 (warp 0, lane 1): reached a barrier after thread 0 "
                  "exited");
  misbehave(1, 1, "thread 5 (warp 0, lane 5): exited while 5 threads wait at a barrier");
  misbehave(2, 1, "kernel 'misbehave' (program 0, 0, 0): deadlock: threads 0-15 wait at a barrier, threads 16-31 "
                  "wait in a warp shuffle");
  /* the last lane to arrive goes on first and sees the difference */
  misbehave(3, 1, "thread 31 (warp 0, lane 31): divergent shuffles: lane 0 called shfl.sync.bfly, lane 31 "
                  "shfl.sync.up");
  misbehave(4, 2, "thread 1 (warp 0, lane 1): a warp shuffle after 1 lanes of its warp exited");
  misbehave(5, 1, "thread 9 (warp 0, lane 9): exited while 9 lanes of its warp wait in a shuffle");
}

/* ---- shared memory ------------------------------------------------------------------------ */

static void test_shared_poison(void) {
  int32_t bytes = 200;
  unsigned char *out = calloc(5, (size_t)bytes);
  void *params[] = {&out, &bytes};
  SimBuffer buffers[] = {{"out", out, 5u * bytes}};
  SimLaunch L = launch_of("shared_poison", 5, 2, params, buffers, 1);
  L.shared_bytes = (size_t)bytes;
  CHECK(sim_run(&L) == 0);
  int poisoned = 1;
  for (int i = 0; i < 5 * bytes; i++) poisoned &= out[i] == 0xA5;
  CHECK(poisoned);
  free(out);
}

/* The warp-first schedule runs one warp past its shuffle before the other reads (sim.h's warp_first). */
static void test_warp_first(void) {
  for (int warp_first = 0; warp_first < 2; warp_first++) {
    int32_t out[64];
    memset(out, 0, sizeof out);
    int32_t *p = out;
    void *params[] = {&p};
    SimBuffer buffers[] = {{"out", out, sizeof out}};
    SimLaunch L = launch_of("warp_race", 1, 2, params, buffers, 1);
    L.warp_first = warp_first;
    CHECK(sim_run(&L) == 0);
    int raced = 0, right = 0;
    for (int t = 0; t < 64; t++) raced += out[t] == -1, right += out[t] == (t + 32) % 64;
    /* warp first: lanes 0-30 of the warp that ran on wrote -1 before the other warp read */
    CHECK(raced == (warp_first ? 31 : 0) && right == 64 - raced);
  }
}

static void shared_write(int64_t offset, size_t shared_bytes, const char *expected) {
  void *params[] = {&offset};
  SimLaunch L = launch_of("shared_write", 4, 1, params, NULL, 0);
  L.shared_bytes = shared_bytes;
  CHECK(sim_run(&L) == (expected ? -1 : 0));
  if (expected) CHECK_CONTAINS(L.error, expected);
}

static void test_shared_guards(void) {
  shared_write(99, 100, NULL);
  shared_write(0, 100, NULL);
  shared_write(100, 100, "kernel 'shared_write' (program 2, 0, 0): shared memory written out of bounds: byte 0 past "
                         "the end of its 100 bytes");
  shared_write(130, 100, "byte 30 past the end of its 100 bytes");
  shared_write(-3, 100, "(program 2, 0, 0): shared memory written out of bounds: 3 bytes before its start");
}

/* ---- printf and assert --------------------------------------------------------------------- */

#define PRINTF_FORMAT                                                                                          \
  "pid %d|%5i|%-5d|%+d|% d|%05d|%u|%x|%#X|%8.3x|%lld|%llu|%llx|%.3f|%10.2e|%g|%G|%s|%-6s|%.2s|%c|%p|%*d|%.*f|" \
  "%hhd|%ld|%%\n"

static void test_printf(void) {
  SimText printed = {0};
  SimLaunch L = launch_of("printf", 2, 1, NULL, NULL, 0);
  L.printed = &printed;
  CHECK(sim_run(&L) == 0);
  char expected[1024];
  size_t n = 0;
  for (int pid = 0; pid < 2; pid++)
    n += (size_t)snprintf(expected + n, sizeof expected - n, PRINTF_FORMAT, pid, -42, 17, 5, 6, -3, 4000000000u, 0xbeefu,
                          0xbeefu, 0x1fu, -1234567890123ll, 18446744073709551615ull, 0xdeadbeefcafeull,
                          3.14159265358979, -0.000123456, 1e20, 1e-5, "str", "ab", "xyz", 'Z', (void *)0x1234, 7, -5, 2,
                          2.71828, (signed char)300, 1l << 40);
  CHECK(printed.data && strcmp(printed.data, expected) == 0);
  if (printed.data && strcmp(printed.data, expected)) fprintf(stderr, "got:\n%sexpected:\n%s", printed.data, expected);
  CHECK_CONTAINS(printed.data, "pid 1|  -42|17   |+5| 6|-0003|4000000000|beef|0XBEEF|     01f|");
  sim_text_free(&printed);
  int32_t mode = 0;
  void *params[] = {&mode};
  L = launch_of("bad_printf", 1, 1, params, NULL, 0);
  L.printed = &printed;
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, "thread 0 (warp 0, lane 0): vprintf: unsupported conversion '%n' in format \"value %n\\n\"");
  mode = 1;
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, "vprintf: a conversion but no argument buffer in format \"value %d\\n\"");
  sim_text_free(&printed);
  mode = 2;
  CHECK(sim_run(&L) == 0);
  CHECK(printed.data && strcmp(printed.data, "100% plain\n") == 0);
  sim_text_free(&printed);
}

static void test_assert(void) {
  int32_t who = 37;
  void *params[] = {&who};
  SimLaunch L = launch_of("assert", 3, 2, params, NULL, 0);
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, "kernel 'assert', kernels/k.tl:12 (program 1, 0, 0), thread 37 (warp 1, lane 5): "
                          "device_assert failed: x > 0 && \"positive\" (in kern)");
}

/* ---- atomics, order, geometry --------------------------------------------------------------- */

static void test_atomics(void) {
  unsigned grid = 13;
  int num_warps = 4, T = 128;
  int32_t ints[5] = {0, INT32_MIN, INT32_MAX, 0, 0}, order[13];
  float fsum = 0;
  uint16_t hsum = 0;
  int64_t wide = 0;
  uint32_t bits[3] = {0, 0xffffffffu, 0};
  void *p_ints = ints, *p_f = &fsum, *p_h = &hsum, *p_w = &wide, *p_bits = bits, *p_order = order;
  void *params[] = {&p_ints, &p_f, &p_h, &p_w, &p_bits, &p_order};
  SimBuffer buffers[] = {{"ints", ints, sizeof ints}, {"fsum", &fsum, 4}, {"hsum", &hsum, 2},
                         {"wide", &wide, 8},          {"bits", bits, 12},   {"order", order, sizeof order}};
  SimLaunch L = launch_of("atomics", grid, num_warps, params, buffers, 6);
  CHECK(sim_run(&L) == 0);
  if (L.error[0]) fprintf(stderr, "%s\n", L.error);
  int threads = (int)grid * T;
  CHECK(ints[0] == threads);
  CHECK(ints[1] == T - 1 - 100);
  CHECK(ints[2] == -100);
  CHECK((uint32_t)ints[3] == (uint32_t)-1); /* tid - 100 for tid < 100, as unsigned */
  CHECK(fsum == (float)threads);
  CHECK(hsum == 0x6680); /* 1664.0 in fp16: 1.625 * 2^10, exponent 25, mantissa 640 */
  CHECK(wide == 3ll * threads);
  CHECK(bits[0] == 0xffffffffu);
  CHECK(bits[1] == (0xffffffffu & ~0x1fffu)); /* programs 0-12 cleared bits 0-12 */
  CHECK(bits[2] == 0); /* xor of 0..127, 13 times: 0 */
  int in_order = 1;
  for (unsigned i = 0; i < grid; i++) in_order &= order[i] == (int32_t)i;
  CHECK(in_order);
}

static void bad_atomic(int32_t mode, const char *expected) {
  char *p = aligned_alloc(16, 16);
  void *params[] = {&p, &mode};
  SimBuffer buffers[] = {{"p", p, 16}};
  SimLaunch L = launch_of("bad_atomic", 1, 1, params, buffers, 1);
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, expected);
  free(p);
}

static void test_bad_atomics(void) {
  bad_atomic(0, "atomic of 16 bytes");
  bad_atomic(1, "misaligned atomic of 4 bytes");
  bad_atomic(2, "bitwise atomic (op 4) on a float");
}

static void test_order_3d(void) {
  unsigned g[3] = {3, 2, 2};
  int num_warps = 1, T = 32, programs = 12;
  int32_t *out = malloc(4u * 7 * T * programs);
  for (int i = 0; i < 7 * T * programs; i++) out[i] = -1;
  void *params[] = {&out, &num_warps};
  SimBuffer buffers[] = {{"out", out, 4u * 7 * T * programs}};
  SimLaunch L = launch_of("geometry", 3, num_warps, params, buffers, 1);
  L.grid[1] = g[1], L.grid[2] = g[2];
  CHECK(sim_run(&L) == 0);
  int ok = 1;
  for (int p = 0; p < programs; p++)
    for (int t = 0; t < T; t++) {
      int32_t *v = out + ((size_t)p * T + t) * 7;
      ok &= v[0] == p % 3 && v[1] == (p / 3) % 2 && v[2] == p / 6 && v[3] == 3 && v[4] == 2 && v[5] == 2 && v[6] == t;
    }
  CHECK(ok);
  free(out);
}

/* ---- math, stacks, launches that cannot start ------------------------------------------------- */

static void test_math(void) {
  float x[32], out[32 * 8];
  double dout[32 * 2];
  for (int i = 0; i < 32; i++) x[i] = 0.1f + (float)(rand() % 1000) / 100.0f;
  void *px = x, *po = out, *pd = dout;
  void *params[] = {&px, &po, &pd};
  SimBuffer buffers[] = {{"x", x, sizeof x}, {"out", out, sizeof out}, {"dout", dout, sizeof dout}};
  SimLaunch L = launch_of("math", 1, 1, params, buffers, 3);
  CHECK(sim_run(&L) == 0);
  int ok = 1;
  for (int i = 0; i < 32; i++) {
    float v = x[i], *r = out + i * 8;
    ok &= r[0] == expf(v) && r[1] == logf(v) && r[2] == sinf(v) && r[3] == powf(v, 1.5f) && r[4] == fmodf(v, 0.75f);
    ok &= r[5] == exp2f(v) && r[6] == log2f(v) && r[7] == 1.0f / sqrtf(v);
    ok &= dout[i * 2] == exp((double)v) && dout[i * 2 + 1] == erf((double)v);
  }
  CHECK(ok);
}

static void test_stacks(void) {
  int32_t out[128];
  void *po = out;
  void *params[] = {&po};
  SimBuffer buffers[] = {{"out", out, sizeof out}};
  SimLaunch L = launch_of("stack", 2, 4, params, buffers, 1);
  CHECK(sim_run(&L) == 0);
  int ok = 1;
  for (int t = 0; t < 128; t++) ok &= out[t] == (300 + t) * (301 + t) / 2;
  CHECK(ok);
}

/* Under ASan, ASan's handler reports a stack overflow and ends the process. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif

static void test_stack_overflow(void) {
#ifndef UNDER_ASAN
  SimLaunch L = launch_of("overflow", 3, 1, NULL, NULL, 0);
  L.stack_bytes = 64 << 10;
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, "kernel 'overflow' (program 0, 0, 0), thread 2 (warp 0, lane 2): ran off its 65536-byte stack");
#endif
}

static void test_bad_launches(void) {
  SimLaunch L = launch_of("stack", 1, 64, NULL, NULL, 0);
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, "kernel 'stack': num_warps must be 1..32");
  L = launch_of("stack", 1, 1, NULL, NULL, 0);
  L.shared_bytes = SIM_MAX_SHARED + 1;
  CHECK(sim_run(&L) == -1);
  CHECK_CONTAINS(L.error, "more shared memory than a GPU has");
  L = launch_of("stack", 0, 1, NULL, NULL, 0); /* an empty grid runs nothing */
  CHECK(sim_run(&L) == 0);
  char err[4096];
  SimModule *m = NULL;
  const char bad_c[] = "void k_sim_entry(void **p) { undeclared(); }\n";
  CHECK(sim_module_build(bad_c, sizeof bad_c - 1, ".c", NULL, &m, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "failed:");
  CHECK_CONTAINS(err, "undeclared");
  const char missing[] = "declare void @tile_sim_nonexistent()\n"
                         "define void @k_sim_entry(ptr %p) {\n  call void @tile_sim_nonexistent()\n  ret void\n}\n";
  CHECK(sim_module_build(missing, sizeof missing - 1, ".ll", NULL, &m, err, sizeof err) == -1);
  CHECK_CONTAINS(err, "cannot load the kernel");
  CHECK_CONTAINS(err, "tile_sim_nonexistent");
  CHECK(m == NULL);
}

int main(void) {
  unsigned seed = (unsigned)time(NULL);
  srand(seed);
  if (load_kernels("runtime_kernels.c")) return 1;
  test_block_sum(1);
  test_block_sum(4);
  test_block_sum(8);
  test_block_sum(32);
  test_warp_scan();
  test_out_of_bounds_load();
  test_access_checks();
  test_store_check();
  test_misbehaviour();
  test_shared_poison();
  test_warp_first();
  test_shared_guards();
  test_printf();
  test_assert();
  test_atomics();
  test_bad_atomics();
  test_order_3d();
  test_math();
  test_stack_overflow();
  test_stacks(); /* and the simulator works after it */
  test_bad_launches();
  sim_module_close(module);
  if (checks_failed) fprintf(stderr, "seed %u\n", seed);
  return check_report();
}
