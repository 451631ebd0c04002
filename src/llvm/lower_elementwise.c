/* Values and elementwise ops, register by register, with the semantics of
 * the interpreter (src/interp/interp.c): integer division by zero gives -1
 * and x % 0 = x, shifts past the width give 0 (or -1), maximum and minimum
 * ignore NaN, float-to-int casts truncate and saturate with NaN -> 0, and
 * fp16/bf16 math that the GPU has no instruction for runs in fp32.  Every
 * float op rounds once (LLVM emits .rn instructions, which ptxas does not
 * contract), so results match the interpreter bit for bit except exp
 * (ex2.approx, as Triton) and the libdevice functions. */
#include "lower.h"

#include <math.h>

static int is_float(const Type *t) { return !t->is_ptr && dtype_is_float(t->elem); }
static int is_signed(const Type *t) { return !t->is_ptr && dtype_kind(t->elem) == DK_SINT; }
static int bits_of(const Type *t) { return t->is_ptr ? 64 : dtype_bits(t->elem); }

/* ---- values -------------------------------------------------------------------- */

static LLVMValueRef constant_value(Lower *L, const TirOp *op, const Type *t) {
  LLVMTypeRef et = lower_elem_type(L, t);
  if (t->is_ptr) return LLVMConstIntToPtr(LLVMConstInt(L->i64, (unsigned long long)op->ival, 0), et);
  if (is_float(t) && dtype_is_fp8(t->elem)) return lower_fp8_constant(L, op->fval, t->elem);
  if (is_float(t)) return LLVMConstReal(et, op->fval);
  if (t->elem == DT_I1) return LLVMConstInt(et, op->ival != 0, 0);
  return LLVMConstInt(et, (unsigned long long)op->ival, 1);
}

static int registers_of(Lower *L, int value, LinearLayout *ll) {
  lower_linear(L, value, ll);
  return ll_registers(ll);
}

void lower_constant(Lower *L, const TirOp *op) {
  LinearLayout ll;
  Regs out = lower_regs(L, registers_of(L, op->results.data[0], &ll));
  LLVMValueRef c = constant_value(L, op, lower_type(L, op->results.data[0]));
  for (int r = 0; r < out.n; r++) out.v[r] = c;
  out.uniform = 1;
  lower_result(L, op, 0, out);
}

void lower_special(Lower *L, const TirOp *op) {
  Regs out = lower_regs(L, 1);
  out.v[0] = op->code == TIR_PROGRAM_ID    ? L->target->program_id(L, op->axis)
             : op->code == TIR_SMID        ? L->target->smid(L)
             : op->code == TIR_GLOBALTIMER ? L->target->globaltimer(L)
                                           : L->target->num_programs(L, op->axis);
  const Type *t = lower_type(L, op->results.data[0]);
  if (bits_of(t) != 32 && op->code != TIR_GLOBALTIMER) out.v[0] = LLVMBuildZExt(L->b, out.v[0], lower_elem_type(L, t), "");
  lower_result(L, op, 0, out);
}

/* start + the element's coordinate: the thread part once, a constant per register. */
void lower_make_range(Lower *L, const TirOp *op) {
  LinearLayout ll;
  Regs out = lower_regs(L, registers_of(L, op->results.data[0], &ll));
  Side s;
  lower_side(&ll, NULL, &s);
  LLVMValueRef base = LLVMBuildAdd(L->b, lower_thread_offset(L, s.thread), lower_i32(L, op->ival), "");
  LLVMTypeRef t = lower_elem_type(L, lower_type(L, op->results.data[0]));
  for (int r = 0; r < out.n; r++) {
    LLVMValueRef v = LLVMBuildAdd(L->b, base, lower_i32(L, ll_reg_offset(&ll, (uint32_t)r)), "");
    out.v[r] = t == L->i32 ? v : LLVMBuildSExt(L->b, v, t, "");
  }
  lower_result(L, op, 0, out);
}

/* ---- integers ------------------------------------------------------------------- */

static LLVMValueRef eq_const(Lower *L, LLVMValueRef x, int64_t c) {
  return LLVMBuildICmp(L->b, LLVMIntEQ, x, lower_int(L, LLVMTypeOf(x), c), "");
}

/* Division and remainder as the GPU does them, without LLVM's undefined cases:
 * x / 0 = -1, x % 0 = x, INT_MIN / -1 = INT_MIN, x % -1 = 0. */
static LLVMValueRef int_divide(Lower *L, TirCode code, const Type *t, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = L->b;
  LLVMTypeRef ty = LLVMTypeOf(a);
  LLVMValueRef zero = eq_const(L, b, 0), one = lower_int(L, ty, 1);
  LLVMValueRef minus_one = is_signed(t) ? eq_const(L, b, -1) : LLVMConstInt(L->i1, 0, 0);
  LLVMValueRef safe = LLVMBuildSelect(B, LLVMBuildOr(B, zero, minus_one, ""), one, b, "");
  LLVMValueRef r;
  if (code == TIR_DIV) {
    r = is_signed(t) ? LLVMBuildSDiv(B, a, safe, "") : LLVMBuildUDiv(B, a, safe, "");
    r = LLVMBuildSelect(B, minus_one, LLVMBuildNeg(B, a, ""), r, "");
    return LLVMBuildSelect(B, zero, lower_int(L, ty, -1), r, "");
  }
  r = is_signed(t) ? LLVMBuildSRem(B, a, safe, "") : LLVMBuildURem(B, a, safe, "");
  r = LLVMBuildSelect(B, minus_one, LLVMConstNull(ty), r, "");
  return LLVMBuildSelect(B, zero, a, r, "");
}

/* Shifts by the width or more (or a negative amount): 0, or -1 for a
 * negative signed value shifted right. */
static LLVMValueRef int_shift(Lower *L, TirCode code, const Type *t, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = L->b;
  LLVMTypeRef ty = LLVMTypeOf(a);
  int bits = bits_of(t);
  LLVMValueRef past = LLVMBuildICmp(B, LLVMIntUGE, b, lower_int(L, ty, bits), "");
  LLVMValueRef n = LLVMBuildAnd(B, b, lower_int(L, ty, bits - 1), "");
  if (code == TIR_SHL) return LLVMBuildSelect(B, past, LLVMConstNull(ty), LLVMBuildShl(B, a, n, ""), "");
  if (!is_signed(t)) return LLVMBuildSelect(B, past, LLVMConstNull(ty), LLVMBuildLShr(B, a, n, ""), "");
  LLVMValueRef fill = LLVMBuildAShr(B, a, lower_int(L, ty, bits - 1), "");
  return LLVMBuildSelect(B, past, fill, LLVMBuildAShr(B, a, n, ""), "");
}

static LLVMValueRef umulhi(Lower *L, const Type *t, LLVMValueRef a, LLVMValueRef b) {
  int bits = bits_of(t);
  LLVMTypeRef wide = lower_int_type(L, 2 * bits);
  LLVMValueRef p = LLVMBuildMul(L->b, LLVMBuildZExt(L->b, a, wide, ""), LLVMBuildZExt(L->b, b, wide, ""), "");
  return LLVMBuildTrunc(L->b, LLVMBuildLShr(L->b, p, lower_int(L, wide, bits), ""), LLVMTypeOf(a), "");
}

static LLVMIntPredicate int_predicate(int kind, int is_signed_) {
  static const LLVMIntPredicate s[] = {LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE, LLVMIntEQ, LLVMIntNE};
  static const LLVMIntPredicate u[] = {LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE, LLVMIntEQ, LLVMIntNE};
  return is_signed_ ? s[kind] : u[kind];
}

static LLVMValueRef int_binary(Lower *L, TirCode code, const Type *t, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = L->b;
  int sg = is_signed(t);
  switch (code) {
  case TIR_ADD: return LLVMBuildAdd(B, a, b, "");
  case TIR_SUB: return LLVMBuildSub(B, a, b, "");
  case TIR_MUL: return LLVMBuildMul(B, a, b, "");
  case TIR_DIV: case TIR_REM: return int_divide(L, code, t, a, b);
  case TIR_AND: return LLVMBuildAnd(B, a, b, "");
  case TIR_OR: return LLVMBuildOr(B, a, b, "");
  case TIR_XOR: return LLVMBuildXor(B, a, b, "");
  case TIR_SHL: case TIR_SHR: return int_shift(L, code, t, a, b);
  case TIR_MAXIMUM: return LLVMBuildSelect(B, LLVMBuildICmp(B, int_predicate(CMP_LT, sg), a, b, ""), b, a, "");
  case TIR_MINIMUM: return LLVMBuildSelect(B, LLVMBuildICmp(B, int_predicate(CMP_LT, sg), b, a, ""), b, a, "");
  case TIR_UMULHI: return umulhi(L, t, a, b);
  default: lower_fail(L, "'%s' on integers", tir_op_name(code));
  }
}

static LLVMValueRef int_unary(Lower *L, TirCode code, const Type *t, LLVMValueRef a) {
  LLVMTypeRef ty = LLVMTypeOf(a);
  switch (code) {
  case TIR_NEG: return LLVMBuildNeg(L->b, a, "");
  case TIR_NOT: return LLVMBuildNot(L->b, a, "");
  case TIR_ABS: {
    if (!is_signed(t)) return a;
    LLVMValueRef negative = LLVMBuildICmp(L->b, LLVMIntSLT, a, LLVMConstNull(ty), "");
    return LLVMBuildSelect(L->b, negative, LLVMBuildNeg(L->b, a, ""), a, "");
  }
  default: lower_fail(L, "'%s' needs floating-point operands", tir_op_name(code));
  }
}

/* ---- floats ---------------------------------------------------------------------- */

/* fp16 and bf16 math the GPU lacks runs in fp32, then rounds back. */
static int narrow(LLVMTypeRef t, Lower *L) { return t == L->f16 || t == L->bf16; }

static LLVMValueRef libdevice(Lower *L, const char *name, LLVMValueRef *x, int n) {
  LLVMTypeRef t = LLVMTypeOf(x[0]), p[3] = {t, t, t};
  const char *full = arena_printf(L->arena, "__nv_%s%s", name, t == L->f32 ? "f" : "");
  return lower_call(L, full, t, p, n, x);
}

static LLVMValueRef unary_intrinsic(Lower *L, const char *name, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  return lower_intrinsic(L, name, &t, 1, &x, 1);
}

static LLVMValueRef binary_intrinsic(Lower *L, const char *name, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef x[2] = {a, b};
  return lower_intrinsic(L, name, &t, 1, x, 2);
}

/* exp(x) = ex2.approx(x * log2(e)) for fp32, as Triton; libdevice for fp64.
 * exp2 flushes results below 2^-126 to 0 (ex2.approx.ftz), as Triton's
 * compiled exp2 does: without ftz ptxas wraps every ex2 in a range test
 * and two scalings, which made attention's forward loop 1.3-1.4x slower
 * on an H200 (docs/language.md, "Precision"). */
static LLVMValueRef float_exp(Lower *L, TirCode code, LLVMValueRef x) {
  if (LLVMTypeOf(x) == L->f64) return libdevice(L, code == TIR_EXP ? "exp" : "exp2", &x, 1);
  if (code == TIR_EXP) x = LLVMBuildFMul(L->b, x, LLVMConstReal(L->f32, 1.4426950408889634), "");
  return L->target->exp2_approx(L, x, code == TIR_EXP2);
}

static LLVMValueRef float_unary_wide(Lower *L, TirCode code, LLVMValueRef x) {
  switch (code) {
  case TIR_NEG: return LLVMBuildFNeg(L->b, x, "");
  case TIR_ABS: return unary_intrinsic(L, "llvm.fabs", x);
  case TIR_FLOOR: return unary_intrinsic(L, "llvm.floor", x);
  case TIR_CEIL: return unary_intrinsic(L, "llvm.ceil", x);
  case TIR_SQRT: return unary_intrinsic(L, "llvm.sqrt", x);
  case TIR_EXP: case TIR_EXP2: return float_exp(L, code, x);
  case TIR_LOG: return libdevice(L, "log", &x, 1);
  case TIR_LOG2: return libdevice(L, "log2", &x, 1);
  case TIR_RSQRT: return libdevice(L, "rsqrt", &x, 1);
  case TIR_SIN: return libdevice(L, "sin", &x, 1);
  case TIR_COS: return libdevice(L, "cos", &x, 1);
  case TIR_ERF: return libdevice(L, "erf", &x, 1);
  default: lower_fail(L, "'%s' on floats", tir_op_name(code));
  }
}

static LLVMValueRef float_unary(Lower *L, TirCode code, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  if (code == TIR_NEG || code == TIR_ABS || !narrow(t, L)) return float_unary_wide(L, code, x);
  LLVMValueRef r = float_unary_wide(L, code, LLVMBuildFPExt(L->b, x, L->f32, ""));
  return LLVMBuildFPTrunc(L->b, r, t, "");
}

static LLVMValueRef float_rem(Lower *L, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  if (!narrow(t, L)) {
    LLVMValueRef x[2] = {a, b};
    return libdevice(L, "fmod", x, 2);
  }
  LLVMValueRef x[2] = {LLVMBuildFPExt(L->b, a, L->f32, ""), LLVMBuildFPExt(L->b, b, L->f32, "")};
  return LLVMBuildFPTrunc(L->b, libdevice(L, "fmod", x, 2), t, ""); /* exact in fp32, so rounds once */
}

static LLVMValueRef float_binary(Lower *L, TirCode code, int kind, LLVMValueRef a, LLVMValueRef b) {
  switch (code) {
  case TIR_ADD: return LLVMBuildFAdd(L->b, a, b, "");
  case TIR_SUB: return LLVMBuildFSub(L->b, a, b, "");
  case TIR_MUL: return LLVMBuildFMul(L->b, a, b, "");
  case TIR_DIV:
    return LLVMTypeOf(a) == L->f32 && kind != DIV_RN ? L->target->div_full(L, a, b) : LLVMBuildFDiv(L->b, a, b, "");
  case TIR_REM: return float_rem(L, a, b);
  case TIR_MAXIMUM: return binary_intrinsic(L, kind == NAN_ALL ? "llvm.maximum" : "llvm.maxnum", a, b);
  case TIR_MINIMUM: return binary_intrinsic(L, kind == NAN_ALL ? "llvm.minimum" : "llvm.minnum", a, b);
  default: lower_fail(L, "integer operation '%s' on floats", tir_op_name(code));
  }
}

/* Ordered comparisons, except != which is true for NaN. */
static LLVMValueRef float_compare(Lower *L, int kind, LLVMValueRef a, LLVMValueRef b) {
  static const LLVMRealPredicate p[] = {LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE, LLVMRealOEQ, LLVMRealUNE};
  return LLVMBuildFCmp(L->b, p[kind], a, b, "");
}

/* fma in fp32 for fp16/bf16 operands, rounded back once: the interpreter's order. */
static LLVMValueRef float_fma(Lower *L, LLVMValueRef *x) {
  LLVMTypeRef t = LLVMTypeOf(x[0]);
  LLVMValueRef y[3] = {x[0], x[1], x[2]};
  for (int i = 0; narrow(t, L) && i < 3; i++) y[i] = LLVMBuildFPExt(L->b, x[i], L->f32, "");
  LLVMTypeRef wt = LLVMTypeOf(y[0]);
  LLVMValueRef r = lower_intrinsic(L, "llvm.fma", &wt, 1, y, 3);
  return narrow(t, L) ? LLVMBuildFPTrunc(L->b, r, t, "") : r;
}

static LLVMTypeRef libdevice_type(Lower *L, DType t) {
  if (t == DT_FP32 || t == DT_FP64) return t == DT_FP32 ? L->f32 : L->f64;
  return dtype_bits(t) == 64 ? L->i64 : L->i32; /* i1 results come back as i32 */
}

/* A row of lang/libdevice.def: its narrow (fp32, i32) or wide (fp64, i64) __nv_ function, with the row's
 * argument and result types (src/tir/libdevice.c); i1 results are the i32 result != 0, as Triton's isnan
 * and isinf. */
static LLVMValueRef libdevice_row(Lower *L, int row, LLVMValueRef *x) {
  LLVMTypeRef xt = LLVMTypeOf(x[libdevice_x_arg(row)]), p[LIBDEVICE_MAX_ARGS];
  int wide = xt == L->f64 || xt == L->i64;
  DType xd = libdevice_x_type(row, wide), rt = libdevice_result(row, xd);
  for (int i = 0; i < libdevice_arity(row); i++) p[i] = libdevice_type(L, libdevice_arg(row, i, xd));
  LLVMValueRef r = lower_call(L, libdevice_symbol(row, wide), libdevice_type(L, rt), p, libdevice_arity(row), x);
  return rt == DT_I1 ? LLVMBuildICmp(L->b, LLVMIntNE, r, LLVMConstNull(L->i32), "") : r;
}

/* libdevice's integer-to-float conversions toward zero call NVVM's i2f.rz and the like, which LLVM 19's
 * NVPTX combining turns into sitofp / uitofp, rounding to nearest (an H200 gave int2float_rz's neighbour
 * above): on the GPU the cvt is written out.  NULL for the other rows, and on the simulator. */
static LLVMValueRef int_to_float_toward_zero(Lower *L, int row, LLVMValueRef x) {
  static const struct { int row; const char *text, *constraints; } rows[] = {
      {LIBDEVICE_INT2FLOAT_RZ, "cvt.rz.f32.s32 $0, $1;", "=f,r"},
      {LIBDEVICE_UINT2FLOAT_RZ, "cvt.rz.f32.u32 $0, $1;", "=f,r"},
      {LIBDEVICE_LL2FLOAT_RZ, "cvt.rz.f32.s64 $0, $1;", "=f,l"},
      {LIBDEVICE_ULL2FLOAT_RZ, "cvt.rz.f32.u64 $0, $1;", "=f,l"},
      {LIBDEVICE_LL2DOUBLE_RZ, "cvt.rz.f64.s64 $0, $1;", "=d,l"},
      {LIBDEVICE_ULL2DOUBLE_RZ, "cvt.rz.f64.u64 $0, $1;", "=d,l"},
  };
  if (L->target == target_sim()) return NULL;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (rows[i].row == row)
      return lower_inline_asm(L, rows[i].constraints[1] == 'd' ? L->f64 : L->f32, rows[i].text, rows[i].constraints,
                              &x, 1, 0);
  return NULL;
}

/* libdevice's jn(n, x) and yn(n, x) are NaN for n < 0, where C's are (-1)^n times jn(-n, x) and yn(-n, x);
 * its jn is NaN for n >= 2 and x near 0, where its recurrence divides by x, and C's is 0 ((x/2)^n / n!
 * underflows below these bounds); its fp64 yn(n >= 2, -0) is +inf, C's -inf.  Called with |n|, then C's
 * answers put back (an H200's answers: tests/sim's libdevice_more cases). */
static LLVMValueRef bessel_of_order(Lower *L, int row, LLVMValueRef *x) {
  LLVMBuilderRef B = L->b;
  LLVMValueRef n = x[0], v = x[1];
  LLVMTypeRef t = LLVMTypeOf(v);
  LLVMValueRef negative = LLVMBuildICmp(B, LLVMIntSLT, n, lower_int(L, L->i32, 0), "");
  LLVMValueRef order = LLVMBuildSelect(B, negative, LLVMBuildNeg(B, n, ""), n, "");
  LLVMValueRef odd = LLVMBuildTrunc(B, n, L->i1, "");
  LLVMValueRef r = libdevice_row(L, row, (LLVMValueRef[]){order, v});
  if (row == LIBDEVICE_JN) {
    LLVMValueRef tiny = LLVMConstReal(t, t == L->f32 ? 0x1p-80 : 0x1p-600);
    LLVMValueRef near_zero = LLVMBuildFCmp(B, LLVMRealOLT, unary_intrinsic(L, "llvm.fabs", v), tiny, "");
    LLVMValueRef high = LLVMBuildICmp(B, LLVMIntSGE, order, lower_int(L, L->i32, 2), "");
    LLVMValueRef zero = LLVMBuildSelect(B, odd, LLVMBuildFMul(B, v, LLVMConstReal(t, 0.0), ""), LLVMConstReal(t, 0.0), "");
    r = LLVMBuildSelect(B, LLVMBuildAnd(B, high, near_zero, ""), zero, r, "");
  } else {
    LLVMValueRef at_zero = LLVMBuildFCmp(B, LLVMRealOEQ, v, LLVMConstReal(t, 0.0), "");
    r = LLVMBuildSelect(B, at_zero, LLVMConstReal(t, -INFINITY), r, "");
  }
  return LLVMBuildSelect(B, LLVMBuildAnd(B, negative, odd, ""), LLVMBuildFNeg(B, r, ""), r, "");
}

LLVMValueRef lower_scalar(Lower *L, TirCode code, int kind, const Type *t, LLVMValueRef *x) {
  int fl = is_float(t);
  switch (code) {
  case TIR_CMP:
    if (fl) return float_compare(L, kind, x[0], x[1]);
    return LLVMBuildICmp(L->b, int_predicate(kind, is_signed(t)), x[0], x[1], "");
  case TIR_SELECT: return LLVMBuildSelect(L->b, x[0], x[1], x[2], "");
  case TIR_LIBDEVICE: {
    LLVMValueRef rz = int_to_float_toward_zero(L, kind, x[0]);
    if (rz) return rz;
    return kind == LIBDEVICE_JN || kind == LIBDEVICE_YN ? bessel_of_order(L, kind, x) : libdevice_row(L, kind, x);
  }
  case TIR_FMA: return float_fma(L, x);
  case TIR_CLAMP:
    return float_binary(L, TIR_MINIMUM, kind, float_binary(L, TIR_MAXIMUM, kind, x[0], x[1]), x[2]);
  case TIR_NEG: case TIR_NOT: case TIR_ABS: case TIR_EXP: case TIR_EXP2: case TIR_LOG: case TIR_LOG2:
  case TIR_SQRT: case TIR_RSQRT: case TIR_SIN: case TIR_COS: case TIR_ERF: case TIR_FLOOR: case TIR_CEIL:
    return fl ? float_unary(L, code, x[0]) : int_unary(L, code, t, x[0]);
  default: return fl ? float_binary(L, code, kind, x[0], x[1]) : int_binary(L, code, t, x[0], x[1]);
  }
}

/* ---- conversions ----------------------------------------------------------------- */

/* Narrowing toward zero, as the interpreter: round to nearest, then one
 * step toward zero where that went past the value. */
static LLVMValueRef truncate_toward_zero(Lower *L, LLVMValueRef v, LLVMTypeRef to) {
  LLVMBuilderRef B = L->b;
  LLVMValueRef r = LLVMBuildFPTrunc(B, v, to, "");
  LLVMValueRef back = LLVMBuildFPExt(B, r, LLVMTypeOf(v), "");
  LLVMValueRef past = LLVMBuildFCmp(B, LLVMRealOGT, unary_intrinsic(L, "llvm.fabs", back), unary_intrinsic(L, "llvm.fabs", v), "");
  LLVMTypeRef it = lower_int_type(L, lower_type_bits(to));
  LLVMValueRef stepped = LLVMBuildSub(B, LLVMBuildBitCast(B, r, it, ""), lower_int(L, it, 1), "");
  return LLVMBuildSelect(B, past, LLVMBuildBitCast(B, stepped, to, ""), r, "");
}

static LLVMValueRef float_to_float(Lower *L, LLVMValueRef v, LLVMTypeRef to, int rounding) {
  LLVMTypeRef from = LLVMTypeOf(v);
  if (from == to) return v;
  if (lower_type_bits(to) > lower_type_bits(from)) return LLVMBuildFPExt(L->b, v, to, "");
  if (lower_type_bits(to) == lower_type_bits(from)) v = LLVMBuildFPExt(L->b, v, L->f32, ""); /* fp16 <-> bf16: exact in fp32 */
  return rounding == ROUND_RTZ ? truncate_toward_zero(L, v, to) : LLVMBuildFPTrunc(L->b, v, to, "");
}

static LLVMValueRef float_to_int(Lower *L, LLVMValueRef v, const Type *to) {
  LLVMTypeRef it = lower_elem_type(L, to);
  if (to->elem == DT_I1) return LLVMBuildFCmp(L->b, LLVMRealUNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  LLVMTypeRef types[2] = {it, LLVMTypeOf(v)};
  return lower_intrinsic(L, is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", types, 2, &v, 1);
}

static LLVMValueRef int_to_int(Lower *L, LLVMValueRef v, const Type *from, const Type *to) {
  LLVMTypeRef it = lower_elem_type(L, to);
  if (to->elem == DT_I1) return LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  int fb = bits_of(from), tb = bits_of(to);
  if (tb < fb) return LLVMBuildTrunc(L->b, v, it, "");
  if (tb > fb) return is_signed(from) ? LLVMBuildSExt(L->b, v, it, "") : LLVMBuildZExt(L->b, v, it, "");
  return v;
}

static LLVMValueRef pointer_cast(Lower *L, LLVMValueRef v, const Type *to) {
  LLVMTypeRef it = lower_elem_type(L, to);
  int from_ptr = LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMPointerTypeKind;
  if (to->is_ptr) return from_ptr ? v : LLVMBuildIntToPtr(L->b, v, it, "");
  LLVMValueRef bits = LLVMBuildPtrToInt(L->b, v, L->i64, "");
  return it == L->i64 ? bits : LLVMBuildTrunc(L->b, bits, it, "");
}

/* fp8 converts through fp32 (lower_fp8.c): from fp8 exactly, and into it
 * from fp32, which holds every fp16, bf16 and fp8 value and rounds fp64 and
 * integers as numeric.c's fp8_from_double does. */
static LLVMValueRef fp8_cast(Lower *L, LLVMValueRef v, const Type *from, const Type *to) {
  Type f32 = {.elem = DT_FP32};
  if (dtype_is_fp8(from->elem)) {
    LLVMValueRef f = lower_fp8_to_f32(L, v, from->elem);
    return dtype_is_fp8(to->elem) ? lower_fp8_from_f32(L, f, to->elem) : lower_cast_value(L, f, &f32, to, ROUND_RTNE);
  }
  return lower_fp8_from_f32(L, lower_cast_value(L, v, from, &f32, ROUND_RTNE), to->elem);
}

LLVMValueRef lower_cast_value(Lower *L, LLVMValueRef v, const Type *from, const Type *to, int rounding) {
  LLVMTypeRef it = lower_elem_type(L, to);
  if (from->is_ptr || to->is_ptr) return pointer_cast(L, v, to);
  if (dtype_is_fp8(from->elem) || dtype_is_fp8(to->elem)) return fp8_cast(L, v, from, to);
  if (is_float(from) && is_float(to)) return float_to_float(L, v, it, rounding);
  if (is_float(from)) return float_to_int(L, v, to);
  if (is_float(to)) return is_signed(from) ? LLVMBuildSIToFP(L->b, v, it, "") : LLVMBuildUIToFP(L->b, v, it, "");
  return int_to_int(L, v, from, to);
}

static LLVMValueRef bitcast(Lower *L, LLVMValueRef v, const Type *from, const Type *to) {
  if (from->is_ptr || to->is_ptr) return pointer_cast(L, v, to);
  return LLVMBuildBitCast(L->b, v, lower_elem_type(L, to), "");
}

/* ---- the op ------------------------------------------------------------------------- */

/* Two fp32 values narrowed to fp16 or bf16 as one vector: one cvt.rn.f16x2.f32 (bf16x2) on the GPU, its
 * result one 32-bit register while both halves live, as Triton's conversions. */
static void narrow_pair(Lower *L, LLVMValueRef lo, LLVMValueRef hi, LLVMTypeRef half, LLVMValueRef *out) {
  LLVMBuilderRef B = L->b;
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(L->f32, 2));
  v = LLVMBuildInsertElement(B, v, lo, LLVMConstInt(L->i32, 0, 0), "");
  v = LLVMBuildInsertElement(B, v, hi, LLVMConstInt(L->i32, 1, 0), "");
  LLVMValueRef n = LLVMBuildFPTrunc(B, v, LLVMVectorType(half, 2), "");
  out[0] = LLVMBuildExtractElement(B, n, LLVMConstInt(L->i32, 0, 0), "");
  out[1] = LLVMBuildExtractElement(B, n, LLVMConstInt(L->i32, 1, 0), "");
}

/* A tensor-core accumulator's conversion is left alone: its pairs become a register-A wgmma's words,
 * whose packing is placed against the fence (lower_wgmma.c); packed here, every word would be made
 * before it, which cost the attention backward's dK/dV kernel 7-10% (bench/README.md). */
static int in_accumulator(Lower *L, int value) {
  const Layout *l = tir_layout(L->f, value);
  return l && l->kind == LAYOUT_MMA;
}

/* widen's proof that an integer add, sub or mul does not wrap (constants
 * folded by the builder carry no flags). */
static void promise_no_wrap(LLVMValueRef v, const Type *t) {
  if (!LLVMIsAInstruction(v)) return;
  LLVMOpcode code = LLVMGetInstructionOpcode(v);
  if (code != LLVMAdd && code != LLVMSub && code != LLVMMul) return;
  if (is_signed(t)) LLVMSetNSW(v, 1);
  else LLVMSetNUW(v, 1);
}

/* Operands in the result's layout, register by register; an op whose
 * operands are each one value (constants, splats, scalars) is computed once. */
void lower_elementwise(Lower *L, const TirOp *op) {
  int res = op->results.data[0];
  const Type *rt = lower_type(L, res);
  LinearLayout ll;
  Regs out = lower_regs(L, registers_of(L, res, &ll)), in[LIBDEVICE_MAX_ARGS];
  int n = op->operands.len, uniform = 1;
  for (int k = 0; k < n; k++) {
    in[k] = lower_operand(L, op, k, rt->rank ? &ll : NULL);
    uniform &= in[k].uniform || !lower_type(L, op->operands.data[k])->rank;
  }
  const Type *t = lower_type(L, op->operands.data[op->code == TIR_SELECT ? 1 : 0]);
  /* f32 to fp8 two registers an instruction, where the target converts pairs */
  int paired = op->code == TIR_CAST && !uniform && t->elem == DT_FP32 && dtype_is_fp8(rt->elem) && out.n % 2 == 0;
  for (int r = 0; paired && r < out.n; r += 2)
    paired = lower_fp8_pair_from_f32(L, in[0].v[r], in[0].v[r + 1], rt->elem, out.v + r);
  int halves = op->code == TIR_CAST && !uniform && !paired && t->elem == DT_FP32 &&
               (rt->elem == DT_FP16 || rt->elem == DT_BF16) && op->kind != ROUND_RTZ && out.n % 2 == 0 &&
               !in_accumulator(L, res);
  for (int r = 0; halves && r < out.n; r += 2) narrow_pair(L, in[0].v[r], in[0].v[r + 1], lower_elem_type(L, rt), out.v + r);
  paired |= halves;
  for (int r = paired ? out.n : 0; r < (uniform ? 1 : out.n); r++) {
    LLVMValueRef x[LIBDEVICE_MAX_ARGS];
    for (int k = 0; k < n; k++) x[k] = in[k].v[r];
    if (op->code == TIR_CAST) out.v[r] = lower_cast_value(L, x[0], t, rt, op->kind);
    else if (op->code == TIR_BITCAST) out.v[r] = bitcast(L, x[0], t, rt);
    else out.v[r] = lower_scalar(L, op->code, op->kind, t, x);
    if (op->flags & NO_WRAP) promise_no_wrap(out.v[r], t);
  }
  for (int r = 1; uniform && r < out.n; r++) out.v[r] = out.v[0];
  out.uniform = uniform;
  lower_result(L, op, 0, out);
}

/* ---- tl.inline_asm_elementwise ---- */

enum { MAX_ASM_WORDS = 64 }; /* operands, and results, of one asm statement */

/* How many elements of a run of `pack` share one 32-bit register: 8- and 16-bit ones are packed so,
 * as Triton does ($1 of pack=4 over int8 is one "r" register of 4 bytes, the first in its low byte). */
static int asm_per_word(const Type *t, int pack) {
  int bits = dtype_bits(t->elem), n = bits < 32 ? 32 / bits : 1;
  return n < pack ? n : pack;
}

static LLVMTypeRef asm_word_type(Lower *L, const Type *t, int per) {
  return per == 1 ? lower_elem_type(L, t) : lower_int_type(L, per * dtype_bits(t->elem));
}

/* The asm's operands for the run of registers r .. r + pack - 1: each argument's elements in order. */
static int asm_operands(Lower *L, const TirOp *op, const Regs *in, int r, LLVMValueRef *x) {
  int pack = tir_asm_pack(op), n = 0;
  for (int k = 0; k < op->operands.len; k++) {
    const Type *t = lower_type(L, op->operands.data[k]);
    int per = asm_per_word(t, pack);
    for (int j = 0; j < pack; j += per) {
      if (n == MAX_ASM_WORDS) lower_fail(L, "the asm has more than %d operands (args times pack)", MAX_ASM_WORDS);
      x[n++] = per == 1 ? in[k].v[r + j] : lower_pack(L, &in[k].v[r + j], per, asm_word_type(L, t, per));
    }
  }
  return n;
}

/* What the asm returns: the words of each result in order, a struct when there are several. */
static LLVMTypeRef asm_return_type(Lower *L, const TirOp *op) {
  LLVMTypeRef words[MAX_ASM_WORDS];
  int pack = tir_asm_pack(op), n = 0;
  for (int i = 0; i < op->results.len; i++) {
    const Type *t = lower_type(L, op->results.data[i]);
    int per = asm_per_word(t, pack);
    for (int j = 0; j < pack; j += per) {
      if (n == MAX_ASM_WORDS) lower_fail(L, "the asm has more than %d results (dtypes times pack)", MAX_ASM_WORDS);
      words[n++] = asm_word_type(L, t, per);
    }
  }
  return n == 1 ? words[0] : LLVMStructTypeInContext(L->ctx, words, (unsigned)n, 0);
}

/* The asm's return value spread over registers r .. r + pack - 1 of each result. */
static void asm_unpack_results(Lower *L, const TirOp *op, LLVMValueRef ret, Regs *out, int r) {
  int pack = tir_asm_pack(op), word = 0, several = LLVMGetTypeKind(LLVMTypeOf(ret)) == LLVMStructTypeKind;
  for (int i = 0; i < op->results.len; i++) {
    const Type *t = lower_type(L, op->results.data[i]);
    int per = asm_per_word(t, pack);
    for (int j = 0; j < pack; j += per) {
      LLVMValueRef w = several ? LLVMBuildExtractValue(L->b, ret, (unsigned)word++, "") : ret;
      lower_unpack(L, w, lower_elem_type(L, t), per, &out[i].v[r + j]);
    }
  }
}

/* pack > 1 groups registers r .. r + pack - 1, which must be consecutive elements of the last
 * dimension (the layout step chose such a layout; a layout read from text may not be one). */
static void asm_check_layout(Lower *L, const TirOp *op, const LinearLayout *ll, int rank) {
  int pack = tir_asm_pack(op);
  if (pack > 1 && (rank == 0 || ll_contiguous_registers(ll, rank - 1) < pack))
    lower_fail(L, "pack=%d needs a layout whose threads hold %d consecutive elements of the last dimension", pack,
               pack);
}

/* The asm once per run of `pack` registers of the results, its operands in the results' layout (they
 * share one); asm that is not pure keeps its side effects (LLVM's sideeffect). */
void lower_asm_elementwise(Lower *L, const TirOp *op) {
  if (L->target == target_sim()) lower_fail(L, "inline_asm_elementwise runs on the GPU only (the simulator cannot run PTX)");
  const Type *rt = lower_type(L, op->results.data[0]);
  LinearLayout ll;
  Regs out[MAX_ASM_ARGS], in[MAX_ASM_ARGS];
  for (int i = 0; i < op->results.len; i++) out[i] = lower_regs(L, registers_of(L, op->results.data[i], &ll));
  asm_check_layout(L, op, &ll, rt->rank);
  for (int k = 0; k < op->operands.len; k++) in[k] = lower_operand(L, op, k, rt->rank ? &ll : NULL);
  LLVMTypeRef ret = asm_return_type(L, op);
  for (int r = 0; r < out[0].n; r += tir_asm_pack(op)) {
    LLVMValueRef x[MAX_ASM_WORDS];
    int n = asm_operands(L, op, in, r, x);
    asm_unpack_results(L, op, lower_inline_asm(L, ret, op->str, op->str2, x, n, !(op->flags & ASM_PURE)), out, r);
  }
  for (int i = 0; i < op->results.len; i++) lower_result(L, op, i, out[i]);
}
