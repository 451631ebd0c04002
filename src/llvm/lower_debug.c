/* device_print and device_assert.
 *
 * print: one vprintf per element, from the element's owner thread, in the
 * interpreter's format: "pid (x, y, z) idx (i, j) prefix value" (lines come
 * in the GPU's order, not row-major).  assert: every thread whose element
 * fails (where the mask holds) calls __assertfail with the message and the
 * op's file and line, so the driver reports the program, thread and place. */
#include "lower.h"

#include <string.h>

static int log2_of(int64_t x) { return x > 1 ? 63 - __builtin_clzll((unsigned long long)x) : 0; }

/* The user's text with '%' doubled, for a printf format. */
static const char *escape(Lower *L, const char *s) {
  Buf b;
  buf_init(&b, L->arena);
  for (; s && *s; s++) {
    if (*s == '%') buf_puts(&b, "%");
    buf_putn(&b, s, 1);
  }
  return buf_cstr(&b);
}

static const char *value_format(const Type *t, int hex) {
  if (hex) return "0x%llx";
  if (!t->is_ptr && dtype_is_float(t->elem)) return "%.9g";
  if (!t->is_ptr && dtype_kind(t->elem) == DK_UINT) return "%llu";
  return "%lld";
}

/* The value as vprintf takes it: double for floats, 64-bit integers. */
static LLVMValueRef value_argument(Lower *L, LLVMValueRef v, const Type *t, int hex) {
  LLVMTypeRef ty = LLVMTypeOf(v);
  if (LLVMGetTypeKind(ty) == LLVMPointerTypeKind) return LLVMBuildPtrToInt(L->b, v, L->i64, "");
  if (!t->is_ptr && dtype_is_fp8(t->elem) && !hex) return LLVMBuildFPExt(L->b, lower_fp8_to_f32(L, v, t->elem), L->f64, "");
  if (!t->is_ptr && dtype_is_float(t->elem)) {
    if (!hex) return ty == L->f64 ? v : LLVMBuildFPExt(L->b, v, L->f64, "");
    LLVMValueRef bits = LLVMBuildBitCast(L->b, v, lower_int_type(L, lower_type_bits(ty)), "");
    return ty == L->f64 ? bits : LLVMBuildZExt(L->b, bits, L->i64, "");
  }
  if (ty == L->i64) return v;
  int sign = !hex && dtype_kind(t->elem) == DK_SINT;
  return sign ? LLVMBuildSExt(L->b, v, L->i64, "") : LLVMBuildZExt(L->b, v, L->i64, "");
}

typedef struct PrintLine {
  const char *format;
  LLVMTypeRef args_type;  /* { i32 pid x3, i32 idx..., [i32 operand], i64|double value } */
  LLVMValueRef args;      /* the stack buffer */
  int n_fields;
} PrintLine;

static PrintLine print_line(Lower *L, const TirOp *op, const Type *t, int multiple) {
  Buf f;
  buf_init(&f, L->arena);
  buf_puts(&f, "pid (%d, %d, %d) idx (");
  for (int d = 0; d < t->rank; d++) buf_puts(&f, d ? ", %d" : "%d");
  buf_puts(&f, ")");
  if (op->str && *op->str) buf_printf(&f, " %s", escape(L, op->str));
  if (multiple) buf_puts(&f, " (operand %d)");
  buf_printf(&f, " %s\n", value_format(t, op->flags & PRINT_HEX));
  LLVMTypeRef fields[MAX_RANK + 5];
  int n = 0;
  for (int i = 0; i < 3 + t->rank + multiple; i++) fields[n++] = L->i32;
  fields[n++] = !t->is_ptr && dtype_is_float(t->elem) && !(op->flags & PRINT_HEX) ? L->f64 : L->i64;
  PrintLine p = {buf_cstr(&f), LLVMStructTypeInContext(L->ctx, fields, (unsigned)n, 0), NULL, n};
  p.args = LLVMBuildAlloca(L->pro, p.args_type, "print_args");
  return p;
}

static void set_field(Lower *L, const PrintLine *p, int i, LLVMValueRef v) {
  LLVMBuildStore(L->b, v, LLVMBuildStructGEP2(L->b, p->args_type, p->args, (unsigned)i, ""));
}

/* The lines of one operand: its elements' coordinates from their flat offsets. */
static void print_operand(Lower *L, const TirOp *op, int k, LLVMValueRef pid[3]) {
  int v = op->operands.data[k], multiple = op->operands.len > 1;
  const Type *t = lower_type(L, v);
  LinearLayout ll;
  lower_linear(L, v, &ll);
  Side s;
  lower_side(&ll, NULL, &s);
  Regs x = lower_get(L, v);
  PrintLine p = print_line(L, op, t, multiple);
  LLVMValueRef format = L->target->string(L, p.format), thread = lower_thread_offset(L, s.thread);
  int64_t stride = 1;
  for (int r = 0; r < x.n; r++) {
    for (int i = 0; i < 3; i++) set_field(L, &p, i, pid[i]);
    LLVMValueRef off = LLVMBuildAdd(L->b, thread, lower_i32(L, ll_reg_offset(&ll, (uint32_t)r)), "");
    stride = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
      LLVMValueRef c = LLVMBuildLShr(L->b, off, lower_i32(L, log2_of(stride)), "");
      set_field(L, &p, 3 + d, LLVMBuildAnd(L->b, c, lower_i32(L, t->shape[d] - 1), ""));
      stride *= t->shape[d];
    }
    if (multiple) set_field(L, &p, 3 + t->rank, lower_i32(L, k));
    set_field(L, &p, p.n_fields - 1, value_argument(L, x.v[r], t, op->flags & PRINT_HEX));
    L->target->vprintf(L, format, LLVMBuildAddrSpaceCast(L->b, p.args, L->generic_ptr, ""));
  }
}

/* Runs the next code only in the owner of the elements (thread 0 for scalars). */
static LLVMBasicBlockRef only_owner(Lower *L, int value) {
  LinearLayout ll;
  lower_linear(L, value, &ll);
  Side s;
  lower_side(&ll, NULL, &s);
  LLVMValueRef owner = lower_owner(L, s.thread, 0);
  if (!owner) return NULL;
  LLVMBasicBlockRef on = lower_new_block(L, "print"), after = lower_new_block(L, "printed");
  LLVMBuildCondBr(L->b, owner, on, after);
  LLVMPositionBuilderAtEnd(L->b, on);
  return after;
}

void lower_print(Lower *L, const TirOp *op) {
  LLVMValueRef pid[3];
  for (int i = 0; i < 3; i++) pid[i] = L->target->program_id(L, i);
  for (int k = 0; k < op->operands.len; k++) {
    LLVMBasicBlockRef after = only_owner(L, op->operands.data[k]);
    print_operand(L, op, k, pid);
    if (after) {
      LLVMBuildBr(L->b, after);
      LLVMPositionBuilderAtEnd(L->b, after);
    }
  }
}

void lower_assert(Lower *L, const TirOp *op) {
  int cond = op->operands.data[0], masked = op->flags & LOAD_MASK;
  LinearLayout ll;
  lower_linear(L, cond, &ll);
  Regs c = lower_get(L, cond), m = masked ? lower_operand(L, op, 1, lower_type(L, cond)->rank ? &ll : NULL) : c;
  LLVMValueRef failed = NULL;
  for (int r = 0; r < c.n; r++) {
    LLVMValueRef f = LLVMBuildNot(L->b, c.v[r], "");
    if (masked) f = LLVMBuildAnd(L->b, f, m.v[r], "");
    failed = failed ? LLVMBuildOr(L->b, failed, f, "") : f;
  }
  LLVMBasicBlockRef fail = lower_new_block(L, "assert_failed"), ok = lower_new_block(L, "assert_ok");
  LLVMBuildCondBr(L->b, failed, fail, ok);
  LLVMPositionBuilderAtEnd(L->b, fail);
  const char *file = op->loc.src ? op->loc.src->name : "?";
  if ((op->flags & ASSERT_TRAP) && L->target->trap) L->target->trap(L);
  else L->target->assert_fail(L, L->target->string(L, op->str ? op->str : ""), L->target->string(L, file), op->loc.line,
                         L->target->string(L, L->f->name));
  LLVMBuildBr(L->b, ok);
  LLVMPositionBuilderAtEnd(L->b, ok);
}
