/* The differential tester: runs a kernel on the CPU interpreter
 * (tile_run_cpu) and as code generated for the "sim" target on the thread
 * simulator -- or, with --gpu, compiled for and launched on the GPU -- on
 * the same random inputs, and compares every buffer, the printed text and
 * the errors.  The cases are in cases.def.
 *
 *   sim_diff [options] CASE...      run cases (all with --all)
 *   sim_diff --list                 list them
 *
 * Exit status: 0 all passed, 1 a case failed, 77 nothing could be compared
 * because this build cannot lower to LLVM IR yet (ctest shows it skipped;
 * the interpreter half of each case has still run and been checked). */
#include "sim.h"
#include "tile/tile.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

enum { PASS = 0, FAIL = 1, SKIP = 77, MAX_ARGS = 32, GUARD = 256, GUARD_BYTE = 0x5A, POISON = 0xA5, MAX_SHOWN = 6 };

typedef struct Case {
  const char *name, *file, *kernel, *defines, *grid, *warps, *args, *options;
} Case;

static const Case cases[] = {
#define CASE(name, file, kernel, defines, grid, warps, args, options) {#name, file, kernel, defines, grid, warps, args, options},
#include "cases.def"
#undef CASE
};

typedef struct Flags {
  unsigned long long seed;
  int warps;               /* only this num_warps; 0: the case's */
  int print_ir, interp_only;
  const char *module;      /* a .ll or .c to run instead of the generated code */
  const char *cflags;      /* extra flags for it */
  int show;                /* print this many elements of each buffer after the interpreter's run */
  size_t stack_bytes;      /* per simulated thread; 0: the simulator's default */
  int gpu;                 /* the second run on the GPU instead of the simulator */
  const char *gpu_arch;    /* --gpu: compile every case for this target; NULL: sim -> sm_80, sim90 -> sm_90a */
} Flags;

/* ---- random numbers: splitmix64 ------------------------------------------------ */

static uint64_t rng_state;

static uint64_t next_u64(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double uniform01(void) { return (double)(next_u64() >> 11) * 0x1.0p-53; }

static long long uniform_int(long long lo, long long hi) {
  return lo + (long long)(next_u64() % (uint64_t)(hi - lo + 1));
}

/* ---- expressions: 12, 1823*781, cdiv(98432,1024), (a+b)*c ------------------------- */

static long long parse_sum(const char **p, int *bad);

static long long parse_atom(const char **p, int *bad) {
  while (**p == ' ') (*p)++;
  if (**p == '-') return (*p)++, -parse_atom(p, bad);
  if (**p == '(') {
    (*p)++;
    long long v = parse_sum(p, bad);
    if (**p != ')') *bad = 1;
    return (*p)++, v;
  }
  if (!strncmp(*p, "cdiv(", 5)) {
    *p += 5;
    long long a = parse_sum(p, bad);
    if (**p != ',') *bad = 1;
    (*p)++;
    long long b = parse_sum(p, bad);
    if (**p != ')' || b <= 0) *bad = 1;
    (*p)++;
    return b > 0 ? (a + b - 1) / b : 0;
  }
  if (!isdigit((unsigned char)**p)) *bad = 1;
  return strtoll(*p, (char **)p, 0);
}

static long long parse_product(const char **p, int *bad) {
  long long v = parse_atom(p, bad);
  while (**p == '*' || **p == '/') {
    char op = *(*p)++;
    long long w = parse_atom(p, bad);
    if (op == '/' && w == 0) *bad = 1;
    v = op == '*' ? v * w : w ? v / w : 0;
  }
  return v;
}

static long long parse_sum(const char **p, int *bad) {
  long long v = parse_product(p, bad);
  while (**p == '+' || **p == '-') {
    char op = *(*p)++;
    long long w = parse_product(p, bad);
    v = op == '+' ? v + w : v - w;
  }
  return v;
}

/* The value of text[0, len) as an expression; -1 sets *bad. */
static long long eval(const char *text, size_t len, int *bad) {
  char buf[256];
  if (len >= sizeof buf) return *bad = 1, 0;
  memcpy(buf, text, len);
  buf[len] = 0;
  const char *p = buf;
  long long v = parse_sum(&p, bad);
  if (*p) *bad = 1;
  return v;
}

/* ---- dtypes ------------------------------------------------------------------------ */

typedef enum { K_SINT, K_UINT, K_FLOAT, K_BOOL } Kind;

typedef struct DtypeInfo {
  const char *name;
  int bytes;
  Kind kind;
} DtypeInfo;

static const DtypeInfo dtypes[] = {{"i1", 1, K_BOOL},   {"i8", 1, K_SINT},   {"i16", 2, K_SINT},   {"i32", 4, K_SINT},
                                   {"i64", 8, K_SINT},  {"u8", 1, K_UINT},   {"u16", 2, K_UINT},   {"u32", 4, K_UINT},
                                   {"u64", 8, K_UINT},  {"fp16", 2, K_FLOAT}, {"bf16", 2, K_FLOAT}, {"fp32", 4, K_FLOAT},
                                   {"fp64", 8, K_FLOAT}, {"fp8e4nv", 1, K_FLOAT}, {"fp8e5", 1, K_FLOAT},
                                   {"fp8e4b15", 1, K_FLOAT}};

static const DtypeInfo *dtype_info(const char *name) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (!strcmp(dtypes[i].name, name)) return &dtypes[i];
  return NULL;
}

static float half_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e ? ldexpf(1.0f + (float)m / 1024.0f, e - 15) : ldexpf((float)m, -24);
  if (e == 31) v = m ? NAN : INFINITY;
  return h & 0x8000 ? -v : v;
}

/* Round to nearest even (inputs are generated here, any correct rounding will do). */
static uint16_t half_bits(float f) {
  if (isnan(f)) return 0x7e00;
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  float a = fabsf(f);
  if (a >= 65520.0f) return sign | 0x7c00;
  if (a < 0x1p-14f) return sign | (uint16_t)nearbyintf(a * 0x1p24f);
  int e;
  float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
  uint32_t q = (uint32_t)nearbyintf(m * 2048.0f); /* 11 significant bits */
  if (q == 2048) q = 1024, e++;
  return sign | (uint16_t)((uint32_t)(e + 14) << 10 | (q - 1024));
}

static float bf16_value(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

static uint16_t bf16_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if (isnan(f)) return 0x7fc0;
  return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* fp8 (float8e4nv = e4m3fn: no infinities, NaN S.1111.111; float8e5 = e5m2, IEEE-like; float8e4b15 = e4m3
 * with bias 15, every code a number): the value of a
 * code from the formats' definitions, and for inputs the nearest finite code by search (ties either way;
 * infinity is e5m2's, or e4m3's largest value). */
static double fp8_value(const DtypeInfo *t, uint8_t b) {
  int nv = !strcmp(t->name, "fp8e4nv"), e4 = nv || !strcmp(t->name, "fp8e4b15");
  int man_bits = e4 ? 3 : 2, bias = nv ? 7 : 15;
  int exp = (b & 0x7f) >> man_bits, man = b & ((1 << man_bits) - 1);
  double v;
  if (nv && (b & 0x7f) == 0x7f) return NAN;
  if (!e4 && exp == 31) v = man ? NAN : INFINITY;
  else v = exp ? ldexp(1.0 + man / (double)(1 << man_bits), exp - bias) : ldexp(man, 1 - bias - man_bits);
  return b & 0x80 ? -v : v;
}

static uint8_t fp8_code(const DtypeInfo *t, double v) {
  if (isnan(v)) return 0x7f;
  if (isinf(v)) return (uint8_t)((v < 0 ? 0x80 : 0) | (strcmp(t->name, "fp8e5") ? 0x7e : 0x7c));
  int best = 0;
  double best_d = INFINITY;
  for (int c = 0; c < 256; c++) {
    double x = fp8_value(t, (uint8_t)c);
    if (isfinite(x) && fabs(x - v) < best_d) best = c, best_d = fabs(x - v);
  }
  return (uint8_t)best;
}

/* Element k of a buffer as a double (floats) or integer bits. */
static double float_at(const DtypeInfo *t, const unsigned char *p, size_t k) {
  uint64_t b = 0;
  memcpy(&b, p + k * (size_t)t->bytes, (size_t)t->bytes);
  if (t->bytes == 1) return fp8_value(t, (uint8_t)b);
  if (t->bytes == 2) return !strcmp(t->name, "fp16") ? half_value((uint16_t)b) : bf16_value((uint16_t)b);
  if (t->bytes == 4) {
    float f;
    uint32_t w = (uint32_t)b;
    memcpy(&f, &w, 4);
    return f;
  }
  double d;
  memcpy(&d, &b, 8);
  return d;
}

static uint64_t bits_at(const DtypeInfo *t, const unsigned char *p, size_t k) {
  uint64_t b = 0;
  memcpy(&b, p + k * (size_t)t->bytes, (size_t)t->bytes);
  return b;
}

static void store_float(const DtypeInfo *t, unsigned char *p, size_t k, double v) {
  unsigned char *q = p + k * (size_t)t->bytes;
  if (t->bytes == 1) {
    *q = fp8_code(t, v);
  } else if (t->bytes == 2) {
    uint16_t h = !strcmp(t->name, "fp16") ? half_bits((float)v) : bf16_bits((float)v);
    memcpy(q, &h, 2);
  } else if (t->bytes == 4) {
    float f = (float)v;
    memcpy(q, &f, 4);
  } else {
    memcpy(q, &v, 8);
  }
}

static void store_int(const DtypeInfo *t, unsigned char *p, size_t k, long long v) {
  memcpy(p + k * (size_t)t->bytes, &v, (size_t)t->bytes); /* little-endian: the low bytes */
}

/* ---- argument specs ----------------------------------------------------------------- */

typedef enum { D_OUT, D_UNIFORM, D_INT, D_NORMAL, D_SPECIAL, D_BITS, D_CONST, D_IOTA } Dist;
static const char *const dist_names[] = {"out", "uniform", "int", "normal", "special", "bits", "const", "iota"};

typedef enum { A_BUFFER, A_INT, A_FLOAT } ArgKind;

typedef struct Arg {
  ArgKind kind;
  char name[48];
  const DtypeInfo *dtype;    /* buffers; scalars with an explicit type */
  size_t count, misalign;
  Dist dist;
  double p[3];
  int np;
  long long ival;
  double fval;
  unsigned char *init;       /* the buffer's initial bytes */
  unsigned char *block[2];   /* memory for the interpreter's and the second (simulator's or GPU's) runs */
  unsigned char *data[2];
} Arg;

typedef struct Spec {
  Arg args[MAX_ARGS];
  int n;
  char error[400];   /* room for the longest argument token in the message */
} Spec;

static int spec_error(Spec *s, const char *fmt, const char *what) {
  snprintf(s->error, sizeof s->error, fmt, what);
  return -1;
}

/* "uniform(-1,1)" -> D_UNIFORM, p = {-1, 1} */
static int parse_dist(Spec *s, Arg *a, const char *text) {
  size_t len = strcspn(text, "(");
  for (int d = 0; d <= D_IOTA; d++)
    if (strlen(dist_names[d]) == len && !strncmp(text, dist_names[d], len)) a->dist = (Dist)d, len = 0;
  if (len) return spec_error(s, "unknown distribution '%s'", text);
  const char *p = strchr(text, '(');
  for (a->np = 0; p && a->np < 3 && *p && *p != ')'; a->np++) {
    char *end;
    a->p[a->np] = strtod(p + 1, &end);
    if (end == p + 1) return spec_error(s, "bad number in '%s'", text);
    p = end;
  }
  return 0;
}

/* name:dtype[count]@misalign=dist */
static int parse_buffer(Spec *s, Arg *a, const char *tok) {
  const char *colon = strchr(tok, ':'), *open = strchr(tok, '['), *close = strchr(tok, ']');
  if (!colon || !open || !close || open < colon || close < open) return spec_error(s, "bad buffer '%s'", tok);
  a->kind = A_BUFFER;
  snprintf(a->name, sizeof a->name, "%.*s", (int)(colon - tok), tok);
  char dt[16];
  snprintf(dt, sizeof dt, "%.*s", (int)(open - colon - 1), colon + 1);
  if (!(a->dtype = dtype_info(dt))) return spec_error(s, "unknown dtype in '%s'", tok);
  int bad = 0;
  long long count = eval(open + 1, (size_t)(close - open - 1), &bad);
  if (bad || count < 0) return spec_error(s, "bad count in '%s'", tok);
  a->count = (size_t)count;
  const char *rest = close + 1;
  if (*rest == '@') a->misalign = (size_t)strtoul(rest + 1, (char **)&rest, 10);
  if (*rest != '=') return spec_error(s, "buffer '%s' needs =distribution", tok);
  return parse_dist(s, a, rest + 1);
}

/* 98432, i64:5, fp32:1.5, or a buffer */
static int parse_arg(Spec *s, const char *tok) {
  if (s->n == MAX_ARGS) return spec_error(s, "more than %s arguments", "32");
  Arg *a = &s->args[s->n++];
  memset(a, 0, sizeof *a);
  snprintf(a->name, sizeof a->name, "argument %d", s->n - 1);
  if (strchr(tok, '[')) return parse_buffer(s, a, tok);
  const char *value = tok, *colon = strchr(tok, ':');
  if (colon) {
    char dt[16];
    snprintf(dt, sizeof dt, "%.*s", (int)(colon - tok), tok);
    if (!(a->dtype = dtype_info(dt))) return spec_error(s, "unknown dtype in '%s'", tok);
    value = colon + 1;
  }
  int is_float = a->dtype ? a->dtype->kind == K_FLOAT : strpbrk(value, ".e") != NULL;
  a->kind = is_float ? A_FLOAT : A_INT;
  char *end;
  if (is_float) a->fval = strtod(value, &end);
  else a->ival = strtoll(value, &end, 0);
  return *end || end == value ? spec_error(s, "bad scalar '%s'", tok) : 0;
}

static int parse_spec(Spec *s, const char *text) {
  s->n = 0;
  s->error[0] = 0;
  char tok[160];
  for (const char *p = text; *p;) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (!len) break;
    if (len >= sizeof tok) return spec_error(s, "argument too long: %s", p);
    memcpy(tok, p, len);
    tok[len] = 0;
    if (parse_arg(s, tok)) return -1;
    p += len;
  }
  return 0;
}

/* ---- inputs ---------------------------------------------------------------------------- */

static double special_float(void) {
  static const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 127.5, 128.0, -128.5, -129.0,
                                    255.5, 256.0, 32767.5, -32768.5, 65504.0, 65520.0, 1e10, -1e10, 2147483648.0,
                                    -2147483904.0, 4294967296.0, 1e-8, 6e-8, 1e30, INFINITY, -INFINITY, NAN};
  if (next_u64() % 2) return specials[next_u64() % (sizeof specials / sizeof specials[0])];
  double mag = ldexp(1.0 + uniform01(), (int)uniform_int(-30, 40));
  return next_u64() % 2 ? -mag : mag;
}

static long long special_int(const DtypeInfo *t) {
  int bits = 8 * t->bytes;
  long long max = t->kind == K_UINT ? (bits == 64 ? -1 : (long long)((1ull << bits) - 1)) : (long long)((1ull << (bits - 1)) - 1);
  long long min = t->kind == K_UINT ? 0 : -max - 1;
  long long values[] = {0, 1, -1, 2, -2, max, min, max - 1, min + 1, 7, -7};
  if (next_u64() % 2) return values[next_u64() % (sizeof values / sizeof values[0])];
  return (long long)next_u64();
}

static double normal(double mu, double sigma) {
  double u = uniform01(), v = uniform01();
  return mu + sigma * sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static void fill_element(const Arg *a, unsigned char *p, size_t k) {
  const DtypeInfo *t = a->dtype;
  int fl = t->kind == K_FLOAT;
  double lo = a->p[0], hi = a->p[1];
  switch (a->dist) {
  case D_OUT: memset(p + k * (size_t)t->bytes, POISON, (size_t)t->bytes); return;
  case D_BITS: store_int(t, p, k, (long long)next_u64()); return;
  case D_CONST: fl ? store_float(t, p, k, lo) : store_int(t, p, k, (long long)lo); return;
  case D_IOTA: fl ? store_float(t, p, k, lo + (double)k * (a->np > 1 ? hi : 1)) : store_int(t, p, k, (long long)(lo + (double)k * (a->np > 1 ? hi : 1))); return;
  case D_NORMAL: fl ? store_float(t, p, k, normal(lo, hi)) : store_int(t, p, k, llround(normal(lo, hi))); return;
  case D_SPECIAL: fl ? store_float(t, p, k, special_float()) : store_int(t, p, k, special_int(t)); return;
  case D_UNIFORM:
    if (fl) store_float(t, p, k, lo + (hi - lo) * uniform01());
    else store_int(t, p, k, uniform_int((long long)lo, (long long)hi));
    return;
  case D_INT:
    if (fl && a->np > 2 && uniform01() < a->p[2]) store_float(t, p, k, NAN);
    else if (fl) store_float(t, p, k, (double)uniform_int((long long)lo, (long long)hi));
    else store_int(t, p, k, uniform_int((long long)lo, (long long)hi));
    return;
  }
}

static void bool_fix(const Arg *a, unsigned char *p, size_t k) {
  if (a->dtype->kind == K_BOOL && a->dist != D_OUT) p[k] &= 1;
}

static size_t data_bytes(const Arg *a) { return a->count * (size_t)a->dtype->bytes; }

/* A buffer's block: guard bytes, the misalignment, the data, guard bytes. */
static size_t block_bytes(const Arg *a) { return (2 * GUARD + a->misalign + data_bytes(a) + 255) / 256 * 256; }

static int make_buffers(Spec *s) {
  for (int i = 0; i < s->n; i++) {
    Arg *a = &s->args[i];
    if (a->kind != A_BUFFER) continue;
    size_t bytes = data_bytes(a), total = block_bytes(a);
    a->init = malloc(bytes ? bytes : 1);
    for (int r = 0; r < 2; r++) {
      a->block[r] = aligned_alloc(256, total);
      if (a->block[r]) memset(a->block[r], GUARD_BYTE, total);
      a->data[r] = a->block[r] ? a->block[r] + GUARD + a->misalign : NULL;
    }
    if (!a->init || !a->block[0] || !a->block[1]) return spec_error(s, "out of memory for '%s'", a->name);
    for (size_t k = 0; k < a->count; k++) fill_element(a, a->init, k), bool_fix(a, a->init, k);
    memcpy(a->data[0], a->init, bytes);
    memcpy(a->data[1], a->init, bytes);
  }
  return 0;
}

static void free_buffers(Spec *s) {
  for (int i = 0; i < s->n; i++) {
    free(s->args[i].init);
    free(s->args[i].block[0]);
    free(s->args[i].block[1]);
  }
}

/* Nonzero if the guard bytes around run r's copy of a were written. */
static int guard_broken(const Arg *a, int r) {
  size_t bytes = data_bytes(a), total = block_bytes(a);
  for (size_t i = 0; i < total; i++) {
    const unsigned char *p = a->block[r] + i;
    if ((p < a->data[r] || p >= a->data[r] + bytes) && *p != GUARD_BYTE) return 1;
  }
  return 0;
}

/* ---- the launch, both ways ----------------------------------------------------------------- */

/* Triton's specialisation, as tile_run_cpu derives it: the same signature
 * goes to both runs so they compile the same kernel. */
static void signature_of(const Spec *s, char *sig, size_t size) {
  size_t n = 0;
  sig[0] = 0;
  for (int i = 0; i < s->n && n < size; i++) {
    const Arg *a = &s->args[i];
    const char *sep = i ? "," : "";
    if (a->kind == A_BUFFER)
      n += (size_t)snprintf(sig + n, size - n, "%s*%s%s", sep, a->dtype->name, (uintptr_t)a->data[1] % 16 ? "" : ":16");
    else if (a->kind == A_FLOAT) n += (size_t)snprintf(sig + n, size - n, "%s%s", sep, a->dtype ? a->dtype->name : "fp32");
    else
      n += (size_t)snprintf(sig + n, size - n, "%s%s%s", sep,
                            a->dtype ? a->dtype->name : a->ival >= INT32_MIN && a->ival <= INT32_MAX ? "i32" : "i64",
                            a->ival == 1 ? ":1" : a->ival % 16 == 0 ? ":16" : "");
  }
}

static int int_is_wide(const Arg *a) {
  return a->dtype ? a->dtype->bytes == 8 : !(a->ival >= INT32_MIN && a->ival <= INT32_MAX);
}

static void tile_args_of(const Spec *s, tile_arg *out) {
  for (int i = 0; i < s->n; i++) {
    const Arg *a = &s->args[i];
    if (a->kind == A_BUFFER) out[i] = tile_buffer(a->data[0], a->dtype->name, a->count);
    else if (a->kind == A_INT) out[i] = tile_int(a->ival);
    else out[i] = tile_float(a->fval);
    if (a->kind != A_BUFFER && a->dtype) out[i].dtype = a->dtype->name;
  }
}

/* K_sim_entry's parameters: every argument but integers equal to 1 (':1' makes them constexprs). */
typedef union ParamSlot {
  void *ptr;
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
} ParamSlot;

static int sim_params_of(const Spec *s, ParamSlot *slots, void **params) {
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    const Arg *a = &s->args[i];
    if (a->kind == A_INT && a->ival == 1) continue;
    if (a->kind == A_BUFFER) slots[n].ptr = a->data[1];
    else if (a->kind == A_INT && int_is_wide(a)) slots[n].i64 = a->ival;
    else if (a->kind == A_INT) slots[n].i32 = (int32_t)a->ival;
    else if (a->dtype && a->dtype->bytes == 8) slots[n].f64 = a->fval;
    else slots[n].f32 = (float)a->fval;
    params[n] = &slots[n];
    n++;
  }
  return n;
}

/* ---- one run of a case ------------------------------------------------------------------------ */

typedef struct Run {
  const Case *c;
  const Flags *flags;
  int warps;
  unsigned long long seed;
  char *source;
  size_t source_len;
  Spec spec;
  const char *defines[16];
  char define_text[16][128];
  int n_defines;
  unsigned grid[3];
  double rtol, atol;
  int stages;              /* num_stages (stages=N); 0: the kernel's */
  int refill;              /* tile_options.refill (refill=early|late); 0: the compiler's choice */
  char arch[16];           /* the simulated target (arch=sim90); empty: sim */
  char expect_error[64];
  int compare_print, same_line;
  tile_status interp_status;
  char interp_error[2048];
  char *interp_printed;
  char *llir_copy;
  const char *other;        /* the second run: "simulator" or "GPU" */
  char sim_error[4096];
  SimText sim_printed;
  int sim_failed;
  int tma;                 /* on the GPU: the kernel's loads came by TMA (its metadata lists tensor maps) */
} Run;

static int fail(Run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(Run *r, const char *fmt, ...) {
  fflush(stdout); /* the report follows the lines before it */
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s (num_warps %d, seed %llu): ", r->c->name, r->warps, r->seed);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return FAIL;
}

static char *read_source(const char *file, size_t *len) {
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/%s", TILE_SOURCE_DIR, file);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)size + 1);
  *len = s ? fread(s, 1, (size_t)size, f) : 0;
  if (s) s[*len] = 0;
  fclose(f);
  return s;
}

static int parse_options(Run *r) {
  r->rtol = r->atol = 0;
  for (const char *p = r->c->options; *p;) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (!len) break;
    if (!strncmp(p, "rtol=", 5)) r->rtol = strtod(p + 5, NULL);
    else if (!strncmp(p, "atol=", 5)) r->atol = strtod(p + 5, NULL);
    else if (!strncmp(p, "error=", 6)) snprintf(r->expect_error, sizeof r->expect_error, "%.*s", (int)len - 6, p + 6);
    else if (!strncmp(p, "stages=", 7)) r->stages = atoi(p + 7);
    else if (len == 12 && !strncmp(p, "refill=early", 12)) r->refill = TILE_REFILL_EARLY;
    else if (len == 11 && !strncmp(p, "refill=late", 11)) r->refill = TILE_REFILL_LATE;
    else if (!strncmp(p, "arch=", 5)) snprintf(r->arch, sizeof r->arch, "%.*s", (int)len - 5, p + 5);
    else if (len == 5 && !strncmp(p, "print", 5)) r->compare_print = 1;
    else if (len == 9 && !strncmp(p, "same_line", 9)) r->same_line = 1;
    else return fail(r, "unknown option '%.*s'", (int)len, p);
    p += len;
  }
  return PASS;
}

/* Length of p up to its first comma outside parentheses. */
static size_t item_length(const char *p) {
  size_t n = 0;
  for (int depth = 0; p[n] && (depth || p[n] != ','); n++) depth += (p[n] == '(') - (p[n] == ')');
  return n;
}

static int parse_case(Run *r) {
  int bad = 0, k = 0;
  for (const char *p = r->c->grid; *p && k < 3; k++) {
    size_t len = item_length(p);
    long long v = eval(p, len, &bad);
    if (v < 0 || v > 0x7fffffff) bad = 1;
    r->grid[k] = (unsigned)v;
    p += len + (p[len] == ',');
  }
  for (; k < 3; k++) r->grid[k] = 1;
  if (bad) return fail(r, "bad grid '%s'", r->c->grid);
  r->n_defines = 0;
  for (const char *p = r->c->defines; *p && r->n_defines < 16;) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (!len) break;
    snprintf(r->define_text[r->n_defines], sizeof r->define_text[0], "%.*s", (int)len, p);
    r->defines[r->n_defines] = r->define_text[r->n_defines];
    r->n_defines++;
    p += len;
  }
  if (parse_spec(&r->spec, r->c->args)) return fail(r, "%s", r->spec.error);
  return parse_options(r);
}

static void options_of(const Run *r, tile_options *o, const char *signature, const char *arch) {
  tile_options_init(o);
  o->kernel = r->c->kernel;
  o->signature = signature;
  o->defines = r->defines;
  o->num_defines = r->n_defines;
  o->num_warps = r->warps;
  o->num_stages = r->stages;
  o->refill = r->refill;
  o->arch = arch && r->arch[0] ? r->arch : arch;
}

static int run_interpreter(Run *r, tile_context *ctx, const char *signature) {
  tile_options o;
  options_of(r, &o, signature, NULL);
  tile_arg args[MAX_ARGS];
  tile_args_of(&r->spec, args);
  const char *printed = NULL;
  r->interp_status = tile_run_cpu(ctx, r->c->file, r->source, r->source_len, &o, r->grid, args, r->spec.n, &printed);
  snprintf(r->interp_error, sizeof r->interp_error, "%s", tile_error(ctx));
  r->interp_printed = strdup(printed ? printed : "");
  if (r->expect_error[0]) {
    if (r->interp_status != TILE_ERROR_RUNTIME || !strstr(r->interp_error, r->expect_error))
      return fail(r, "the interpreter should fail with '%s', got status %d: %s", r->expect_error,
                  (int)r->interp_status, r->interp_error);
  } else if (r->interp_status != TILE_OK) {
    return fail(r, "the interpreter failed: %s", r->interp_error);
  }
  return PASS;
}

/* ---- the simulator's half ---------------------------------------------------------------------- */

static int add_flag(const char **flags, int n, char *storage, size_t size, const char *text) {
  if (n >= 60) return n;
  snprintf(storage, size, "%s", text);
  flags[n] = storage;
  return n + 1;
}

/* --module FILE: hand-written code for the sim target, built with the
 * case's defines (those without quotes) and -DNUM_WARPS. */
static int build_given_module(Run *r, SimModule **m, char *err, size_t errsz) {
  static char storage[64][160];
  const char *flags[64];
  char buf[160];
  int n = 0;
  snprintf(buf, sizeof buf, "-I%s/tests/sim", TILE_SOURCE_DIR);
  n = add_flag(flags, n, storage[n], sizeof storage[0], buf);
  snprintf(buf, sizeof buf, "-DNUM_WARPS=%d", r->warps);
  n = add_flag(flags, n, storage[n], sizeof storage[0], buf);
  for (int i = 0; i < r->n_defines; i++) {
    if (strchr(r->defines[i], '"') || strchr(r->defines[i], '\'')) continue;
    snprintf(buf, sizeof buf, "-D%s", r->defines[i]);
    n = add_flag(flags, n, storage[n], sizeof storage[0], buf);
  }
  for (const char *p = r->flags->cflags ? r->flags->cflags : ""; *p;) {
    while (*p == ' ') p++;
    size_t l = strcspn(p, " ");
    if (!l) break;
    snprintf(buf, sizeof buf, "%.*s", (int)l, p);
    n = add_flag(flags, n, storage[n], sizeof storage[0], buf);
    p += l;
  }
  flags[n] = NULL;
  if (sim_module_build_file(r->flags->module, flags, m, err, errsz))
    return fail(r, "building %s failed: %s", r->flags->module, err);
  return PASS;
}

/* The generated code for the sim target; SKIP if this build cannot lower yet. */
static int build_generated_module(Run *r, tile_context *ctx, const char *signature, SimModule **m, char *err,
                                  size_t errsz) {
  tile_options o;
  options_of(r, &o, signature, "sim");
  const char *text = NULL;
  if (tile_emit(ctx, r->c->file, r->source, r->source_len, &o, TILE_STAGE_LLIR, &text) != TILE_OK) {
    if (strstr(tile_error(ctx), "not implemented yet")) {
      const char *e = tile_error(ctx);
      printf("skip %s: the interpreter's half passed; no LLVM IR for the sim target in this build (%.*s)\n",
             r->c->name, (int)strcspn(e, "\n"), e);
      return SKIP;
    }
    return fail(r, "compiling for the sim target failed:\n%s", tile_error(ctx));
  }
  free(r->llir_copy);
  r->llir_copy = strdup(text);
  if (r->flags->print_ir) printf("; ---- %s, num_warps %d\n%s", r->c->name, r->warps, text);
  if (sim_module_build(r->llir_copy, strlen(r->llir_copy), ".ll", NULL, m, err, errsz))
    return fail(r, "clang rejected the generated IR: %s", err);
  return PASS;
}

static int run_simulator(Run *r, SimModule *m, int warp_first) {
  char symbol[200];
  snprintf(symbol, sizeof symbol, "%s_sim_entry", r->c->kernel);
  SimEntry entry = (SimEntry)sim_module_symbol(m, symbol);
  if (!entry) return fail(r, "the module defines no %s", symbol);
  snprintf(symbol, sizeof symbol, "%s_sim_shared_bytes", r->c->kernel);
  const int32_t *shared = sim_module_symbol(m, symbol);
  ParamSlot slots[MAX_ARGS];
  void *params[MAX_ARGS];
  sim_params_of(&r->spec, slots, params);
  SimBuffer buffers[MAX_ARGS];
  int n = 0;
  for (int i = 0; i < r->spec.n; i++) {
    Arg *a = &r->spec.args[i];
    if (a->kind != A_BUFFER) continue;
    memcpy(a->data[1], a->init, data_bytes(a));
    buffers[n++] = (SimBuffer){a->name, a->data[1], data_bytes(a)};
  }
  SimLaunch L = {0};
  L.kernel = r->c->kernel;
  L.entry = entry;
  L.params = params;
  memcpy(L.grid, r->grid, sizeof L.grid);
  L.num_warps = r->warps;
  L.stack_bytes = r->flags->stack_bytes;
  L.warp_first = warp_first;
  L.shared_bytes = shared ? (size_t)*shared : SIM_MAX_SHARED;
  L.buffers = buffers;
  L.n_buffers = n;
  sim_text_free(&r->sim_printed);
  L.printed = &r->sim_printed;
  r->sim_failed = sim_run(&L) != 0;
  snprintf(r->sim_error, sizeof r->sim_error, "%s", L.error);
  return PASS;
}

/* ---- the GPU's half (--gpu) ---------------------------------------------------------------------- */

/* The target a case is compiled for on the GPU: the one its simulated target stands for. */
static const char *gpu_arch_of(const Run *r) {
  if (r->flags->gpu_arch) return strcmp(r->flags->gpu_arch, "native") ? r->flags->gpu_arch : NULL;
  return !strcmp(r->arch, "sim90") ? "sm_90a" : "sm_80";
}

/* The driver itself writes device_print's lines and device_assert's reports
 * to the process's stdout and stderr: they are caught in files. */
typedef struct Capture {
  int saved[2];
  FILE *file[2];
} Capture;

static void capture_begin(Capture *c) {
  fflush(stdout), fflush(stderr);
  for (int i = 0; i < 2; i++) {
    c->file[i] = tmpfile();
    c->saved[i] = c->file[i] ? dup(i + 1) : -1;
    if (c->saved[i] >= 0) dup2(fileno(c->file[i]), i + 1);
  }
}

/* Puts stdout and stderr back; text[i] (malloc'ed) is what went to each. */
static void capture_end(Capture *c, char *text[2]) {
  fflush(stdout), fflush(stderr);
  for (int i = 0; i < 2; i++) {
    text[i] = NULL;
    if (c->saved[i] >= 0) dup2(c->saved[i], i + 1), close(c->saved[i]);
    if (!c->file[i]) continue;
    int fd = fileno(c->file[i]);
    off_t n = lseek(fd, 0, SEEK_END);
    text[i] = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text[i]) {
      lseek(fd, 0, SEEK_SET);
      ssize_t got = read(fd, text[i], (size_t)n);
      text[i][got > 0 ? got : 0] = 0;
    }
    fclose(c->file[i]);
  }
}

/* Each buffer's block (guards included) copied to the device; args point at the data in it. */
static int upload(Run *r, tile_context *ctx, void **dev, tile_arg *args) {
  for (int i = 0; i < r->spec.n; i++) {
    Arg *a = &r->spec.args[i];
    if (a->kind != A_BUFFER) continue;
    memcpy(a->data[1], a->init, data_bytes(a));
    if (tile_malloc(ctx, &dev[i], block_bytes(a)) != TILE_OK ||
        tile_memcpy_to_device(ctx, dev[i], a->block[1], block_bytes(a)) != TILE_OK)
      return fail(r, "device buffer '%s': %s", a->name, tile_error(ctx));
    args[i].data = (unsigned char *)dev[i] + (a->data[1] - a->block[1]);
  }
  return PASS;
}

static int download(Run *r, tile_context *ctx, void **dev) {
  for (int i = 0; i < r->spec.n; i++) {
    Arg *a = &r->spec.args[i];
    if (a->kind == A_BUFFER && tile_memcpy_to_host(ctx, a->block[1], dev[i], block_bytes(a)) != TILE_OK)
      return fail(r, "copying '%s' back: %s", a->name, tile_error(ctx));
  }
  return PASS;
}

/* Launches and waits; what the kernel printed becomes sim_printed, a failure sim_error. */
static void launch_captured(Run *r, tile_context *ctx, tile_kernel *k, const tile_arg *args) {
  Capture c;
  char *text[2];
  capture_begin(&c);
  tile_status s = tile_launch(k, r->grid, NULL, args, r->spec.n);
  if (s == TILE_OK) s = tile_synchronize(ctx);
  capture_end(&c, text);
  r->sim_failed = s != TILE_OK;
  snprintf(r->sim_error, sizeof r->sim_error, "%s%s%s%s", r->sim_failed ? tile_error(ctx) : "",
           text[1] ? "\n" : "", text[1] ? text[1] : "", text[0] && r->sim_failed ? text[0] : "");
  sim_text_free(&r->sim_printed);
  r->sim_printed.data = text[0];
  r->sim_printed.len = text[0] ? strlen(text[0]) : 0;
  free(text[1]);
}

static int run_gpu(Run *r, tile_context *ctx, const char *signature) {
  if (r->expect_error[0] && !strstr(r->expect_error, "device_assert")) {
    printf("skip %s: GPU code has no bounds checks (compute-sanitizer memcheck finds such accesses)\n", r->c->name);
    return SKIP;
  }
  if (tile_context_on_cpu(ctx) || tile_device_open(ctx, 0) != TILE_OK) {
    printf("SKIP: %s: no GPU to run on (%s)\n", r->c->name, tile_context_on_cpu(ctx) ? "TILE_INTERPRET" : tile_error(ctx));
    return SKIP;
  }
  tile_options o;
  options_of(r, &o, signature, NULL);
  o.arch = gpu_arch_of(r);
  tile_kernel *k = NULL;
  if (tile_kernel_create(ctx, r->c->file, r->source, r->source_len, &o, &k) != TILE_OK)
    return fail(r, "compiling for %s failed:\n%s", o.arch ? o.arch : "the GPU's target", tile_error(ctx));
  void *dev[MAX_ARGS] = {0};
  tile_arg args[MAX_ARGS];
  tile_args_of(&r->spec, args);
  int rc = upload(r, ctx, dev, args);
  if (rc == PASS) launch_captured(r, ctx, k, args);
  const char *meta = tile_kernel_metadata(k);
  r->tma = meta && strstr(meta, "\"tensor_maps\"");
  if (rc == PASS && !r->sim_failed) rc = download(r, ctx, dev);
  for (int i = 0; i < r->spec.n; i++) tile_free(ctx, dev[i]);
  tile_kernel_destroy(k);
  return rc;
}

/* device_assert on the GPU: the driver's report ("FILE:LINE: ... block: [x,y,z], thread: [...]
 * Assertion `MESSAGE` failed.") names the interpreter's line and message, and a program at or
 * after the interpreter's (which stops at the first that fails; on the GPU any failing one may
 * report first). */
static int compare_gpu_assert(Run *r) {
  const char *e = r->interp_error, *loc = strstr(e, "', "), *end = loc ? strstr(loc, " (program ") : NULL;
  const char *msg = strstr(e, "device_assert failed: ");
  unsigned x, y, z, gx, gy, gz;
  if (!end || !msg || sscanf(end, " (program %u, %u, %u)", &x, &y, &z) != 3)
    return fail(r, "cannot read the interpreter's error: %s", e);
  msg += strlen("device_assert failed: ");
  const char *lane = strstr(msg, " (lane ");
  char where[256], assertion[256];
  snprintf(where, sizeof where, "%.*s:", (int)(end - loc - 3), loc + 3);
  snprintf(assertion, sizeof assertion, "Assertion `%.*s` failed", lane ? (int)(lane - msg) : (int)strlen(msg), msg);
  const char *block = strstr(r->sim_error, "block: [");
  if (!strstr(r->sim_error, where) || !strstr(r->sim_error, assertion) || !block ||
      sscanf(block, "block: [%u,%u,%u]", &gx, &gy, &gz) != 3)
    return fail(r, "the GPU's report does not name %s, \"%s\" and a block:\n  interpreter: %s\n  GPU: %s", where,
                assertion, e, r->sim_error);
  if (gz * 65536ull * 65536ull + gy * 65536ull + gx < z * 65536ull * 65536ull + y * 65536ull + x)
    return fail(r, "the GPU's failing program (%u, %u, %u) comes before the interpreter's first (%u, %u, %u)", gx, gy,
                gz, x, y, z);
  return PASS;
}

/* ---- comparing ---------------------------------------------------------------------------------- */

/* "(program 3, 0, 0)" in a message, or "". */
static void program_in(const char *message, char *out, size_t size) {
  const char *p = strstr(message, "(program ");
  size_t len = p ? strcspn(p, ")") + 1 : 0;
  snprintf(out, size, "%.*s", (int)len, p ? p : "");
}

static int compare_errors(Run *r) {
  if (!r->expect_error[0]) return r->sim_failed ? fail(r, "the %s failed: %s", r->other, r->sim_error) : PASS;
  if (!r->sim_failed) return fail(r, "the %s should fail as the interpreter did (%s)", r->other, r->interp_error);
  if (r->flags->gpu) return compare_gpu_assert(r);
  if (!strstr(r->sim_error, r->expect_error))
    return fail(r, "the simulator failed without '%s': %s", r->expect_error, r->sim_error);
  char a[64], b[64];
  program_in(r->interp_error, a, sizeof a);
  program_in(r->sim_error, b, sizeof b);
  if (strcmp(a, b)) return fail(r, "different programs failed:\n  interpreter: %s\n  simulator: %s", r->interp_error, r->sim_error);
  const char *loc = strstr(r->interp_error, "', "), *end = loc ? strstr(loc, " (program") : NULL;
  if (r->same_line && loc && end) {
    char where[256];
    snprintf(where, sizeof where, "%.*s", (int)(end - loc - 3), loc + 3);
    if (!strstr(r->sim_error, where))
      return fail(r, "the simulator's error does not name %s:\n  interpreter: %s\n  simulator: %s", where,
                  r->interp_error, r->sim_error);
  }
  return PASS;
}

static int same_element(const Run *r, const DtypeInfo *t, const unsigned char *a, const unsigned char *b, size_t k,
                        double *worst) {
  if (bits_at(t, a, k) == bits_at(t, b, k)) return 1;
  if (t->kind != K_FLOAT) return 0;
  double u = float_at(t, a, k), v = float_at(t, b, k);
  if (isnan(u) && isnan(v)) return 1;
  if ((r->rtol == 0 && r->atol == 0) || isnan(u) || isnan(v) || isinf(u) || isinf(v)) return 0;
  double diff = fabs(u - v), scale = fmax(fabs(u), fabs(v));
  if (scale > 0 && diff / scale > *worst) *worst = diff / scale;
  return diff <= r->atol + r->rtol * scale;
}

static void show_element(const DtypeInfo *t, const unsigned char *p, size_t k, char *out, size_t size) {
  uint64_t b = bits_at(t, p, k);
  if (t->kind == K_FLOAT) snprintf(out, size, "%.9g (0x%llx)", float_at(t, p, k), (unsigned long long)b);
  else if (t->kind == K_SINT) snprintf(out, size, "%lld", (long long)(b << (64 - 8 * t->bytes)) >> (64 - 8 * t->bytes));
  else snprintf(out, size, "%llu", (unsigned long long)b);
}

static int compare_buffer(Run *r, const Arg *a, double *worst) {
  if (guard_broken(a, 0)) return fail(r, "the interpreter wrote outside buffer '%s'", a->name);
  if (guard_broken(a, 1)) return fail(r, "the %s wrote outside buffer '%s'", r->other, a->name);
  size_t bad = 0;
  char x[96], y[96];
  for (size_t k = 0; k < a->count; k++) {
    if (same_element(r, a->dtype, a->data[0], a->data[1], k, worst)) continue;
    if (bad++ >= MAX_SHOWN) continue;
    show_element(a->dtype, a->data[0], k, x, sizeof x);
    show_element(a->dtype, a->data[1], k, y, sizeof y);
    fprintf(stderr, "  '%s'[%zu]: interpreter %s, %s %s\n", a->name, k, x, r->other, y);
  }
  if (bad) return fail(r, "buffer '%s' (%s[%zu]): %zu of %zu elements differ (rtol %g, atol %g)", a->name, a->dtype->name,
                       a->count, bad, a->count, r->rtol, r->atol);
  return PASS;
}

static int compare_strings(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Splits text into lines (in place) and sorts them; returns the count. */
static size_t sorted_lines(char *text, char ***out) {
  size_t n = 0, cap = 64;
  char **lines = malloc(cap * sizeof *lines);
  for (char *p = text; lines && *p;) {
    char *nl = strchr(p, '\n');
    if (n == cap) lines = realloc(lines, (cap *= 2) * sizeof *lines);
    if (!lines) break;
    lines[n++] = p;
    if (!nl) break;
    *nl = 0;
    p = nl + 1;
  }
  if (lines) qsort(lines, n, sizeof *lines, compare_strings);
  *out = lines;
  return lines ? n : 0;
}

/* device_print: the same lines (threads print in any order on a GPU). */
static int compare_printed(Run *r) {
  char *a = strdup(r->interp_printed), *b = strdup(r->sim_printed.data ? r->sim_printed.data : "");
  char **la, **lb;
  size_t na = sorted_lines(a, &la), nb = sorted_lines(b, &lb), i = 0;
  while (i < na && i < nb && !strcmp(la[i], lb[i])) i++;
  int rc = PASS;
  if (i < na || i < nb)
    rc = fail(r, "printed text differs (%zu lines from the interpreter, %zu from the %s); first difference in "
                 "sorted order:\n  interpreter: %s\n  %-12s %s",
              na, nb, r->other, i < na ? la[i] : "(none)", r->other, i < nb ? lb[i] : "(none)");
  free(la), free(lb), free(a), free(b);
  return rc;
}

static int compare(Run *r, size_t *elements, double *worst) {
  int rc = compare_errors(r);
  if (rc != PASS || r->expect_error[0]) return rc;
  for (int i = 0; i < r->spec.n; i++) {
    const Arg *a = &r->spec.args[i];
    if (a->kind != A_BUFFER) continue;
    if ((rc = compare_buffer(r, a, worst)) != PASS) return rc;
    *elements += a->count;
  }
  return r->compare_print ? compare_printed(r) : PASS;
}

/* ---- driving -------------------------------------------------------------------------------------- */

/* Keeps the IR of a failed run beside the test's working directory. */
static void save_ir(Run *r, tile_context *ctx, const char *signature) {
  char path[512];
  if (r->llir_copy) {
    snprintf(path, sizeof path, "sim_diff-%s-w%d.ll", r->c->name, r->warps);
    FILE *f = fopen(path, "w");
    if (f) fputs(r->llir_copy, f), fclose(f), fprintf(stderr, "  LLVM IR: %s\n", path);
  }
  tile_options o;
  options_of(r, &o, signature, "sim");
  const char *text = NULL;
  if (tile_emit(ctx, r->c->file, r->source, r->source_len, &o, TILE_STAGE_TGIR, &text) != TILE_OK) return;
  snprintf(path, sizeof path, "sim_diff-%s-w%d.tgir", r->c->name, r->warps);
  FILE *f = fopen(path, "w");
  if (f) fputs(text, f), fclose(f), fprintf(stderr, "  GPU-layout IR: %s\n", path);
}

/* The simulator's runs, compared: threads round robin, then each warp as
 * far as it can first (sim.c's two schedules: a missing barrier between
 * warps shows in one or the other). */
static int run_on_simulator(Run *r, tile_context *ctx, const char *signature, size_t *elements, double *worst) {
  char err[16384];
  SimModule *m = NULL;
  int rc = r->flags->module ? build_given_module(r, &m, err, sizeof err)
                            : build_generated_module(r, ctx, signature, &m, err, sizeof err);
  for (int warp_first = 0; rc == PASS && warp_first < 2; warp_first++) {
    r->other = warp_first ? "simulator (warp-first schedule)" : "simulator";
    *elements = 0;
    rc = run_simulator(r, m, warp_first);
    if (rc == PASS) rc = compare(r, elements, worst);
  }
  sim_module_close(m);
  return rc;
}

static int run_on_gpu(Run *r, tile_context *ctx, const char *signature, size_t *elements, double *worst) {
  int rc = run_gpu(r, ctx, signature);
  return rc == PASS ? compare(r, elements, worst) : rc;
}

static int run_warps(Run *r, tile_context *ctx, const char *signature) {
  size_t elements = 0;
  double worst = 0;
  int rc = r->flags->gpu ? run_on_gpu(r, ctx, signature, &elements, &worst)
                         : run_on_simulator(r, ctx, signature, &elements, &worst);
  if (rc == PASS)
    printf("ok   %s (num_warps %d%s%s%s): %s\n", r->c->name, r->warps, r->flags->gpu ? ", " : "",
           r->flags->gpu ? (gpu_arch_of(r) ? gpu_arch_of(r) : "the GPU's target") : "", r->tma ? ", TMA" : "",
           r->expect_error[0] ? "both runs failed in the same program"
           : r->flags->gpu    ? "every buffer matches"
                              : "every buffer matches, under both schedules");
  if (rc == PASS && worst > 0) printf("     largest relative difference %.3g over %zu elements\n", worst, elements);
  if (rc == FAIL && !r->flags->gpu) save_ir(r, ctx, signature);
  return rc;
}

/* --gpu: each run on the GPU in a process of its own, as a fault or a
 * device_assert leaves the process's CUDA context unusable.  This process
 * never touches CUDA (the interpreter's run needs none), so forking is safe. */
static int run_warps_alone(Run *r, tile_context *ctx, const char *signature) {
  fflush(stdout), fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return fail(r, "fork: %s", strerror(errno));
  if (pid == 0) _exit(run_warps(r, ctx, signature));
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return fail(r, "waitpid: %s", strerror(errno));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return fail(r, "the GPU run was killed by signal %d", WTERMSIG(status));
}

/* --show N: what the case computes, from the interpreter's run. */
static void show_buffers(const Run *r) {
  char text[96];
  for (int i = 0; i < r->spec.n; i++) {
    const Arg *a = &r->spec.args[i];
    if (a->kind != A_BUFFER) continue;
    printf("  %s (%s[%zu]):", a->name, a->dtype->name, a->count);
    for (size_t k = 0; k < a->count && k < (size_t)r->flags->show; k++) {
      show_element(a->dtype, a->data[0], k, text, sizeof text);
      printf(" %.*s", (int)strcspn(text, " "), text);
    }
    printf("\n");
  }
  if (r->interp_printed[0]) printf("  printed:\n%.2000s", r->interp_printed);
  if (r->interp_error[0]) printf("  error: %s\n", r->interp_error);
}

static uint64_t name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int run_case(const Case *c, const Flags *flags) {
  Run *r = calloc(1, sizeof *r);
  r->c = c;
  r->flags = flags;
  r->seed = flags->seed;
  r->warps = atoi(c->warps);
  r->other = flags->gpu ? "GPU" : "simulator";
  rng_state = flags->seed ^ name_hash(c->name);
  int rc = parse_case(r);
  if (rc == PASS && !(r->source = read_source(c->file, &r->source_len))) rc = fail(r, "cannot read tests/%s", c->file);
  if (rc == PASS && make_buffers(&r->spec)) rc = fail(r, "%s", r->spec.error);
  tile_context *ctx = NULL;
  tile_context_create(&ctx);
  char signature[1024];
  signature_of(&r->spec, signature, sizeof signature);
  if (rc == PASS) rc = run_interpreter(r, ctx, signature);
  if (rc == PASS && flags->show) show_buffers(r);
  if (rc == PASS && flags->interp_only) printf("ok   %s: the interpreter's half\n", c->name);
  for (const char *w = c->warps; rc == PASS && !flags->interp_only && *w; w += strcspn(w, ",") + (w[strcspn(w, ",")] == ',')) {
    r->warps = atoi(w);
    if (flags->warps && r->warps != flags->warps) continue;
    rc = flags->gpu ? run_warps_alone(r, ctx, signature) : run_warps(r, ctx, signature);
  }
  tile_context_destroy(ctx);
  free_buffers(&r->spec);
  free(r->source), free(r->interp_printed), free(r->llir_copy);
  sim_text_free(&r->sim_printed);
  free(r);
  return rc;
}

static const Case *find_case(const char *name) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (!strcmp(cases[i].name, name)) return &cases[i];
  return NULL;
}

static void print_rerun(const Flags *f, const char *name) {
  fprintf(stderr, "rerun: sim_diff --seed %llu", f->seed);
  if (f->warps) fprintf(stderr, " --warps %d", f->warps);
  if (f->gpu) fprintf(stderr, " --gpu");
  if (f->gpu_arch) fprintf(stderr, " --gpu-arch %s", f->gpu_arch);
  if (f->module) fprintf(stderr, " --module %s", f->module);
  if (f->cflags) fprintf(stderr, " --cflags '%s'", f->cflags);
  fprintf(stderr, " %s\n", name);
}

static void usage(void) {
  printf("usage: sim_diff [options] CASE...  (or --all; --list shows the cases)\n"
         "  --seed N        the random inputs' seed (default: a fresh one, printed on failure)\n"
         "  --warps N       only num_warps N\n"
         "  --print-ir      print the generated LLVM IR\n"
         "  --interp-only   run only the interpreter's half (checks the case itself)\n"
         "  --show N        print the first N elements of each buffer after the interpreter's run\n"
         "  --module FILE   run FILE (.ll, or .c against tile_sim.h) instead of the generated code;\n"
         "                  built with -DNUM_WARPS=N and the case's -D defines\n"
         "  --cflags FLAGS  more flags for --module\n"
         "  --stack-kib N   stack per simulated thread (default 256)\n"
         "  --gpu           run the second half on the GPU (each num_warps in its own process), compiled\n"
         "                  for sm_80 (arch=sim90 cases: sm_90a), instead of on the simulator\n"
         "  --gpu-arch A    with --gpu: compile every case for A (sm_80, sm_90a, ...; native: the GPU's)\n"
         "A failed run leaves sim_diff-CASE-wN.ll and .tgir in the current directory.\n");
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  Flags flags = {0};
  flags.seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 20);
  const char *names[256];
  int n = 0, all = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--list")) {
      for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) printf("%s\n", cases[k].name);
      return 0;
    }
    if (!strcmp(a, "--all")) all = 1;
    else if (!strcmp(a, "--print-ir")) flags.print_ir = 1;
    else if (!strcmp(a, "--interp-only")) flags.interp_only = 1;
    else if (!strcmp(a, "--seed") && i + 1 < argc) flags.seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(a, "--warps") && i + 1 < argc) flags.warps = atoi(argv[++i]);
    else if (!strcmp(a, "--module") && i + 1 < argc) flags.module = argv[++i];
    else if (!strcmp(a, "--cflags") && i + 1 < argc) flags.cflags = argv[++i];
    else if (!strcmp(a, "--show") && i + 1 < argc) flags.show = atoi(argv[++i]);
    else if (!strcmp(a, "--stack-kib") && i + 1 < argc) flags.stack_bytes = (size_t)atoi(argv[++i]) << 10;
    else if (!strcmp(a, "--gpu")) flags.gpu = 1;
    else if (!strcmp(a, "--gpu-arch") && i + 1 < argc) flags.gpu_arch = argv[++i];
    else if (a[0] == '-') return usage(), 2;
    else if (n < 256) names[n++] = a;
  }
  if (!n && !all) return usage(), 2;
  int passed = 0, failed = 0, skipped = 0;
  size_t total = all ? sizeof cases / sizeof cases[0] : (size_t)n;
  for (size_t i = 0; i < total; i++) {
    const Case *c = all ? &cases[i] : find_case(names[i]);
    if (!c) {
      fprintf(stderr, "no case '%s' (sim_diff --list)\n", names[i]);
      failed++;
      continue;
    }
    int rc = run_case(c, &flags);
    passed += rc == PASS, failed += rc == FAIL, skipped += rc == SKIP;
    if (rc == FAIL) print_rerun(&flags, c->name);
  }
  return failed ? 1 : passed ? 0 : skipped ? SKIP : 0;
}
