/* The libdevice functions the C library lacks (special_math.h). */
#define _DEFAULT_SOURCE /* jn and yn: X/Open, not C11 */
#include "special_math.h"

#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { MAX_STEPS = 64 }; /* Newton steps; the iterations below converge in fewer than 10 */

static const double SQRT_PI = 1.7724538509055160273, SQRT_2 = 1.4142135623730950488;
static const double PI_HI = 3.141592653589793116, PI_LO = 1.2246467991473532e-16; /* pi = PI_HI + PI_LO to 1e-32 */

/* exp(x^2) erfc(x) for x >= 25, Laplace's continued fraction: erfc(x) would be subnormal there. */
static double erfcx_fraction(double x) {
  double f = x;
  for (int k = 40; k > 0; k--) f = x + (k / 2.0) / f;
  return 1.0 / (SQRT_PI * f);
}

/* x^2 as s + e exactly, so exp(x^2) = exp(s)(1 + e) keeps the bits a rounded x^2 loses (up to 700 ulp near x = 26). */
double special_erfcx(double x) {
  if (isnan(x)) return x;
  if (x < -27) return INFINITY; /* 2 exp(x^2) overflows from -26.7 */
  if (x >= 25) return erfcx_fraction(x);
  double s = x * x, e = fma(x, x, -s);
  return exp(s) * (1 + e) * erfc(x);
}

/* erf(x) = p for |p| <= 0.5 (|x| < 0.48): Newton from the linear term, where erf is close to its tangent. */
static double erfinv_small(double p) {
  if (p == 0) return p; /* -0 too: a step would add +0 to it */
  double x = p * SQRT_PI / 2;
  for (int i = 0; i < MAX_STEPS; i++) {
    double dx = (p - erf(x)) * SQRT_PI / 2 * exp(x * x);
    x += dx;
    if (fabs(dx) <= fabs(x) * 1e-17) break;
  }
  return x;
}

/* erfc(x) = q for 0 < q < 0.5: Newton on log erfc(x) = log erfcx(x) - x^2, which is concave, so that from
 * x0 = sqrt(-log q) (too large, as erfc(x) < exp(-x^2)) the steps decrease to the root without overshooting;
 * in logs, a subnormal q loses no digits. */
static double erfcinv_small(double q) {
  double x = sqrt(-log(q)), target = log(q);
  for (int i = 0; i < MAX_STEPS; i++) {
    double r = special_erfcx(x), dx = (log(r) - x * x - target) * SQRT_PI * r / 2;
    x += dx;
    if (fabs(dx) <= x * 1e-17) break;
  }
  return x;
}

/* 1 - q and 2 - q below are exact (Sterbenz), so each branch hands the small quantity on without rounding. */
double special_erfcinv(double q) {
  if (!(q >= 0 && q <= 2)) return NAN;
  if (q == 0) return INFINITY;
  if (q == 2) return -INFINITY;
  if (q < 0.5) return erfcinv_small(q);
  if (q > 1.5) return -erfcinv_small(2 - q);
  return erfinv_small(1 - q);
}

double special_erfinv(double p) {
  if (!(fabs(p) <= 1)) return NAN;
  if (fabs(p) <= 0.5) return erfinv_small(p);
  return copysign(special_erfcinv(1 - fabs(p)), p);
}

double special_normcdfinv(double p) { return -SQRT_2 * special_erfcinv(2 * p); }

/* sin(pi r) and cos(pi r) for |r| <= 1/4, with pi r as a sum of two doubles (pi's error is 1e-16 relative). */
static double sinpi_reduced(double r) {
  double hi = PI_HI * r, lo = fma(PI_HI, r, -hi) + PI_LO * r;
  return sin(hi) + cos(hi) * lo;
}

static double cospi_reduced(double r) {
  double hi = PI_HI * r, lo = fma(PI_HI, r, -hi) + PI_LO * r;
  return cos(hi) - sin(hi) * lo;
}

/* r = remainder(x, 2) is exact and in [-1, 1]; the quarter it falls in picks the reduced function, its
 * argument (|r|, 0.5 - |r|, 1 - |r|) exact again.  Integers give zero of x's sign, as IEEE 754's sinPi
 * (remainder(3, 2) is -1). */
double special_sinpi(double x) {
  if (isinf(x)) return NAN;
  double r = remainder(x, 2), a = fabs(r), s;
  if (a <= 0.25) s = sinpi_reduced(a);
  else if (a <= 0.75) s = cospi_reduced(0.5 - a);
  else s = sinpi_reduced(1 - a);
  return s == 0 ? copysign(0, x) : copysign(s, r);
}

double special_cospi(double x) {
  if (isinf(x)) return NAN;
  double a = fabs(remainder(x, 2));
  if (a <= 0.25) return cospi_reduced(a);
  if (a <= 0.75) return sinpi_reduced(0.5 - a);
  return -cospi_reduced(1 - a);
}

/* sum (x^2/4)^k / (k! (k + m)!): positive terms, no cancellation, so the power series is accurate for every x;
 * it takes about x/2 terms, as many as the terms rise before they fall. */
static double bessel_series(double x, int m) {
  double q = x * x / 4, term = 1, sum = 1;
  for (int k = 1; term > sum * 1e-17; k++) {
    term *= q / ((double)k * (k + m));
    sum += term;
  }
  return sum;
}

double special_bessel_i0(double x) {
  if (isinf(x)) return INFINITY;
  return bessel_series(x, 0);
}

double special_bessel_i1(double x) {
  if (isinf(x)) return x;
  return x / 2 * bessel_series(x, 1);
}

double special_bessel_j(int n, double x) { return jn(n, x); }
double special_bessel_y(int n, double x) { return yn(n, x); }

/* round's result is integral, so any mode converts it exactly */
long long special_llround(double x) { return special_to_int(round(x), SPECIAL_RZ, 64, 1); }
long long special_llroundf(float x) { return special_llround(x); }

uint32_t special_brev32(uint32_t x) {
  uint32_t r = 0;
  for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}

uint64_t special_brev64(uint64_t x) {
  return (uint64_t)special_brev32((uint32_t)x) << 32 | special_brev32((uint32_t)(x >> 32));
}

uint32_t special_byte_perm(uint32_t x, uint32_t y, uint32_t selector) {
  uint64_t bytes = (uint64_t)y << 32 | x;
  uint32_t r = 0;
  for (int i = 0; i < 4; i++) r |= (uint32_t)(bytes >> 8 * ((selector >> 4 * i) & 7) & 0xff) << 8 * i;
  return r;
}

/* A function the compiler neither inlines nor analyses, so that it cannot move the arithmetic inside
 * across fesetround (GCC does not honour FENV_ACCESS); clang has no noipa. */
#ifdef __clang__
#define OPAQUE __attribute__((noinline, optnone))
#else
#define OPAQUE __attribute__((noipa))
#endif

/* The operation in the current rounding mode (OPAQUE: fesetround's order kept). */
static OPAQUE double operate(int op, double x, double y, double z) {
  switch (op) {
  case SPECIAL_ADD: return x + y;
  case SPECIAL_SUB: return x - y;
  case SPECIAL_MUL: return x * y;
  case SPECIAL_DIV: return x / y;
  case SPECIAL_FMA: return fma(x, y, z);
  case SPECIAL_RCP: return 1 / x;
  default: return sqrt(x);
  }
}

/* fp32's own operations: computed in double and narrowed, a result would be rounded twice. */
static OPAQUE float operatef(int op, float x, float y, float z) {
  switch (op) {
  case SPECIAL_ADD: return x + y;
  case SPECIAL_SUB: return x - y;
  case SPECIAL_MUL: return x * y;
  case SPECIAL_DIV: return x / y;
  case SPECIAL_FMA: return fmaf(x, y, z);
  case SPECIAL_RCP: return 1 / x;
  default: return sqrtf(x);
  }
}

static const int fe_modes[] = {[SPECIAL_RZ] = FE_TOWARDZERO, [SPECIAL_RD] = FE_DOWNWARD, [SPECIAL_RU] = FE_UPWARD,
                                [SPECIAL_RN] = FE_TONEAREST};

/* The current rounding mode, after setting mode's. */
static int enter_mode(int mode) {
  int old = fegetround();
  fesetround(fe_modes[mode]);
  return old;
}

double special_rounded(int op, int mode, double x, double y, double z) {
  int old = enter_mode(mode);
  double r = operate(op, x, y, z);
  return fesetround(old), r;
}

float special_roundedf(int op, int mode, float x, float y, float z) {
  int old = enter_mode(mode);
  float r = operatef(op, x, y, z);
  return fesetround(old), r;
}

/* The bits of one type as another's. */
#define BITCAST(name, From, To)                                                                              \
  To name(From x) {                                                                                          \
    To r;                                                                                                    \
    memcpy(&r, &x, sizeof r);                                                                                \
    return r;                                                                                                \
  }
BITCAST(special_float_as_int, float, int32_t)
BITCAST(special_int_as_float, int32_t, float)
BITCAST(special_double_as_ll, double, int64_t)
BITCAST(special_ll_as_double, int64_t, double)
#undef BITCAST

static double high_word(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  bits &= ~(uint64_t)0xffffffff;
  memcpy(&x, &bits, sizeof bits);
  return x;
}

double special_rcp64h(double x) { return high_word(1.0 / high_word(x)); }



static double round_integral(double x, int mode) {
  switch (mode) {
  case SPECIAL_RZ: return trunc(x);
  case SPECIAL_RD: return floor(x);
  case SPECIAL_RU: return ceil(x);
  default: return rint(x);
  }
}

int64_t special_to_int(double x, int mode, int bits, int is_signed) {
  if (isnan(x)) return bits == 64 ? INT64_MIN : 0; /* the GPU's: 0x8000000000000000 signed or not */
  double r = round_integral(x, mode), end = ldexp(1, is_signed ? bits - 1 : bits); /* the first value too large */
  if (r >= end) return is_signed ? (int64_t)((UINT64_C(1) << (bits - 1)) - 1) : (int64_t)(UINT64_MAX >> (64 - bits));
  if (r < (is_signed ? -end : 0)) return is_signed ? (int64_t)-end : 0;
  return r >= 0x1p63 ? (int64_t)(uint64_t)r : (int64_t)r;
}

/* The conversions, as operate above: under the mode, in a function the compiler cannot see into. */
static OPAQUE float narrow_now(double x) { return (float)x; }
static OPAQUE float int_to_float_now(int64_t v, int is_unsigned) {
  return is_unsigned ? (float)(uint64_t)v : (float)v;
}
static OPAQUE double int_to_double_now(int64_t v, int is_unsigned) {
  return is_unsigned ? (double)(uint64_t)v : (double)v;
}

float special_to_float(double x, int mode) {
  int old = enter_mode(mode);
  float r = narrow_now(x);
  return fesetround(old), r;
}

float special_int_to_float(int64_t v, int is_unsigned, int mode) {
  int old = enter_mode(mode);
  float r = int_to_float_now(v, is_unsigned);
  return fesetround(old), r;
}

double special_int_to_double(int64_t v, int is_unsigned, int mode) {
  int old = enter_mode(mode);
  double r = int_to_double_now(v, is_unsigned);
  return fesetround(old), r;
}
