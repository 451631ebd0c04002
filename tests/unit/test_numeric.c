/* The fp8 conversions of src/support/numeric.c against references written
 * here from the formats' definitions (no shared code): every one of the 256
 * codes of each format decoded, and fp32 values rounded: every code's value,
 * every midpoint between neighbours (ties, to the even code) and its two
 * fp32 neighbours, fp32 subnormals, values past the largest finite one,
 * infinities, NaNs, and a million random fp32 bit patterns.  float8e4b15 has
 * its own reference (it rounds and saturates as Triton's conversion). */
#include "check.h"
#include "support/numeric.h"

#include <math.h>
#include <stdint.h>

typedef struct Fp8Ref {
  DType t;
  int exp_bits, bias;
  double value[256];      /* NaN for the NaN codes, +-inf for e5m2's infinities */
  int positive[128];      /* the finite non-negative codes, by increasing value */
  int n_positive;
} Fp8Ref;

static double reference_value(const Fp8Ref *r, int code) {
  int man_bits = 7 - r->exp_bits, exp = (code & 0x7f) >> man_bits, man = code & ((1 << man_bits) - 1);
  double sign = code & 0x80 ? -1 : 1, scale = pow(2, -man_bits);
  if (r->t == DT_FP8E4NV && (code & 0x7f) == 0x7f) return NAN;
  if (r->t == DT_FP8E5 && exp == 31) return man ? NAN : sign * INFINITY;
  if (exp == 0) return sign * man * scale * pow(2, 1 - r->bias);
  return sign * (1 + man * scale) * pow(2, exp - r->bias);
}

static void reference_init(Fp8Ref *r, DType t) {
  r->t = t;
  r->exp_bits = t == DT_FP8E4NV ? 4 : 5;
  r->bias = t == DT_FP8E4NV ? 7 : 15;
  for (int c = 0; c < 256; c++) r->value[c] = reference_value(r, c);
  r->n_positive = 0;
  for (int c = 0; c < 128; c++) /* codes of non-negative numbers increase with their values */
    if (isfinite(r->value[c])) r->positive[r->n_positive++] = c;
}

/* Round to nearest by search: the nearest finite value, the even code on a
 * tie; beyond the largest finite value (or infinite) the largest; NaN 0x7f. */
static int reference_round(const Fp8Ref *r, float f) {
  if (isnan(f)) return 0x7f;
  int sign = signbit(f) ? 0x80 : 0;
  double a = fabs((double)f);
  int top = r->positive[r->n_positive - 1];
  if (a >= r->value[top]) return sign | top;
  int best = 0;
  double best_d = INFINITY;
  for (int i = 0; i < r->n_positive; i++) {
    int c = r->positive[i];
    double d = fabs(a - r->value[c]);
    if (d < best_d || (d == best_d && !(c & 1))) best = c, best_d = d;
  }
  return sign | best;
}

static int same_value(double x, double y) { return (isnan(x) && isnan(y)) || (x == y && signbit(x) == signbit(y)); }

static int failures_shown;

static void check_round(const Fp8Ref *r, float f) {
  int want = reference_round(r, f), got = fp8_from_double(f, r->t);
  CHECK(got == want);
  if (got != want && failures_shown++ < 10)
    fprintf(stderr, "  %s of %a: got 0x%02x, want 0x%02x\n", dtype_name(r->t), (double)f, got, want);
}

static void test_decode(const Fp8Ref *r) {
  int wrong = 0;
  for (int c = 0; c < 256; c++) wrong += !same_value(fp8_to_double((uint8_t)c, r->t), r->value[c]);
  CHECK(wrong == 0);
  CHECK(r->n_positive == (r->t == DT_FP8E4NV ? 127 : 124));
  CHECK(r->value[r->positive[r->n_positive - 1]] == (r->t == DT_FP8E4NV ? 448 : 57344));
  /* every number comes back to its code, -0 included (the conversion saturates e5m2's infinities); a
     value's bits (float_to_bits, memory) are its code, NaN codes included, for all 256 */
  for (int c = 0; c < 256; c++) {
    CHECK(float_to_bits(float_from_bits((uint64_t)c, r->t), r->t) == (uint64_t)c);
    CHECK(same_value(float_from_bits((uint64_t)c, r->t), r->value[c]));
    if (isnan(r->value[c])) continue;
    int inf = isinf(r->value[c]);
    CHECK(fp8_from_double(r->value[c], r->t) == (inf ? (c & 0x80) | 0x7b : c));
    CHECK(float_to_bits(r->value[c], r->t) == (uint64_t)c);
  }
  CHECK(float_to_bits(NAN, r->t) == 0x7f); /* a NaN of another origin: the canonical one */
}

static void test_round_special(const Fp8Ref *r) {
  for (int i = 0; i + 1 < r->n_positive; i++) {
    double lo = r->value[r->positive[i]], hi = r->value[r->positive[i + 1]];
    float mid = (float)((lo + hi) / 2); /* exact: fp8 neighbours differ in few bits */
    CHECK((double)mid == (lo + hi) / 2);
    float around[] = {(float)lo, mid, nextafterf(mid, 0), nextafterf(mid, INFINITY)};
    for (int k = 0; k < 4; k++) {
      check_round(r, around[k]);
      check_round(r, -around[k]);
    }
  }
  float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-45f, 1.17549435e-38f, 3.4028235e38f,
                     448.0f, 464.0f, 479.99997f, 480.0f, 57344.0f, 61440.0f, 65504.0f, 1e6f, -1e6f};
  for (size_t k = 0; k < sizeof special / sizeof *special; k++) check_round(r, special[k]);
  /* half the smallest subnormal and just above it */
  double tiny = r->value[1];
  check_round(r, (float)(tiny / 2));
  check_round(r, nextafterf((float)(tiny / 2), 1));
  check_round(r, (float)(tiny * 1.5));
}

static uint32_t next_random(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*state >> 32);
}

static void test_round_random(const Fp8Ref *r) {
  uint64_t state = 0x5eed0000u + (unsigned)r->t;
  for (int i = 0; i < 1000000; i++) {
    uint32_t bits = next_random(&state);
    if (i & 1) bits = (bits & 0x80000000u) | (bits % 0x48000000u); /* mostly within fp8's range */
    float f;
    memcpy(&f, &bits, sizeof f);
    check_round(r, f);
  }
}

/* round_to_dtype is decode(encode); fp64 rounds through fp32, as the generated code does */
static void test_round_to_dtype(const Fp8Ref *r) {
  CHECK(round_to_dtype(1.0 + 0x1p-40, r->t) == 1.0);
  CHECK(same_value(round_to_dtype(-INFINITY, r->t), r->t == DT_FP8E4NV ? -448 : -57344));
  CHECK(isnan(round_to_dtype(NAN, r->t)));
  /* above the midpoint of 1 and its successor by less than fp32 resolves: fp32 makes it the tie, to even 1.0 */
  double just_over_tie = 1.0 + pow(2, -(8 - r->exp_bits)) + 0x1p-30;
  CHECK(round_to_dtype(just_over_tie, r->t) == 1.0);
  CHECK(int_to_float(1000, DT_I32, r->t) == (r->t == DT_FP8E4NV ? 448 : 1024));
}

/* ---- float8e4b15 (Triton's pre-Hopper fp8): e4m3 with bias 15 and every code a number; to it
 * saturates at 1.75 (NaN and infinities too, keeping their sign) and rounds half away from zero, as
 * Triton's conversion (inline PTX through fp16) does. */

static double e4b15_value(int code) {
  int exp = (code & 0x7f) >> 3, man = code & 7;
  double sign = code & 0x80 ? -1 : 1;
  return exp ? sign * (1 + man / 8.0) * pow(2, exp - 15) : sign * man / 8.0 * pow(2, -14);
}

/* By search: the nearest of codes 0 .. 0x7e, the larger on a tie. */
static int e4b15_round(float f) {
  int sign = signbit(f) ? 0x80 : 0, best = 0;
  double a = fabs((double)f), best_d = INFINITY;
  if (isnan(f) || a >= 1.75) return sign | 0x7e;
  for (int c = 0; c <= 0x7e; c++) {
    double d = fabs(a - e4b15_value(c));
    if (d <= best_d) best = c, best_d = d;
  }
  return sign | best;
}

static void check_e4b15_round(float f) {
  int want = e4b15_round(f), got = fp8_from_double(f, DT_FP8E4B15);
  CHECK(got == want);
  if (got != want && failures_shown++ < 10) fprintf(stderr, "  fp8e4b15 of %a: got 0x%02x, want 0x%02x\n", (double)f, got, want);
}

static void test_e4b15_decode(void) {
  for (int c = 0; c < 256; c++) {
    CHECK(same_value(fp8_to_double((uint8_t)c, DT_FP8E4B15), e4b15_value(c)));
    CHECK(same_value(float_from_bits((uint64_t)c, DT_FP8E4B15), e4b15_value(c)));
    CHECK(float_to_bits(e4b15_value(c), DT_FP8E4B15) == (uint64_t)c); /* memory keeps 0x7f too */
    int saturated = (c & 0x7f) == 0x7f;
    CHECK(fp8_from_double(e4b15_value(c), DT_FP8E4B15) == (saturated ? (c & 0x80) | 0x7e : c));
  }
  CHECK(e4b15_value(0x7e) == 1.75 && e4b15_value(0x7f) == 1.875 && e4b15_value(1) == 0x1p-17);
}

static void test_e4b15_round(void) {
  for (int c = 0; c < 0x7e; c++) {
    double lo = e4b15_value(c), hi = e4b15_value(c + 1);
    float mid = (float)((lo + hi) / 2);
    float around[] = {(float)lo, mid, nextafterf(mid, 0), nextafterf(mid, INFINITY)};
    for (int k = 0; k < 4; k++) {
      check_e4b15_round(around[k]);
      check_e4b15_round(-around[k]);
    }
  }
  float special[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-45f, -1e-45f, 1.7f, 1.8125f, 1.875f, 2.0f, 448.0f, 1e6f};
  for (size_t k = 0; k < sizeof special / sizeof *special; k++) check_e4b15_round(special[k]);
  CHECK(fp8_from_double(-NAN, DT_FP8E4B15) == 0xfe && fp8_from_double(NAN, DT_FP8E4B15) == 0x7e);
  uint64_t state = 0x5eed4b15u;
  for (int i = 0; i < 1000000; i++) {
    uint32_t bits = next_random(&state);
    if (i & 1) bits = (bits & 0x80000000u) | (0x36000000u + bits % 0x0a000000u); /* mostly within its range */
    float f;
    memcpy(&f, &bits, sizeof f);
    check_e4b15_round(f);
  }
  CHECK(round_to_dtype(1.8, DT_FP8E4B15) == 1.75 && int_to_float(1000, DT_I32, DT_FP8E4B15) == 1.75);
}

int main(void) {
  test_e4b15_decode();
  test_e4b15_round();
  DType types[] = {DT_FP8E4NV, DT_FP8E5};
  for (int i = 0; i < 2; i++) {
    Fp8Ref r;
    reference_init(&r, types[i]);
    test_decode(&r);
    test_round_special(&r);
    test_round_random(&r);
    test_round_to_dtype(&r);
  }
  return check_report();
}
