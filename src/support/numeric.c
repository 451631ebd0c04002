/* Numeric conversions (see numeric.h). */
#include "numeric.h"

#include <math.h>
#include <string.h>

static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float float_of(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) return float_of(sign | 0x7f800000u | (mant << 13));  /* inf, nan */
  if (exp == 0) {                                                        /* zero, subnormal */
    float v = ldexpf((float)mant, -24);
    return sign ? -v : v;
  }
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t float_to_half(float f) {
  uint32_t u = bits_of(f), sign = (u >> 16) & 0x8000;
  float a = fabsf(f);
  if (isnan(f)) return (uint16_t)(sign | 0x7e00);
  if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00);                  /* rounds to inf */
  if (a < 6.103515625e-05f) {                                            /* subnormal half */
    float scaled = a * 16777216.0f;                                      /* units of 2^-24 */
    return (uint16_t)(sign | (uint32_t)nearbyintf(scaled));              /* default mode: ties to even */
  }
  uint32_t exp = ((u >> 23) & 0xff) - 112, mant = u & 0x7fffff;
  uint32_t half = (exp << 10) | (mant >> 13), rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;           /* carries into the exponent correctly */
  return (uint16_t)(sign | half);
}

float bf16_to_float(uint16_t b) { return float_of((uint32_t)b << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t u = bits_of(f);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  uint32_t rest = u & 0xffff, top = u >> 16;
  if (rest > 0x8000 || (rest == 0x8000 && (top & 1))) top++;
  return (uint16_t)top;
}

float round_to_tf32(float f) {
  uint32_t u = bits_of(f);
  if (isnan(f) || isinf(f)) return f;
  u += 0x1000;                                                           /* ties away from zero */
  return float_of(u & 0xffffe000u);
}

int64_t wrap_integer(int64_t v, int bits, int is_signed) {
  if (bits >= 64) return v;
  if (bits == 1) return v & 1;
  uint64_t mask = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & mask;
  if (is_signed && (u >> (bits - 1))) u |= ~mask;
  return (int64_t)u;
}
