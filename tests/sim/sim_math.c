/* libdevice's functions (__nv_*) for the sim target, from lang/libdevice.def's
 * C expressions (the C library, src/support/special_math.c): generated code
 * keeps libdevice's names and the simulator's executable defines them.  Requires: the executable exports these symbols (-rdynamic).
 * Guarantees: each computes what the C library computes (correctly rounded
 * where the C library is, which libdevice is not always: tests compare with
 * a tolerance where the GPU rounds differently). */
#include "special_math.h"

#include <math.h>
#include <stdint.h>

#pragma GCC visibility push(default)

/* The functions of lang/libdevice.def, from its C expressions: the
 * interpreter computes the same ones (special_math.c where libm has none). */
#define LD_PROTO_LD_F(T, name) T name(T x)
#define LD_PROTO_LD_FF(T, name) T name(T x, T y)
#define LD_PROTO_LD_FFF(T, name) T name(T x, T y, T z)
#define LD_PROTO_LD_FFFF(T, name) T name(T x, T y, T z, T w)
#define LD_PROTO_LD_FI(T, name) T name(T x, int n)
#define LD_PROTO_LD_IF(T, name) T name(int n, T x)
#define LD_PROTO_LD_FFU(T, name) T name(T x, T y, uint32_t z)
#define LD_PROTO_LD_INT(T, name) int name(T x)
#define LD_PROTO_LD_BOOL(T, name) int name(T x)
#define LD_PROTO_LD_LONG(T, name) long long name(T x)
#define LD_PROTO_LD_SINGLE(T, name) float name(T x)
#define LD_PROTO_LD_DOUBLE(T, name) double name(T x)
#define LD_PROTO_LD_HILO(T, name) double name(T x, T y)
#define LD_DEFINE(sig, T, name, c)                                                                       \
  LD_PROTO_##sig(T, name);                                                                              \
  LD_PROTO_##sig(T, name) { return c; }
/* the row's types column: two functions, or one (special_math.h's LD_C_* give the C types) */
#define LD_DEFINE_BOTH(sig, types, f32, f64, c32, c64)                                                  \
  LD_DEFINE(sig, LD_C_NARROW_##types, f32, c32) LD_DEFINE(sig, LD_C_WIDE_##types, f64, c64)
#define LD_DEFINE_FP LD_DEFINE_BOTH
#define LD_DEFINE_INT LD_DEFINE_BOTH
#define LD_DEFINE_UINT LD_DEFINE_BOTH
#define LD_DEFINE_FP32(sig, types, f32, f64, c32, c64) LD_DEFINE(sig, float, f32, c32)
#define LD_DEFINE_FP64(sig, types, f32, f64, c32, c64) LD_DEFINE(sig, double, f64, c64)
#define LD_DEFINE_I32(sig, types, f32, f64, c32, c64) LD_DEFINE(sig, int32_t, f32, c32)
#define LD_DEFINE_U32(sig, types, f32, f64, c32, c64) LD_DEFINE(sig, uint32_t, f32, c32)
#define LD_DEFINE_I64(sig, types, f32, f64, c32, c64) LD_DEFINE(sig, int64_t, f64, c64)
#define LD_DEFINE_U64(sig, types, f32, f64, c32, c64) LD_DEFINE(sig, uint64_t, f64, c64)
#define LIBDEVICE(id, name, sig, types, f32, f64, c32, c64) \
  LD_DEFINE_##types(sig, types, __nv_##f32, __nv_##f64, c32, c64)
#include "libdevice.def"
#undef LIBDEVICE

#pragma GCC visibility pop
