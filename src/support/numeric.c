/* Scalar semantics of the element types: integer wrapping and correctly
 * rounded float conversions.  Every conversion goes through one encoder
 * that rounds an exact value m * 2^e once, so fp64 -> fp16 is not the
 * double-rounded fp64 -> fp32 -> fp16. */
#include "numeric.h"

#include <math.h>
#include <string.h>

typedef struct Format {
  int exp_bits, man_bits; /* stored mantissa bits, without the hidden one */
} Format;

static const Format FP16 = {5, 10}, BF16 = {8, 7}, FP32 = {8, 23}, FP64 = {11, 52};

int64_t wrap_int(int64_t v, DType t) {
  int bits = dtype_bits(t);
  if (bits >= 64) return v;
  uint64_t mask = (UINT64_C(1) << bits) - 1, u = (uint64_t)v & mask;
  if (dtype_kind(t) == DK_SINT && (u >> (bits - 1) & 1)) u |= ~mask;
  return (int64_t)u;
}

static int bit_length(uint64_t m) {
  int n = 0;
  for (; m; m >>= 1) n++;
  return n;
}

/* m / 2^shift rounded to nearest, ties to even. */
static uint64_t round_shift(uint64_t m, int shift) {
  if (shift <= 0) return m << -shift;
  if (shift > 64) return 0;                         /* below half of one */
  if (shift == 64) return m > UINT64_C(1) << 63;    /* exactly a half is a tie to 0 */
  uint64_t q = m >> shift, rem = m & ((UINT64_C(1) << shift) - 1), half = UINT64_C(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1))) q++;
  return q;
}

static uint64_t infinity_bits(Format fmt) { return ((UINT64_C(1) << fmt.exp_bits) - 1) << fmt.man_bits; }

/* The bits of (-1)^sign * m * 2^e in fmt.  The mantissa is added to the
 * exponent field, so a carry out of the mantissa moves to the next binade
 * (or from subnormal to normal, or to infinity) by itself. */
static uint64_t encode(int sign, uint64_t m, int e, Format fmt) {
  uint64_t sign_bit = (uint64_t)sign << (fmt.exp_bits + fmt.man_bits);
  if (m == 0) return sign_bit;
  int bias = (1 << (fmt.exp_bits - 1)) - 1, emin = 1 - bias;
  int top = bit_length(m) - 1 + e;                  /* exponent of the leading bit */
  int exp = top > emin ? top : emin;                /* subnormals share emin */
  uint64_t q = round_shift(m, exp - fmt.man_bits - e);
  if (exp + bias - 1 >= (1 << fmt.exp_bits) - 1) return sign_bit | infinity_bits(fmt);
  uint64_t bits = ((uint64_t)(exp + bias - 1) << fmt.man_bits) + q;
  if (bits >= infinity_bits(fmt)) bits = infinity_bits(fmt);
  return sign_bit | bits;
}

static uint64_t encode_double(double v, Format fmt) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  int sign = (int)(bits >> 63), exp = (int)(bits >> 52 & 0x7ff);
  uint64_t man = bits & ((UINT64_C(1) << 52) - 1);
  uint64_t sign_bit = (uint64_t)sign << (fmt.exp_bits + fmt.man_bits);
  if (exp == 0x7ff && man) /* quiet NaN keeping the top of the payload */
    return sign_bit | infinity_bits(fmt) | UINT64_C(1) << (fmt.man_bits - 1) | man >> (52 - fmt.man_bits);
  if (exp == 0x7ff) return sign_bit | infinity_bits(fmt);
  if (exp == 0) return encode(sign, man, -1074, fmt);
  return encode(sign, man | UINT64_C(1) << 52, exp - 1075, fmt);
}

static double decode(uint64_t bits, Format fmt) {
  int bias = (1 << (fmt.exp_bits - 1)) - 1, all_ones = (1 << fmt.exp_bits) - 1;
  uint64_t man = bits & ((UINT64_C(1) << fmt.man_bits) - 1);
  int exp = (int)(bits >> fmt.man_bits) & all_ones;
  int sign = (int)(bits >> (fmt.exp_bits + fmt.man_bits)) & 1;
  double v;
  if (exp == all_ones) v = man ? NAN : INFINITY;
  else if (exp == 0) v = ldexp((double)man, 1 - bias - fmt.man_bits);
  else v = ldexp((double)(man | UINT64_C(1) << fmt.man_bits), exp - bias - fmt.man_bits);
  return sign ? -v : v;
}

static double bits_to_double(uint64_t bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* ---- fp8 -------------------------------------------------------------------
 * Neither format is quite IEEE: e4m3fn (float8e4nv) has no infinities and
 * one NaN per sign (S.1111.111), which leaves room for exponent 15 and a
 * largest value of 448; e5m2 (float8e5) has IEEE's infinities and NaNs.
 * Conversions to both round to nearest even and saturate as PTX's
 * cvt.rn.satfinite: a magnitude beyond the largest finite one, infinity
 * included, becomes that largest one with its sign, and NaN becomes 0x7f. */

static const Format E4M3 = {4, 3}, E5M2 = {5, 2};

enum { FP8_NAN = 0x7f };

static Format fp8_format(DType t) { return t == DT_FP8E4NV ? E4M3 : E5M2; }
static uint8_t fp8_max_bits(DType t) { return t == DT_FP8E4NV ? 0x7e : 0x7b; } /* 448, 57344 */

/* The largest finite value as a double: (2 - 2^-m_max) * 2^e_max. */
static double fp8_max_value(DType t) { return t == DT_FP8E4NV ? 448.0 : 57344.0; }

/* The code of a magnitude below the largest finite value.  Subnormals and
 * normals share one formula: the code is ((e + bias - 1) << M) + r, where
 * r is the value in units of 2^(e - M) rounded to even, and a carry out of r
 * moves to the next binade by itself. */
static uint8_t fp8_code_of_magnitude(double a, Format fmt) {
  int bias = (1 << (fmt.exp_bits - 1)) - 1, emin = 1 - bias, e;
  if (a == 0) return 0;
  frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): the leading bit is 2^(e - 1) */
  e = e - 1 > emin ? e - 1 : emin;
  double q = ldexp(a, fmt.man_bits - e), r = floor(q), rest = q - r; /* q < 2^(M+1): exact */
  if (rest > 0.5 || (rest == 0.5 && fmod(r, 2) == 1)) r += 1;
  return (uint8_t)(((e + bias - 1) << fmt.man_bits) + (int)r);
}

/* float8e4b15, Triton's pre-Hopper fp8: e4m3 with fp16's bias 15, so that its bits are the top of an
 * fp16's and both of Triton's conversions (convert_fp8e4b15_to_float16 and back, inline PTX) are bit
 * moves.  Every code is a number (0x7f is 1.875).  To it goes through fp16 rounded toward zero, then
 * the magnitude saturates at 1.75 (0x7e; NaN and infinity too, keeping their sign) and rounds half
 * away from zero; the fp16 step changes nothing, as each halfway point is an fp16 value. */
enum { E4B15_MAX = 0x7e, E4B15_MIN_EXP = -14 };

static uint8_t e4b15_from_double(double v) {
  float f = (float)v;
  uint8_t sign = signbit(f) ? 0x80 : 0;
  double a = fabs(f);
  if (isnan(f) || a >= 1.75) return sign | E4B15_MAX;
  int e = E4B15_MIN_EXP;
  if (a > 0) frexp(a, &e); /* a = x * 2^e, x in [0.5, 1): the leading bit is 2^(e - 1) */
  e = e - 1 > E4B15_MIN_EXP ? e - 1 : E4B15_MIN_EXP;
  double r = floor(ldexp(a, 3 - e) + 0.5); /* in units of 2^(e - 3), the leading 8 included */
  return sign | (uint8_t)(((e - E4B15_MIN_EXP) << 3) + (int)r);
}

static double e4b15_to_double(uint8_t bits) {
  int exp = bits >> 3 & 0xf, man = bits & 7;
  double v = exp ? ldexp(8 + man, exp - 15 - 3) : ldexp(man, E4B15_MIN_EXP - 3);
  return bits & 0x80 ? -v : v;
}

uint8_t fp8_from_double(double v, DType t) {
  if (t == DT_FP8E4B15) return e4b15_from_double(v);
  if (isnan(v)) return FP8_NAN;
  v = (float)v; /* through fp32 as the generated code goes, so fp64 rounds as there */
  uint8_t sign = signbit(v) ? 0x80 : 0;
  double a = fabs(v);
  if (a >= fp8_max_value(t)) return sign | fp8_max_bits(t);
  return sign | fp8_code_of_magnitude(a, fp8_format(t));
}

static int fp8_is_nan(uint8_t bits, DType t) {
  if (t == DT_FP8E4B15) return 0;
  return t == DT_FP8E4NV ? (bits & 0x7f) == 0x7f : (bits & 0x7f) > 0x7c;
}

/* A NaN code as a quiet NaN that carries it (sign and low bits), so that
 * the bits of a loaded NaN are the bits stored back (fp8_bits_of_value). */
static double fp8_nan(uint8_t bits) {
  uint64_t b = (uint64_t)(bits >> 7) << 63 | UINT64_C(0x7ff8000000000000) | (bits & 0x7f);
  return bits_to_double(b);
}

/* The code of a value of the fp8 type t: a NaN's own code where it carries
 * one (fp8_nan), else the rounding conversion, exact for such a value but
 * for e5m2's infinities, which it would saturate. */
static uint8_t fp8_bits_of_value(double v, DType t) {
  if (t == DT_FP8E4B15) return fabs(v) == 1.875 ? (signbit(v) ? 0xff : 0x7f) : e4b15_from_double(v); /* past the saturation */
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  uint8_t code = (uint8_t)((b >> 63) << 7 | (b & 0x7f));
  int carries_code = (b & UINT64_C(0x7fffffffffffff80)) == UINT64_C(0x7ff8000000000000) && fp8_is_nan(code, t);
  if (isnan(v)) return carries_code ? code : FP8_NAN;
  if (isinf(v) && t == DT_FP8E5) return v < 0 ? 0xfc : 0x7c;
  return fp8_from_double(v, t);
}

/* e5m2 decodes as IEEE; e4m3's exponent 15 holds numbers (only S.1111.111
 * is NaN), which IEEE's decode would take for infinities, so it is by hand. */
double fp8_to_double(uint8_t bits, DType t) {
  if (t == DT_FP8E4B15) return e4b15_to_double(bits);
  if (fp8_is_nan(bits, t)) return fp8_nan(bits);
  if (t == DT_FP8E5) return decode(bits, E5M2);
  int exp = bits >> 3 & 0xf, man = bits & 7;
  double v = exp ? ldexp(8 + man, exp - 7 - 3) : ldexp(man, -6 - 3);
  return bits & 0x80 ? -v : v;
}

static const Format *format_of(DType t) {
  switch (t) {
  case DT_FP16: return &FP16;
  case DT_BF16: return &BF16;
  case DT_FP32: return &FP32;
  case DT_FP64: return &FP64;
  default: return NULL;
  }
}

double round_to_dtype(double v, DType t) {
  if (dtype_is_fp8(t)) return fp8_to_double(fp8_from_double(v, t), t);
  if (t == DT_FP32) return (double)(float)v; /* the hardware conversion rounds once, to nearest even */
  const Format *fmt = format_of(t);
  if (!fmt || t == DT_FP64 || isnan(v)) return v;
  return decode(encode_double(v, *fmt), *fmt);
}

double round_toward_zero(double v, DType t) {
  if (dtype_is_fp8(t)) return round_to_dtype(v, t); /* sema allows only rtne into fp8 */
  const Format *fmt = format_of(t);
  double r = round_to_dtype(v, t);
  if (!fmt || t == DT_FP64 || isnan(v) || isinf(v) || fabs(r) <= fabs(v)) return r;
  return decode(encode_double(r, *fmt) - 1, *fmt); /* one step toward zero: the magnitude's bits minus one */
}

float round_to_tf32(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (isnan(f) || isinf(f)) return f;
  u = (u + 0x1000u) & 0xffffe000u; /* ties away from zero */
  memcpy(&f, &u, sizeof f);
  return f;
}

uint16_t fp16_from_double(double v) { return (uint16_t)encode_double(v, FP16); }
uint16_t bf16_from_double(double v) { return (uint16_t)encode_double(v, BF16); }
double fp16_to_double(uint16_t bits) { return decode(bits, FP16); }
double bf16_to_double(uint16_t bits) { return decode(bits, BF16); }

double int_to_float(int64_t v, DType from, DType to) {
  if (dtype_is_fp8(to)) return round_to_dtype(int_to_float(v, from, DT_FP32), to); /* via fp32, as the GPU */
  const Format *fmt = format_of(to);
  if (!fmt) return (double)v;
  int negative = dtype_kind(from) == DK_SINT && v < 0;
  uint64_t magnitude = negative ? UINT64_C(0) - (uint64_t)v : (uint64_t)v;
  uint64_t bits = encode(negative, magnitude, 0, *fmt);
  return to == DT_FP64 ? bits_to_double(bits) : decode(bits, *fmt);
}

int float_to_int(double v, DType to, int64_t *out) {
  int bits = dtype_bits(to);
  if (isnan(v) || bits < 8) return 0;
  double t = trunc(v);
  if (dtype_kind(to) == DK_SINT) {
    if (t < -ldexp(1, bits - 1) || t >= ldexp(1, bits - 1)) return 0;
    *out = (int64_t)t;
  } else {
    if (t < 0 || t >= ldexp(1, bits)) return 0;
    *out = (int64_t)(uint64_t)t;
  }
  return 1;
}

uint64_t float_to_bits(double v, DType t) {
  if (dtype_is_fp8(t)) return fp8_bits_of_value(v, t);
  if (t == DT_FP16) return fp16_from_double(v);
  if (t == DT_BF16) return bf16_from_double(v);
  if (t == DT_FP32) {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
  }
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

double float_from_bits(uint64_t bits, DType t) {
  if (dtype_is_fp8(t)) return fp8_to_double((uint8_t)bits, t);
  if (t == DT_FP16) return fp16_to_double((uint16_t)bits);
  if (t == DT_BF16) return bf16_to_double((uint16_t)bits);
  if (t == DT_FP32) {
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
  }
  return bits_to_double(bits);
}

/* ---- integer operations ---------------------------------------------------- */

int int_less(DType t, int64_t a, int64_t b) {
  return dtype_kind(t) == DK_SINT ? a < b : (uint64_t)a < (uint64_t)b;
}

