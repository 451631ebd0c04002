/* The libdevice functions the C library lacks (lang/libdevice.def's C
 * expressions call them): erfinv and its kin, sinpi, cospi, the modified
 * Bessel functions, and float-to-int64 rounding as the GPU's saturating
 * conversion.  In double, within a few ulp; fp32 callers round the result
 * once, which is then almost always the correctly rounded value.  Shared by
 * the interpreter and the simulator (tests/sim/sim_math.c), so both compute
 * the same numbers. */
#ifndef TILE_SUPPORT_SPECIAL_MATH_H
#define TILE_SUPPORT_SPECIAL_MATH_H

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

/* llrint / llround as cvt.rni.s64 and libdevice: out of range saturates, NaN is 0 (C leaves both
 * undefined); libdevice's fp32 llround, done in integer arithmetic, gives INT64_MIN for NaN. */
long long special_llrint(double x);
long long special_llround(double x);
long long special_llroundf(float x);

#endif
