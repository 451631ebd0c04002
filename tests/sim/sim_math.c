/* libdevice's functions (__nv_*) for the sim target, from the C library:
 * generated code keeps libdevice's names and the simulator's executable
 * defines them.  Requires: the executable exports these symbols (-rdynamic).
 * Guarantees: each computes what the C library computes (correctly rounded
 * where the C library is, which libdevice is not always: tests compare with
 * a tolerance where the GPU rounds differently). */
#include <math.h>
#include <stdint.h>

#pragma GCC visibility push(default)

/* One line per function: libdevice name, C expression of x (and y, z). */
#define FLOAT_UNARY(X)                                                                                    \
  X(expf, expf(x)) X(exp2f, exp2f(x)) X(exp10f, powf(10.0f, x)) X(expm1f, expm1f(x)) X(logf, logf(x))      \
  X(log2f, log2f(x)) X(log10f, log10f(x)) X(log1pf, log1pf(x)) X(sinf, sinf(x)) X(cosf, cosf(x))          \
  X(tanf, tanf(x)) X(asinf, asinf(x)) X(acosf, acosf(x)) X(atanf, atanf(x)) X(sinhf, sinhf(x))           \
  X(coshf, coshf(x)) X(tanhf, tanhf(x)) X(asinhf, asinhf(x)) X(acoshf, acoshf(x)) X(atanhf, atanhf(x))   \
  X(erff, erff(x)) X(erfcf, erfcf(x)) X(lgammaf, lgammaf(x)) X(tgammaf, tgammaf(x)) X(sqrtf, sqrtf(x))   \
  X(rsqrtf, 1.0f / sqrtf(x)) X(cbrtf, cbrtf(x)) X(rcbrtf, 1.0f / cbrtf(x)) X(floorf, floorf(x))          \
  X(ceilf, ceilf(x)) X(truncf, truncf(x)) X(roundf, roundf(x)) X(rintf, rintf(x))                        \
  X(nearbyintf, nearbyintf(x)) X(fabsf, fabsf(x)) X(saturatef, x >= 1.0f ? 1.0f : x > 0.0f ? x : 0.0f)   \
  X(fast_expf, expf(x)) X(fast_exp10f, powf(10.0f, x)) X(fast_logf, logf(x)) X(fast_log2f, log2f(x))     \
  X(fast_log10f, log10f(x)) X(fast_sinf, sinf(x)) X(fast_cosf, cosf(x)) X(fast_tanf, tanf(x))

#define DOUBLE_UNARY(X)                                                                                   \
  X(exp, exp(x)) X(exp2, exp2(x)) X(exp10, pow(10.0, x)) X(expm1, expm1(x)) X(log, log(x)) X(log2, log2(x)) \
  X(log10, log10(x)) X(log1p, log1p(x)) X(sin, sin(x)) X(cos, cos(x)) X(tan, tan(x)) X(asin, asin(x))     \
  X(acos, acos(x)) X(atan, atan(x)) X(sinh, sinh(x)) X(cosh, cosh(x)) X(tanh, tanh(x)) X(asinh, asinh(x)) \
  X(acosh, acosh(x)) X(atanh, atanh(x)) X(erf, erf(x)) X(erfc, erfc(x)) X(lgamma, lgamma(x))              \
  X(tgamma, tgamma(x)) X(sqrt, sqrt(x)) X(rsqrt, 1.0 / sqrt(x)) X(cbrt, cbrt(x)) X(rcbrt, 1.0 / cbrt(x))  \
  X(floor, floor(x)) X(ceil, ceil(x)) X(trunc, trunc(x)) X(round, round(x)) X(rint, rint(x))              \
  X(nearbyint, nearbyint(x)) X(fabs, fabs(x))

#define FLOAT_BINARY(X)                                                                                   \
  X(powf, powf(x, y)) X(fmodf, fmodf(x, y)) X(remainderf, remainderf(x, y)) X(atan2f, atan2f(x, y))       \
  X(hypotf, hypotf(x, y)) X(fminf, fminf(x, y)) X(fmaxf, fmaxf(x, y)) X(fdimf, fdimf(x, y))               \
  X(copysignf, copysignf(x, y)) X(nextafterf, nextafterf(x, y)) X(fast_powf, powf(x, y))                \
  X(fast_fdividef, x / y) X(fdividef, x / y)

#define DOUBLE_BINARY(X)                                                                                  \
  X(pow, pow(x, y)) X(fmod, fmod(x, y)) X(remainder, remainder(x, y)) X(atan2, atan2(x, y))              \
  X(hypot, hypot(x, y)) X(fmin, fmin(x, y)) X(fmax, fmax(x, y)) X(fdim, fdim(x, y))                      \
  X(copysign, copysign(x, y)) X(nextafter, nextafter(x, y))

#define DEFINE_FLOAT_UNARY(name, expr) float __nv_##name(float x) { return expr; }
#define DEFINE_DOUBLE_UNARY(name, expr) double __nv_##name(double x) { return expr; }
#define DEFINE_FLOAT_BINARY(name, expr) float __nv_##name(float x, float y) { return expr; }
#define DEFINE_DOUBLE_BINARY(name, expr) double __nv_##name(double x, double y) { return expr; }

/* Declared here only: nothing includes a header for them. */
#define DECLARE_FLOAT_UNARY(name, expr) float __nv_##name(float x);
#define DECLARE_DOUBLE_UNARY(name, expr) double __nv_##name(double x);
#define DECLARE_FLOAT_BINARY(name, expr) float __nv_##name(float x, float y);
#define DECLARE_DOUBLE_BINARY(name, expr) double __nv_##name(double x, double y);
FLOAT_UNARY(DECLARE_FLOAT_UNARY)
DOUBLE_UNARY(DECLARE_DOUBLE_UNARY)
FLOAT_BINARY(DECLARE_FLOAT_BINARY)
DOUBLE_BINARY(DECLARE_DOUBLE_BINARY)

FLOAT_UNARY(DEFINE_FLOAT_UNARY)
DOUBLE_UNARY(DEFINE_DOUBLE_UNARY)
FLOAT_BINARY(DEFINE_FLOAT_BINARY)
DOUBLE_BINARY(DEFINE_DOUBLE_BINARY)

float __nv_fmaf(float x, float y, float z);
double __nv_fma(double x, double y, double z);
int __nv_isnanf(float x);
int __nv_isinff(float x);
int __nv_finitef(float x);
int __nv_isnand(double x);
int __nv_isinfd(double x);
int __nv_isfinited(double x);
int __nv_signbitf(float x);
int __nv_signbitd(double x);
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

float __nv_fmaf(float x, float y, float z) { return fmaf(x, y, z); }
double __nv_fma(double x, double y, double z) { return fma(x, y, z); }
int __nv_isnanf(float x) { return isnan(x) != 0; }
int __nv_isinff(float x) { return isinf(x) != 0; }
int __nv_finitef(float x) { return isfinite(x) != 0; }
int __nv_isnand(double x) { return isnan(x) != 0; }
int __nv_isinfd(double x) { return isinf(x) != 0; }
int __nv_isfinited(double x) { return isfinite(x) != 0; }
int __nv_signbitf(float x) { return signbit(x) != 0; }
int __nv_signbitd(double x) { return signbit(x) != 0; }
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
