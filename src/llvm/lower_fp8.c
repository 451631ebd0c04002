/* Conversions between fp8 (float8e4nv = e4m3fn, float8e5 = e5m2, float8e4b15; a byte in
 * registers and memory) and fp32, with the semantics of src/support/numeric.c
 * (fp8_from_double, fp8_to_double): to fp8 rounds to nearest even and
 * saturates as cvt.rn.satfinite (beyond the largest finite value, infinity
 * included, gives it with the sign; NaN gives 0x7f); from fp8 is exact, a
 * NaN becoming fp32's positive quiet NaN 0x7fc00000 (as sm_90's cvt, which drops the sign).  sm_90 uses its cvt
 * (Target.fp8_convert); elsewhere (sm_80, sm_89, the simulator) the bits are
 * computed here, a few integer operations. */
#include "lower.h"

#include "../support/numeric.h"

#include <math.h>

/* What the bit manipulation needs of a format. */
typedef struct Fp8Format {
  int man_bits, bias;
  uint32_t max_code;   /* the largest finite magnitude's code: 448 (0x7e), 57344 (0x7b) */
  uint32_t first_special; /* magnitudes from this code on are not numbers: NaN (0x7f), inf and NaN (0x7c..) */
  int has_inf;         /* first_special is an infinity */
} Fp8Format;

static Fp8Format fp8_format(DType t) {
  if (t == DT_FP8E4NV) return (Fp8Format){3, 7, 0x7e, 0x7f, 0};
  if (t == DT_FP8E4B15) return (Fp8Format){3, 15, 0x7e, 0x80, 0}; /* no special codes */
  return (Fp8Format){2, 15, 0x7b, 0x7c, 1};
}

static LLVMValueRef u32(Lower *L, uint32_t v) { return LLVMConstInt(L->i32, v, 0); }

static LLVMValueRef f32_const(Lower *L, double v) { return LLVMConstReal(L->f32, v); }

/* A magnitude at least the smallest normal fp8 value: the exponent is
 * rebiased and the mantissa shifted right with rounding to nearest even
 * (adding half minus one, plus the lowest kept bit); a carry moves to the
 * next binade by itself, and anything past the largest code saturates. */
static LLVMValueRef normal_code(Lower *L, LLVMValueRef magnitude, Fp8Format fmt) {
  LLVMBuilderRef B = L->b;
  int shift = 23 - fmt.man_bits;
  LLVMValueRef x = LLVMBuildSub(B, magnitude, u32(L, (uint32_t)(127 - fmt.bias) << 23), "");
  LLVMValueRef odd = LLVMBuildAnd(B, LLVMBuildLShr(B, x, u32(L, (uint32_t)shift), ""), u32(L, 1), "");
  LLVMValueRef up = LLVMBuildAdd(B, u32(L, (1u << (shift - 1)) - 1), odd, "");
  LLVMValueRef code = LLVMBuildLShr(B, LLVMBuildAdd(B, x, up, ""), u32(L, (uint32_t)shift), "");
  LLVMValueRef small = LLVMBuildICmp(B, LLVMIntULT, code, u32(L, fmt.max_code), "");
  return LLVMBuildSelect(B, small, code, u32(L, fmt.max_code), "");
}

/* A magnitude below the smallest normal fp8 value: in units of the
 * smallest subnormal (an exact scaling), rounded to even; 2^M is the
 * smallest normal's code. */
static LLVMValueRef subnormal_code(Lower *L, LLVMValueRef magnitude, Fp8Format fmt) {
  LLVMBuilderRef B = L->b;
  LLVMValueRef f = LLVMBuildBitCast(B, magnitude, L->f32, "");
  LLVMValueRef units = LLVMBuildFMul(B, f, f32_const(L, ldexp(1, fmt.bias - 1 + fmt.man_bits)), "");
  LLVMValueRef even = lower_intrinsic(L, "llvm.roundeven", &L->f32, 1, &units, 1);
  return LLVMBuildFPToUI(B, even, L->i32, "");
}

/* float8e4b15 (numeric.c's e4b15_from_double): magnitudes from 1.75 on (NaN, infinity) give 0x7e;
 * normal ones keep 3 mantissa bits rounded half up, the exponent rebiased by a subtraction;
 * smaller ones are units of 2^-17, rounded half up. */
static LLVMValueRef e4b15_from_f32_bits(Lower *L, LLVMValueRef f) {
  LLVMBuilderRef B = L->b;
  LLVMValueRef bits = LLVMBuildBitCast(B, f, L->i32, "");
  LLVMValueRef sign = LLVMBuildAnd(B, LLVMBuildLShr(B, bits, u32(L, 24), ""), u32(L, 0x80), "");
  LLVMValueRef magnitude = LLVMBuildAnd(B, bits, u32(L, 0x7fffffff), "");
  LLVMValueRef rebiased = LLVMBuildSub(B, magnitude, u32(L, 112u << 23), "");
  LLVMValueRef normal = LLVMBuildLShr(B, LLVMBuildAdd(B, rebiased, u32(L, 1u << 19), ""), u32(L, 20), "");
  LLVMValueRef units = LLVMBuildFMul(B, LLVMBuildBitCast(B, magnitude, L->f32, ""), f32_const(L, ldexp(1, 17)), "");
  LLVMValueRef half_up = LLVMBuildFAdd(B, units, f32_const(L, 0.5), "");
  LLVMValueRef rounded = lower_intrinsic(L, "llvm.floor", &L->f32, 1, &half_up, 1);
  LLVMValueRef subnormal = LLVMBuildFPToUI(B, rounded, L->i32, "");
  LLVMValueRef is_subnormal = LLVMBuildICmp(B, LLVMIntULT, magnitude, u32(L, 113u << 23), "");
  LLVMValueRef code = LLVMBuildSelect(B, is_subnormal, subnormal, normal, "");
  LLVMValueRef saturates = LLVMBuildICmp(B, LLVMIntUGE, magnitude, u32(L, 0x3fe00000), ""); /* 1.75 */
  code = LLVMBuildSelect(B, saturates, u32(L, 0x7e), code, "");
  return LLVMBuildTrunc(B, LLVMBuildOr(B, code, sign, ""), L->i8, "");
}

static LLVMValueRef fp8_from_f32_bits(Lower *L, LLVMValueRef f, DType t) {
  if (t == DT_FP8E4B15) return e4b15_from_f32_bits(L, f);
  LLVMBuilderRef B = L->b;
  Fp8Format fmt = fp8_format(t);
  LLVMValueRef bits = LLVMBuildBitCast(B, f, L->i32, "");
  LLVMValueRef sign = LLVMBuildAnd(B, LLVMBuildLShr(B, bits, u32(L, 24), ""), u32(L, 0x80), "");
  LLVMValueRef magnitude = LLVMBuildAnd(B, bits, u32(L, 0x7fffffff), "");
  LLVMValueRef is_nan = LLVMBuildICmp(B, LLVMIntUGT, magnitude, u32(L, 0x7f800000), "");
  LLVMValueRef is_subnormal = LLVMBuildICmp(B, LLVMIntULT, magnitude, u32(L, (uint32_t)(128 - fmt.bias) << 23), "");
  /* built one after the other: as arguments of one call their order would be the host compiler's */
  LLVMValueRef subnormal = subnormal_code(L, magnitude, fmt);
  LLVMValueRef normal = normal_code(L, magnitude, fmt);
  LLVMValueRef code = LLVMBuildSelect(B, is_subnormal, subnormal, normal, "");
  code = LLVMBuildSelect(B, is_nan, u32(L, 0x7f), LLVMBuildOr(B, code, sign, ""), "");
  return LLVMBuildTrunc(B, code, L->i8, "");
}

/* Normal codes move their exponent and mantissa into fp32's fields (the
 * rebias is an addition); subnormals are their mantissa times the smallest
 * subnormal, exact in fp32. */
static LLVMValueRef fp8_to_f32_bits(Lower *L, LLVMValueRef byte, DType t) {
  LLVMBuilderRef B = L->b;
  Fp8Format fmt = fp8_format(t);
  LLVMValueRef b = LLVMBuildZExt(B, byte, L->i32, "");
  LLVMValueRef sign = LLVMBuildShl(B, LLVMBuildAnd(B, b, u32(L, 0x80), ""), u32(L, 24), "");
  LLVMValueRef magnitude = LLVMBuildAnd(B, b, u32(L, 0x7f), "");
  LLVMValueRef normal = LLVMBuildAdd(B, LLVMBuildShl(B, magnitude, u32(L, (uint32_t)(23 - fmt.man_bits)), ""),
                                     u32(L, (uint32_t)(127 - fmt.bias) << 23), "");
  LLVMValueRef scaled = LLVMBuildFMul(B, LLVMBuildUIToFP(B, magnitude, L->f32, ""),
                                      f32_const(L, ldexp(1, 1 - fmt.bias - fmt.man_bits)), "");
  LLVMValueRef is_subnormal = LLVMBuildICmp(B, LLVMIntULT, magnitude, u32(L, 1u << fmt.man_bits), "");
  LLVMValueRef value = LLVMBuildSelect(B, is_subnormal, LLVMBuildBitCast(B, scaled, L->i32, ""), normal, "");
  value = LLVMBuildOr(B, value, sign, "");
  LLVMValueRef special = u32(L, 0x7fc00000);
  if (fmt.has_inf) {
    LLVMValueRef is_inf = LLVMBuildICmp(B, LLVMIntEQ, magnitude, u32(L, fmt.first_special), "");
    special = LLVMBuildSelect(B, is_inf, LLVMBuildOr(B, sign, u32(L, 0x7f800000), ""), special, "");
  }
  LLVMValueRef is_special = LLVMBuildICmp(B, LLVMIntUGE, magnitude, u32(L, fmt.first_special), "");
  return LLVMBuildBitCast(B, LLVMBuildSelect(B, is_special, special, value, ""), L->f32, "");
}

LLVMValueRef lower_fp8_from_f32(Lower *L, LLVMValueRef f, DType t) {
  LLVMValueRef r = L->target->fp8_convert ? L->target->fp8_convert(L, f, t, 1) : NULL;
  return r ? r : fp8_from_f32_bits(L, f, t);
}

int lower_fp8_pair_from_f32(Lower *L, LLVMValueRef lo, LLVMValueRef hi, DType t, LLVMValueRef *out) {
  LLVMValueRef pair = L->target->fp8_pair ? L->target->fp8_pair(L, lo, hi, t) : NULL;
  if (!pair) return 0;
  out[0] = LLVMBuildTrunc(L->b, pair, L->i8, "");
  out[1] = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, pair, LLVMConstInt(L->i16, 8, 0), ""), L->i8, "");
  return 1;
}

LLVMValueRef lower_fp8_to_f32(Lower *L, LLVMValueRef byte, DType t) {
  LLVMValueRef r = L->target->fp8_convert ? L->target->fp8_convert(L, byte, t, 0) : NULL;
  return r ? r : fp8_to_f32_bits(L, byte, t);
}

LLVMValueRef lower_fp8_constant(Lower *L, double v, DType t) { return LLVMConstInt(L->i8, fp8_from_double(v, t), 0); }
