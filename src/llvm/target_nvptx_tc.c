/* NVPTX: ldmatrix, mma.sync and cp.async as inline PTX (LLVM 19 has no
 * intrinsics for the forms used here). */
#include "target_tc.h"

#include <string.h>

static LLVMValueRef shared_bits(Lower *L, LLVMValueRef p) { return LLVMBuildPtrToInt(L->b, p, L->i64, ""); }

/* "{ $first, ..., $(first + n - 1) }" */
static const char *registers(Lower *L, int first, int n) {
  Buf b;
  buf_init(&b, L->arena);
  buf_puts(&b, "{ ");
  for (int i = 0; i < n; i++) buf_printf(&b, "%s$%d", i ? ", " : "", first + i);
  buf_puts(&b, " }");
  return buf_cstr(&b);
}

static LLVMTypeRef repeated(Lower *L, LLVMTypeRef t, int n) {
  LLVMTypeRef members[4] = {t, t, t, t};
  return n == 1 ? t : LLVMStructTypeInContext(L->ctx, members, (unsigned)n, 0);
}

static void unpack_struct(Lower *L, LLVMValueRef v, int n, LLVMValueRef *out) {
  for (int i = 0; i < n; i++) out[i] = n == 1 ? v : LLVMBuildExtractValue(L->b, v, (unsigned)i, "");
}

/* Reads shared memory written by other threads: kept in order with the barriers (side effects). */
void nvptx_ldmatrix(Lower *L, int count, int trans, LLVMValueRef shared_address, LLVMValueRef *out) {
  const char *text = arena_printf(L->arena, "ldmatrix.sync.aligned.m8n8.x%d%s.shared.b16 %s, [ $%d ];", count,
                                  trans ? ".trans" : "", registers(L, 0, count), count);
  const char *cons = count == 4 ? "=r,=r,=r,=r,l" : count == 2 ? "=r,=r,l" : "=r,l";
  LLVMValueRef addr = shared_bits(L, shared_address);
  unpack_struct(L, lower_inline_asm(L, repeated(L, L->i32, count), text, cons, &addr, 1, 1), count, out);
}

static const char *const mma_shapes[] = {
    [MMA_F16] = "m16n8k16.row.col.f32.f16.f16.f32",
    [MMA_BF16] = "m16n8k16.row.col.f32.bf16.bf16.f32",
    [MMA_TF32] = "m16n8k8.row.col.f32.tf32.tf32.f32",
    [MMA_S8] = "m16n8k32.row.col.s32.s8.s8.s32",
    [MMA_FP8] = "m16n8k32.row.col.f32.e4m3.e4m3.f32",
    [MMA_FP8 + 1] = "m16n8k32.row.col.f32.e5m2.e4m3.f32",
    [MMA_FP8 + 2] = "m16n8k32.row.col.f32.e4m3.e5m2.f32",
    [MMA_FP8 + 3] = "m16n8k32.row.col.f32.e5m2.e5m2.f32",
};

void nvptx_mma(Lower *L, int kind, LLVMValueRef *d, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c) {
  if (kind >= MMA_FP8 && L->ptx_isa < 84) L->ptx_isa = 84; /* mma with e4m3/e5m2 needs PTX ISA 8.4 */
  const char *text = arena_printf(L->arena, "mma.sync.aligned.%s %s, %s, %s, %s;", mma_shapes[kind],
                                  registers(L, 0, 4), registers(L, 4, 4), registers(L, 8, 2), registers(L, 10, 4));
  const char *cons = kind == MMA_S8 ? "=r,=r,=r,=r,r,r,r,r,r,r,0,1,2,3" : "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3";
  LLVMValueRef args[10] = {a[0], a[1], a[2], a[3], b[0], b[1], c[0], c[1], c[2], c[3]};
  LLVMTypeRef acc = kind == MMA_S8 ? L->i32 : L->f32;
  unpack_struct(L, lower_inline_asm(L, repeated(L, acc, 4), text, cons, args, 10, 0), 4, d);
}

/* cp.async.cg (16 bytes, bypassing L1) or .ca (4 and 8 bytes): src_bytes read, the rest zero-filled.
 * The 16-byte copies ask L2 to fetch the whole 128-byte line, as CUTLASS's do (D8 of docs/decisions.md). */
void nvptx_cp_async(Lower *L, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef src_bytes) {
  const char *text = arena_printf(L->arena, "cp.async.%s [ $0 ], [ $1 ], %d, $2;",
                                  bytes == 16 ? "cg.shared.global.L2::128B" : "ca.shared.global", bytes);
  LLVMValueRef args[3] = {shared_bits(L, dst), LLVMBuildPtrToInt(L->b, src, L->i64, ""), src_bytes};
  lower_inline_asm(L, L->void_t, text, "l,l,r,~{memory}", args, 3, 1);
}

void nvptx_cp_async_commit(Lower *L) { lower_inline_asm(L, L->void_t, "cp.async.commit_group;", "~{memory}", NULL, 0, 1); }

void nvptx_cp_async_wait(Lower *L, int pending) {
  const char *text = arena_printf(L->arena, "cp.async.wait_group %d;", pending);
  lower_inline_asm(L, L->void_t, text, "~{memory}", NULL, 0, 1);
}

/* ---- wgmma ---------------------------------------------------------------------- */

static void plain_asm(Lower *L, const char *text) { lower_inline_asm(L, L->void_t, text, "~{memory}", NULL, 0, 1); }

void nvptx_wgmma_fence(Lower *L) { plain_asm(L, "wgmma.fence.sync.aligned;"); }
void nvptx_wgmma_commit(Lower *L) { plain_asm(L, "wgmma.commit_group.sync.aligned;"); }
void nvptx_fence_proxy_async(Lower *L) { plain_asm(L, "fence.proxy.async.shared::cta;"); }

/* The map is the kernel's hidden parameter after the others (grid_constant: TMA reads it in place). */
void nvptx_tma_store_box(Lower *L, int map, LLVMValueRef src, LLVMValueRef c0, LLVMValueRef c1) {
  LLVMValueRef args[4] = {LLVMGetParam(L->fn, (unsigned)(L->f->params.len + map)), c0, c1,
                          LLVMBuildPtrToInt(L->b, src, L->i64, "")};
  lower_inline_asm(L, L->void_t, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [ $0, { $1, $2 } ], [ $3 ];",
                   "l,r,r,l,~{memory}", args, 4, 1);
}

void nvptx_tma_store_wait(Lower *L, int writes) {
  plain_asm(L, "cp.async.bulk.commit_group;");
  if (!writes) {
    plain_asm(L, "cp.async.bulk.wait_group.read 0;");
    return;
  }
  plain_asm(L, "cp.async.bulk.wait_group 0;");
  plain_asm(L, "fence.proxy.async.global;");
}

/* Inline PTX whose first n operands are f32 registers tied in and out
 * (the accumulator), then `extra` more inputs with constraints `more`. */
static void tied_asm(Lower *L, const char *text, LLVMValueRef *acc, int n, LLVMValueRef *extra, int n_extra,
                     const char *more) {
  Buf cons;
  buf_init(&cons, L->arena);
  for (int i = 0; i < n; i++) buf_printf(&cons, "%s=f", i ? "," : "");
  if (more[0]) buf_printf(&cons, "%s%s", n ? "," : "", more);
  for (int i = 0; i < n; i++) buf_printf(&cons, ",%d", i);
  int n_args = n_extra + n;
  LLVMTypeRef *params = arena_alloc(L->arena, sizeof(LLVMTypeRef) * (size_t)(n_args + 1));
  LLVMValueRef *args = arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)(n_args + 1));
  LLVMTypeRef *members = arena_alloc(L->arena, sizeof(LLVMTypeRef) * (size_t)(n + 1));
  for (int i = 0; i < n_extra; i++) args[i] = extra[i];
  for (int i = 0; i < n; i++) args[n_extra + i] = acc[i], members[i] = L->f32;
  for (int i = 0; i < n_args; i++) params[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef ret = n == 1 ? L->f32 : LLVMStructTypeInContext(L->ctx, members, (unsigned)n, 0);
  LLVMTypeRef ft = LLVMFunctionType(ret, params, (unsigned)n_args, 0);
  const char *c = buf_cstr(&cons);
  LLVMValueRef fn = LLVMGetInlineAsm(ft, (char *)text, strlen(text), (char *)c, strlen(c), 1, 0, LLVMInlineAsmDialectATT, 0);
  LLVMValueRef out = LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n_args, "");
  for (int i = 0; i < n; i++) acc[i] = n == 1 ? out : LLVMBuildExtractValue(L->b, out, (unsigned)i, "");
}

static const char *const wgmma_types[] = {[MMA_F16] = "f16.f16", [MMA_BF16] = "bf16.bf16", [MMA_TF32] = "tf32.tf32",
                                          [MMA_FP8] = "e4m3.e4m3", [MMA_FP8 + 1] = "e5m2.e4m3",
                                          [MMA_FP8 + 2] = "e4m3.e5m2", [MMA_FP8 + 3] = "e5m2.e5m2"};

static int wgmma_k(int kind) { return kind == MMA_TF32 ? 8 : kind >= MMA_FP8 ? 32 : 16; }

/* Whether every accumulator register is the constant 0 (a dot's first wgmma on a zero tile). */
static int zero_accumulator(LLVMValueRef *acc, int n) {
  for (int i = 0; i < n; i++) {
    LLVMBool lost;
    if (!LLVMIsAConstantFP(acc[i]) || LLVMConstRealGetDouble(acc[i], &lost) != 0.0) return 0;
  }
  return 1;
}

/* "{ .reg .pred p; setp.ne.b32 p, D, 0; wgmma... {$0..}, A, $b, p, 1, 1[, ta], tb; }": scale-d on (D 1),
 * or off (D 0) where the accumulator is zero: its registers are then not read, so they are left
 * undefined rather than set by movs, which would sit between the wgmmas and make ptxas fence and
 * wait around them.  A is a descriptor or ({ $a0, .., $a3 }) four registers, a form without imm-trans-a. */
void nvptx_wgmma(Lower *L, int kind, int n, LLVMValueRef *acc, LLVMValueRef a_desc, LLVMValueRef *a_words,
                 LLVMValueRef b_desc, int trans_a, int trans_b) {
  int regs = n / 2, n_a = a_desc ? 1 : 4, scale_d = !zero_accumulator(acc, regs);
  for (int i = 0; i < regs && !scale_d; i++) acc[i] = LLVMGetUndef(L->f32);
  const char *trans = kind == MMA_TF32 || kind >= MMA_FP8 ? "" /* K-major only: no imm-trans operands */
                      : a_desc         ? arena_printf(L->arena, ", %d, %d", trans_a, trans_b)
                                       : arena_printf(L->arena, ", %d", trans_b);
  const char *a = a_desc ? arena_printf(L->arena, "$%d", regs) : registers(L, regs, 4);
  const char *text = arena_printf(L->arena,
                                  "{ .reg .pred p; setp.ne.b32 p, %d, 0; wgmma.mma_async.sync.aligned.m64n%dk%d.f32.%s "
                                  "%s, %s, $%d, p, 1, 1%s; }",
                                  scale_d, n, wgmma_k(kind), wgmma_types[kind], registers(L, 0, regs), a,
                                  regs + n_a, trans);
  LLVMValueRef in[5] = {a_desc, b_desc};
  if (!a_desc) {
    for (int i = 0; i < 4; i++) in[i] = a_words[i];
    in[4] = b_desc;
  }
  tied_asm(L, text, acc, regs, in, n_a + 1, a_desc ? "l,l" : "r,r,r,r,l");
}

/* The registers in `keep` are inputs of the wait, so they live until it. */
void nvptx_wgmma_wait(Lower *L, int pending, LLVMValueRef *acc, int n_acc, LLVMValueRef *keep, int n_keep) {
  Buf cons;
  buf_init(&cons, L->arena);
  for (int i = 0; i < n_keep; i++) buf_printf(&cons, "%sr", i ? "," : "");
  tied_asm(L, arena_printf(L->arena, "wgmma.wait_group.sync.aligned %d;", pending), acc, n_acc, keep, n_keep,
           buf_cstr(&cons));
}
