/* The thread simulator (sim.h): runs code generated for the "sim" target
 * over a grid, each program as 32 * num_warps green threads, and defines
 * the ABI of tile_sim.h that the code calls.
 *
 * Requires: the generated code touches global memory only through
 * tile_sim_load/store/atomic (and cp.async), and synchronises only through
 * tile_sim_barrier, the shuffles and the warp- and warpgroup-synchronous
 * instructions of sim_tensor.c (sim_rendezvous).  Guarantees: a deterministic schedule
 * (threads in order, each running until it synchronises, exits or fails);
 * every global access checked against the launch's buffers; shared memory
 * poisoned with 0xA5 before each program and its guard bytes checked after;
 * a deadlock, a thread leaving while others wait for it, or divergent
 * shuffles reported instead of hanging.
 *
 * The generated code calls tile_sim_* without a context argument, so the
 * running simulation is found through one thread-local pointer (each OS
 * thread may run its own simulation). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "fiber.h"
#include "sim_internal.h"

#pragma GCC visibility push(default)
#include "tile_sim.h"
#pragma GCC visibility pop

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIM_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIM_ASAN 1
#endif
/* Functions whose frames are left on a fiber's stack for good (the thread's
 * last switch) must not poison redzones there: the next program reuses the
 * stack, and the uninstrumented generated code would inherit the poison. */
#ifdef SIM_ASAN
#define LEFT_ON_STACK __attribute__((no_sanitize("address"), noinline))
#else
#define LEFT_ON_STACK __attribute__((noinline))
#endif

enum { WARP = 32, GUARD_BYTES = 4096, POISON = 0xA5, GUARD = 0x5A, STACK_GUARD = 64 << 10, SHARED_ALIGN = 1 << 18 };

typedef enum ThreadState { T_READY, T_BARRIER, T_SHUFFLE, T_RENDEZVOUS, T_DONE } ThreadState;

/* The threads of a warp or warpgroup meeting in one warp-synchronous
 * instruction of sim_tensor.c (mma, ldmatrix, wgmma): all must arrive, with
 * the same instruction. */
typedef struct SimRendezvous {
  const char *op;            /* the instruction of the first arrival (alive while it waits) */
  int first;                 /* that thread */
  int arrived;
  unsigned generation;
} SimRendezvous;

typedef struct SimThread {
  Fiber fiber;
  struct Sim *sim;
  int tid;
  ThreadState state;
  unsigned wait_generation;  /* the barrier's, warp's or rendezvous' generation it waits to see change */
  SimRendezvous *meeting;    /* T_RENDEZVOUS: where it waits */
  const char *waiting_in;    /* T_RENDEZVOUS: the instruction */
} SimThread;

/* A warp's shuffle exchange: each lane writes its value, all 32 arrive,
 * each reads its source, all 32 arrive again before the slots are reused. */
typedef struct SimWarp {
  int32_t value[WARP];
  int kind[WARP];
  int arrived;
  int exited;
  unsigned generation;
} SimWarp;

typedef struct Sim {
  SimLaunch *launch;
  int pid[3];
  int64_t timer_reads;       /* %globaltimer's reads so far (tile_sim_globaltimer) */
  int n_threads;
  SimThread *threads;
  SimWarp *warps;
  SimThread *running;        /* NULL while the scheduler runs */
  Fiber scheduler;
  int barrier_arrived;
  unsigned barrier_generation;
  int exited, first_exited;  /* threads of the program that returned; the first (-1: none) */
  int failed;
  char *stacks;              /* n_threads stacks, each above STACK_GUARD inaccessible bytes */
  size_t stack_bytes, stacks_len; /* stack_bytes includes the guard */
#ifndef SIM_ASAN
  sigjmp_buf overflow;       /* where a thread that ran off its stack lands (on_fault) */
#endif
  unsigned char *shared_block, *shared;
  size_t shared_bytes;
  SimRendezvous *warp_meetings;   /* one per warp */
  SimRendezvous *group_meetings;  /* one per warpgroup (4 warps) */
  SimTensor *tensor;              /* sim_tensor.c's state: fragments in exchange, cp.async queues */
} Sim;

static _Thread_local Sim *sim_current;

/* ---- failure -------------------------------------------------------------- */

/* "kernel 'K', file:line (program x, y, z), thread t (warp w, lane l): message" */
static void set_error(Sim *s, const char *file, int line, const char *fmt, va_list ap) {
  char *e = s->launch->error;
  size_t size = sizeof s->launch->error, n;
  n = (size_t)snprintf(e, size, "kernel '%s'", s->launch->kernel);
  if (file && n < size) n += (size_t)snprintf(e + n, size - n, ", %s:%d", file, line);
  if (n < size) n += (size_t)snprintf(e + n, size - n, " (program %d, %d, %d)", s->pid[0], s->pid[1], s->pid[2]);
  SimThread *t = s->running;
  if (t && n < size)
    n += (size_t)snprintf(e + n, size - n, ", thread %d (warp %d, lane %d)", t->tid, t->tid / WARP, t->tid % WARP);
  if (n < size) n += (size_t)snprintf(e + n, size - n, ": ");
  if (n < size) vsnprintf(e + n, size - n, fmt, ap);
  s->failed = 1;
}

/* Stops the launch from the scheduler's side. */
static void program_fail(Sim *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(s, NULL, 0, fmt, ap);
  va_end(ap);
}

/* The running thread, failed, gives control back for good. */
LEFT_ON_STACK _Noreturn static void abandon_thread(Sim *s) {
  fiber_switch(&s->running->fiber, &s->scheduler, 1);
  __builtin_unreachable();
}

/* Stops the launch from inside the running thread, which is never resumed. */
LEFT_ON_STACK _Noreturn static void thread_fail_at(Sim *s, const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(s, file, line, fmt, ap);
  va_end(ap);
  abandon_thread(s);
}

LEFT_ON_STACK void sim_fail(Sim *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(s, NULL, 0, fmt, ap);
  va_end(ap);
  abandon_thread(s);
}

#define thread_fail(s, ...) sim_fail(s, __VA_ARGS__)

/* ---- synchronisation -------------------------------------------------------- */

/* Suspends the running thread until the generation it waits on changes. */
static void wait_for(Sim *s, ThreadState state, unsigned generation) {
  SimThread *t = s->running;
  t->state = state;
  t->wait_generation = generation;
  fiber_switch(&t->fiber, &s->scheduler, 0);
  t->state = T_READY;
}

void tile_sim_barrier(void) {
  Sim *s = sim_current;
  if (!s) return;
  if (s->exited)
    thread_fail(s, "reached a barrier after thread %d exited (bar.sync waits for every thread of the program)",
                s->first_exited);
  if (++s->barrier_arrived == s->n_threads) {
    s->barrier_arrived = 0;
    s->barrier_generation++;
    return;
  }
  wait_for(s, T_BARRIER, s->barrier_generation);
}

static void warp_sync(Sim *s, SimWarp *w) {
  if (w->exited) thread_fail(s, "a warp shuffle after %d lanes of its warp exited (shfl.sync needs all 32)", w->exited);
  if (++w->arrived == WARP) {
    w->arrived = 0;
    w->generation++;
    return;
  }
  wait_for(s, T_SHUFFLE, w->generation);
}

enum { SHFL_XOR, SHFL_UP, SHFL_IDX };
static const char *const shuffle_names[] = {"shfl.sync.bfly", "shfl.sync.up", "shfl.sync.idx"};

/* The source lane, or -1 where PTX gives the lane its own value back. */
static int source_lane(int kind, int lane, int32_t operand) {
  uint32_t b = (uint32_t)operand;
  if (kind == SHFL_XOR) return ((uint32_t)lane ^ b) < WARP ? (int)((uint32_t)lane ^ b) : -1;
  if (kind == SHFL_UP) return b <= (uint32_t)lane ? lane - (int)b : -1;
  return (int)(b & (WARP - 1));
}

static int32_t shuffle(int kind, int32_t value, int32_t operand) {
  Sim *s = sim_current;
  if (!s) return value;
  int lane = s->running->tid % WARP;
  SimWarp *w = &s->warps[s->running->tid / WARP];
  w->value[lane] = value;
  w->kind[lane] = kind;
  warp_sync(s, w);
  if (w->kind[0] != kind)
    thread_fail(s, "divergent shuffles: lane 0 called %s, lane %d %s", shuffle_names[w->kind[0]], lane,
                shuffle_names[kind]);
  int src = source_lane(kind, lane, operand);
  int32_t result = src < 0 ? value : w->value[src];
  warp_sync(s, w);
  return result;
}

int32_t tile_sim_shfl_xor(int32_t value, int32_t lane_mask) { return shuffle(SHFL_XOR, value, lane_mask); }
int32_t tile_sim_shfl_up(int32_t value, int32_t delta) { return shuffle(SHFL_UP, value, delta); }
int32_t tile_sim_shfl_idx(int32_t value, int32_t src_lane) { return shuffle(SHFL_IDX, value, src_lane); }

/* Exited threads among the `width` threads (a warp or warpgroup) of thread tid. */
static int exited_among(const Sim *s, int tid, int width) {
  int first_warp = tid / width * (width / WARP), exited = 0;
  for (int w = first_warp; w < first_warp + width / WARP; w++) exited += s->warps[w].exited;
  return exited;
}

int sim_rendezvous(Sim *s, int width, const char *op) {
  SimThread *t = s->running;
  const char *unit = width == WARP ? "warp" : "warpgroup";
  if (width != WARP && (t->tid / width + 1) * width > s->n_threads)
    thread_fail(s, "%s needs a warpgroup of 4 warps, but the program has %d warps", op, s->n_threads / WARP);
  int exited = exited_among(s, t->tid, width);
  if (exited) thread_fail(s, "%s after %d threads of its %s exited (it needs all %d)", op, exited, unit, width);
  SimRendezvous *r = width == WARP ? &s->warp_meetings[t->tid / WARP] : &s->group_meetings[t->tid / width];
  if (r->arrived && strcmp(r->op, op))
    thread_fail(s, "divergent %s: thread %d called %s, this thread %s", unit, r->first, r->op, op);
  if (!r->arrived) r->op = op, r->first = t->tid;
  if (++r->arrived == width) {
    r->arrived = 0;
    r->generation++;
    return 1;
  }
  t->meeting = r;
  t->waiting_in = op;
  wait_for(s, T_RENDEZVOUS, r->generation);
  return 0;
}

/* ---- geometry and shared memory ------------------------------------------------ */

int32_t tile_sim_tid(void) { return sim_current && sim_current->running ? sim_current->running->tid : 0; }

int32_t tile_sim_ctaid(int32_t axis) {
  Sim *s = sim_current;
  return s && axis >= 0 && axis < 3 ? s->pid[axis] : 0;
}

int32_t tile_sim_nctaid(int32_t axis) {
  Sim *s = sim_current;
  return s && axis >= 0 && axis < 3 ? (int32_t)s->launch->grid[axis] : 1;
}

int64_t tile_sim_globaltimer(void) { return sim_current ? ++sim_current->timer_reads : 0; }

void *tile_sim_shared(void) { return sim_current ? sim_current->shared : NULL; }

Sim *sim_active(void) { return sim_current && sim_current->running ? sim_current : NULL; }
int sim_thread_id(const Sim *s) { return s->running->tid; }
SimTensor *sim_tensor_of(Sim *s) { return s->tensor; }

unsigned char *sim_shared_window(const Sim *s, size_t *bytes) {
  *bytes = s->shared_bytes;
  return s->shared;
}

/* ---- global memory --------------------------------------------------------------- */

/* Says where [a, a + n) lies relative to the nearest buffer. */
static void describe_outside(const SimLaunch *L, uintptr_t a, size_t n, char *out, size_t size) {
  snprintf(out, size, "outside every buffer");
  uintptr_t best = UINTPTR_MAX;
  for (int i = 0; i < L->n_buffers; i++) {
    uintptr_t lo = (uintptr_t)L->buffers[i].data, hi = lo + L->buffers[i].bytes;
    if (a >= lo && a < hi && a + n > hi) {
      snprintf(out, size, "runs %zu bytes past the end of buffer '%s' (%zu bytes)", (size_t)(a + n - hi),
               L->buffers[i].name, L->buffers[i].bytes);
      return;
    }
    uintptr_t distance = a >= hi ? a - hi : lo - a;
    if (distance < best) {
      best = distance;
      if (a >= hi) snprintf(out, size, "%zu bytes past the end of buffer '%s' (%zu bytes)", (size_t)(a - hi),
                            L->buffers[i].name, L->buffers[i].bytes);
      else snprintf(out, size, "%zu bytes before buffer '%s'", (size_t)(lo - a), L->buffers[i].name);
    }
  }
}

/* The buffer holding all of [a, a + n), or NULL. */
static const SimBuffer *buffer_at(const SimLaunch *L, uintptr_t a, size_t n) {
  for (int i = 0; i < L->n_buffers; i++) {
    uintptr_t lo = (uintptr_t)L->buffers[i].data;
    if (a >= lo && a - lo < L->buffers[i].bytes && n <= L->buffers[i].bytes - (a - lo)) return &L->buffers[i];
  }
  return NULL;
}

void sim_check_global_span(Sim *s, const char *what, const void *p, size_t bytes, size_t align) {
  uintptr_t a = (uintptr_t)p;
  const SimBuffer *b = buffer_at(s->launch, a, bytes);
  if (!b) {
    char where[256];
    describe_outside(s->launch, a, bytes, where, sizeof where);
    thread_fail(s, "out-of-bounds %s of %zu bytes at %p: %s", what, bytes, p, where);
  }
  if (a % align && align == bytes)
    thread_fail(s, "misaligned %s of %zu bytes at %p (byte %zu of buffer '%s')", what, bytes, p,
                (size_t)(a - (uintptr_t)b->data), b->name);
  if (a % align)
    thread_fail(s, "misaligned %s of %zu bytes at %p: not %zu-byte aligned (byte %zu of buffer '%s')", what, bytes,
                p, align, (size_t)(a - (uintptr_t)b->data), b->name);
}

static void check_global(Sim *s, const char *what, const void *p, int32_t bytes, int sizes_allowed) {
  if (bytes <= 0 || bytes > 16 || (bytes & (bytes - 1)) || !(bytes & sizes_allowed))
    thread_fail(s, "%s of %d bytes at %p: not a size the GPU moves in one access", what, bytes, p);
  sim_check_global_span(s, what, p, (size_t)bytes, (size_t)bytes);
}

void tile_sim_load(void *dst, const void *global_src, int32_t bytes) {
  Sim *s = sim_current;
  if (!s) return;
  check_global(s, "load", global_src, bytes, 1 | 2 | 4 | 8 | 16);
  memcpy(dst, global_src, (size_t)bytes);
}

void tile_sim_store(void *global_dst, const void *src, int32_t bytes) {
  Sim *s = sim_current;
  if (!s) return;
  check_global(s, "store", global_dst, bytes, 1 | 2 | 4 | 8 | 16);
  memcpy(global_dst, src, (size_t)bytes);
}

/* ---- atomics ---------------------------------------------------------------------- */

float sim_half_to_float(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float v = exponent ? ldexpf(1.0f + (float)mantissa / 1024.0f, exponent - 15) : ldexpf((float)mantissa, -24);
  if (exponent == 31) v = mantissa ? NAN : INFINITY;
  return h & 0x8000 ? -v : v;
}

/* Round to nearest even, with fp16's subnormals, overflow to infinity and quiet NaNs. */
static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return sign | 0x7e00;
  if (ax >= 0x477ff000) return sign | 0x7c00;  /* 65520 and up round to infinity */
  if (ax < 0x38800000) return sign | (uint16_t)nearbyintf(fabsf(f) * 16777216.0f); /* subnormal: units of 2^-24 */
  uint32_t rounded = ax + 0xfff + ((ax >> 13) & 1);
  return sign | (uint16_t)((rounded - (112u << 23)) >> 13);
}

static float bf16_to_float(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static double float_combine(int op, double a, double b) {
  switch (op) {
  case TILE_SIM_ATOMIC_ADD: return a + b;
  case TILE_SIM_ATOMIC_MAX: return fmax(a, b); /* NaN ignored, as the interpreter */
  default: return fmin(a, b);
  }
}

/* add/max/min on a float of `bytes` (kind says fp16 or bf16 for 2). */
static uint64_t float_atomic(int op, int kind, int bytes, uint64_t old, uint64_t value) {
  if (bytes == 8) {
    double a, b, r;
    memcpy(&a, &old, 8), memcpy(&b, &value, 8);
    r = float_combine(op, a, b);
    uint64_t bits;
    memcpy(&bits, &r, 8);
    return bits;
  }
  if (bytes == 4) {
    float a, b, r;
    uint32_t oa = (uint32_t)old, vb = (uint32_t)value, bits;
    memcpy(&a, &oa, 4), memcpy(&b, &vb, 4);
    r = (float)float_combine(op, a, b);
    memcpy(&bits, &r, 4);
    return bits;
  }
  int bf = kind == TILE_SIM_KIND_BF16;
  float a = bf ? bf16_to_float((uint16_t)old) : sim_half_to_float((uint16_t)old);
  float b = bf ? bf16_to_float((uint16_t)value) : sim_half_to_float((uint16_t)value);
  float r = (float)float_combine(op, a, b);
  return bf ? float_to_bf16(r) : float_to_half(r);
}

static int64_t sign_extend(uint64_t v, int bytes) {
  int shift = 64 - 8 * bytes;
  return (int64_t)(v << shift) >> shift;
}

static uint64_t int_atomic(int op, int kind, int bytes, uint64_t old, uint64_t value) {
  int64_t sa = sign_extend(old, bytes), sb = sign_extend(value, bytes);
  switch (op) {
  case TILE_SIM_ATOMIC_ADD: return old + value;
  case TILE_SIM_ATOMIC_MAX: return kind == TILE_SIM_KIND_SIGNED ? (uint64_t)(sa > sb ? sa : sb) : (old > value ? old : value);
  case TILE_SIM_ATOMIC_MIN: return kind == TILE_SIM_KIND_SIGNED ? (uint64_t)(sa < sb ? sa : sb) : (old < value ? old : value);
  case TILE_SIM_ATOMIC_AND: return old & value;
  case TILE_SIM_ATOMIC_OR: return old | value;
  default: return old ^ value;
  }
}

/* Green threads never preempt each other, so a plain read-modify-write is atomic. */
uint64_t tile_sim_atomic(int32_t op, int32_t kind, int32_t bytes, void *global_ptr, uint64_t value, uint64_t compare) {
  Sim *s = sim_current;
  if (!s) return 0;
  if (op < TILE_SIM_ATOMIC_ADD || op > TILE_SIM_ATOMIC_CAS || kind < TILE_SIM_KIND_SIGNED || kind > TILE_SIM_KIND_BF16)
    thread_fail(s, "atomic with unknown op %d or kind %d", op, kind);
  check_global(s, "atomic", global_ptr, bytes, 2 | 4 | 8);
  int is_float = kind == TILE_SIM_KIND_FLOAT || kind == TILE_SIM_KIND_BF16;
  if (is_float && op >= TILE_SIM_ATOMIC_AND && op <= TILE_SIM_ATOMIC_XOR)
    thread_fail(s, "bitwise atomic (op %d) on a float", op);
  if (kind == TILE_SIM_KIND_BF16 && bytes != 2) thread_fail(s, "a bf16 atomic of %d bytes", bytes);
  uint64_t mask = bytes == 8 ? ~0ull : (1ull << (8 * bytes)) - 1, old = 0, next;
  memcpy(&old, global_ptr, (size_t)bytes);
  value &= mask;
  if (op == TILE_SIM_ATOMIC_CAS) next = old == (compare & mask) ? value : old;
  else if (op == TILE_SIM_ATOMIC_XCHG) next = value;
  else if (is_float) next = float_atomic(op, kind, bytes, old, value);
  else next = int_atomic(op, kind, bytes, old, value);
  next &= mask;
  memcpy(global_ptr, &next, (size_t)bytes);
  return old;
}

/* ---- approximations, printf, assert ------------------------------------------------- */

float tile_sim_ex2_approx(float x) { return exp2f(x); }
/* ex2.approx.ftz: a result below the smallest normal float is 0 */
float tile_sim_ex2_approx_ftz(float x) {
  float r = exp2f(x);
  return r < FLT_MIN ? 0.0f : r;
}
float tile_sim_lg2_approx(float x) { return log2f(x); }
float tile_sim_rsqrt_approx(float x) { return 1.0f / sqrtf(x); }

int32_t tile_sim_vprintf(const char *format, const void *args) {
  Sim *s = sim_current;
  if (!s) return -1;
  if (!format) thread_fail(s, "vprintf with a NULL format");
  char err[256];
  SimText local = {0}, *out = s->launch->printed ? s->launch->printed : &local;
  size_t before = out->len;
  int n = sim_format(format, args, out, err, sizeof err);
  if (n < 0) {
    sim_text_free(&local);
    thread_fail(s, "%s", err);
  }
  if (out->len > SIM_MAX_PRINTED) thread_fail(s, "vprintf wrote more than %d bytes", SIM_MAX_PRINTED);
  if (out == &local) {
    fwrite(local.data + before, 1, local.len - before, stdout);
    sim_text_free(&local);
  }
  return n;
}

void tile_sim_assertfail(const char *message, const char *file, int32_t line, const char *function,
                         uint64_t char_size) {
  Sim *s = sim_current;
  if (!s) return;
  (void)char_size;
  thread_fail_at(s, file ? file : "?", line, "device_assert failed: %s (in %s)", message ? message : "",
                 function ? function : "?");
}

/* ---- running a program ------------------------------------------------------------------ */

/* A thread whose kernel returned; it is never resumed. */
LEFT_ON_STACK static void thread_exit(Sim *s, SimThread *t) {
  SimWarp *w = &s->warps[t->tid / WARP];
  if (s->barrier_arrived)
    thread_fail(s, "exited while %d threads wait at a barrier (bar.sync waits for every thread of the program)",
                s->barrier_arrived);
  if (w->arrived) thread_fail(s, "exited while %d lanes of its warp wait in a shuffle", w->arrived);
  SimRendezvous *r = &s->warp_meetings[t->tid / WARP];
  if (r->arrived) thread_fail(s, "exited while %d lanes of its warp wait in %s", r->arrived, r->op);
  r = &s->group_meetings[t->tid / (4 * WARP)];
  if (r->arrived) thread_fail(s, "exited while %d threads of its warpgroup wait in %s", r->arrived, r->op);
  sim_tensor_thread_exit(s, s->tensor, t->tid);
  t->state = T_DONE;
  w->exited++;
  if (!s->exited++) s->first_exited = t->tid;
  fiber_switch(&t->fiber, &s->scheduler, 1);
}

LEFT_ON_STACK static void thread_main(void *arg) {
  SimThread *t = arg;
  Sim *s = t->sim;
  fiber_started(&t->fiber, &s->scheduler);
  s->launch->entry(s->launch->params);
  thread_exit(s, t);
}

static int runnable(const Sim *s, const SimThread *t) {
  switch (t->state) {
  case T_READY: return 1;
  case T_BARRIER: return s->barrier_generation != t->wait_generation;
  case T_SHUFFLE: return s->warps[t->tid / WARP].generation != t->wait_generation;
  case T_RENDEZVOUS: return t->meeting->generation != t->wait_generation;
  default: return 0;
  }
}

static void state_name(const SimThread *t, char *out, size_t size) {
  static const char *const names[] = {"are ready", "wait at a barrier", "wait in a warp shuffle", "wait in", "exited"};
  if (t->state == T_RENDEZVOUS) snprintf(out, size, "wait in %s", t->waiting_in);
  else snprintf(out, size, "%s", names[t->state]);
}

static int same_state(const SimThread *a, const SimThread *b) {
  return a->state == b->state && (a->state != T_RENDEZVOUS || !strcmp(a->waiting_in, b->waiting_in));
}

/* "threads 0-31 wait at a barrier, thread 32 exited, threads 33-63 wait in a warp shuffle" */
static void report_deadlock(Sim *s) {
  char text[768] = "", what[128];
  size_t len = 0;
  for (int i = 0, j; i < s->n_threads && len < sizeof text - 160; i = j + 1) {
    for (j = i; j + 1 < s->n_threads && same_state(&s->threads[j + 1], &s->threads[i]);) j++;
    const char *sep = len ? ", " : "";
    state_name(&s->threads[i], what, sizeof what);
    if (j > i) len += (size_t)snprintf(text + len, sizeof text - len, "%sthreads %d-%d %s", sep, i, j, what);
    else len += (size_t)snprintf(text + len, sizeof text - len, "%sthread %d %s", sep, i, what);
  }
  program_fail(s, "deadlock: %s", text);
}

/* Runs each runnable thread of [first, end) once, in order; how many ran. */
static int run_threads(Sim *s, int first, int end) {
  int ran = 0;
  for (int i = first; i < end && !s->failed; i++) {
    SimThread *t = &s->threads[i];
    if (!runnable(s, t)) continue;
    s->running = t;
    fiber_switch(&s->scheduler, &t->fiber, 0);
    s->running = NULL;
    ran++;
  }
  return ran;
}

static int live_threads(const Sim *s) {
  int live = 0;
  for (int i = 0; i < s->n_threads; i++) live += s->threads[i].state != T_DONE;
  return live;
}

/* Round robin: each thread runs until it synchronises, then the next.  Warp
 * first: a warp runs as far as it can (through its shuffles and warp
 * rendezvous) before the next starts, as a GPU may schedule it, so a warp
 * that overwrites shared memory another warp has yet to read, or reads
 * what another has yet to write, with no barrier between, is caught. */
static void schedule(Sim *s) {
  int unit = s->launch->warp_first ? WARP : s->n_threads;
  for (;;) {
    int ran = 0;
    for (int first = 0; first < s->n_threads && !s->failed; first += unit) {
      int n;
      do {
        n = run_threads(s, first, first + unit);
        ran += n;
      } while (s->launch->warp_first && n && !s->failed);
    }
    if (s->failed || !live_threads(s)) return;
    if (!ran) {
      report_deadlock(s);
      return;
    }
  }
}

static void start_program(Sim *s) {
  memset(s->shared - GUARD_BYTES, GUARD, GUARD_BYTES * 2 + s->shared_bytes);
  memset(s->shared, POISON, s->shared_bytes);
  memset(s->warps, 0, sizeof(SimWarp) * (size_t)(s->n_threads / WARP));
  memset(s->warp_meetings, 0, sizeof(SimRendezvous) * (size_t)(s->n_threads / WARP));
  memset(s->group_meetings, 0, sizeof(SimRendezvous) * (size_t)((s->n_threads / WARP + 3) / 4));
  sim_tensor_start(s->tensor);
  s->barrier_arrived = 0;
  s->exited = 0;
  s->first_exited = -1;
  for (int i = 0; i < s->n_threads; i++) {
    SimThread *t = &s->threads[i];
    char *stack = s->stacks + (size_t)i * s->stack_bytes;
    t->sim = s;
    t->tid = i;
    t->state = T_READY;
    fiber_init(&t->fiber, stack + STACK_GUARD, s->stack_bytes - STACK_GUARD, thread_main, t);
  }
}

/* Guard bytes around shared memory that the program overwrote. */
static void check_shared_guards(Sim *s) {
  for (size_t i = 0; i < GUARD_BYTES; i++) {
    if (s->shared[s->shared_bytes + i] != GUARD) {
      program_fail(s, "shared memory written out of bounds: byte %zu past the end of its %zu bytes", i,
                   s->shared_bytes);
      return;
    }
    if (s->shared[-1 - (ptrdiff_t)i] != GUARD) {
      program_fail(s, "shared memory written out of bounds: %zu bytes before its start", i + 1);
      return;
    }
  }
}

/* ---- the launch ----------------------------------------------------------------------- */

static int check_launch(SimLaunch *L) {
  const char *why = !L->entry                                 ? "no entry function"
                    : L->num_warps < 1 || L->num_warps > 32    ? "num_warps must be 1..32"
                    : L->shared_bytes > SIM_MAX_SHARED         ? "more shared memory than a GPU has"
                    : L->n_buffers < 0 || (L->n_buffers && !L->buffers) ? "bad buffer list"
                                                                : NULL;
  if (why) snprintf(L->error, sizeof L->error, "kernel '%s': %s", L->kernel ? L->kernel : "?", why);
  return why ? -1 : 0;
}

static int allocate(Sim *s, SimLaunch *L) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  s->n_threads = WARP * L->num_warps;
  s->stack_bytes = ((L->stack_bytes ? L->stack_bytes : SIM_DEFAULT_STACK) + STACK_GUARD + page - 1) / page * page;
  s->stacks_len = s->stack_bytes * (size_t)s->n_threads;
  s->stacks = mmap(NULL, s->stacks_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (s->stacks == MAP_FAILED) {
    s->stacks = NULL;
    return -1;
  }
  for (int i = 0; i < s->n_threads; i++) /* a stack overflow faults instead of corrupting the next stack */
    mprotect(s->stacks + (size_t)i * s->stack_bytes, STACK_GUARD, PROT_NONE);
  s->threads = calloc((size_t)s->n_threads, sizeof *s->threads);
  s->warps = calloc((size_t)L->num_warps, sizeof *s->warps);
  s->warp_meetings = calloc((size_t)L->num_warps, sizeof *s->warp_meetings);
  s->group_meetings = calloc((size_t)(L->num_warps + 3) / 4, sizeof *s->group_meetings);
  s->tensor = sim_tensor_new(L->num_warps);
  s->shared_bytes = L->shared_bytes;
  /* the window starts at a multiple of 2^18, as a GPU's shared addresses
   * start at 0: the swizzles (address bits 4-9) and wgmma's descriptors
   * (bits 4-17, which do not carry over within the window) see the same
   * bits in host addresses (sim_tensor.c); its guard bytes lie below */
  size_t bytes = SHARED_ALIGN + s->shared_bytes + GUARD_BYTES;
  s->shared_block = aligned_alloc(SHARED_ALIGN, (bytes + SHARED_ALIGN - 1) / SHARED_ALIGN * SHARED_ALIGN);
  s->shared = s->shared_block ? s->shared_block + SHARED_ALIGN : NULL;
  return s->threads && s->warps && s->warp_meetings && s->group_meetings && s->tensor && s->shared_block ? 0 : -1;
}

static void release(Sim *s) {
  if (s->stacks) {
    fiber_forget_stack(s->stacks, s->stacks_len);
    munmap(s->stacks, s->stacks_len);
  }
  free(s->threads);
  free(s->warps);
  free(s->warp_meetings);
  free(s->group_meetings);
  sim_tensor_free(s->tensor);
  free(s->shared_block);
}

/* ---- stack overflow -------------------------------------------------------------------- */

/* A thread that runs off its stack faults in the guard below it: the fault
 * is taken on an alternate stack and jumps back to the scheduler, and the
 * launch ends with an error instead of a crash.  (Under ASan, ASan's own
 * handler reports the overflow.) */
#ifndef SIM_ASAN
static int in_stack_guard(const Sim *s, const void *addr) {
  const char *a = addr;
  if (!s->stacks || a < s->stacks || a >= s->stacks + s->stacks_len) return 0;
  return (size_t)(a - s->stacks) % s->stack_bytes < STACK_GUARD;
}

static void on_fault(int sig, siginfo_t *info, void *context) {
  (void)context;
  Sim *s = sim_current;
  if (s && s->running && in_stack_guard(s, info->si_addr)) siglongjmp(s->overflow, 1);
  signal(sig, SIG_DFL); /* not ours: the fault happens again and ends the process as it would have */
}

typedef struct FaultHandler {
  struct sigaction old_action;
  stack_t old_stack;
  void *alternate;
} FaultHandler;

static void catch_faults(FaultHandler *h) {
  enum { ALTERNATE_BYTES = 64 << 10 };
  h->alternate = malloc(ALTERNATE_BYTES);
  stack_t st = {.ss_sp = h->alternate, .ss_size = ALTERNATE_BYTES, .ss_flags = 0};
  sigaltstack(h->alternate ? &st : NULL, &h->old_stack);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &h->old_action);
}

static void release_faults(FaultHandler *h) {
  sigaction(SIGSEGV, &h->old_action, NULL);
  sigaltstack(&h->old_stack, NULL);
  free(h->alternate);
}
#endif

static void run_grid(Sim *s, const SimLaunch *L) {
#ifndef SIM_ASAN
  if (sigsetjmp(s->overflow, 1)) {
    program_fail(s, "ran off its %zu-byte stack (SimLaunch.stack_bytes)", s->stack_bytes - STACK_GUARD);
    s->running = NULL;
    return;
  }
#endif
  for (s->pid[2] = 0; s->pid[2] < (int)L->grid[2]; s->pid[2]++)
    for (s->pid[1] = 0; s->pid[1] < (int)L->grid[1]; s->pid[1]++)
      for (s->pid[0] = 0; s->pid[0] < (int)L->grid[0]; s->pid[0]++) {
        start_program(s);
        schedule(s);
        if (!s->failed) check_shared_guards(s);
        if (s->failed) return;
      }
}

int sim_run(SimLaunch *L) {
  if (!L) return -1;
  L->error[0] = 0;
  if (check_launch(L)) return -1;
  Sim s = {0};
  s.launch = L;
  if (allocate(&s, L)) {
    release(&s);
    snprintf(L->error, sizeof L->error, "kernel '%s': out of memory for %d threads", L->kernel, 32 * L->num_warps);
    return -1;
  }
  Sim *outer = sim_current;
  sim_current = &s;
#ifndef SIM_ASAN
  FaultHandler faults;
  catch_faults(&faults);
#endif
  run_grid(&s, L);
#ifndef SIM_ASAN
  release_faults(&faults);
#endif
  sim_current = outer;
  release(&s);
  return s.failed ? -1 : 0;
}
