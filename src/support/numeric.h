/* Scalar arithmetic with the run-time semantics of the element types:
 * integers wrap to their bit width, floats round to nearest even in their
 * format, from exact double or int64 inputs with a single rounding.  Constant
 * folding uses them so that a folded constant is the value the generated
 * code would have computed. */
#ifndef TILE_TIR_NUMERIC_H
#define TILE_TIR_NUMERIC_H

#include "dtypes.h"

#include <stdint.h>

/* v truncated to t's width, then sign-extended (signed types) or
 * zero-extended (unsigned, i1); u64 values keep their bits in the int64_t.
 * The canonical form of an integer constant. */
int64_t wrap_int(int64_t v, DType t);

/* v rounded (to nearest, ties to even) to the float type t: the double
 * holds exactly the fp16/bf16/fp32 value, or infinity on overflow; fp64
 * and NaN come back unchanged. */
double round_to_dtype(double v, DType t);

/* The bits of v in fp16 / bf16, rounded to nearest even; NaN stays a quiet
 * NaN with its sign, overflow gives infinity, underflow subnormals or zero.
 * From a double, so fp64 values round once. */
uint16_t fp16_from_double(double v);
uint16_t bf16_from_double(double v);
double fp16_to_double(uint16_t bits);
double bf16_to_double(uint16_t bits);

/* The bits of v in the fp8 type t (float8e4nv, float8e5), rounded to
 * nearest even after a rounding to fp32 (exact from fp16/bf16/fp32), with
 * cvt.rn.satfinite's saturation: beyond the largest finite value (infinity
 * too) gives it with v's sign, NaN gives 0x7f.  And back, exactly.
 * float8e4b15 rounds as Triton's conversion does (numeric.c). */
uint8_t fp8_from_double(double v, DType t);
double fp8_to_double(uint8_t bits, DType t);

/* The bits of v as the float type t (v already of that type), and back. */
uint64_t float_to_bits(double v, DType t);
double float_from_bits(uint64_t bits, DType t);

/* f rounded to tf32 (10 mantissa bits), to nearest with ties away from
 * zero, as cvt.rna.tf32.f32 does before a tensor-core fp32 product. */
float round_to_tf32(float f);
/* v rounded toward zero to the float type t (fp_downcast_rounding="rtz"). */
double round_toward_zero(double v, DType t);

/* a < b for canonical values of the integer type t (unsigned for DK_UINT). */
int int_less(DType t, int64_t a, int64_t b);

/* The integer v (canonical in `from`, an integer type) as a value of the
 * float type `to`, rounded once. */
double int_to_float(int64_t v, DType from, DType to);
/* The float v truncated toward zero into the integer type `to` (not i1);
 * 0 when v is NaN or the result does not fit, where the conversion is
 * undefined. */
int float_to_int(double v, DType to, int64_t *out);

#endif
