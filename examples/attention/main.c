/* Fused attention from C: attention.tl's forward (O and the logsumexp M)
 * and backward (Delta, then dK and dV, then dQ) on [B, H, N, D] tensors of
 * fp16 or bf16, and the forward alone in fp8 (e5m2 as Triton's tutorial
 * uses it, or e4m3: Q, K, O [B, H, N, D], V stored [B, H, D, N] since
 * Hopper's fp8 wgmma reads its B operand only along K), causal and not,
 * checked against a reference computed here
 * in double, with every output poisoned before the run; prints each pass's
 * time and TFLOP/s as Triton's tutorial 06 counts them (forward 4 B H N^2 D,
 * halved when causal; backward 2.5 times the forward).
 *
 *   attention [--quick] [--cpu] [--require-gpu] [--seed N] [-b B] [-H H] [-n N,...] [-d D,...]
 *             [--dtype fp16,bf16,fp8e5,fp8e4nv] [--causal 0,1] [--check auto|full|sample|off] [--forward-only]
 *             [--gpu-blocks] [--fwd BMxBN:W:S] [--dkdv BMxBN:W:S] [--dq BMxBN:W:S] [--reps R] [--csv] [attention.tl]
 *
 * The check: `full` compares every element with the reference (B H N^2 D
 * work: small problems); `sample` the first and the last batch x head, at
 * 32 rows (O, M, dQ, each from scratch) and 32 key positions (dK, dV, from
 * scratch but for the rows' logsumexp and rowsum(O * dO), which come from
 * the kernels' M and O, themselves checked on the sampled rows); `auto` is
 * full up to 2^30 multiply-adds, else sample.  Tolerances come from the
 * reference (computed from the inputs as rounded to the dtype): each
 * element's error is bounded by the rounding unit u of the dtype (2^-11,
 * 2^-8, 2^-3, 2^-4) times the sum of the magnitudes that the rounded
 * operands (P, dS, O) enter, plus the rounding of the result, plus what
 * P's values below the dtype's smallest normal can lose. */
#include "../common/example.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { GUARD = 16, MAX_LIST = 8, SAMPLES = 32 };
enum { CHECK_AUTO, CHECK_FULL, CHECK_SAMPLE, CHECK_OFF };

typedef struct Blocks {
  int m, n, warps, stages; /* BLOCK_M, BLOCK_N, num_warps, num_stages; m == 0: the default */
} Blocks;

typedef struct Options {
  int batch, heads;
  int seqs[MAX_LIST], num_seqs;
  int dims[MAX_LIST], num_dims;
  const char *dtypes[4];
  int num_dtypes;
  int causal[2], num_causal;
  int check, backward, csv, reps;
  int gpu_blocks;       /* the GPU's blocks even on the interpreter or with --quick */
  Blocks fwd, dkdv, dq; /* from the command line; m == 0: per head dim, below */
} Options;

/* The compiled kernels of one head dim and mask (the forward's blocks differ in fp8). */
typedef struct Kernels {
  tile_kernel *fwd, *fwd_fp8, *pre, *dkdv, *dq;
  Blocks bf, bf8, bk, bq;
} Kernels;

/* The element types: the bits of a value are those of a float with this
 * many exponent and mantissa bits; e4m3 (fp8e4nv) has no infinities, its
 * largest magnitude code is NaN. */
typedef struct Format {
  const char *name;
  int exponent_bits, mantissa_bits, e4m3;
  int fp8; /* one byte an element; V stored [B, H, D, N]; the forward only */
} Format;

static const Format FORMATS[] = {
    {"fp16", 5, 10, 0, 0}, {"bf16", 8, 7, 0, 0}, {"fp8e5", 5, 2, 0, 1}, {"fp8e4nv", 4, 3, 1, 1}};

/* One problem: host tensors (a value's bits in 16 bits whatever the dtype) and their device copies. */
typedef struct Problem {
  int b, h, n, d, causal;
  const Format *format;
  const char *dtype;
  double sm_scale;  /* as the kernel sees it: rounded to fp32 */
  size_t numel;     /* b h n d */
  uint16_t *q, *k, *v, *dout, *o, *dq, *dk, *dv;
  float *m;
  void *d_q, *d_k, *d_v, *d_o, *d_do, *d_m, *d_delta, *d_dq, *d_dk, *d_dv; /* their device copies, and Delta's */
} Problem;

typedef struct Run {
  Kernels *k;
  Problem *p;
  tile_arg fwd[9], pre[9], dkdv[12], dq[11];
  unsigned gf[3], gp[3], gk[3], gq[3];
} Run;

/* ---- numbers ---- */

static int bias(const Format *f) { return (1 << (f->exponent_bits - 1)) - 1; }

static double value_of(const Format *f, uint16_t bits) {
  int m = f->mantissa_bits, top = (1 << f->exponent_bits) - 1;
  int exponent = bits >> m & top, mantissa = bits & ((1 << m) - 1), sign = bits >> (f->exponent_bits + m) & 1;
  double v = ldexp(exponent ? (1 << m) + mantissa : mantissa, (exponent ? exponent : 1) - bias(f) - m);
  if (f->e4m3 ? exponent == top && mantissa == (1 << m) - 1 : exponent == top) v = f->e4m3 || mantissa ? NAN : INFINITY;
  return sign ? -v : v;
}

static double value(const Problem *p, uint16_t h) { return value_of(p->format, h); }

/* The nearest value's bits (ties to even) of finite, modest x: no overflow. */
static uint16_t bits_of(const Format *f, double x) {
  int m = f->mantissa_bits, sign = x < 0;
  double a = fabs(x);
  int e;
  frexp(a, &e); /* a = g 2^e, g in [0.5, 1) */
  int exponent = e - 1 < 1 - bias(f) ? 1 - bias(f) : e - 1;
  double scaled = a ? nearbyint(ldexp(a, m - exponent)) : 0; /* the significand, m + 1 bits (fewer when subnormal) */
  if (scaled >= 2 << m) scaled /= 2, exponent++;
  int code = scaled < 1 << m ? (int)scaled : (exponent + bias(f)) << m | ((int)scaled - (1 << m));
  return (uint16_t)(sign << (f->exponent_bits + m) | code);
}

/* Close to a standard normal (Irwin-Hall of four uniforms), cheap enough
 * for the 2^30 values of the largest benchmark. */
static double normal_fast(Example *ex) {
  double u = example_uniform(ex) * 4096, sum = 0;
  for (int i = 0; i < 4; i++) {
    double whole = floor(u);
    sum += whole / 4096 + (u - whole) / 4096; /* four 12-bit uniforms from one draw, plus its rest */
    u = (u - whole) * 4096;
  }
  return (sum - 2) * 1.7320508075688772;
}

static uint16_t *random_tensor(Example *ex, const Problem *p) {
  uint16_t *t = malloc(p->numel * sizeof *t);
  for (size_t i = 0; i < p->numel; i++) {
    double x = normal_fast(ex);
    t[i] = bits_of(p->format, x);
  }
  return t;
}

/* ---- the kernels ---- */

static Blocks blocks_or(Blocks given, Blocks fallback) { return given.m ? given : fallback; }

/* Per head dim (and mask, for the forward at 64) on the GPU, the fastest of
 * those timed on an H200 at B=4 H=32 N=4096
 * (bench/results/h200-2026-11-28b/attention_*_configs.txt, fp8:
 * h200-2026-11-28c/attention_fp8*_configs.txt, the causal forward:
 * h200-2026-11-28e/attention_fwd_configs.txt, dQ at head dim 128:
 * h200-2026-11-29b/attention_bwd_configs.txt); small blocks on the
 * interpreter, so that N = 67 takes several of each. */
static void choose_blocks(const Options *o, int d, int causal, int small, Kernels *k) {
  Blocks fwd = d > 64 ? (Blocks){128, 128, 8, 2} : causal ? (Blocks){64, 64, 4, 2} : (Blocks){128, 64, 8, 3};
  Blocks fwd_fp8 = d > 64 ? fwd : (Blocks){64, 64, 4, 3};
  Blocks dkdv = d > 64 ? (Blocks){64, 128, 8, 2} : (Blocks){128, 128, 8, 3};
  Blocks dq = d > 64 ? (Blocks){128, 64, 8, 3} : (Blocks){64, 64, 4, 3};
  if (small) fwd = fwd_fp8 = (Blocks){32, 16, 4, 2}, dkdv = (Blocks){16, 32, 4, 2}, dq = (Blocks){32, 16, 4, 2};
  k->bf = blocks_or(o->fwd, fwd);
  k->bf8 = blocks_or(o->fwd, fwd_fp8);
  k->bk = blocks_or(o->dkdv, dkdv);
  k->bq = blocks_or(o->dq, dq);
}

static tile_kernel *compile(Example *ex, const char *name, int d, const Blocks *b, int causal) {
  char dim[32], bm[32], bn[32];
  snprintf(dim, sizeof dim, "HEAD_DIM=%d", d);
  snprintf(bm, sizeof bm, "BLOCK_M=%d", b->m);
  snprintf(bn, sizeof bn, "BLOCK_N=%d", b->n);
  const char *defines[] = {dim, bm, bn, causal ? "CAUSAL=True" : "CAUSAL=False"};
  tile_options opts;
  tile_options_init(&opts);
  opts.kernel = name;
  opts.defines = defines;
  opts.num_defines = b->n ? 4 : 2; /* the preprocess takes HEAD_DIM and BLOCK_M only */
  opts.num_warps = b->warps;
  opts.num_stages = b->stages;
  return example_kernel(ex, &opts);
}

static Kernels make_kernels(Example *ex, const Options *o, int d, int causal) {
  Kernels k;
  choose_blocks(o, d, causal, (ex->on_cpu || ex->quick) && !o->gpu_blocks, &k);
  static const Blocks pre = {64, 0, 4, 1};
  k.fwd = compile(ex, "attn_fwd", d, &k.bf, causal);
  k.fwd_fp8 = compile(ex, "attn_fwd", d, &k.bf8, causal);
  k.pre = compile(ex, "attn_bwd_preprocess", d, &pre, causal);
  k.dkdv = compile(ex, "attn_bwd_dkdv", d, &k.bk, causal);
  k.dq = compile(ex, "attn_bwd_dq", d, &k.bq, causal);
  return k;
}

static void destroy_kernels(Kernels *k) {
  tile_kernel_destroy(k->fwd), tile_kernel_destroy(k->fwd_fp8), tile_kernel_destroy(k->pre);
  tile_kernel_destroy(k->dkdv), tile_kernel_destroy(k->dq);
}

/* ---- running ---- */

static void grid(unsigned g[3], const Problem *p, int block) {
  g[0] = (unsigned)example_cdiv(p->n, block), g[1] = (unsigned)(p->b * p->h), g[2] = 1;
}

/* attn_bwd_preprocess's strides (z, h, token, dim), H and N_CTX: its last six arguments. */
static void tail_args(tile_arg *a, const Problem *p) {
  a[0] = tile_int((long long)p->h * p->n * p->d), a[1] = tile_int((long long)p->n * p->d);
  a[2] = tile_int(p->d), a[3] = tile_int(1), a[4] = tile_int(p->h), a[5] = tile_int(p->n);
}

static void make_run(Run *r, Kernels *k, Problem *p) {
  size_t n = p->numel, rows = (size_t)p->b * p->h * p->n;
  const char *t = p->dtype;
  tile_arg q = tile_buffer(p->d_q, t, n), kk = tile_buffer(p->d_k, t, n), v = tile_buffer(p->d_v, t, n);
  tile_arg o = tile_buffer(p->d_o, t, n), dout = tile_buffer(p->d_do, t, n), scale = tile_float(p->sm_scale);
  tile_arg m = tile_buffer(p->d_m, "fp32", rows), delta = tile_buffer(p->d_delta, "fp32", rows);
  r->k = k, r->p = p;
  tile_arg fwd[] = {q, kk, v, scale, m, o, tile_int(p->b), tile_int(p->h), tile_int(p->n)};
  memcpy(r->fwd, fwd, sizeof fwd);
  tile_arg pre[] = {o, dout, delta};
  memcpy(r->pre, pre, sizeof pre);
  tail_args(r->pre + 3, p);
  tile_arg dkdv[] = {q, kk, v, scale, dout, tile_buffer(p->d_dk, t, n), tile_buffer(p->d_dv, t, n), m, delta,
                     tile_int(p->b), tile_int(p->h), tile_int(p->n)};
  memcpy(r->dkdv, dkdv, sizeof dkdv);
  tile_arg dq[] = {q, kk, v, scale, dout, tile_buffer(p->d_dq, t, n), m, delta, tile_int(p->b), tile_int(p->h),
                   tile_int(p->n)};
  memcpy(r->dq, dq, sizeof dq);
  grid(r->gf, p, p->format->fp8 ? k->bf8.m : k->bf.m), grid(r->gp, p, 64);
  grid(r->gk, p, k->bk.n), grid(r->gq, p, k->bq.m);
}

static void launch_forward(Example *ex, void *user) {
  Run *r = user;
  EXAMPLE_TRY(ex, tile_launch(r->p->format->fp8 ? r->k->fwd_fp8 : r->k->fwd, r->gf, NULL, r->fwd, 9));
}

static void launch_backward(Example *ex, void *user) {
  Run *r = user;
  EXAMPLE_TRY(ex, tile_launch(r->k->pre, r->gp, NULL, r->pre, 9));
  EXAMPLE_TRY(ex, tile_launch(r->k->dkdv, r->gk, NULL, r->dkdv, 12));
  EXAMPLE_TRY(ex, tile_launch(r->k->dq, r->gq, NULL, r->dq, 11));
}

/* ---- the reference ---- */

/* One batch x head in double: its slices of the inputs, and the kernels' outputs. */
typedef struct Head {
  const Problem *p;
  size_t base;                  /* element offset of the head's [N, D] slice */
  double *q, *k, *v, *dout, *o; /* [N, D]: inputs, and the kernel's O */
  double *vmax;                 /* [D]: max |v| over the keys */
  int backward;                 /* dQ, dK and dV were computed */
} Head;

/* Errors and verdicts of one output tensor. */
typedef struct Tally {
  const char *name;
  long bad;
  double worst; /* the largest error / tolerance */
} Tally;

static double *slice(const Problem *p, const uint16_t *t, size_t base) {
  size_t count = (size_t)p->n * p->d;
  double *s = malloc(count * sizeof *s);
  for (size_t i = 0; i < count; i++) s[i] = value(p, t[base + i]);
  return s;
}

static Head head_of(const Problem *p, int bh, int backward) {
  size_t base = (size_t)bh * p->n * p->d;
  Head h = {p, base, slice(p, p->q, base), slice(p, p->k, base), slice(p, p->v, base), slice(p, p->dout, base),
            slice(p, p->o, base), calloc((size_t)p->d, sizeof(double)), backward};
  for (int j = 0; j < p->n; j++)
    for (int c = 0; c < p->d; c++) h.vmax[c] = fmax(h.vmax[c], fabs(h.v[(size_t)j * p->d + c]));
  return h;
}

static void free_head(Head *h) { free(h->q), free(h->k), free(h->v), free(h->dout), free(h->o), free(h->vmax); }

static double dot(const double *a, const double *b, int d) {
  double s = 0;
  for (int c = 0; c < d; c++) s += a[c] * b[c];
  return s;
}

static double unit(const Problem *p) { return ldexp(1, -1 - p->format->mantissa_bits); }

/* Counts got against want with tolerance 2 u mag + u |want| + floor. */
static void judge(Tally *t, double got, double want, double mag, double u, double floor) {
  double tol = 2 * u * mag + u * fabs(want) + floor, err = fabs(got - want);
  if (!(err <= tol)) t->bad++;
  double ratio = err / tol;
  t->worst = isnan(t->worst) || isnan(ratio) ? NAN : fmax(t->worst, ratio);
}

/* The row statistics the key-side check needs: logsumexp, delta and its error's magnitude. */
typedef struct RowStats {
  double *lse, *delta, *mag_delta;
} RowStats;

/* Below its smallest normal a dtype keeps absolute precision only: n such
 * terms each off by up to half its smallest step (fp16 2^-25; bf16's range is
 * fp32's, nothing) times their factor. */
static double subnormal_floor(const Problem *p, double factor) {
  const Format *f = p->format;
  return f->exponent_bits == 8 ? 0 : 2 * p->n * ldexp(factor, -bias(f) - f->mantissa_bits);
}

/* Row i from scratch: O, M, dQ checked; its statistics kept. */
/* Hopper's fp8 tensor cores do not keep fp32's precision in their sums
 * (about 14 bits, as DeepSeek-V3's report measured): an fp8 score is taken
 * as off by up to 2^-10 of the sum of its terms' magnitudes. */
static double score_error(const Problem *p, const double *qi, const double *kj) {
  double mag = 0;
  for (int c = 0; p->format->fp8 && c < p->d; c++) mag += fabs(qi[c] * kj[c]);
  return 0x1p-10 * p->sm_scale * mag;
}

static void check_row(const Head *h, int i, double *s, double *dp, RowStats *st, Tally *t) {
  const Problem *p = h->p;
  int n = p->n, d = p->d, end = p->causal ? i + 1 : n;
  const double *qi = h->q + (size_t)i * d, *doi = h->dout + (size_t)i * d;
  double max = -INFINITY, sum = 0, u = unit(p), serr = 0;
  for (int j = 0; j < end; j++) {
    s[j] = p->sm_scale * dot(qi, h->k + (size_t)j * d, d), max = fmax(max, s[j]);
    serr = fmax(serr, score_error(p, qi, h->k + (size_t)j * d));
  }
  for (int j = 0; j < end; j++) sum += exp(s[j] - max);
  double lse = max + log(sum), delta = 0, mag_delta = 0, vmax = 0;
  /* lse and each P move by up to the largest score error (times P) */
  judge(&t[1], p->m[h->base / d + i], lse, 0, 1e-4, 1e-4 * (1 + fabs(lse)) + serr);
  for (int c = 0; c < d; c++) vmax = fmax(vmax, h->vmax[c]);
  for (int c = 0; c < d; c++) {
    double o = 0, mag = 0;
    for (int j = 0; j < end; j++) {
      double pij = exp(s[j] - lse);
      o += pij * h->v[(size_t)j * d + c], mag += pij * fabs(h->v[(size_t)j * d + c]);
    }
    judge(&t[0], value(p, p->o[h->base + (size_t)i * d + c]), o, mag, u, subnormal_floor(p, vmax / sum) + 4 * serr * mag);
    delta += o * doi[c], mag_delta += fabs(doi[c]) * (2 * mag + fabs(o));
  }
  st->lse[i] = lse, st->delta[i] = delta, st->mag_delta[i] = mag_delta;
  if (!h->backward) return;
  double kmax = 0;
  for (int j = 0; j < end; j++) {
    double pij = exp(s[j] - lse), dpij = dot(doi, h->v + (size_t)j * d, d);
    s[j] = pij * (dpij - delta), dp[j] = pij * (fabs(dpij) + fabs(delta) + mag_delta); /* dS and its magnitude */
  }
  for (size_t e = 0; e < (size_t)n * d; e++) kmax = fmax(kmax, fabs(h->k[e]));
  for (int c = 0; c < d; c++) {
    double g = 0, mag = 0;
    for (int j = 0; j < end; j++) g += s[j] * h->k[(size_t)j * d + c], mag += dp[j] * fabs(h->k[(size_t)j * d + c]);
    judge(&t[2], value(p, p->dq[h->base + (size_t)i * d + c]), p->sm_scale * g, p->sm_scale * mag, u,
          p->sm_scale * subnormal_floor(p, kmax));
  }
}

/* Key j: dK and dV from the rows' statistics. */
static void check_key(const Head *h, int j, const RowStats *st, Tally *t) {
  const Problem *p = h->p;
  int n = p->n, d = p->d;
  double u = unit(p), *gk = calloc((size_t)d * 4, sizeof(double)), *mk = gk + d, *gv = gk + 2 * d, *mv = gk + 3 * d;
  double qmax = 0, domax = 0;
  for (int i = p->causal ? j : 0; i < n; i++) {
    const double *qi = h->q + (size_t)i * d, *doi = h->dout + (size_t)i * d;
    double pij = exp(p->sm_scale * dot(qi, h->k + (size_t)j * d, d) - st->lse[i]);
    double dpij = dot(doi, h->v + (size_t)j * d, d), ds = pij * (dpij - st->delta[i]);
    double mag = pij * (fabs(dpij) + fabs(st->delta[i]) + st->mag_delta[i]);
    for (int c = 0; c < d; c++) {
      gv[c] += pij * doi[c], mv[c] += pij * fabs(doi[c]);
      gk[c] += ds * qi[c], mk[c] += mag * fabs(qi[c]);
      qmax = fmax(qmax, fabs(qi[c])), domax = fmax(domax, fabs(doi[c]));
    }
  }
  for (int c = 0; c < d; c++) {
    size_t e = h->base + (size_t)j * d + c;
    judge(&t[3], value(p, p->dk[e]), p->sm_scale * gk[c], p->sm_scale * mk[c], u, p->sm_scale * subnormal_floor(p, qmax));
    judge(&t[4], value(p, p->dv[e]), gv[c], mv[c], u, subnormal_floor(p, domax));
  }
  free(gk);
}

/* The statistics of every row from the kernels' M and O (the sampled check's key side). */
static void stats_from_kernel(const Head *h, RowStats *st) {
  const Problem *p = h->p;
  for (int i = 0; i < p->n; i++) {
    const double *oi = h->o + (size_t)i * p->d, *doi = h->dout + (size_t)i * p->d;
    st->lse[i] = p->m[h->base / p->d + i], st->delta[i] = dot(oi, doi, p->d), st->mag_delta[i] = 0;
    for (int c = 0; c < p->d; c++) st->mag_delta[i] += fabs(doi[c]) * (2 * h->vmax[c] + fabs(oi[c]));
  }
}

/* Distinct positions: the first, the last, and random ones. */
static int sample(Example *ex, int n, int *at) {
  if (n <= SAMPLES) {
    for (int i = 0; i < n; i++) at[i] = i;
    return n;
  }
  at[0] = 0, at[1] = n - 1;
  for (int i = 2; i < SAMPLES; i++) at[i] = 1 + (int)(example_uniform(ex) * (n - 2));
  return SAMPLES;
}

static void check_head(Example *ex, const Problem *p, int bh, int full, int backward, Tally *t) {
  Head h = head_of(p, bh, backward);
  int n = p->n, *at = malloc(sizeof(int) * (size_t)n), count = n;
  double *s = malloc(sizeof(double) * (size_t)n * 5);
  RowStats st = {s + 2 * n, s + 3 * n, s + 4 * n};
  if (!full) count = sample(ex, n, at), stats_from_kernel(&h, &st);
  for (int r = 0; r < count; r++) check_row(&h, full ? r : at[r], s, s + n, &st, t);
  if (!full) count = sample(ex, n, at);
  for (int c = 0; backward && c < count; c++) check_key(&h, full ? c : at[c], &st, t);
  free(at), free(s), free_head(&h);
}

static long guard_bad(const void *t, size_t n, size_t size) {
  const unsigned char *g = (const unsigned char *)t + n * size;
  long bad = 0;
  for (size_t i = 0; i < GUARD * size; i++) bad += g[i] != 0xFF;
  return bad;
}

/* ---- one problem ---- */

static void *device_copy(Example *ex, const void *host, size_t bytes) {
  void *d = example_alloc(ex, bytes + GUARD * 4);
  if (host) example_upload(ex, d, host, bytes);
  example_poison(ex, (char *)d + (host ? bytes : 0), host ? GUARD * 4 : bytes + GUARD * 4);
  return d;
}

/* An fp8 tensor's bytes, each head's [N, D] slice stored as it is or transposed to [D, N]. */
static uint8_t *fp8_bytes(const Problem *p, const uint16_t *t, int transposed) {
  uint8_t *bytes = malloc(p->numel);
  size_t slice = (size_t)p->n * p->d;
  for (size_t e = 0; e < p->numel; e++) {
    size_t base = e / slice * slice, i = e % slice / p->d, c = e % p->d;
    bytes[transposed ? base + c * p->n + i : e] = (uint8_t)t[e];
  }
  return bytes;
}

static void *device_input(Example *ex, const Problem *p, const uint16_t *t, int transposed) {
  if (!p->format->fp8) return device_copy(ex, t, p->numel * 2);
  uint8_t *bytes = fp8_bytes(p, t, transposed);
  void *d = device_copy(ex, bytes, p->numel);
  free(bytes);
  return d;
}

static void upload(Example *ex, Problem *p) {
  size_t bytes = p->numel * 2, rows = (size_t)p->b * p->h * p->n * 4;
  p->d_q = device_input(ex, p, p->q, 0), p->d_k = device_input(ex, p, p->k, 0), p->d_v = device_input(ex, p, p->v, 1);
  p->d_do = device_copy(ex, p->dout, bytes);
  p->d_o = device_copy(ex, NULL, bytes), p->d_m = device_copy(ex, NULL, rows), p->d_delta = device_copy(ex, NULL, rows);
  p->d_dq = device_copy(ex, NULL, bytes), p->d_dk = device_copy(ex, NULL, bytes), p->d_dv = device_copy(ex, NULL, bytes);
}

/* fp8's O, a byte an element, widened into p->o with as many guard bytes as the fp16 check reads. */
static void download_fp8(Example *ex, Problem *p) {
  uint8_t *bytes = malloc(p->numel + GUARD * 4);
  example_download(ex, bytes, p->d_o, p->numel + GUARD * 4);
  for (size_t e = 0; e < p->numel; e++) p->o[e] = bytes[e];
  memcpy(p->o + p->numel, bytes + p->numel, GUARD * 2);
  free(bytes);
}

static void download(Example *ex, Problem *p, int backward) {
  size_t bytes = p->numel * 2 + GUARD * 4, rows = (size_t)p->b * p->h * p->n * 4 + GUARD * 4;
  if (p->format->fp8) download_fp8(ex, p);
  else example_download(ex, p->o, p->d_o, bytes);
  example_download(ex, p->m, p->d_m, rows);
  if (!backward) return;
  example_download(ex, p->dq, p->d_dq, bytes);
  example_download(ex, p->dk, p->d_dk, bytes);
  example_download(ex, p->dv, p->d_dv, bytes);
}

static void release(Example *ex, Problem *p) {
  void *dev[] = {p->d_q, p->d_k, p->d_v, p->d_do, p->d_o, p->d_m, p->d_delta, p->d_dq, p->d_dk, p->d_dv};
  for (int i = 0; i < 10; i++) tile_free(ex->ctx, dev[i]);
  free(p->q), free(p->k), free(p->v), free(p->dout), free(p->o), free(p->dq), free(p->dk), free(p->dv), free(p->m);
}

static Problem make_problem(Example *ex, const Options *o, int n, int d, const char *dtype) {
  Problem p;
  memset(&p, 0, sizeof p);
  p.b = o->batch, p.h = o->heads, p.n = n, p.d = d, p.dtype = dtype;
  for (size_t i = 0; i < sizeof FORMATS / sizeof *FORMATS; i++)
    if (!strcmp(dtype, FORMATS[i].name)) p.format = &FORMATS[i];
  p.sm_scale = (float)(1 / sqrt(d));
  p.numel = (size_t)p.b * p.h * p.n * p.d;
  p.q = random_tensor(ex, &p), p.k = random_tensor(ex, &p), p.v = random_tensor(ex, &p);
  p.dout = random_tensor(ex, &p);
  size_t bytes = p.numel * 2 + GUARD * 4;
  p.o = malloc(bytes), p.dq = malloc(bytes), p.dk = malloc(bytes), p.dv = malloc(bytes);
  p.m = malloc((size_t)p.b * p.h * p.n * 4 + GUARD * 4);
  upload(ex, &p);
  return p;
}

/* Repetitions for about half a second of timing, from one run's time. */
static int reps_for(const Options *o, double ms) {
  if (o->reps) return o->reps;
  int r = ms > 0 ? (int)(500 / ms) : 50;
  return r < 3 ? 3 : r > 50 ? 50 : r;
}

static void report(Example *ex, const Options *o, const Problem *p, const char *pass, const Blocks *b, Tally *t,
                   int count, long guards, double ms) {
  double flops = 4.0 * p->b * p->h * p->n * (double)p->n * p->d * (p->causal ? 0.5 : 1) * (pass[0] == 'b' ? 2.5 : 1);
  long bad = guards;
  double worst = 0;
  char errors[160] = "", *e = errors;
  for (int i = 0; i < count; i++) {
    bad += t[i].bad;
    worst = isnan(worst) || isnan(t[i].worst) ? NAN : fmax(worst, t[i].worst);
    e += snprintf(e, sizeof errors - (size_t)(e - errors), " %s %.2g", t[i].name, t[i].worst);
  }
  if (bad) ex->failures++;
  printf("  %s %s D=%d %-10s B=%d H=%d N=%-6d %dx%d w%d s%d  error/tol%s  %9.4f ms %7.1f TFLOP/s%s  %s\n", pass,
         p->dtype, p->d, p->causal ? "causal" : "non-causal", p->b, p->h, p->n, b->m, b->n, b->warps, b->stages,
         o->check == CHECK_OFF ? " -" : errors, ms, flops / ms * 1e-9, ex->on_cpu ? " (interpreter)" : "",
         bad ? "MISMATCH" : "ok");
  if (bad) printf("    %ld elements beyond the tolerance (%ld guard elements written)\n", bad, guards);
  if (o->csv)
    printf("csv,tile,%s,%s,%d,%d,%d,%d,%d,%.6f,%.2f\n", pass, p->dtype, p->d, p->causal, p->b, p->h, p->n, ms,
           flops / ms * 1e-9);
}

static void run_problem(Example *ex, const Options *o, Problem *p, Kernels *k) {
  Run r;
  make_run(&r, k, p);
  size_t rows = (size_t)p->b * p->h * p->n;
  int backward = o->backward && !p->format->fp8;
  launch_forward(ex, &r);
  if (backward) launch_backward(ex, &r);
  download(ex, p, backward);
  Tally t[5] = {{"O", 0, 0}, {"M", 0, 0}, {"dQ", 0, 0}, {"dK", 0, 0}, {"dV", 0, 0}};
  int full = o->check == CHECK_FULL ||
             (o->check == CHECK_AUTO && (double)p->b * p->h * p->n * p->n * p->d <= 0x1p30);
  if (o->check != CHECK_OFF)
    for (int bh = 0; bh < p->b * p->h; bh++)
      if (full || bh == 0 || bh == p->b * p->h - 1) check_head(ex, p, bh, full, backward, t);
  long guards = guard_bad(p->o, p->numel, 2) + guard_bad(p->m, rows, 4);
  double ms = example_time(ex, launch_forward, &r, 1);
  if (!ex->on_cpu) ms = example_time(ex, launch_forward, &r, reps_for(o, ms));
  report(ex, o, p, "fwd", p->format->fp8 ? &k->bf8 : &k->bf, t, 2, guards, ms);
  if (!backward) return;
  guards = guard_bad(p->dq, p->numel, 2) + guard_bad(p->dk, p->numel, 2) + guard_bad(p->dv, p->numel, 2);
  ms = example_time(ex, launch_backward, &r, 1);
  if (!ex->on_cpu) ms = example_time(ex, launch_backward, &r, reps_for(o, ms));
  report(ex, o, p, "bwd", &k->bk, t + 2, 3, guards, ms);
}

/* ---- the command line ---- */

static void usage(void) {
  fprintf(stderr,
          "usage: attention [--quick] [--cpu] [--require-gpu] [--seed N] [-b B] [-H H] [-n N,...] [-d D,...]\n"
          "                 [--dtype fp16,bf16,fp8e5,fp8e4nv] [--causal 0,1] [--check auto|full|sample|off] [--forward-only]\n"
          "                 [--gpu-blocks] [--fwd BMxBN:W:S] [--dkdv BMxBN:W:S] [--dq BMxBN:W:S] [--reps R] [--csv] [KERNEL.tl]\n");
  exit(2);
}

static int parse_ints(const char *s, int *out, int max) {
  int n = 0;
  for (char *end; *s && n < max; s = *end ? end + 1 : end) {
    long v = strtol(s, &end, 10);
    if (end == s || v < 0 || v > 1 << 24 || (*end && *end != ',')) usage();
    out[n++] = (int)v;
  }
  if (!n) usage();
  return n;
}

static Blocks parse_blocks(const char *s) {
  Blocks b;
  if (sscanf(s, "%dx%d:%d:%d", &b.m, &b.n, &b.warps, &b.stages) != 4 || b.m <= 0 || b.n <= 0) usage();
  return b;
}

static int parse_check(const char *s) {
  static const char *names[] = {"auto", "full", "sample", "off"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) return i;
  usage();
  return 0;
}

static void parse_dtypes(Options *o, const char *s) {
  o->num_dtypes = 0;
  for (const char *name = s; *name; name += strcspn(name, ",") + (name[strcspn(name, ",")] == ',')) {
    size_t len = strcspn(name, ","), known = 0;
    for (size_t i = 0; i < sizeof FORMATS / sizeof *FORMATS; i++)
      if (strlen(FORMATS[i].name) == len && !strncmp(name, FORMATS[i].name, len) && o->num_dtypes < 4)
        o->dtypes[o->num_dtypes++] = FORMATS[i].name, known = 1;
    if (!known) usage();
  }
  if (!o->num_dtypes) usage();
}

/* The defaults: CI-sized with --quick, else a size the sampled check covers in seconds. */
static void defaults(Options *o, int quick) {
  memset(o, 0, sizeof *o);
  o->batch = 2, o->heads = quick ? 2 : 3;
  o->seqs[0] = quick ? 67 : 1531, o->seqs[1] = quick ? 0 : 4099, o->num_seqs = quick ? 1 : 2;
  o->dims[0] = 64, o->dims[1] = 128, o->num_dims = 2;
  o->dtypes[0] = "fp16", o->dtypes[1] = "bf16", o->dtypes[2] = "fp8e5", o->dtypes[3] = "fp8e4nv", o->num_dtypes = 4;
  o->causal[0] = 0, o->causal[1] = 1, o->num_causal = 2;
  o->backward = 1;
}

static void parse(Example *ex, Options *o, int argc, char **argv, int *cpu, int *require_gpu, uint64_t *seed) {
  int quick = 0;
  for (int i = 1; i < argc; i++) quick |= !strcmp(argv[i], "--quick");
  defaults(o, quick);
  ex->quick = quick;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = 1;
    if (!strcmp(a, "--quick")) takes = 0;
    else if (!strcmp(a, "--cpu")) *cpu = 1, takes = 0;
    else if (!strcmp(a, "--require-gpu")) *require_gpu = 1, takes = 0;
    else if (!strcmp(a, "--forward-only")) o->backward = 0, takes = 0;
    else if (!strcmp(a, "--csv")) o->csv = 1, takes = 0;
    else if (!strcmp(a, "--gpu-blocks")) o->gpu_blocks = 1, takes = 0;
    else if (a[0] != '-') ex->kernel_path = a, takes = 0;
    else if (!v) usage();
    else if (!strcmp(a, "--seed")) *seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "-b")) parse_ints(v, &o->batch, 1);
    else if (!strcmp(a, "-H")) parse_ints(v, &o->heads, 1);
    else if (!strcmp(a, "-n")) o->num_seqs = parse_ints(v, o->seqs, MAX_LIST);
    else if (!strcmp(a, "-d")) o->num_dims = parse_ints(v, o->dims, MAX_LIST);
    else if (!strcmp(a, "--causal")) o->num_causal = parse_ints(v, o->causal, 2);
    else if (!strcmp(a, "--dtype")) parse_dtypes(o, v);
    else if (!strcmp(a, "--check")) o->check = parse_check(v);
    else if (!strcmp(a, "--reps")) parse_ints(v, &o->reps, 1);
    else if (!strcmp(a, "--fwd")) o->fwd = parse_blocks(v);
    else if (!strcmp(a, "--dkdv")) o->dkdv = parse_blocks(v);
    else if (!strcmp(a, "--dq")) o->dq = parse_blocks(v);
    else usage();
    i += takes;
  }
  if (o->batch < 1 || o->heads < 1) usage();
  for (int i = 0; i < o->num_seqs; i++)
    if (o->seqs[i] < 1) usage();
}

int main(int argc, char **argv) {
  Example ex;
  memset(&ex, 0, sizeof ex);
  ex.kernel_path = TILE_SOURCE_DIR "/examples/attention/attention.tl";
  Options o;
  int cpu = 0, require_gpu = 0;
  uint64_t seed = ((uint64_t)time(NULL) * 1000003u ^ (uint64_t)clock()) & 0xffffffffu; /* printed: a failure can be repeated */
  parse(&ex, &o, argc, argv, &cpu, &require_gpu, &seed);
  example_open(&ex, "attention", cpu, require_gpu, seed);
  printf("attention: kernel %s, %s sizes, seed %llu\n", ex.kernel_path, ex.quick ? "CI (--quick)" : "full",
         (unsigned long long)seed);
  for (int di = 0; di < o.num_dims; di++)
    for (int ci = 0; ci < o.num_causal; ci++) {
      Kernels k = make_kernels(&ex, &o, o.dims[di], o.causal[ci]);
      for (int ti = 0; ti < o.num_dtypes; ti++)
        for (int ni = 0; ni < o.num_seqs; ni++) {
          Problem p = make_problem(&ex, &o, o.seqs[ni], o.dims[di], o.dtypes[ti]);
          p.causal = o.causal[ci];
          run_problem(&ex, &o, &p, &k);
          release(&ex, &p);
        }
      destroy_kernels(&k);
    }
  return example_finish(&ex);
}
