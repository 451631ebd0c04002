/* accelerate-matmul: tensor cores for the dots that allow them (Triton's
 * AccelerateMatmul).
 *
 * A dot runs on tensor cores when its operand types have an instruction
 * and its tile holds one: fp16 and bf16 (m16n8k16), fp32 unless the
 * precision is ieee (tf32, m16n8k8; tf32x3 as three of them), int8 with
 * K >= 32 (m16n8k32).  fp64, ieee fp32 and int8 with K = 16 stay on the
 * FMA path.  The version:
 *   - 3 (wgmma) on sm_90a for rank-2 dots with num_warps % 4 == 0 and M a
 *     multiple of 64, fp16/bf16 (tf32 when both operands are K-major, as
 *     wgmma reads tf32 only so; fp8, k 32, for the fp16 dot of two fp8
 *     tiles' conversions, the tiles themselves becoming the operands in
 *     K-major buffers); warps 4 along M, doubled along M while the
 *     tile has more rows, else along N; one instruction covers N / wn
 *     columns (at most 256).  B goes into shared memory in an NVMMA
 *     layout (local_alloc), contiguous along the dimension its source
 *     layout is contiguous in; so does A when it is loaded (through layout
 *     conversions and transposes, from a load or a loop-carried value) or
 *     not 16-bit: else (fp16 or bf16 computed in registers, as the P of
 *     attention's P @ V) A stays in registers, in the #dot_op layout of the
 *     mma (wgmma's register-A fragments), as Triton's rule has it, unless
 *     it is transposed (then a buffer of the tile, read transposed); a tile
 *     already in a buffer of the block, as is or transposed, is read there;
 *   - else 2 (mma.sync): warps doubled along M or N, whichever has more
 *     16 x 16 tiles per warp (M on a tie), batch first for batched dots;
 *     A and B in the #dot_op layouts of the mma, converted (stage-operands
 *     then routes those conversions through swizzled shared memory); from
 *     sm_89 the fp16 dot of two e4m3/e5m2 tiles' conversions multiplies
 *     the fp8 tiles themselves (m16n8k32, four per word, as int8).
 * An atomic add that nobody reads, of an accelerated dot's result, takes
 * the mma layout (place_reduction).
 *
 * Requires: GPU-layout IR after remove-converts (a dot's operands arrive
 *   through convert_layout from the layouts they were computed in).
 * Guarantees: verified GPU-layout IR computing the same values; the
 *   accelerated dots' results and accumulators in mma layouts, the result
 *   converted back to the layout its users had (remove-converts runs
 *   next and carries the mma layout through loops and epilogues).  Dots
 *   already in an mma layout are left alone.
 * Invalidates: the layouts of dot results and operands, and of such atomics. */
#include "passes.h"

#include <string.h>

typedef struct Plan {
  int version;               /* 0: stays on the FMA path */
  int fp8[2];                /* wgmma on fp8: the fp8 tiles A and B were converted from; else -1 */
  int warps[MAX_RANK];
  int instr[3];
} Plan;

typedef struct Accel {
  TirFunc *f;
  const TgirOptions *o;
  TirOp **defs;              /* per value: its defining op (room for the values this step makes) */
  Vec(TirOp *) out;          /* the block being rebuilt */
  int *buffer_of;            /* per tile value: the wgmma buffer made of it, or 0 */
  int *buffer_of_trans;      /* per tile value x: the wgmma buffer made of trans(x), or 0 */
  int *block_of, *block_of_trans; /* the block (a serial number) where each was made: they count there only */
  int block, blocks;         /* the block being rebuilt; blocks seen */
  int *uses;                 /* per value of the input: its uses */
  const AxisInfo *axis;      /* per value of the input */
} Accel;

static const Type *T(Accel *A, int v) { return tir_type(A->f, v); }

/* The instruction's K for the dot's operand type and precision; 0: none. */
static int instruction_k(const TirOp *dot, DType elem) {
  switch (elem) {
  case DT_FP16:
  case DT_BF16: return 16;
  case DT_FP32: return dot->kind == DOT_IEEE ? 0 : 8;
  case DT_I8: return 32;
  default: return 0;
  }
}

/* What a dot operand was computed in: the source of its convert_layout. */
static int source_of(Accel *A, int v) {
  TirOp *def = A->defs[v];
  return def && def->code == TIR_CONVERT_LAYOUT ? def->operands.data[0] : v;
}

/* The contiguous dimension of v's blocked layout; -1: unknown. */
static int blocked_contiguous(Accel *A, int v) {
  const Layout *l = tir_layout(A->f, v);
  return l && l->kind == LAYOUT_BLOCKED ? l->order[0] : -1;
}

/* The operand's contiguous dimension as its source layout has it; -1: unknown. */
static int contiguous_dim(Accel *A, int v) { return blocked_contiguous(A, source_of(A, v)); }

/* The fp8 tile a dot operand was converted from, or -1: sema makes tl.dot
 * of fp8 operands the fp16 dot of their exact conversions, which every GPU
 * runs; wgmma can read e4m3 and e5m2 tiles themselves (float8e4b15 has no
 * wgmma type: its fp16 dot stays). */
static int fp8_source(Accel *A, int v) {
  TirOp *def = A->defs[source_of(A, v)];
  if (!def || def->code != TIR_CAST || !dtype_is_mma_fp8(T(A, def->operands.data[0])->elem)) return -1;
  return def->operands.data[0];
}

/* Whether a dot of fp16 conversions of fp8 tiles can multiply the fp8
 * tiles themselves, as Triton does from sm_89 on (K a multiple of the
 * instructions' 32): an fp8 wgmma on sm_90a, whose buffers are then
 * K-major, as wgmma reads fp8 only so, whatever the tiles' contiguity
 * (Triton transposes so too), else an fp8 mma.sync. */
static int fp8_sources(Accel *A, const TirOp *dot, int *src) {
  const Type *ta = T(A, dot->operands.data[0]);
  for (int k = 0; k < 2; k++) src[k] = fp8_source(A, dot->operands.data[k]);
  return A->o->compute_capability >= 89 && src[0] >= 0 && src[1] >= 0 && ta->shape[ta->rank - 1] % 32 == 0;
}

static void warps_v2(int rank, const int64_t *shape, int num_warps, int *w) {
  int m = rank - 2, n = rank - 1, left = num_warps;
  for (int d = 0; d < rank; d++) w[d] = 1;
  while (rank == 3 && left > 1 && w[0] < shape[0]) w[0] *= 2, left /= 2;
  for (; left > 1; left /= 2) {
    int64_t per_m = shape[m] / 16 / w[m], per_n = shape[n] / 16 / w[n];
    if (per_m >= per_n && w[m] < shape[m] / 16) w[m] *= 2;
    else w[n] *= 2;
  }
}

/* Version 3's warps and instruction; 0 if the tile does not allow it. */
static int plan_v3(Accel *A, const TirOp *dot, int k, Plan *p) {
  const Type *t = T(A, dot->results.data[0]), *ta = T(A, dot->operands.data[0]);
  int64_t M = t->shape[0], N = t->shape[1];
  if (!A->o->wgmma || A->o->compute_capability != 90 || t->rank != 2 || A->f->num_warps % 4 || M % 64) return 0;
  if (ta->elem == DT_I8 || dot->kind == DOT_TF32X3) return 0; /* no s8 wgmma here; tf32x3 splits its operands */
  if (ta->elem == DT_FP32 && (contiguous_dim(A, dot->operands.data[0]) != 1 ||
                              contiguous_dim(A, dot->operands.data[1]) != 0))
    return 0; /* tf32 wgmma reads K-major operands only */
  int wm = 4, wn = 1;
  while (wm * wn < A->f->num_warps) {
    if (M > 16 * wm) wm *= 2;
    else wn *= 2;
  }
  if (N / wn < 8) return 0;
  p->version = 3;
  p->warps[0] = wm, p->warps[1] = wn;
  p->instr[0] = 16, p->instr[1] = (int)(N / wn > 256 ? 256 : N / wn), p->instr[2] = k;
  return 1;
}

static Plan plan(Accel *A, const TirOp *dot) {
  Plan p;
  memset(&p, 0, sizeof p);
  p.fp8[0] = p.fp8[1] = -1;
  const Type *ta = T(A, dot->operands.data[0]), *t = T(A, dot->results.data[0]);
  const Layout *now = tir_layout(A->f, dot->results.data[0]);
  int k = instruction_k(dot, ta->elem), fp8[2];
  if (A->o->compute_capability < 80 || !k || ta->shape[ta->rank - 1] < k || (now && now->kind == LAYOUT_MMA)) return p;
  int on_fp8 = fp8_sources(A, dot, fp8);
  if (on_fp8 && plan_v3(A, dot, 32, &p)) {
    p.fp8[0] = fp8[0], p.fp8[1] = fp8[1];
    return p;
  }
  if (plan_v3(A, dot, k, &p)) return p;
  p.version = 2;
  if (on_fp8) p.fp8[0] = fp8[0], p.fp8[1] = fp8[1]; /* m16n8k32 .e4m3/.e5m2 */
  warps_v2(t->rank, t->shape, A->f->num_warps, p.warps);
  p.instr[0] = 16, p.instr[1] = 8, p.instr[2] = 0;
  return p;
}

/* ---- rewriting ---- */

/* A new op `code` of v, its result v's type in layout l. */
static int emit_of(Accel *A, TirCode code, int v, const Layout *l, Loc loc) {
  TirOp *op = tir_op_new(A->f, code, loc);
  tir_add_operand(A->f, op, v);
  int r = tir_add_result(A->f, op, tir_type(A->f, v));
  tir_set_layout(A->f, r, l);
  A->defs[r] = op;
  vec_push(A->f->arena, &A->out, op);
  return r;
}

static int convert(Accel *A, int v, const Layout *l, Loc loc) {
  return tir_layout(A->f, v) == l ? v : emit_of(A, TIR_CONVERT_LAYOUT, v, l, loc);
}

/* Whether a wgmma's A, the tile a, stays in registers: fp16, bf16 or fp8
 * (e4m3, e5m2), and computed rather than loaded (looking through layout
 * conversions and transposes; a value without a defining op is a
 * loop-carried one, staged as a load is).  A loaded tile is copied into
 * shared memory anyway, and the pipeline step turns that copy into
 * asynchronous ones; a computed one would be written there by its
 * threads, fenced and published by a barrier, where the conversion into
 * the fragments is (from an mma accumulator) a renaming of registers, or
 * for fp8 shuffles within each quad of lanes. */
static int a_in_registers(Accel *A, int a) {
  DType elem = T(A, a)->elem;
  if (elem != DT_FP16 && elem != DT_BF16 && !dtype_is_mma_fp8(elem)) return 0;
  const TirOp *def = A->defs[a];
  int transposed = 0;
  while (def && (def->code == TIR_CONVERT_LAYOUT || def->code == TIR_TRANS)) {
    transposed ^= def->code == TIR_TRANS;
    def = A->defs[def->operands.data[0]];
  }
  /* a 16-bit tile computed in registers and transposed (attention's dS^T as dQ's A) goes to
   * shared memory once, where wgmma reads it through a transposed view; as register fragments
   * it would cross shared memory twice (to the transposed layout, then to the fragments) */
  if (transposed && !dtype_is_mma_fp8(elem)) return 0;
  return def && def->code != TIR_LOAD;
}

/* memdesc_trans of `buffer` as src's buffer, if its NVMMA layout read
 * transposed is one (the same swizzle over the other order); 0 if not. */
static int transposed_view(Accel *A, int buffer, int src, const TirOp *dot) {
  const Layout *l = tir_layout(A->f, buffer);
  int order[2] = {l->order[1], l->order[0]};
  const char *why;
  const Layout *view = layout_nvmma(A->f->layout_table, 2, l->swizzle_bytes, l->elem_bits, order, &why);
  if (!view) return 0;
  TirOp *op = tir_op_new(A->f, TIR_MEMDESC_TRANS, dot->loc);
  tir_add_operand(A->f, op, buffer);
  int r = tir_add_result(A->f, op, tir_type(A->f, src));
  tir_set_layout(A->f, r, view);
  if (!tgir_views_transposed(A->f, buffer, r)) return 0; /* the op is dropped */
  A->defs[r] = op;
  vec_push(A->f->arena, &A->out, op);
  return r;
}

/* A 16-bit operand whose transpose another wgmma of this block already
 * put in shared memory (attention's backward: qT for one dot, trans(qT)
 * for the next) reads that buffer transposed instead of writing the tile
 * a second time: one load, then one buffer the pipeline can fill. */
static int reuse_transposed(Accel *A, int src, const TirOp *dot) {
  const Type *t = T(A, src);
  if (t->rank != 2 || (t->elem != DT_FP16 && t->elem != DT_BF16)) return 0;
  const TirOp *d = A->defs[src];
  int x = d && d->code == TIR_TRANS ? d->operands.data[0] : -1;
  int of_x = x >= 0 && A->block_of[x] == A->block ? A->buffer_of[x] : 0;
  int of_trans = A->block_of_trans[src] == A->block ? A->buffer_of_trans[src] : 0;
  return of_x ? transposed_view(A, of_x, src, dot) : of_trans ? transposed_view(A, of_trans, src, dot) : 0;
}

static void remember_buffer(Accel *A, int src, int buffer) {
  const TirOp *d = A->defs[src];
  A->buffer_of[src] = buffer;
  A->block_of[src] = A->block;
  if (d && d->code == TIR_TRANS && T(A, src)->rank == 2) {
    A->buffer_of_trans[d->operands.data[0]] = buffer;
    A->block_of_trans[d->operands.data[0]] = A->block;
  }
}

static int new_buffer(Accel *A, const TirOp *dot, int k, int src, int k_major);

/* The NVMMA layout of src's buffer as operand k: contiguous where src is
 * (else, or with k_major, along K). */
static const Layout *buffer_layout(Accel *A, int k, int src, int k_major) {
  int contiguous = k_major ? -1 : blocked_contiguous(A, src);
  const Type *t = T(A, src);
  int order[2];
  order[0] = contiguous >= 0 ? contiguous : k == 0 ? 1 : 0;
  order[1] = 1 - order[0];
  return layout_nvmma_for(A->f->layout_table, dtype_bits(t->elem), 2, t->shape, order);
}

/* The buffer another wgmma of this block already made of src, if it has
 * the layout operand k wants (q read by one dot as is and by another
 * transposed, first the other way round): the buffer is never written
 * again, and one buffer is one the pipeline can fill. */
static int reuse_buffer(Accel *A, const TirOp *dot, int k, int src) {
  int buffer = A->block_of[src] == A->block ? A->buffer_of[src] : 0;
  return buffer && tir_layout(A->f, buffer) == buffer_layout(A, k, src, 0) ? buffer : 0;
}

/* Whether src = trans(x) may be read through a transposed view of x's
 * buffer: 16-bit, or (k_major: fp8, which wgmma reads along K only) where
 * x is contiguous along the dimension the transpose makes K. */
static int view_of_transpose(Accel *A, const TirOp *d, int k, int src, int k_major) {
  DType elem = T(A, src)->elem;
  if (!d || d->code != TIR_TRANS || T(A, src)->rank != 2) return 0;
  if (k_major) return blocked_contiguous(A, d->operands.data[0]) == (k == 0 ? 0 : 1);
  return elem == DT_FP16 || elem == DT_BF16;
}

/* A wgmma operand: the tile src into a shared buffer in an NVMMA layout
 * contiguous where src is (else, or with k_major, along K).  A transposed
 * tile (the tutorials' `tl.dot(q, k.T)`) is read through a transposed view
 * of its source's buffer, as Triton does: the loaded tile then goes
 * straight into a buffer, which the pipeline step fills. */
static int to_buffer(Accel *A, const TirOp *dot, int k, int src, int k_major) {
  int reused = k_major ? 0 : reuse_transposed(A, src, dot);
  if (!reused && !k_major) reused = reuse_buffer(A, dot, k, src);
  if (reused) return reused;
  const TirOp *d = A->defs[src];
  if (view_of_transpose(A, d, k, src, k_major)) {
    int view = transposed_view(A, new_buffer(A, dot, k, d->operands.data[0], 0), src, dot);
    if (view) return view;
  }
  return new_buffer(A, dot, k, src, k_major);
}

static int new_buffer(Accel *A, const TirOp *dot, int k, int src, int k_major) {
  int buffer = emit_of(A, TIR_LOCAL_ALLOC, src, buffer_layout(A, k, src, k_major), dot->loc);
  if (!k_major) remember_buffer(A, src, buffer);
  return buffer;
}

/* The dot with mma layouts; its old result layout kept by a conversion
 * that every former use now reads. */
static void accelerate(Accel *A, TirOp *dot, const Plan *p) {
  TirFunc *f = A->f;
  const Type *t = T(A, dot->results.data[0]);
  const char *why;
  const Layout *mma = layout_mma(f->layout_table, p->version, t->rank, p->warps, p->instr, &why);
  if (!mma) { /* cannot happen: the plan makes valid layouts */
    vec_push(f->arena, &A->out, dot);
    return;
  }
  for (int k = 0; k < 2; k++) {
    int fp8 = p->fp8[k] >= 0, src = fp8 ? p->fp8[k] : source_of(A, dot->operands.data[k]);
    int bits = dtype_bits(T(A, src)->elem), kw = bits >= 32 ? 1 : 32 / bits;
    int in_registers = p->version != 3 || (k == 0 && a_in_registers(A, fp8 ? src : dot->operands.data[0]));
    dot->operands.data[k] = in_registers ? convert(A, src, layout_dot_operand(f->layout_table, k, mma, kw), dot->loc)
                                         : to_buffer(A, dot, k, src, fp8);
  }
  dot->operands.data[2] = convert(A, dot->operands.data[2], mma, dot->loc);
  int old = dot->results.data[0];
  const Layout *old_layout = tir_layout(f, old);
  tir_set_layout(f, old, mma);
  vec_push(f->arena, &A->out, dot);
  int back = convert(A, old, old_layout, dot->loc);
  tir_replace_uses(f->body, old, back, A->out.data[A->out.len - 1]);
}

/* The mma layout of the dot result an atomic add adds (through layout
 * conversions) if nobody reads the atomic's old values and its pointers
 * are contiguous along the layout's register pairs (the last dimension);
 * else NULL. */
static const Layout *reduced_accumulator(Accel *A, const TirOp *op) {
  int res = op->results.data[0], ptr = op->operands.data[0], v = op->operands.data[1];
  if (op->code != TIR_ATOMIC_RMW || op->kind != ATOM_ADD || A->uses[res] || T(A, res)->rank != 2) return NULL;
  if (A->axis[ptr].contiguity[1] < 2) return NULL;
  while (A->defs[v] && A->defs[v]->code == TIR_CONVERT_LAYOUT) {
    const Layout *l = tir_layout(A->f, v);
    if (l && l->kind == LAYOUT_MMA) return l;
    v = A->defs[v]->operands.data[0];
  }
  const Layout *l = tir_layout(A->f, v);
  return l && l->kind == LAYOUT_MMA ? l : NULL;
}

/* An atomic add that only accumulates a dot's result into memory (as
 * attention's dQ) adds the accumulator's registers where they are: a quad
 * of lanes covers a whole 32-byte sector of a row, so nothing is gained by
 * moving the tile through shared memory into a coalesced layout first. */
static void place_reduction(Accel *A, TirOp *op) {
  const Layout *mma = reduced_accumulator(A, op);
  for (int k = 0; mma && k < op->operands.len; k++) op->operands.data[k] = convert(A, op->operands.data[k], mma, op->loc);
  if (mma) tir_set_layout(A->f, op->results.data[0], mma);
  vec_push(A->f->arena, &A->out, op);
}

/* Records every op's results in defs (if given); returns how many values
 * the rewrite may add: at most 8 a dot (a failed transposed view included),
 * one conversion an operand of an atomic (place_reduction). */
static int collect_defs(TirBlock *b, TirOp **defs) {
  int added = 0;
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    added += op->code == TIR_DOT ? 8 : op->code == TIR_ATOMIC_RMW ? op->operands.len : 0;
    for (int k = 0; defs && k < op->results.len; k++) defs[op->results.data[k]] = op;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) added += collect_defs(op->regions[r], defs);
  }
  return added;
}

static void rewrite_block(Accel *A, TirBlock *b) {
  Accel saved = *A;
  memset(&A->out, 0, sizeof A->out);
  A->block = ++A->blocks; /* buffers are shared within a block only */
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) rewrite_block(A, op->regions[r]);
    Plan p = op->code == TIR_DOT ? plan(A, op) : (Plan){0};
    if (p.version) accelerate(A, op, &p);
    else if (op->code == TIR_ATOMIC_RMW) place_reduction(A, op);
    else vec_push(A->f->arena, &A->out, op);
  }
  b->ops.data = A->out.data;
  b->ops.len = A->out.len;
  b->ops.cap = A->out.cap;
  A->out = saved.out;
  A->block = saved.block;
}

void tgir_accelerate_matmul(TirFunc *f, const TgirOptions *o) {
  Accel A;
  memset(&A, 0, sizeof A);
  A.f = f, A.o = o;
  size_t room = (size_t)f->types.len + (size_t)collect_defs(f->body, NULL) + 1;
  A.defs = arena_alloc(f->arena, sizeof *A.defs * room);
  int **arrays[4] = {&A.buffer_of, &A.buffer_of_trans, &A.block_of, &A.block_of_trans};
  for (int i = 0; i < 4; i++) *arrays[i] = memset(arena_alloc(f->arena, sizeof(int) * room), 0, sizeof(int) * room);
  collect_defs(f->body, A.defs);
  A.uses = arena_alloc(f->arena, sizeof(int) * room);
  tir_index_values(f->body, A.uses, NULL);
  A.axis = tir_axis_info(f);
  rewrite_block(&A, f->body);
}
