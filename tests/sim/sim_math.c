/* libdevice's functions (__nv_*) for the sim target, from the C library:
 * generated code keeps libdevice's names and the simulator's executable
 * defines them.  Requires: the executable exports these symbols (-rdynamic).
 * Guarantees: each computes what the C library computes (correctly rounded
 * where the C library is, which libdevice is not always: tests compare with
 * a tolerance where the GPU rounds differently). */
#include "special_math.h"

#include <math.h>
#include <stdint.h>

#pragma GCC visibility push(default)

/* The functions of lang/libdevice.def, from its C expressions: the
 * interpreter computes the same ones (special_math.c where libm has none). */
#define LD_PROTO_LD_F(T, R, name) R name(T x)
#define LD_PROTO_LD_FF(T, R, name) R name(T x, T y)
#define LD_PROTO_LD_FFF(T, R, name) R name(T x, T y, T z)
#define LD_PROTO_LD_FFFF(T, R, name) R name(T x, T y, T z, T w)
#define LD_PROTO_LD_FI(T, R, name) R name(T x, int n)
#define LD_PROTO_LD_IF(T, R, name) R name(int n, T x)
#define LD_PROTO_LD_INT(T, R, name) int name(T x)
#define LD_PROTO_LD_BOOL(T, R, name) int name(T x)
#define LD_PROTO_LD_LONG(T, R, name) long long name(T x)
#define LD_DEFINE(sig, T, name, c)                                                                       \
  LD_PROTO_##sig(T, T, name);                                                                           \
  LD_PROTO_##sig(T, T, name) { return c; }
/* the row's types column: one function or two */
#define LD_DEFINE_FP(sig, f32, f64, c32, c64) LD_DEFINE(sig, float, f32, c32) LD_DEFINE(sig, double, f64, c64)
#define LD_DEFINE_FP32(sig, f32, f64, c32, c64) LD_DEFINE(sig, float, f32, c32)
#define LD_DEFINE_FP64(sig, f32, f64, c32, c64) LD_DEFINE(sig, double, f64, c64)
#define LIBDEVICE(id, name, sig, types, f32, f64, c32, c64) LD_DEFINE_##types(sig, __nv_##f32, __nv_##f64, c32, c64)
#include "libdevice.def"
#undef LIBDEVICE

/* Others that generated code may call: one line per function, libdevice name, C expression of x (and y). */
#define FLOAT_UNARY(X)                                                                                    \
  X(fast_exp10f, powf(10.0f, x)) X(fast_log10f, log10f(x)) X(fast_tanf, tanf(x))

#define FLOAT_BINARY(X) X(fdividef, x / y)

#define DEFINE_FLOAT_UNARY(name, expr) float __nv_##name(float x) { return expr; }
#define DEFINE_FLOAT_BINARY(name, expr) float __nv_##name(float x, float y) { return expr; }

/* Declared here only: nothing includes a header for them. */
#define DECLARE_FLOAT_UNARY(name, expr) float __nv_##name(float x);
#define DECLARE_FLOAT_BINARY(name, expr) float __nv_##name(float x, float y);
FLOAT_UNARY(DECLARE_FLOAT_UNARY)
FLOAT_BINARY(DECLARE_FLOAT_BINARY)

FLOAT_UNARY(DEFINE_FLOAT_UNARY)
FLOAT_BINARY(DEFINE_FLOAT_BINARY)

int __nv_umulhi(unsigned x, unsigned y);
int __nv_mulhi(int x, int y);
uint64_t __nv_umul64hi(uint64_t x, uint64_t y);
int64_t __nv_mul64hi(int64_t x, int64_t y);
int __nv_popc(unsigned x);
int __nv_popcll(uint64_t x);
int __nv_clz(int x);
int __nv_clzll(int64_t x);
int __nv_ffs(int x);
int __nv_ffsll(int64_t x);
unsigned __nv_brev(unsigned x);
uint64_t __nv_brevll(uint64_t x);
int __nv_abs(int x);
int64_t __nv_llabs(int64_t x);

int __nv_umulhi(unsigned x, unsigned y) { return (int)(unsigned)(((uint64_t)x * y) >> 32); }
int __nv_mulhi(int x, int y) { return (int)(((int64_t)x * y) >> 32); }
uint64_t __nv_umul64hi(uint64_t x, uint64_t y) { return (uint64_t)(((unsigned __int128)x * y) >> 64); }
int64_t __nv_mul64hi(int64_t x, int64_t y) { return (int64_t)(((__int128)x * y) >> 64); }
int __nv_popc(unsigned x) { return __builtin_popcount(x); }
int __nv_popcll(uint64_t x) { return __builtin_popcountll(x); }
int __nv_clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
int __nv_clzll(int64_t x) { return x ? __builtin_clzll((uint64_t)x) : 64; }
int __nv_ffs(int x) { return __builtin_ffs(x); }
int __nv_ffsll(int64_t x) { return __builtin_ffsll(x); }
int __nv_abs(int x) { return x < 0 ? (int)(0u - (unsigned)x) : x; }
int64_t __nv_llabs(int64_t x) { return x < 0 ? (int64_t)(0ull - (uint64_t)x) : x; }

unsigned __nv_brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}

uint64_t __nv_brevll(uint64_t x) {
  uint64_t r = 0;
  for (int i = 0; i < 64; i++) r |= ((x >> i) & 1ull) << (63 - i);
  return r;
}

#pragma GCC visibility pop
