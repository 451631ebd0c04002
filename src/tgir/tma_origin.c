/* The box origin of a TMA copy (pipeline.c) or store (tma_store.c): the
 * 32-bit signed coordinates cp.async.bulk.tensor takes, from a TmaLoad's
 * plan.  One builder, so that loads and stores agree on what an origin
 * outside the 32-bit range becomes (docs/tgir.md, "TMA copies"). */
#include "passes.h"

#include <stdint.h>

typedef struct Origin {
  TirFunc *f;
  OpList *out; /* the caller's list of ops being emitted */
  Loc loc;
} Origin;

static int emit(Origin *o, TirCode code, int kind, DType dt, const int *operands, int n) {
  TirOp *op = tir_op_new(o->f, code, o->loc);
  op->kind = kind;
  for (int i = 0; i < n; i++) tir_add_operand(o->f, op, operands[i]);
  int r = tir_add_result(o->f, op, type_scalar(o->f->arena, dt));
  tir_set_layout(o->f, r, NULL);
  vec_push(o->f->arena, o->out, op);
  return r;
}

static int constant(Origin *o, DType dt, int64_t v) {
  int r = emit(o, TIR_CONSTANT, 0, dt, NULL, 0);
  o->out->data[o->out->len - 1]->ival = v;
  o->out->data[o->out->len - 1]->fval = (double)v;
  return r;
}

static int convert(Origin *o, int v, DType dt) {
  return tir_type(o->f, v)->elem == dt ? v : emit(o, TIR_CAST, 0, dt, &v, 1);
}

/* Whether every value of dt is an i32's: computed in i32 as ever, not widened and clamped. */
static int fits_i32(DType dt) { return dt == DT_I32 || dtype_bits(dt) < 32; }

static DType width_of(const TirFunc *f, int v) {
  return v < 0 || fits_i32(tir_type(f, v)->elem) ? DT_I32 : DT_I64;
}

/* i64 origin c as the i32 TMA takes, as far out of bounds as it was,
 * where truncation would wrap it into the tensor: clamped to [-box, dim],
 * box the largest box side and dim the largest extent the runtime
 * encodes (arch.h).  A box from -box ends before 0, one from dim starts
 * at or past every extent, and neither's coordinates overflow.  (-2^31,
 * tried first, is an illegal instruction on an H200.)  Origins in between
 * are exact. */
static int saturate(Origin *o, int c) {
  int floor_ops[2] = {c, constant(o, DT_I64, -ARCH_MAX_TENSOR_MAP_BOX)};
  int floored = emit(o, TIR_MAXIMUM, 0, DT_I64, floor_ops, 2);
  int ceil_ops[2] = {floored, constant(o, DT_I64, ARCH_MAX_TENSOR_MAP_DIM)};
  return convert(o, emit(o, TIR_MINIMUM, 0, DT_I64, ceil_ops, 2), DT_I32);
}

/* c plus (iv - t->iv_base) * t->per_iv, in dt. */
static int add_along(Origin *o, const TmaLoad *t, int c, int has_start, int iv, DType dt) {
  int at = convert(o, iv, dt);
  if (t->iv_base >= 0) {
    int sub[2] = {at, convert(o, t->iv_base, dt)};
    at = emit(o, TIR_SUB, 0, dt, sub, 2);
  }
  int mul[2] = {at, constant(o, dt, t->per_iv)};
  int along = emit(o, TIR_MUL, 0, dt, mul, 2);
  if (!has_start) return along;
  int add[2] = {c, along};
  return emit(o, TIR_ADD, 0, dt, add, 2);
}

/* Where the tensor's extent along i is below 1 the launch encodes 1 (a
 * map cannot be empty) while the mask drops every element: the origin
 * moves to `empty_at`, wholly outside the tensor, where TMA touches no
 * memory.  The extent is compared in its own width: a truncated i64 could
 * look positive. */
static int unless_empty(Origin *o, const TmaLoad *t, int i, int c, int64_t empty_at) {
  if (t->extent[i] < 0) return c;
  DType dt = width_of(o->f, t->extent[i]);
  int ge[2] = {convert(o, t->extent[i], dt), constant(o, dt, 1)};
  int some = emit(o, TIR_CMP, CMP_GE, DT_I1, ge, 2);
  int sel[3] = {some, c, constant(o, DT_I32, empty_at)};
  return emit(o, TIR_SELECT, 0, DT_I32, sel, 3);
}

int tgir_tma_origin(TirFunc *f, OpList *out, const TmaLoad *t, int i, int iv, int64_t empty_at, Loc loc) {
  Origin o = {f, out, loc};
  int moving = iv >= 0 && i == t->moving && t->per_iv;
  DType dt = width_of(f, t->origin[i]);
  if (moving && (width_of(f, iv) == DT_I64 || width_of(f, t->iv_base) == DT_I64)) dt = DT_I64;
  int c = t->origin[i] >= 0 ? convert(&o, t->origin[i], dt) : constant(&o, dt, 0);
  if (moving) c = add_along(&o, t, c, t->origin[i] >= 0, iv, dt);
  if (dt == DT_I64) c = saturate(&o, c);
  return unless_empty(&o, t, i, c, empty_at);
}
