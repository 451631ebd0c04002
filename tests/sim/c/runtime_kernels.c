/* Kernels written by hand against tile_sim.h, as generated code would call
 * it, for test_sim.c: each K_sim_entry reads its parameters through
 * params[i].  Built by the harness (sim_module_build) like generated code. */
#include "tile_sim.h"

#include <stddef.h>
#include <string.h>

#define PARAM(i, type) (*(type *)params[i])

static int num_threads(void **params, int i) { return 32 * PARAM(i, int32_t); }

static float as_float(int32_t bits) {
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

static int32_t as_bits(float f) {
  int32_t b;
  memcpy(&b, &f, 4);
  return b;
}

/* Block sum of in[pid * T + tid] (0 past n) in int and float: a butterfly
 * over each warp, the warps' sums through shared memory, thread 0 adds them.
 * params: in (i32*), fin (f32*), out (i32*), fout (f32*), n, num_warps */
void block_sum_sim_entry(void **params) {
  int32_t *in = PARAM(0, int32_t *), *out = PARAM(2, int32_t *), n = PARAM(4, int32_t);
  float *fin = PARAM(1, float *), *fout = PARAM(3, float *);
  int T = num_threads(params, 5), tid = tile_sim_tid(), pid = tile_sim_ctaid(0), i = pid * T + tid;
  int32_t v = 0;
  float f = 0;
  if (i < n) tile_sim_load(&v, in + i, 4), tile_sim_load(&f, fin + i, 4);
  for (int m = 16; m >= 1; m /= 2) {
    v += tile_sim_shfl_xor(v, m);
    f += as_float(tile_sim_shfl_xor(as_bits(f), m));
  }
  int32_t *shared = tile_sim_shared();
  if (tid % 32 == 0) shared[tid / 32] = v, shared[32 + tid / 32] = as_bits(f);
  tile_sim_barrier();
  if (tid == 0) {
    int32_t total = 0;
    float ftotal = 0;
    for (int w = 0; w < T / 32; w++) total += shared[w], ftotal += as_float(shared[32 + w]);
    tile_sim_store(out + pid, &total, 4);
    tile_sim_store(fout + pid, &ftotal, 4);
  }
  tile_sim_barrier();
}

/* Per warp: inclusive scan with shfl.up, then every lane gets lane 31's
 * total through shfl.idx and lane 0's value through an out-of-range xor
 * (which gives the lane its own value).  params: in, scan, total, own, num_warps */
void warp_scan_sim_entry(void **params) {
  int32_t *in = PARAM(0, int32_t *), *scan = PARAM(1, int32_t *), *total = PARAM(2, int32_t *);
  int32_t *own = PARAM(3, int32_t *);
  int T = num_threads(params, 4), i = tile_sim_ctaid(0) * T + tile_sim_tid(), lane = tile_sim_tid() % 32;
  int32_t v;
  tile_sim_load(&v, in + i, 4);
  for (int d = 1; d < 32; d *= 2) {
    int32_t up = tile_sim_shfl_up(v, d);
    if (lane >= d) v += up;
  }
  tile_sim_store(scan + i, &v, 4);
  int32_t t = tile_sim_shfl_idx(v, 31 + 32 * 5); /* only the low 5 bits count */
  tile_sim_store(total + i, &t, 4);
  int32_t o = tile_sim_shfl_xor(lane * 1000, 32);
  tile_sim_store(own + i, &o, 4);
}

/* Thread t of each program loads in[pid * T + t] with no mask: the last
 * program reads past the end.  params: in, out, num_warps */
void unmasked_copy_sim_entry(void **params) {
  float *in = PARAM(0, float *), *out = PARAM(1, float *);
  int T = num_threads(params, 2), i = tile_sim_ctaid(0) * T + tile_sim_tid();
  float v;
  tile_sim_load(&v, in + i, 4);
  tile_sim_store(out + i, &v, 4);
}

/* A load of `bytes` at byte `offset` of in, by thread 3 of program 1.
 * params: in, offset, bytes */
void access_at_sim_entry(void **params) {
  char *in = PARAM(0, char *);
  int64_t offset = PARAM(1, int64_t);
  int32_t bytes = PARAM(2, int32_t);
  char tmp[16];
  if (tile_sim_ctaid(0) == 1 && tile_sim_tid() == 3) tile_sim_load(tmp, in + offset, bytes);
}

/* A store of 4 bytes at byte `offset` of out by thread 0.  params: out, offset */
void store_at_sim_entry(void **params) {
  char *out = PARAM(0, char *);
  int64_t offset = PARAM(1, int64_t);
  int32_t v = 7;
  if (tile_sim_tid() == 0) tile_sim_store(out + offset, &v, 4);
}

/* mode 0: thread 0 returns before a barrier the others reach.
 * mode 1: thread 5 returns after threads 0-4 wait at the barrier.
 * mode 2: lanes 0-15 wait at a barrier, lanes 16-31 in a shuffle.
 * mode 3: even lanes shfl.bfly, odd lanes shfl.up.
 * mode 4: lane 0 returns, the rest of the warp shuffles.
 * mode 5: lane 9 returns while the rest of its warp waits in a shuffle.
 * params: mode */
void misbehave_sim_entry(void **params) {
  int mode = PARAM(0, int32_t), tid = tile_sim_tid(), lane = tid % 32;
  if (mode == 0 && tid == 0) return;
  if (mode == 1 && tid == 5) return;
  if (mode == 2) {
    if (lane < 16) tile_sim_barrier();
    else tile_sim_shfl_xor(1, 1);
    return;
  }
  if (mode == 3) {
    if (lane % 2) tile_sim_shfl_up(1, 1);
    else tile_sim_shfl_xor(1, 1);
    return;
  }
  if (mode == 4 && lane == 0) return;
  if (mode == 5 && lane == 9) return;
  if (mode >= 4) {
    tile_sim_shfl_idx(lane, 0);
    return;
  }
  tile_sim_barrier();
}

/* Thread 0 copies the first `bytes` of shared memory to out[pid * bytes...]
 * and then scribbles over them, so the next program must see poison again.
 * params: out (u8*), bytes */
void shared_poison_sim_entry(void **params) {
  unsigned char *out = PARAM(0, unsigned char *), *shared = tile_sim_shared();
  int32_t bytes = PARAM(1, int32_t);
  tile_sim_barrier();
  if (tile_sim_tid() == 0) {
    for (int i = 0; i < bytes; i++) tile_sim_store(out + tile_sim_ctaid(0) * bytes + i, shared + i, 1);
    memset(shared, tile_sim_ctaid(0), (size_t)bytes);
  }
  tile_sim_barrier();
}

/* A race between two warps that only a warp-first schedule shows: each
 * thread reads the other warp's slot, its warp shuffles, then lanes 0-30
 * overwrite their own slot with no barrier between.  Round robin runs only
 * the shuffle's last lane on (lane 31 writes nothing) before the other
 * warp's reads: no harm seen; warp first runs the whole warp on, so the
 * other warp reads 31 slots of -1.
 * params: out (i32[64]) */
void warp_race_sim_entry(void **params) {
  int32_t *out = PARAM(0, int32_t *), *shared = tile_sim_shared();
  int32_t t = tile_sim_tid(), minus_one = -1;
  shared[t] = t;
  tile_sim_barrier();
  int32_t v = shared[(t + 32) % 64];
  v = tile_sim_shfl_idx(v, t % 32);
  if (t % 32 != 31) shared[t] = minus_one;
  tile_sim_store(out + t, &v, 4);
}

/* Thread 1 of program 2 writes shared[offset].  params: offset */
void shared_write_sim_entry(void **params) {
  int64_t offset = PARAM(0, int64_t);
  unsigned char *shared = tile_sim_shared();
  if (tile_sim_ctaid(0) == 2 && tile_sim_tid() == 1) shared[offset] = 1;
}

/* Thread `who` of program (1, 0, 0) fails an assert.  params: who */
void assert_sim_entry(void **params) {
  int32_t who = PARAM(0, int32_t);
  if (tile_sim_ctaid(0) == 1 && tile_sim_tid() == who)
    tile_sim_assertfail("x > 0 && \"positive\"", "kernels/k.tl", 12, "kern", 1);
}

/* printf from thread 1 of each program with the conversions CUDA has, the
 * arguments packed as vprintf's ABI packs them (each aligned to its size,
 * char promoted to int, float to double, pointers 8 bytes).  test_sim.c
 * formats the same values with the host's snprintf. */
#define PRINTF_FORMAT                                                                                          \
  "pid %d|%5i|%-5d|%+d|% d|%05d|%u|%x|%#X|%8.3x|%lld|%llu|%llx|%.3f|%10.2e|%g|%G|%s|%-6s|%.2s|%c|%p|%*d|%.*f|" \
  "%hhd|%ld|%%\n"

static size_t pack(unsigned char *buf, size_t offset, const void *value, size_t size) {
  offset = (offset + size - 1) & ~(size - 1);
  memcpy(buf + offset, value, size);
  return offset + size;
}

void printf_sim_entry(void **params) {
  (void)params;
  if (tile_sim_tid() != 1) return;
  unsigned char buf[256];
  size_t o = 0;
  int32_t ints[] = {tile_sim_ctaid(0), -42, 17, 5, 6, -3, (int32_t)4000000000u, 0xbeef, 0xbeef, 0x1f};
  for (int i = 0; i < 10; i++) o = pack(buf, o, &ints[i], 4);
  int64_t wide[] = {-1234567890123ll, -1, 0xdeadbeefcafell};
  for (int i = 0; i < 3; i++) o = pack(buf, o, &wide[i], 8);
  double reals[] = {3.14159265358979, -0.000123456, 1e20, 1e-5};
  for (int i = 0; i < 4; i++) o = pack(buf, o, &reals[i], 8);
  const char *strings[] = {"str", "ab", "xyz"};
  for (int i = 0; i < 3; i++) o = pack(buf, o, &strings[i], 8);
  int32_t c = 'Z', width = 7, star = -5, precision = 2, byte = 300;
  void *p = (void *)0x1234;
  double e = 2.71828;
  int64_t l = 1ll << 40;
  o = pack(buf, o, &c, 4);
  o = pack(buf, o, &p, 8);
  o = pack(buf, o, &width, 4);
  o = pack(buf, o, &star, 4);
  o = pack(buf, o, &precision, 4);
  o = pack(buf, o, &e, 8);
  o = pack(buf, o, &byte, 4);
  o = pack(buf, o, &l, 8);
  tile_sim_vprintf(PRINTF_FORMAT, buf);
}

/* mode 0: a conversion CUDA lacks; 1: a conversion and no arguments;
 * 2: no conversion and no arguments (fine).  params: mode */
void bad_printf_sim_entry(void **params) {
  int32_t v = 1, mode = PARAM(0, int32_t);
  if (tile_sim_tid() != 0) return;
  if (mode == 0) tile_sim_vprintf("value %n\n", &v);
  if (mode == 1) tile_sim_vprintf("value %d\n", NULL);
  if (mode == 2) tile_sim_vprintf("100%% plain\n", NULL);
}

/* Every thread of every program does the same atomics on the same
 * locations.  params: i32 counter[4], f32 sum, f16 sum, i64 counter,
 * u32 bits[3], i32 order (one per program), program count */
void atomics_sim_entry(void **params) {
  int32_t *ints = PARAM(0, int32_t *), *order = PARAM(5, int32_t *);
  float *fsum = PARAM(1, float *);
  uint16_t *hsum = PARAM(2, uint16_t *);
  int64_t *wide = PARAM(3, int64_t *);
  uint32_t *bits = PARAM(4, uint32_t *);
  int tid = tile_sim_tid(), pid = tile_sim_ctaid(0) + tile_sim_nctaid(0) * (tile_sim_ctaid(1) + tile_sim_nctaid(1) * tile_sim_ctaid(2));
  tile_sim_atomic(TILE_SIM_ATOMIC_ADD, TILE_SIM_KIND_SIGNED, 4, &ints[0], 1, 0);
  tile_sim_atomic(TILE_SIM_ATOMIC_MAX, TILE_SIM_KIND_SIGNED, 4, &ints[1], (uint32_t)(tid - 100), 0);
  tile_sim_atomic(TILE_SIM_ATOMIC_MIN, TILE_SIM_KIND_SIGNED, 4, &ints[2], (uint32_t)(tid - 100), 0);
  tile_sim_atomic(TILE_SIM_ATOMIC_MAX, TILE_SIM_KIND_UNSIGNED, 4, &ints[3], (uint32_t)(tid - 100), 0);
  float one = 1.0f;
  uint32_t one_bits;
  memcpy(&one_bits, &one, 4);
  tile_sim_atomic(TILE_SIM_ATOMIC_ADD, TILE_SIM_KIND_FLOAT, 4, fsum, one_bits, 0);
  tile_sim_atomic(TILE_SIM_ATOMIC_ADD, TILE_SIM_KIND_FLOAT, 2, hsum, 0x3c00, 0); /* fp16 1.0 */
  /* a compare-and-swap loop, as a lowering builds an atomic it lacks */
  uint64_t seen = 0, next;
  for (;;) {
    next = seen + 3;
    uint64_t old = tile_sim_atomic(TILE_SIM_ATOMIC_CAS, TILE_SIM_KIND_UNSIGNED, 8, wide, next, seen);
    if (old == seen) break;
    seen = old;
  }
  tile_sim_atomic(TILE_SIM_ATOMIC_OR, TILE_SIM_KIND_UNSIGNED, 4, &bits[0], 1u << (tid % 32), 0);
  tile_sim_atomic(TILE_SIM_ATOMIC_AND, TILE_SIM_KIND_UNSIGNED, 4, &bits[1], ~(1u << (pid % 32)), 0);
  tile_sim_atomic(TILE_SIM_ATOMIC_XOR, TILE_SIM_KIND_UNSIGNED, 4, &bits[2], (uint32_t)tid, 0);
  tile_sim_barrier();
  if (tid == 0) {
    int32_t ticket = (int32_t)tile_sim_atomic(TILE_SIM_ATOMIC_XCHG, TILE_SIM_KIND_SIGNED, 4, &ints[4], 0, 0);
    tile_sim_atomic(TILE_SIM_ATOMIC_XCHG, TILE_SIM_KIND_SIGNED, 4, &ints[4], (uint32_t)(ticket + 1), 0);
    tile_sim_store(order + pid, &ticket, 4);
  }
}

/* An atomic the GPU cannot do.  params: target, mode */
void bad_atomic_sim_entry(void **params) {
  char *p = PARAM(0, char *);
  int32_t mode = PARAM(1, int32_t);
  if (mode == 0) tile_sim_atomic(TILE_SIM_ATOMIC_ADD, TILE_SIM_KIND_SIGNED, 16, p, 1, 0);
  if (mode == 1) tile_sim_atomic(TILE_SIM_ATOMIC_ADD, TILE_SIM_KIND_SIGNED, 4, p + 2, 1, 0);
  if (mode == 2) tile_sim_atomic(TILE_SIM_ATOMIC_OR, TILE_SIM_KIND_FLOAT, 4, p, 1, 0);
}

/* Each thread writes (ctaid x, y, z, nctaid x, y, z, tid) at its slot.
 * params: out (i32*), num_warps */
void geometry_sim_entry(void **params) {
  int32_t *out = PARAM(0, int32_t *);
  int T = num_threads(params, 1);
  int flat = tile_sim_ctaid(0) + tile_sim_nctaid(0) * (tile_sim_ctaid(1) + tile_sim_nctaid(1) * tile_sim_ctaid(2));
  int32_t v[7] = {tile_sim_ctaid(0), tile_sim_ctaid(1), tile_sim_ctaid(2), tile_sim_nctaid(0), tile_sim_nctaid(1),
                  tile_sim_nctaid(2), tile_sim_tid()};
  for (int k = 0; k < 7; k++) tile_sim_store(out + ((size_t)flat * T + tile_sim_tid()) * 7 + k, &v[k], 4);
}

/* libdevice names and the approximations, resolved from the simulator.
 * params: x (f32*), out (f32*: 8 per x), dout (f64*: 2 per x) */
float __nv_expf(float), __nv_logf(float), __nv_sinf(float), __nv_powf(float, float), __nv_fmodf(float, float);
double __nv_exp(double), __nv_erf(double);
void math_sim_entry(void **params) {
  float *x = PARAM(0, float *), *out = PARAM(1, float *);
  double *dout = PARAM(2, double *);
  int i = tile_sim_tid();
  float v;
  tile_sim_load(&v, x + i, 4);
  float r[8] = {__nv_expf(v), __nv_logf(v), __nv_sinf(v), __nv_powf(v, 1.5f), __nv_fmodf(v, 0.75f),
                tile_sim_ex2_approx(v), tile_sim_lg2_approx(v), tile_sim_rsqrt_approx(v)};
  double d[2] = {__nv_exp((double)v), __nv_erf((double)v)};
  for (int k = 0; k < 8; k++) tile_sim_store(out + i * 8 + k, &r[k], 4);
  for (int k = 0; k < 2; k++) tile_sim_store(dout + i * 2 + k, &d[k], 8);
}

/* Deep recursion on a thread's stack, to check stacks are large and separate.
 * params: out (i32*) */
static int depth_sum(volatile char *pad, int n) {
  volatile char local[256];
  local[0] = (char)n;
  (void)pad;
  return n == 0 ? 0 : local[0] + depth_sum(local, n - 1) - (char)n + n;
}

void stack_sim_entry(void **params) {
  int32_t *out = PARAM(0, int32_t *);
  int32_t v = depth_sum(NULL, 300 + tile_sim_tid());
  tile_sim_barrier();
  tile_sim_store(out + tile_sim_tid(), &v, 4);
}

/* Thread 2 recurses without end.  params: none */
static int bottomless(volatile char *up, int n) {
  volatile char frame[512];
  frame[0] = (char)n;
  frame[511] = up ? up[0] : 0;
  if (n > (1 << 30)) return 0; /* never: 512 bytes a frame runs off any stack long before */
  return bottomless(frame, n + 1) + frame[511];
}

void overflow_sim_entry(void **params) {
  (void)params;
  if (tile_sim_tid() == 2) bottomless(NULL, 0);
}
