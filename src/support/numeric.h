/* Exact numeric conversions shared by constant folding and the interpreter,
 * so that both compute what the GPU computes: integers wrap to their width,
 * floats round to nearest even at their precision. */
#ifndef TILE_NUMERIC_H
#define TILE_NUMERIC_H

#include <stdint.h>

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);       /* round to nearest even; overflow to inf */
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);       /* round to nearest even */
float round_to_tf32(float f);          /* 10 mantissa bits, round to nearest, ties away (cvt.rna.tf32.f32) */

/* Wraps v to an integer of `bits` bits (1, 8, 16, 32, 64), sign-extended
 * when `is_signed`, zero-extended otherwise; bits == 1 gives 0 or 1. */
int64_t wrap_integer(int64_t v, int bits, int is_signed);

#endif
