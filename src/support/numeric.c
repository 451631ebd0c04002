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
  if (t == DT_FP32) return (double)(float)v; /* the hardware conversion rounds once, to nearest even */
  const Format *fmt = format_of(t);
  if (!fmt || t == DT_FP64 || isnan(v)) return v;
  return decode(encode_double(v, *fmt), *fmt);
}

double round_toward_zero(double v, DType t) {
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

