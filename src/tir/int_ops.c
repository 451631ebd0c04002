/* Integer ops of tile IR on constants, with the GPU's semantics: the fold
 * pass and the interpreter compute the same values from one definition. */
#include "tir.h"
#include "../support/numeric.h"

static int64_t int_min(DType t) {
  return dtype_kind(t) == DK_SINT ? wrap_int((int64_t)(UINT64_C(1) << (dtype_bits(t) - 1)), t) : 0;
}

/* a >> n for signed a, arithmetic, without relying on the implementation's >>. */
static int64_t arithmetic_shift(int64_t a, int64_t n) { return a >= 0 ? a >> n : ~(~a >> n); }

static int int_division(int code, DType t, int64_t a, int64_t b, int64_t *r) {
  if (b == 0 || (dtype_kind(t) == DK_SINT && b == -1 && a == int_min(t))) return 0;
  if (dtype_kind(t) == DK_SINT) *r = code == TIR_DIV ? a / b : a % b;
  else *r = (int64_t)(code == TIR_DIV ? (uint64_t)a / (uint64_t)b : (uint64_t)a % (uint64_t)b);
  return 1;
}

/* The high 64 bits of the 128-bit product, from 32-bit halves (no 128-bit
 * type in C11). */
static uint64_t mul_high64(uint64_t a, uint64_t b) {
  uint64_t a_lo = (uint32_t)a, a_hi = a >> 32, b_lo = (uint32_t)b, b_hi = b >> 32;
  uint64_t low = a_lo * b_lo, cross1 = a_hi * b_lo, cross2 = a_lo * b_hi;
  uint64_t middle = (low >> 32) + (uint32_t)cross1 + (uint32_t)cross2;
  return a_hi * b_hi + (cross1 >> 32) + (cross2 >> 32) + (middle >> 32);
}

/* Integer ops on canonical values; the result is wrapped by the caller. */
int tir_int_binary(int code, DType t, int64_t a, int64_t b, int64_t *r) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int bits = dtype_bits(t);
  switch (code) {
  case TIR_ADD: *r = (int64_t)(ua + ub); return 1;
  case TIR_SUB: *r = (int64_t)(ua - ub); return 1;
  case TIR_MUL: *r = (int64_t)(ua * ub); return 1;
  case TIR_DIV:
  case TIR_REM: return int_division(code, t, a, b, r);
  case TIR_AND: *r = a & b; return 1;
  case TIR_OR: *r = a | b; return 1;
  case TIR_XOR: *r = a ^ b; return 1;
  case TIR_SHL:
  case TIR_SHR:
    if (b < 0 || b >= bits) return 0;
    if (code == TIR_SHL) *r = (int64_t)(ua << b);
    else *r = dtype_kind(t) == DK_SINT ? arithmetic_shift(a, b) : (int64_t)(ua >> b);
    return 1;
  case TIR_MAXIMUM: *r = int_less(t, a, b) ? b : a; return 1;
  case TIR_MINIMUM: *r = int_less(t, b, a) ? b : a; return 1;
  case TIR_UMULHI: /* the high half of the unsigned product, 32 or 64 bits */
    if (bits == 32) *r = (int64_t)((uint64_t)(uint32_t)a * (uint32_t)b >> 32);
    else if (bits == 64) *r = (int64_t)mul_high64(ua, ub);
    else return 0;
    return 1;
  default: return 0;
  }
}

int tir_int_unary(int code, DType t, int64_t a, int64_t *r) {
  switch (code) {
  case TIR_NEG: *r = (int64_t)(UINT64_C(0) - (uint64_t)a); return 1;
  case TIR_NOT: *r = ~a; return 1;
  case TIR_ABS: *r = dtype_kind(t) == DK_SINT && a < 0 ? (int64_t)(UINT64_C(0) - (uint64_t)a) : a; return 1;
  default: return 0;
  }
}
