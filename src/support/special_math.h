/* The libdevice functions the C library lacks (lang/libdevice.def's C expressions call them): erfinv and
 * its kin, sinpi, cospi, the modified Bessel functions within a few ulp in double (fp32 callers round the
 * result once, which is then almost always the correctly rounded value); arithmetic and conversions in
 * the other rounding modes and the GPU's saturating conversions, exact; bit reversal and byte
 * permutation.  Shared by the interpreter and the simulator (tests/sim/sim_math.c), so both compute the
 * same numbers. */
#ifndef TILE_SUPPORT_SPECIAL_MATH_H
#define TILE_SUPPORT_SPECIAL_MATH_H

#include <stdint.h>

double special_erfinv(double p);     /* erf(x) = p; +-inf at +-1, NaN outside [-1, 1] */
double special_erfcinv(double q);    /* erfc(x) = q; +inf at 0, -inf at 2, NaN outside [0, 2] */
double special_erfcx(double x);      /* exp(x^2) erfc(x), without the overflow */
double special_normcdfinv(double p); /* the standard normal quantile: -sqrt(2) erfcinv(2p) */
double special_sinpi(double x);      /* sin(pi x), exact at integers and halves */
double special_cospi(double x);
double special_bessel_j(int n, double x); /* the C library's jn and yn, which C11 does not declare */
double special_bessel_y(int n, double x);
double special_bessel_i0(double x); /* modified Bessel functions of the first kind */
double special_bessel_i1(double x);

/* llround as libdevice's: out of range saturates, NaN is 0 (C leaves both undefined); its fp32 one, done
 * in integer arithmetic, gives INT64_MIN for NaN. */
long long special_llround(double x);
long long special_llroundf(float x);

/* The IEEE operations libdevice has in the other rounding modes: x + y, x - y, x * y, x / y, x * y + z,
 * 1 / x, sqrt(x) (op), rounded toward zero, down or up (mode; the conversions below take RN too); y, z
 * unused where the op has none. */
enum { SPECIAL_RZ, SPECIAL_RD, SPECIAL_RU, SPECIAL_RN };
enum { SPECIAL_ADD, SPECIAL_SUB, SPECIAL_MUL, SPECIAL_DIV, SPECIAL_FMA, SPECIAL_RCP, SPECIAL_SQRT };
double special_rounded(int op, int mode, double x, double y, double z);
float special_roundedf(int op, int mode, float x, float y, float z);

/* 1 / x with x's low 32 bits dropped, and the result's: rcp64h, which the GPU approximates. */
double special_rcp64h(double x);

/* The bits of a float as an int and back. */
int32_t special_float_as_int(float x);
float special_int_as_float(int32_t x);
int64_t special_double_as_ll(double x);
double special_ll_as_double(int64_t x);

/* The conversions in a rounding mode (mode): a float to a `bits`-bit integer, signed or not, as cvt.rzi
 * and the like (saturating; NaN 0 into 32 bits, 0x8000000000000000 into 64 as on an H200; the result's
 * bits in the int64_t), x to fp32 (double2float_rz), an
 * integer (`is_unsigned`: v's bits are a u64) to fp32 or fp64. */
int64_t special_to_int(double x, int mode, int bits, int is_signed);
float special_to_float(double x, int mode);
float special_int_to_float(int64_t v, int is_unsigned, int mode);
double special_int_to_double(int64_t v, int is_unsigned, int mode);

/* The integer functions with no C builtin: bit reversal, and prmt's byte selection (byte i of the result
 * is byte (selector >> 4i) & 7 of y:x, x the low four). */
uint32_t special_brev32(uint32_t x);
uint64_t special_brev64(uint64_t x);
uint32_t special_byte_perm(uint32_t x, uint32_t y, uint32_t selector);

/* lang/libdevice.def's types column in C: x's narrow and wide type; a row of one type has it as both
 * (and its other C expression is never evaluated).  The interpreter and the simulator compute each row's
 * expressions with x, y, z, w of these types. */
#define LD_C_NARROW_FP float
#define LD_C_WIDE_FP double
#define LD_C_NARROW_FP32 float
#define LD_C_WIDE_FP32 float
#define LD_C_NARROW_FP64 double
#define LD_C_WIDE_FP64 double
#define LD_C_NARROW_INT int32_t
#define LD_C_WIDE_INT int64_t
#define LD_C_NARROW_UINT uint32_t
#define LD_C_WIDE_UINT uint64_t
#define LD_C_NARROW_I32 int32_t
#define LD_C_WIDE_I32 int32_t
#define LD_C_NARROW_U32 uint32_t
#define LD_C_WIDE_U32 uint32_t
#define LD_C_NARROW_I64 int64_t
#define LD_C_WIDE_I64 int64_t
#define LD_C_NARROW_U64 uint64_t
#define LD_C_WIDE_U64 uint64_t

#endif
