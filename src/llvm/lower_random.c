/* tl.rand, tl.randn, tl.randint: Philox 4x32 exactly as the interpreter
 * (interp.c): counters (offset low, offset high or 0, 0, 0), key (seed low,
 * seed high), `rounds` rounds; uniform from the first word, normal by
 * Box-Muller from the first two (libdevice's logf and cosf). */
#include "lower.h"

static LLVMValueRef u32(Lower *L, uint32_t v) { return LLVMConstInt(L->i32, v, 0); }

static void mulhilo(Lower *L, uint32_t m, LLVMValueRef x, LLVMValueRef *hi, LLVMValueRef *lo) {
  LLVMValueRef p = LLVMBuildMul(L->b, LLVMConstInt(L->i64, m, 0), LLVMBuildZExt(L->b, x, L->i64, ""), "");
  *lo = LLVMBuildTrunc(L->b, p, L->i32, "");
  *hi = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, p, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
}

static void philox(Lower *L, LLVMValueRef c[4], LLVMValueRef k0, LLVMValueRef k1, int rounds) {
  for (int r = 0; r < rounds; r++) {
    LLVMValueRef ahi, alo, bhi, blo;
    mulhilo(L, 0xD2511F53u, c[0], &ahi, &alo);
    mulhilo(L, 0xCD9E8D57u, c[2], &bhi, &blo);
    c[0] = LLVMBuildXor(L->b, LLVMBuildXor(L->b, bhi, c[1], ""), k0, "");
    c[2] = LLVMBuildXor(L->b, LLVMBuildXor(L->b, ahi, c[3], ""), k1, "");
    c[1] = blo;
    c[3] = alo;
    k0 = LLVMBuildAdd(L->b, k0, u32(L, 0x9E3779B9u), "");
    k1 = LLVMBuildAdd(L->b, k1, u32(L, 0xBB67AE85u), "");
  }
}

/* A 32-bit word to a float in [0, 1): |x| as a signed int, scaled by 2^-31. */
static LLVMValueRef uniform(Lower *L, LLVMValueRef x) {
  LLVMValueRef negative = LLVMBuildICmp(L->b, LLVMIntSLT, x, u32(L, 0), "");
  LLVMValueRef v = LLVMBuildSelect(L->b, negative, LLVMBuildNot(L->b, x, ""), x, "");
  return LLVMBuildFMul(L->b, LLVMBuildSIToFP(L->b, v, L->f32, ""), LLVMConstReal(L->f32, 4.6566127342e-10f), "");
}

static LLVMValueRef normal(Lower *L, LLVMValueRef c0, LLVMValueRef c1) {
  LLVMValueRef m[2] = {LLVMConstReal(L->f32, 1.0e-7f), uniform(L, c0)};
  LLVMValueRef u1 = lower_intrinsic(L, "llvm.maxnum", &L->f32, 1, m, 2);
  LLVMValueRef th = LLVMBuildFMul(L->b, LLVMConstReal(L->f32, 6.283185307179586f), uniform(L, c1), "");
  LLVMValueRef log = lower_call(L, "__nv_logf", L->f32, &L->f32, 1, &u1);
  LLVMValueRef r = LLVMBuildFMul(L->b, LLVMConstReal(L->f32, -2.0f), log, "");
  LLVMValueRef root = lower_intrinsic(L, "llvm.sqrt", &L->f32, 1, &r, 1);
  return LLVMBuildFMul(L->b, root, lower_call(L, "__nv_cosf", L->f32, &L->f32, 1, &th), "");
}

/* The seed as the interpreter holds it: a canonical 64-bit integer. */
static void key_of(Lower *L, int seed, LLVMValueRef *k0, LLVMValueRef *k1) {
  const Type *t = lower_type(L, seed);
  LLVMValueRef s = lower_get(L, seed).v[0];
  if (LLVMTypeOf(s) != L->i64)
    s = dtype_kind(t->elem) == DK_SINT ? LLVMBuildSExt(L->b, s, L->i64, "") : LLVMBuildZExt(L->b, s, L->i64, "");
  *k0 = LLVMBuildTrunc(L->b, s, L->i32, "");
  *k1 = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, s, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
}

void lower_rand(Lower *L, const TirOp *op) {
  int res = op->results.data[0];
  const Type *rt = lower_type(L, res);
  LinearLayout ll;
  lower_linear(L, res, &ll);
  Regs off = lower_operand(L, op, 1, rt->rank ? &ll : NULL), out = lower_regs(L, off.n);
  LLVMValueRef k0, k1;
  key_of(L, op->operands.data[0], &k0, &k1);
  int wide = lower_type_bits(LLVMTypeOf(off.v[0])) == 64, sign = dtype_kind(lower_type(L, op->operands.data[1])->elem) == DK_SINT;
  for (int r = 0; r < out.n; r++) {
    LLVMValueRef o = off.v[r], c[4] = {NULL, u32(L, 0), u32(L, 0), u32(L, 0)};
    if (wide) c[0] = LLVMBuildTrunc(L->b, o, L->i32, "");
    else c[0] = LLVMTypeOf(o) == L->i32 ? o : sign ? LLVMBuildSExt(L->b, o, L->i32, "") : LLVMBuildZExt(L->b, o, L->i32, "");
    if (wide) c[1] = LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, o, LLVMConstInt(L->i64, 32, 0), ""), L->i32, "");
    philox(L, c, k0, k1, (int)op->ival);
    if (op->kind == RAND_INT) out.v[r] = lower_cast_value(L, c[0], &(Type){DT_U32, 0, 0, {0}, 0}, rt, 0);
    else if (op->kind == RAND_UNIFORM) out.v[r] = uniform(L, c[0]);
    else out.v[r] = normal(L, c[0], c[1]);
  }
  lower_result(L, op, 0, out);
}
