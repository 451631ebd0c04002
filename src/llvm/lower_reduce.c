/* Reductions and scans.
 *
 * reduce: within each thread over the registers whose bases lie along the
 * axis, then shfl.sync.bfly over the lane bits along the axis (every lane
 * ends with the same value: the combines are symmetric), then across the
 * warps along the axis through shared memory: each warp's partial goes to
 * a lane whose result is a copy (shuffled together, as the lanes were) or,
 * when there are too few such lanes, to a register (combined in warp order).  The result is in the slice of the
 * operand's layout (converted if the IR gave it another); a reduction to a
 * scalar leaves the value in every thread.  max and min ignore NaN; argmax
 * and argmin keep the smallest index among equal values.
 *
 * scan: integers (whose sums and products are associative) in parallel,
 * over the bits of the axis coordinate; floats through shared memory, one
 * thread per line running the interpreter's sequential loop.  Results
 * equal the interpreter's bit for bit.
 *
 * reduce_combine and scan_combine (a combine region over N tiles) take the
 * same paths: a Partial holds N values and `combine` inlines the region
 * (lower_inline) where the built-in kinds apply their op.  Integer scans
 * (8 bits or more) run in parallel with the earlier block's values first,
 * as the combine need not commute; float and i1 ones in order. */
#include "lower.h"

#include <string.h>

typedef struct Axis {
  uint32_t stride;  /* flat offset of one step along the axis */
  int size_bits;    /* log2 of the axis length */
} Axis;

static int log2_of(int64_t x) { return x > 1 ? 63 - __builtin_clzll((unsigned long long)x) : 0; }

static int along(const Axis *a, uint32_t basis) { return basis >= a->stride && basis < (a->stride << a->size_bits); }

/* The offset in the reduced shape: the axis' bits removed. */
static uint32_t drop_axis(const Axis *a, uint32_t off) {
  int lo = log2_of(a->stride);
  return (off >> (lo + a->size_bits)) << lo | (off & (a->stride - 1));
}

static uint32_t axis_coordinate(const Axis *a, uint32_t off) {
  return (off >> log2_of(a->stride)) & ((1u << a->size_bits) - 1);
}

/* ---- combining ------------------------------------------------------------------------ */

enum { MAX_PARTS = 16 };

/* What a partial result holds: the value (and for argmax and argmin its
 * index), or the N values of a combine region. */
typedef struct Partial {
  LLVMValueRef v[MAX_PARTS]; /* built-in kinds: v[0] the value, v[1] the index */
} Partial;

typedef struct Reduction {
  int kind;
  const Type *t;   /* the operand's element type */
  int arg;         /* argmax / argmin */
  int parts;       /* values in a Partial: 1, 2 for argmax / argmin, N for a combine */
  const TirOp *op; /* reduce_combine, scan_combine: the combine region is the step */
} Reduction;

/* Whether b beats a for argmax (argmin): a larger (smaller) value, a
 * non-NaN over NaN, or an equal value at a smaller index. */
static LLVMValueRef beats(Lower *L, const Reduction *R, Partial pa, Partial pb) {
  LLVMBuilderRef B = L->b;
  int max = R->kind == RED_ARGMAX;
  struct { LLVMValueRef value, index; } a = {pa.v[0], pa.v[1]}, b = {pb.v[0], pb.v[1]};
  LLVMValueRef x[2] = {b.value, a.value}, y[2] = {a.value, b.value};
  LLVMValueRef better = lower_scalar(L, TIR_CMP, max ? CMP_GT : CMP_LT, R->t, x);
  LLVMValueRef equal = lower_scalar(L, TIR_CMP, CMP_EQ, R->t, y);
  LLVMValueRef earlier = LLVMBuildICmp(B, LLVMIntSLT, b.index, a.index, "");
  LLVMValueRef r = LLVMBuildOr(B, better, LLVMBuildAnd(B, equal, earlier, ""), "");
  if (LLVMGetTypeKind(LLVMTypeOf(a.value)) == LLVMIntegerTypeKind) return r;
  LLVMValueRef a_nan = LLVMBuildFCmp(B, LLVMRealUNO, a.value, a.value, "");
  LLVMValueRef b_nan = LLVMBuildFCmp(B, LLVMRealUNO, b.value, b.value, "");
  LLVMValueRef over_nan = LLVMBuildAnd(B, a_nan, LLVMBuildOr(B, LLVMBuildNot(B, b_nan, ""), earlier, ""), "");
  return LLVMBuildOr(B, r, over_nan, "");
}

/* One step of every tree below: a's values combined with b's (a first). */
static Partial combine(Lower *L, const Reduction *R, Partial a, Partial b) {
  static const TirCode codes[] = {TIR_ADD, TIR_MAXIMUM, TIR_MINIMUM, 0, 0, TIR_MUL};
  Partial r = {{NULL}};
  if (R->op) {
    LLVMValueRef args[2 * MAX_PARTS];
    for (int k = 0; k < R->parts; k++) args[k] = a.v[k], args[R->parts + k] = b.v[k];
    lower_inline(L, R->op->combine, args, r.v);
    return r;
  }
  if (!R->arg) {
    LLVMValueRef x[2] = {a.v[0], b.v[0]};
    r.v[0] = lower_scalar(L, codes[R->kind], 0, R->t, x);
    return r;
  }
  LLVMValueRef take = beats(L, R, a, b);
  r.v[0] = LLVMBuildSelect(L->b, take, b.v[0], a.v[0], "");
  r.v[1] = LLVMBuildSelect(L->b, take, b.v[1], a.v[1], "");
  return r;
}

/* shfl.sync.bfly of any register type, through 32-bit pieces. */
static LLVMValueRef shuffle(Lower *L, LLVMValueRef v, int mask) {
  LLVMTypeRef t = LLVMTypeOf(v);
  int bits = lower_type_bits(t);
  LLVMTypeRef it = lower_int_type(L, bits);
  LLVMValueRef x = LLVMGetTypeKind(t) == LLVMPointerTypeKind ? LLVMBuildPtrToInt(L->b, v, it, "")
                   : t == it                                 ? v
                                                             : LLVMBuildBitCast(L->b, v, it, "");
  LLVMValueRef r;
  if (bits == 64) {
    LLVMValueRef lo = LLVMBuildTrunc(L->b, x, L->i32, ""), hi = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, x, lower_int(L, L->i64, 32), ""), L->i32, "");
    lo = LLVMBuildZExt(L->b, L->target->shuffle_xor(L, lo, mask), L->i64, "");
    hi = LLVMBuildZExt(L->b, L->target->shuffle_xor(L, hi, mask), L->i64, "");
    r = LLVMBuildOr(L->b, lo, LLVMBuildShl(L->b, hi, lower_int(L, L->i64, 32), ""), "");
  } else {
    LLVMValueRef w = bits == 32 ? x : LLVMBuildZExt(L->b, x, L->i32, "");
    w = L->target->shuffle_xor(L, w, mask);
    r = bits == 32 ? w : LLVMBuildTrunc(L->b, w, it, "");
  }
  if (LLVMGetTypeKind(t) == LLVMPointerTypeKind) return LLVMBuildIntToPtr(L->b, r, t, "");
  return t == it ? r : LLVMBuildBitCast(L->b, r, t, "");
}

/* Every value of p shuffled from the lane whose id differs by `mask`. */
static Partial shuffle_partial(Lower *L, const Reduction *R, Partial p, int mask) {
  Partial r = {{NULL}};
  for (int k = 0; k < R->parts; k++) r.v[k] = shuffle(L, p.v[k], mask);
  return r;
}

/* ---- reduce ------------------------------------------------------------------------------ */

typedef struct ReduceState {
  Reduction R;
  Axis axis;
  LinearLayout in;      /* the operand's layout */
  LinearLayout out;     /* its slice: the result's registers */
  uint32_t axis_regs;   /* register bits along the axis */
  Partial *groups;      /* per output register */
} ReduceState;

/* The slice of the operand's layout: the axis' bases dropped (registers) or zeroed (threads). */
static void slice_layout(ReduceState *S, const Type *rt) {
  LinearLayout *o = &S->out;
  memset(o, 0, sizeof *o);
  o->rank = rt->rank;
  memcpy(o->shape, rt->shape, sizeof(int64_t) * (size_t)rt->rank);
  for (int i = 0; i < S->in.n_reg; i++) {
    if (along(&S->axis, S->in.reg[i])) S->axis_regs |= 1u << i;
    else o->reg[o->n_reg++] = drop_axis(&S->axis, S->in.reg[i]);
  }
  o->n_lane = S->in.n_lane;
  o->n_warp = S->in.n_warp;
  for (int i = 0; i < o->n_lane; i++) o->lane[i] = along(&S->axis, S->in.lane[i]) ? 0 : drop_axis(&S->axis, S->in.lane[i]);
  for (int i = 0; i < o->n_warp; i++) o->warp[i] = along(&S->axis, S->in.warp[i]) ? 0 : drop_axis(&S->axis, S->in.warp[i]);
}

/* The axis coordinate of every element (for argmax / argmin). */
static LLVMValueRef element_index(Lower *L, ReduceState *S, uint32_t r, LLVMValueRef thread_index) {
  uint32_t c = axis_coordinate(&S->axis, ll_reg_offset(&S->in, r));
  return LLVMBuildAdd(L->b, thread_index, lower_i32(L, c), "");
}

static LLVMValueRef thread_axis_index(Lower *L, ReduceState *S) {
  Side s;
  lower_side(&S->in, NULL, &s);
  int64_t c[TID_BITS];
  for (int i = 0; i < TID_BITS; i++) c[i] = along(&S->axis, s.thread[i]) ? axis_coordinate(&S->axis, s.thread[i]) : 0;
  return lower_thread_sum(L, c);
}

/* Registers along the axis, in each thread, combined in register order;
 * x: the operand's registers (a combine's N operands'). */
static void reduce_registers(Lower *L, ReduceState *S, const Regs *x) {
  LLVMValueRef tindex = S->R.arg ? thread_axis_index(L, S) : NULL;
  int k = 0;
  for (uint32_t r = 0; r < (uint32_t)x[0].n; r++) {
    if (r & S->axis_regs) continue; /* r is a group's first register */
    Partial acc = {{NULL}};
    uint32_t sub = 0;
    do { /* the subsets of the axis bits, in increasing order */
      Partial p = {{x[0].v[r | sub], S->R.arg ? element_index(L, S, r | sub, tindex) : NULL}};
      for (int part = 1; S->R.op && part < S->R.parts; part++) p.v[part] = x[part].v[r | sub];
      acc = acc.v[0] ? combine(L, &S->R, acc, p) : p;
      sub = (sub - S->axis_regs) & S->axis_regs;
    } while (sub);
    S->groups[k++] = acc;
  }
}

static void reduce_lanes(Lower *L, ReduceState *S) {
  for (int i = 0; i < S->in.n_lane; i++) {
    if (!along(&S->axis, S->in.lane[i])) continue;
    for (int g = 0; g < ll_registers(&S->out); g++) {
      Partial mine = S->groups[g];
      S->groups[g] = combine(L, &S->R, mine, shuffle_partial(L, &S->R, mine, 1 << i));
    }
  }
}

/* The lanes whose result is a copy of another lane's (their base in the
 * result's layout is 0), as a mask: after the exchange they can each hold
 * a different warp's partial, combined by shuffles instead of registers. */
static uint32_t free_lanes(const Side *out) {
  uint32_t m = 0;
  for (int i = 0; i < LANE_BITS; i++) m |= (uint32_t)!out->thread[i] << i;
  return m;
}

/* Scratch holds [output element][warp along the axis].  Every thread reads
 * back the partials of its output elements: the first `lane_bits` warp bits
 * on the free lanes (one partial each, shuffled together after), the rest
 * in registers.  Without that, a thread of a 32-warp reduction held 32
 * partials per output element at once, beside the operand, and spilled. */
static Regs gather_warps(Lower *L, ReduceState *S, Regs partial, int warp_bits, int lane_bits, LLVMTypeRef elem) {
  Exchange x;
  memset(&x, 0, sizeof x);
  Side out;
  lower_side(&S->out, NULL, &out);
  uint32_t lanes = free_lanes(&out);
  int reg_bits = warp_bits - lane_bits;
  for (int i = 0; i < S->out.n_reg; i++) x.from.reg[i] = out.reg[i] << warp_bits;
  x.from.n_reg = S->out.n_reg;
  for (int i = 0; i < reg_bits; i++) x.to.reg[i] = 1u << (lane_bits + i);
  for (int i = 0; i < S->out.n_reg; i++) x.to.reg[reg_bits + i] = out.reg[i] << warp_bits;
  x.to.n_reg = reg_bits + S->out.n_reg;
  for (int i = 0, w = 0, l = 0; i < TID_BITS; i++) {
    int is_warp_axis = i >= LANE_BITS && i - LANE_BITS < S->in.n_warp && along(&S->axis, S->in.warp[i - LANE_BITS]);
    int takes_warp = i < LANE_BITS && l < lane_bits && (lanes >> i & 1);
    x.from.thread[i] = is_warp_axis ? 1u << w++ : out.thread[i] << warp_bits;
    x.to.thread[i] = takes_warp ? 1u << l++ : is_warp_axis ? 0 : out.thread[i] << warp_bits;
  }
  x.space_bits = log2_of(shape_numel(S->out.rank, S->out.shape)) + warp_bits;
  x.elem = elem;
  return lower_exchange(L, &x, partial);
}

/* Combines each output's partials: its registers in warp order, then the
 * free lanes that gather_warps gave the other warps' partials. */
static void combine_warps(Lower *L, ReduceState *S, const Regs *parts, int reg_bits, int lane_bits) {
  Side out;
  lower_side(&S->out, NULL, &out);
  uint32_t lanes = free_lanes(&out);
  for (int g = 0; g < ll_registers(&S->out); g++) {
    Partial acc = {{NULL}};
    for (int k = 0; k < S->R.parts; k++) acc.v[k] = parts[k].v[g << reg_bits];
    for (int w = 1; w < 1 << reg_bits; w++) {
      Partial p = {{NULL}};
      for (int k = 0; k < S->R.parts; k++) p.v[k] = parts[k].v[(g << reg_bits) | w];
      acc = combine(L, &S->R, acc, p);
    }
    for (int i = 0, l = 0; i < LANE_BITS && l < lane_bits; i++) {
      if (!(lanes >> i & 1)) continue;
      acc = combine(L, &S->R, acc, shuffle_partial(L, &S->R, acc, 1 << i));
      l++;
    }
    S->groups[g] = acc;
  }
}

static void reduce_warps(Lower *L, ReduceState *S) {
  int warp_bits = 0;
  for (int i = 0; i < S->in.n_warp; i++) warp_bits += along(&S->axis, S->in.warp[i]);
  if (!warp_bits) return;
  Side out;
  lower_side(&S->out, NULL, &out);
  int lane_bits = __builtin_popcount(free_lanes(&out));
  lane_bits = lane_bits < warp_bits ? lane_bits : warp_bits;
  int n = ll_registers(&S->out);
  Regs parts[MAX_PARTS];
  for (int k = 0; k < S->R.parts; k++) {
    parts[k] = lower_regs(L, n);
    for (int g = 0; g < n; g++) parts[k].v[g] = S->groups[g].v[k];
  }
  for (int k = 0; k < S->R.parts; k++) /* an index is i32 */
    parts[k] = gather_warps(L, S, parts[k], warp_bits, lane_bits, S->R.arg && k ? L->i32 : LLVMTypeOf(parts[k].v[0]));
  combine_warps(L, S, parts, warp_bits - lane_bits, lane_bits);
}

/* Result k: part k of every group (the index for argmax and argmin), in the result's layout. */
static void reduce_result(Lower *L, const TirOp *op, ReduceState *S, int k) {
  int res = op->results.data[k];
  const Type *rt = lower_type(L, res);
  int part = S->R.arg ? 1 : k;
  Regs out = lower_regs(L, ll_registers(&S->out));
  for (int g = 0; g < out.n; g++) {
    out.v[g] = S->groups[g].v[part];
    if (S->R.arg && lower_elem_type(L, rt) != L->i32) out.v[g] = LLVMBuildSExt(L->b, out.v[g], lower_elem_type(L, rt), "");
  }
  if (rt->rank) {
    LinearLayout want;
    lower_linear(L, res, &want);
    out = lower_move(L, out, &S->out, &want, NULL, lower_elem_type(L, rt));
  }
  lower_result(L, op, k, out);
}

/* reduce (a built-in kind) and reduce_combine (N operands of one layout,
 * its combine region the step): one tree. */
void lower_reduce(Lower *L, const TirOp *op) {
  int src = op->operands.data[0], res = op->results.data[0], custom = op->code == TIR_REDUCE_COMBINE;
  const Type *st = lower_type(L, src), *rt = lower_type(L, res);
  ReduceState S;
  memset(&S, 0, sizeof S);
  int arg = op->kind == RED_ARGMAX || op->kind == RED_ARGMIN;
  S.R = (Reduction){custom ? 0 : op->kind, st, !custom && arg, custom ? op->operands.len : 1 + arg, custom ? op : NULL};
  if (S.R.parts > MAX_PARTS) lower_fail(L, "more than %d tiles combined", MAX_PARTS);
  S.axis.stride = (uint32_t)shape_numel(st->rank - op->axis - 1, st->shape + op->axis + 1);
  S.axis.size_bits = log2_of(st->shape[op->axis]);
  lower_linear(L, src, &S.in);
  slice_layout(&S, rt);
  S.groups = arena_alloc(L->arena, sizeof(Partial) * (size_t)ll_registers(&S.out));
  Regs x[MAX_PARTS];
  for (int k = 0; k < (custom ? S.R.parts : 1); k++) x[k] = lower_operand(L, op, k, k ? &S.in : NULL);
  reduce_registers(L, &S, x);
  reduce_lanes(L, &S);
  reduce_warps(L, &S);
  for (int k = 0; k < op->results.len; k++) reduce_result(L, op, &S, k);
}

/* ---- scan ----------------------------------------------------------------------------------- */

typedef struct Scan {
  int64_t outer, len, inner;
  int elem_bytes;
  LLVMTypeRef mem_type, reg_type;
  int row_bits, pad;    /* address(o) = o + (o >> row_bits) * pad, in elements */
  int64_t base;         /* bytes into scratch: a combine's part k after parts 0..k-1 */
} Scan;

static LLVMValueRef scan_address(Lower *L, const Scan *s, LLVMValueRef off) {
  LLVMValueRef padded = off;
  if (s->pad) padded = LLVMBuildAdd(L->b, off, LLVMBuildMul(L->b, LLVMBuildLShr(L->b, off, lower_i32(L, s->row_bits), ""), lower_i32(L, s->pad), ""), "");
  LLVMValueRef bytes = LLVMBuildZExt(L->b, LLVMBuildMul(L->b, padded, lower_i32(L, s->elem_bytes), ""), L->i64, "");
  if (s->base) bytes = LLVMBuildAdd(L->b, bytes, lower_int(L, L->i64, s->base), "");
  return LLVMBuildGEP2(L->b, L->i8, L->shared, &bytes, 1, "");
}

static uint32_t padded(const Scan *s, uint32_t off) { return off + (s->pad ? (off >> s->row_bits) * (uint32_t)s->pad : 0); }

/* Every thread's registers to scratch (or back from it). */
static void scan_transfer(Lower *L, const Scan *s, const LinearLayout *ll, Regs x, int to_shared) {
  Side side;
  lower_side(ll, NULL, &side);
  int64_t c[TID_BITS];
  for (int i = 0; i < TID_BITS; i++) c[i] = (int64_t)padded(s, side.thread[i]) * s->elem_bytes;
  LLVMValueRef off = LLVMBuildZExt(L->b, lower_thread_sum(L, c), L->i64, "");
  if (s->base) off = LLVMBuildAdd(L->b, off, lower_int(L, L->i64, s->base), "");
  LLVMValueRef base = LLVMBuildGEP2(L->b, L->i8, L->shared, &off, 1, "");
  for (int r = 0; r < x.n; r++) {
    LLVMValueRef k = lower_int(L, L->i64, (int64_t)padded(s, ll_reg_offset(ll, (uint32_t)r)) * s->elem_bytes);
    LLVMValueRef p = LLVMBuildGEP2(L->b, L->i8, base, &k, 1, "");
    if (to_shared) LLVMBuildStore(L->b, lower_to_memory(L, x.v[r]), p);
    else x.v[r] = lower_from_memory(L, LLVMBuildLoad2(L->b, s->mem_type, p, ""), s->reg_type);
  }
}

/* A counted loop over an i32: loop_begin leaves the builder in the header
 * (for more phis), loop_test in the body, loop_end after the loop. */
typedef struct Loop {
  LLVMBasicBlockRef header, body, exit;
  LLVMValueRef iv;
} Loop;

static Loop loop_begin(Lower *L, LLVMValueRef start, const char *name) {
  Loop lp;
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
  lp.header = lower_new_block(L, name);
  lp.body = lower_new_block(L, name);
  lp.exit = lower_new_block(L, name);
  LLVMBuildBr(L->b, lp.header);
  LLVMPositionBuilderAtEnd(L->b, lp.header);
  lp.iv = LLVMBuildPhi(L->b, L->i32, "");
  LLVMAddIncoming(lp.iv, &start, &pre, 1);
  return lp;
}

static void loop_test(Lower *L, Loop *lp, LLVMValueRef end) {
  LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, lp->iv, end, ""), lp->body, lp->exit);
  LLVMPositionBuilderAtEnd(L->b, lp->body);
}

static void loop_end(Lower *L, Loop *lp, LLVMValueRef step) {
  LLVMValueRef next = LLVMBuildAdd(L->b, lp->iv, step, "");
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
  LLVMAddIncoming(lp->iv, &next, &latch, 1);
  LLVMBuildBr(L->b, lp->header);
  LLVMPositionBuilderAtEnd(L->b, lp->exit);
}

/* One thread per line (outer x inner lines), the interpreter's loop along it. */
static void scan_lines(Lower *L, const TirOp *op, const Scan *s, const Type *t) {
  Loop lines = loop_begin(L, L->tid, "scan_line");
  loop_test(L, &lines, lower_i32(L, s->outer * s->inner));
  LLVMValueRef inner = lower_i32(L, s->inner);
  LLVMValueRef o = LLVMBuildUDiv(L->b, lines.iv, inner, ""), i = LLVMBuildURem(L->b, lines.iv, inner, "");
  LLVMValueRef first = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, o, lower_i32(L, s->len * s->inner), ""), i, "");
  int prod = op->kind == RED_PROD, reverse = op->flags & SCAN_REVERSE;
  LLVMValueRef init = dtype_is_float(t->elem) ? LLVMConstReal(s->reg_type, prod) : LLVMConstInt(s->reg_type, (unsigned long long)prod, 0);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
  Loop steps = loop_begin(L, lower_i32(L, 0), "scan_step");
  LLVMValueRef acc = LLVMBuildPhi(L->b, s->reg_type, "");
  LLVMAddIncoming(acc, &init, &pre, 1);
  loop_test(L, &steps, lower_i32(L, s->len));
  LLVMValueRef j = reverse ? LLVMBuildSub(L->b, lower_i32(L, s->len - 1), steps.iv, "") : steps.iv;
  LLVMValueRef p = scan_address(L, s, LLVMBuildAdd(L->b, first, LLVMBuildMul(L->b, j, inner, ""), ""));
  LLVMValueRef x[2] = {acc, lower_from_memory(L, LLVMBuildLoad2(L->b, s->mem_type, p, ""), s->reg_type)};
  LLVMValueRef next = lower_scalar(L, prod ? TIR_MUL : TIR_ADD, 0, t, x);
  LLVMBuildStore(L->b, lower_to_memory(L, next), p);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
  LLVMAddIncoming(acc, &next, &latch, 1);
  loop_end(L, &steps, lower_i32(L, 1));
  loop_end(L, &lines, lower_i32(L, L->num_threads));
}

/* ---- integer scans, in parallel ------------------------------------------------------ */

/* Integer sums and products are associative, so a scan over the bits of
 * the axis coordinate, lowest first, gives the interpreter's results: each
 * element keeps its prefix p and the total t of the block of elements that
 * agree with it on the bits above the current one; merging a block with
 * its partner (the bit flipped) adds the partner's total to p where the
 * partner comes first.  Partners are in another register, lane (a
 * shuffle) or warp (through shared memory). */
typedef struct Parallel {
  TirCode code;       /* TIR_ADD or TIR_MUL */
  const Type *t;
  int reverse;
  Regs p, tot;
} Parallel;

static LLVMValueRef op2(Lower *L, const Parallel *P, LLVMValueRef a, LLVMValueRef b) {
  LLVMValueRef x[2] = {a, b};
  return lower_scalar(L, P->code, 0, P->t, x);
}

/* Merges element e with a partner of total `other`; `later`: e comes after the partner. */
static void merge(Lower *L, Parallel *P, int r, LLVMValueRef other, LLVMValueRef later) {
  LLVMValueRef takes = P->reverse ? LLVMBuildNot(L->b, later, "") : later;
  P->p.v[r] = LLVMBuildSelect(L->b, takes, op2(L, P, other, P->p.v[r]), P->p.v[r], "");
  P->tot.v[r] = op2(L, P, P->tot.v[r], other);
}

static void merge_registers(Lower *L, Parallel *P, int bit) {
  for (int r = 0; r < P->p.n; r++) {
    if (r >> bit & 1) continue;
    int q = r | 1 << bit;
    LLVMValueRef tr = P->tot.v[r], tq = P->tot.v[q];
    if (P->reverse) P->p.v[r] = op2(L, P, tq, P->p.v[r]);
    else P->p.v[q] = op2(L, P, tr, P->p.v[q]);
    P->tot.v[r] = P->tot.v[q] = op2(L, P, tr, tq);
  }
}

static LLVMValueRef tid_bit(Lower *L, int bit) {
  LLVMValueRef b = LLVMBuildAnd(L->b, L->tid, lower_i32(L, 1 << bit), "");
  return LLVMBuildICmp(L->b, LLVMIntNE, b, lower_i32(L, 0), "");
}

/* Every register's total, as the thread whose warp bit `bit` differs holds it. */
static Regs partner_totals(Lower *L, const LinearLayout *ll, Regs tot, int bit, uint32_t basis) {
  Exchange x;
  memset(&x, 0, sizeof x);
  lower_side(ll, NULL, &x.from);
  x.to = x.from;
  x.space_bits = log2_of(shape_numel(ll->rank, ll->shape));
  x.elem = LLVMTypeOf(tot.v[0]);
  Scratch s;
  lower_scratch_plan(L, &x, 0, lower_max_shared(L), &s);
  if (L->shared_dirty) lower_barrier(L);
  lower_scratch_write(L, &s, tot, 0);
  lower_barrier(L);
  LLVMValueRef step = lower_int(L, L->i64, lower_scratch_offset(&s, basis));
  step = LLVMBuildSelect(L->b, tid_bit(L, bit), LLVMBuildNeg(L->b, step, ""), step, "");
  LLVMValueRef base = LLVMBuildGEP2(L->b, L->i8, lower_scratch_thread(L, &s, x.from.thread), &step, 1, "");
  Regs out = lower_regs(L, tot.n);
  for (int r = 0; r < tot.n; r++) {
    LLVMValueRef k = lower_int(L, L->i64, lower_scratch_offset(&s, ll_reg_offset(ll, (uint32_t)r)));
    LLVMValueRef v = LLVMBuildLoad2(L->b, s.mem_type, LLVMBuildGEP2(L->b, L->i8, base, &k, 1, ""), "");
    out.v[r] = lower_from_memory(L, v, x.elem);
  }
  lower_shared_unknown(L);
  return out;
}

static Regs scan_parallel(Lower *L, const TirOp *op, const LinearLayout *ll, Regs x) {
  const Type *t = lower_type(L, op->operands.data[0]);
  Parallel P = {op->kind == RED_PROD ? TIR_MUL : TIR_ADD, t, (op->flags & SCAN_REVERSE) != 0, lower_regs(L, x.n),
                lower_regs(L, x.n)};
  for (int r = 0; r < x.n; r++) P.p.v[r] = P.tot.v[r] = x.v[r];
  uint32_t stride = (uint32_t)shape_numel(t->rank - op->axis - 1, t->shape + op->axis + 1);
  for (uint32_t b = stride; b < stride * (uint32_t)t->shape[op->axis]; b <<= 1) {
    for (int i = 0; i < ll->n_reg; i++)
      if (ll->reg[i] == b) merge_registers(L, &P, i);
    for (int i = 0; i < ll->n_lane; i++)
      for (int r = 0; ll->lane[i] == b && r < x.n; r++) merge(L, &P, r, shuffle(L, P.tot.v[r], 1 << i), tid_bit(L, i));
    for (int i = 0; i < ll->n_warp; i++) {
      if (ll->warp[i] != b) continue;
      Regs other = partner_totals(L, ll, P.tot, LANE_BITS + i, b);
      for (int r = 0; r < x.n; r++) merge(L, &P, r, other.v[r], tid_bit(L, LANE_BITS + i));
    }
  }
  return P.p;
}

/* The scratch geometry of a scan of a tile of type t along axis; its bytes. */
static int64_t scan_geometry(Lower *L, const Type *t, int axis, Scan *s) {
  memset(s, 0, sizeof *s);
  s->len = t->shape[axis];
  s->outer = shape_numel(axis, t->shape);
  s->inner = shape_numel(t->rank - axis - 1, t->shape + axis + 1);
  s->reg_type = lower_elem_type(L, t);
  s->mem_type = s->reg_type == L->i1 ? L->i8 : s->reg_type;
  s->elem_bytes = lower_type_bits(s->mem_type) / 8;
  if (s->inner == 1 && s->outer > 1 && s->elem_bytes <= 4) s->pad = 1, s->row_bits = log2_of(s->len); /* lines in different banks */
  return ((int64_t)padded(s, (uint32_t)(type_numel(t) - 1)) + 1) * s->elem_bytes;
}

/* ---- scans with a combine region ----------------------------------------------------- */

/* The element `step` of a line (counted from its end when reversed): an address per part. */
static void line_addresses(Lower *L, const Scan *s, int n, LLVMValueRef first, LLVMValueRef step, int reverse,
                           LLVMValueRef *p) {
  LLVMValueRef j = reverse ? LLVMBuildSub(L->b, lower_i32(L, s[0].len - 1), step, "") : step;
  LLVMValueRef off = LLVMBuildAdd(L->b, first, LLVMBuildMul(L->b, j, lower_i32(L, s[0].inner), ""), "");
  for (int k = 0; k < n; k++) p[k] = scan_address(L, &s[k], off);
}

/* One thread per line, as scan_lines, with N values carried: the first
 * element as it is, then acc = combine(acc, element), the interpreter's order. */
static void combine_lines(Lower *L, const TirOp *op, const Scan *s) {
  int n = op->operands.len, reverse = (op->flags & SCAN_REVERSE) != 0;
  Reduction R = {0, NULL, 0, n, op};
  Loop lines = loop_begin(L, L->tid, "scan_line");
  loop_test(L, &lines, lower_i32(L, s[0].outer * s[0].inner));
  LLVMValueRef inner = lower_i32(L, s[0].inner);
  LLVMValueRef o = LLVMBuildUDiv(L->b, lines.iv, inner, ""), i = LLVMBuildURem(L->b, lines.iv, inner, "");
  LLVMValueRef first = LLVMBuildAdd(L->b, LLVMBuildMul(L->b, o, lower_i32(L, s[0].len * s[0].inner), ""), i, "");
  LLVMValueRef p[MAX_PARTS], init[MAX_PARTS], acc[MAX_PARTS];
  line_addresses(L, s, n, first, lower_i32(L, 0), reverse, p);
  for (int k = 0; k < n; k++) init[k] = lower_from_memory(L, LLVMBuildLoad2(L->b, s[k].mem_type, p[k], ""), s[k].reg_type);
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(L->b);
  Loop steps = loop_begin(L, lower_i32(L, 1), "scan_step");
  for (int k = 0; k < n; k++) {
    acc[k] = LLVMBuildPhi(L->b, s[k].reg_type, "");
    LLVMAddIncoming(acc[k], &init[k], &pre, 1);
  }
  loop_test(L, &steps, lower_i32(L, s[0].len));
  line_addresses(L, s, n, first, steps.iv, reverse, p);
  Partial a = {{NULL}}, b = {{NULL}};
  for (int k = 0; k < n; k++) {
    a.v[k] = acc[k];
    b.v[k] = lower_from_memory(L, LLVMBuildLoad2(L->b, s[k].mem_type, p[k], ""), s[k].reg_type);
  }
  Partial next = combine(L, &R, a, b);
  for (int k = 0; k < n; k++) LLVMBuildStore(L->b, lower_to_memory(L, next.v[k]), p[k]);
  LLVMBasicBlockRef latch = LLVMGetInsertBlock(L->b);
  for (int k = 0; k < n; k++) LLVMAddIncoming(acc[k], &next.v[k], &latch, 1);
  loop_end(L, &steps, lower_i32(L, 1));
  loop_end(L, &lines, lower_i32(L, L->num_threads));
}

/* scan_combine through shared memory: each operand to its own scratch
 * array, combine_lines, the results read back.  Sequential along a line,
 * so the results equal the interpreter's bit for bit whatever the combine. */
static void scan_combine_lines(Lower *L, const TirOp *op) {
  int n = op->operands.len;
  Scan s[MAX_PARTS];
  LinearLayout ll[MAX_PARTS], want;
  int64_t total = 0;
  for (int k = 0; k < n; k++) {
    int64_t bytes = scan_geometry(L, lower_type(L, op->operands.data[k]), op->axis, &s[k]);
    s[k].base = total;
    total += (bytes + 15) / 16 * 16;
    lower_linear(L, op->operands.data[k], &ll[k]);
  }
  lower_note_scratch(L, total);
  if (L->shared_dirty) lower_barrier(L);
  for (int k = 0; k < n; k++) scan_transfer(L, &s[k], &ll[k], lower_get(L, op->operands.data[k]), 1);
  lower_barrier(L);
  combine_lines(L, op, s);
  lower_barrier(L);
  for (int k = 0; k < n; k++) {
    Regs out = lower_regs(L, lower_get(L, op->operands.data[k]).n);
    scan_transfer(L, &s[k], &ll[k], out, 0);
    lower_linear(L, op->results.data[k], &want);
    lower_result(L, op, k, lower_move(L, out, &ll[k], &want, NULL, s[k].reg_type));
  }
  lower_shared_unknown(L);
}

/* ---- scans with a combine region, in parallel ---------------------------------------- */

/* scan_parallel's merge over the bits of the axis coordinate with N values
 * per element and a combine that need not commute: the earlier block's
 * values are the combine's first arguments (the later block's for a
 * reverse scan, whose order runs from the end).  p: the prefix within the
 * block merged so far, t: that block's total, per register. */
typedef struct ParallelCombine {
  Reduction R;
  int reverse;
  int n;             /* registers */
  Partial *p, *t;
} ParallelCombine;

static Partial select_partial(Lower *L, const Reduction *R, LLVMValueRef c, Partial x, Partial y) {
  Partial r = {{NULL}};
  for (int k = 0; k < R->parts; k++) r.v[k] = LLVMBuildSelect(L->b, c, x.v[k], y.v[k], "");
  return r;
}

/* Element r and a partner block of total `other`; `later`: r's block comes after the partner's. */
static void merge_combine(Lower *L, ParallelCombine *P, int r, Partial other, LLVMValueRef later) {
  LLVMValueRef partner_first = P->reverse ? LLVMBuildNot(L->b, later, "") : later;
  Partial p = combine(L, &P->R, other, P->p[r]);
  Partial t_after = combine(L, &P->R, other, P->t[r]), t_before = combine(L, &P->R, P->t[r], other);
  P->p[r] = select_partial(L, &P->R, partner_first, p, P->p[r]);
  P->t[r] = select_partial(L, &P->R, partner_first, t_after, t_before);
}

/* Registers r and q = r | 1 << bit: q's element comes later along the axis. */
static void merge_combine_registers(Lower *L, ParallelCombine *P, int bit) {
  for (int r = 0; r < P->n; r++) {
    if (r >> bit & 1) continue;
    int q = r | 1 << bit;
    Partial first = P->reverse ? P->t[q] : P->t[r], second = P->reverse ? P->t[r] : P->t[q];
    if (P->reverse) P->p[r] = combine(L, &P->R, P->t[q], P->p[r]);
    else P->p[q] = combine(L, &P->R, P->t[r], P->p[q]);
    P->t[r] = P->t[q] = combine(L, &P->R, first, second);
  }
}

/* The partner totals across warp bit `bit`, one part at a time. */
static void merge_combine_warps(Lower *L, ParallelCombine *P, const LinearLayout *ll, int bit, uint32_t basis) {
  Regs other[MAX_PARTS];
  for (int k = 0; k < P->R.parts; k++) {
    Regs tot = lower_regs(L, P->n);
    for (int r = 0; r < P->n; r++) tot.v[r] = P->t[r].v[k];
    other[k] = partner_totals(L, ll, tot, bit, basis);
  }
  for (int r = 0; r < P->n; r++) {
    Partial o = {{NULL}};
    for (int k = 0; k < P->R.parts; k++) o.v[k] = other[k].v[r];
    merge_combine(L, P, r, o, tid_bit(L, bit));
  }
}

static void scan_combine_parallel(Lower *L, const TirOp *op) {
  int n = op->operands.len;
  const Type *t = lower_type(L, op->operands.data[0]);
  LinearLayout ll, want;
  lower_linear(L, op->operands.data[0], &ll);
  Regs x[MAX_PARTS];
  for (int k = 0; k < n; k++) x[k] = lower_operand(L, op, k, k ? &ll : NULL);
  ParallelCombine P = {{0, NULL, 0, n, op}, (op->flags & SCAN_REVERSE) != 0, x[0].n, NULL, NULL};
  P.p = arena_alloc(L->arena, sizeof(Partial) * (size_t)P.n);
  P.t = arena_alloc(L->arena, sizeof(Partial) * (size_t)P.n);
  for (int r = 0; r < P.n; r++)
    for (int k = 0; k < n; k++) P.p[r].v[k] = P.t[r].v[k] = x[k].v[r];
  uint32_t stride = (uint32_t)shape_numel(t->rank - op->axis - 1, t->shape + op->axis + 1);
  for (uint32_t b = stride; b < stride * (uint32_t)t->shape[op->axis]; b <<= 1) {
    for (int i = 0; i < ll.n_reg; i++)
      if (ll.reg[i] == b) merge_combine_registers(L, &P, i);
    for (int i = 0; i < ll.n_lane; i++)
      for (int r = 0; ll.lane[i] == b && r < P.n; r++)
        merge_combine(L, &P, r, shuffle_partial(L, &P.R, P.t[r], 1 << i), tid_bit(L, i));
    for (int i = 0; i < ll.n_warp; i++)
      if (ll.warp[i] == b) merge_combine_warps(L, &P, &ll, LANE_BITS + i, b);
  }
  for (int k = 0; k < n; k++) {
    Regs out = lower_regs(L, P.n);
    for (int r = 0; r < P.n; r++) out.v[r] = P.p[r].v[k];
    lower_linear(L, op->results.data[k], &want);
    lower_result(L, op, k, lower_move(L, out, &ll, &want, NULL, lower_elem_type(L, lower_type(L, op->results.data[k]))));
  }
}

/* Integer parts (8 bits or more) in parallel, as the built-in integer
 * scans: the combine is taken to be associative, as Triton does; anything
 * else (floats, whose results would depend on the order; i1) in order. */
static void lower_scan_combine(Lower *L, const TirOp *op) {
  if (op->operands.len > MAX_PARTS) lower_fail(L, "more than %d tiles combined", MAX_PARTS);
  int parallel = 1;
  for (int k = 0; k < op->operands.len; k++) {
    const Type *t = lower_type(L, op->operands.data[k]);
    parallel &= !t->is_ptr && dtype_is_int(t->elem) && dtype_bits(t->elem) >= 8;
  }
  if (parallel) scan_combine_parallel(L, op);
  else scan_combine_lines(L, op);
}

void lower_scan(Lower *L, const TirOp *op) {
  if (op->code == TIR_SCAN_COMBINE) {
    lower_scan_combine(L, op);
    return;
  }
  int src = op->operands.data[0], res = op->results.data[0];
  const Type *t = lower_type(L, src);
  Scan s;
  int64_t bytes = scan_geometry(L, t, op->axis, &s);
  LinearLayout ll, want;
  lower_linear(L, src, &ll);
  lower_linear(L, res, &want);
  Regs x = lower_get(L, src), out = lower_regs(L, x.n);
  if (!dtype_is_float(t->elem)) {
    lower_result(L, op, 0, lower_move(L, scan_parallel(L, op, &ll, x), &ll, &want, NULL, s.reg_type));
    return;
  }
  lower_note_scratch(L, (bytes + 15) / 16 * 16);
  if (L->shared_dirty) lower_barrier(L);
  scan_transfer(L, &s, &ll, x, 1);
  lower_barrier(L);
  scan_lines(L, op, &s, t);
  lower_barrier(L);
  scan_transfer(L, &s, &ll, out, 0);
  lower_shared_unknown(L);
  lower_result(L, op, 0, lower_move(L, out, &ll, &want, NULL, s.reg_type));
}
