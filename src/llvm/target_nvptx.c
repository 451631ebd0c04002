/* The NVPTX target's primitives: NVVM intrinsics where LLVM 19 has them,
 * inline PTX where Triton uses it to control the instruction (predicated
 * vector loads and stores, atomics with memory semantics). */
#include "target_tc.h"

#include <string.h>

static LLVMValueRef special_register(Lower *L, const char *name) { return lower_call(L, name, L->i32, NULL, 0, NULL); }

/* shfl.sync.{bfly,idx}.b32 over the full warp: `value` from the lane `lane` names */
static LLVMValueRef shuffle_to(Lower *L, const char *intrinsic, LLVMValueRef value, LLVMValueRef lane) {
  LLVMTypeRef p[4] = {L->i32, L->i32, L->i32, L->i32};
  LLVMValueRef args[4] = {lower_i32(L, -1), value, lane, lower_i32(L, 0x1f)};
  return lower_call(L, intrinsic, L->i32, p, 4, args);
}

static LLVMValueRef shuffle(Lower *L, const char *intrinsic, LLVMValueRef value, int lane) {
  return shuffle_to(L, intrinsic, value, lower_i32(L, lane));
}

static void prologue(Lower *L) {
  L->tid = special_register(L, "llvm.nvvm.read.ptx.sreg.tid.x");
  /* lane 0's tid / 32, broadcast (as Triton does): ptxas then keeps what depends on it in uniform registers */
  L->warp = shuffle(L, "llvm.nvvm.shfl.sync.idx.i32", LLVMBuildLShr(L->pro, L->tid, lower_i32(L, LANE_BITS), ""), 0);
  /* the dynamic shared memory: one extern array, 1024-byte aligned (wgmma's 128-byte swizzle repeats
   * every 1024 bytes of address; the buffers are placed relative to this base) */
  LLVMValueRef smem = LLVMAddGlobalInAddressSpace(L->module, LLVMArrayType(L->i8, 0), "global_smem", 3);
  LLVMSetLinkage(smem, LLVMExternalLinkage);
  LLVMSetAlignment(smem, 1024);
  L->shared = smem;
}

static LLVMValueRef program_id(Lower *L, int axis) {
  static const char *const names[] = {"llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
                                      "llvm.nvvm.read.ptx.sreg.ctaid.z"};
  return special_register(L, names[axis]);
}

static LLVMValueRef num_programs(Lower *L, int axis) {
  static const char *const names[] = {"llvm.nvvm.read.ptx.sreg.nctaid.x", "llvm.nvvm.read.ptx.sreg.nctaid.y",
                                      "llvm.nvvm.read.ptx.sreg.nctaid.z"};
  return special_register(L, names[axis]);
}

static LLVMValueRef smid(Lower *L) { return special_register(L, "llvm.nvvm.read.ptx.sreg.smid"); }

static LLVMValueRef globaltimer(Lower *L) {
  return lower_call(L, "llvm.nvvm.read.ptx.sreg.globaltimer", L->i64, NULL, 0, NULL);
}

static void barrier(Lower *L) { lower_call(L, "llvm.nvvm.barrier0", L->void_t, NULL, 0, NULL); }

static LLVMValueRef shuffle_xor(Lower *L, LLVMValueRef value, int lane_mask) {
  return shuffle(L, "llvm.nvvm.shfl.sync.bfly.i32", value, lane_mask);
}

static LLVMValueRef shuffle_idx(Lower *L, LLVMValueRef value, LLVMValueRef lane) {
  return shuffle_to(L, "llvm.nvvm.shfl.sync.idx.i32", value, lane);
}

/* ---- global memory ---------------------------------------------------------- */

static char reg_class(int bits) { return bits == 64 ? 'l' : bits == 32 ? 'r' : 'h'; }

/* The words of a packed value, as the operands inline PTX takes
 * (8-bit words widened to the 16-bit registers PTX has). */
static void words_of(Lower *L, const GlobalAccess *a, LLVMValueRef v, LLVMValueRef *out) {
  if (a->words == 1) out[0] = v;
  else
    for (int i = 0; i < a->words; i++) out[i] = LLVMBuildExtractElement(L->b, v, lower_i32(L, i), "");
  for (int i = 0; a->word_bits == 8 && i < a->words; i++) out[i] = LLVMBuildZExt(L->b, out[i], L->i16, "");
}

static LLVMValueRef value_of_words(Lower *L, const GlobalAccess *a, LLVMValueRef result) {
  if (a->words == 1) return a->word_bits == 8 ? LLVMBuildTrunc(L->b, result, L->i8, "") : result;
  LLVMValueRef v = LLVMGetUndef(a->type);
  for (int i = 0; i < a->words; i++)
    v = LLVMBuildInsertElement(L->b, v, LLVMBuildExtractValue(L->b, result, (unsigned)i, ""), lower_i32(L, i), "");
  return v;
}

/* ".b32", ".v4.b32", ".u8" (8-bit words move through 16-bit registers) */
static const char *access_type(Lower *L, const GlobalAccess *a) {
  const char *base = a->word_bits == 8 ? ".u8" : a->word_bits == 16 ? ".b16" : a->word_bits == 32 ? ".b32" : ".b64";
  return a->words == 1 ? base : arena_printf(L->arena, ".v%d%s", a->words, base);
}

/* "{ $0, $1 }" or "$0" for `count` operands from `first`. */
static const char *operand_list(Lower *L, int first, int count) {
  Buf b;
  buf_init(&b, L->arena);
  if (count > 1) buf_puts(&b, "{ ");
  for (int i = 0; i < count; i++) buf_printf(&b, "%s$%d", i ? ", " : "", first + i);
  if (count > 1) buf_puts(&b, " }");
  return buf_cstr(&b);
}

static int plain(const GlobalAccess *a) { return !a->predicate && !a->cache && !a->evict && !a->is_volatile; }

/* The cache operator or eviction priority: ".cg", ".L1::evict_last" (PTX takes one of them, not both;
 * volatile takes neither). */
static const char *cache_qualifier(const GlobalAccess *a) {
  if (a->is_volatile) return "";
  if (a->cache) return a->cache;
  return tir_evict_ptx(a->evict);
}

/* "mov.b32 $0, $6; ... @$4 ld.global.v4.b32 { $0, $1, $2, $3 }, [ $5 + 0 ];"
 * with outputs $0..$n-1, then the predicate, the address and the others. */
static const char *load_text(Lower *L, const GlobalAccess *a, int wb) {
  int n = a->words, pred = n, addr = n + (a->predicate ? 1 : 0), other = addr + 1;
  Buf text;
  buf_init(&text, L->arena);
  for (int i = 0; a->predicate && i < n; i++) {
    if (a->other) buf_printf(&text, "mov.b%d $%d, $%d;\n\t", wb, i, other + i);
    else buf_printf(&text, "mov.b%d $%d, 0;\n\t", wb, i);
  }
  if (a->predicate) buf_printf(&text, "@$%d ", pred);
  buf_printf(&text, "ld%s.global%s%s %s, [ $%d + 0 ];", a->is_volatile ? ".volatile" : "", cache_qualifier(a),
             access_type(L, a), operand_list(L, 0, n), addr);
  return buf_cstr(&text);
}

static LLVMValueRef load(Lower *L, const GlobalAccess *a) {
  if (plain(a)) {
    LLVMValueRef v = LLVMBuildLoad2(L->b, a->type, a->address, "");
    LLVMSetAlignment(v, (unsigned)a->bytes);
    return v;
  }
  int n = a->words, wb = a->word_bits < 16 ? 16 : a->word_bits, n_args = 0;
  LLVMValueRef args[8];
  Buf cons;
  buf_init(&cons, L->arena);
  for (int i = 0; i < n; i++) buf_printf(&cons, "%s=%c", i ? "," : "", reg_class(wb));
  if (a->predicate) buf_puts(&cons, ",b"), args[n_args++] = a->predicate;
  buf_puts(&cons, ",l");
  args[n_args++] = a->address;
  if (a->predicate && a->other) {
    words_of(L, a, a->other, args + n_args);
    for (int i = 0; i < n; i++) buf_printf(&cons, ",%c", reg_class(wb));
    n_args += n;
  }
  LLVMTypeRef word = lower_int_type(L, wb), members[4] = {word, word, word, word};
  LLVMTypeRef ret = n == 1 ? word : LLVMStructTypeInContext(L->ctx, members, (unsigned)n, 0);
  return value_of_words(L, a, lower_inline_asm(L, ret, load_text(L, a, wb), buf_cstr(&cons), args, n_args, 1));
}

static void store(Lower *L, const GlobalAccess *a) {
  if (plain(a)) {
    LLVMValueRef s = LLVMBuildStore(L->b, a->value, a->address);
    LLVMSetAlignment(s, (unsigned)a->bytes);
    return;
  }
  int n = a->words, wb = a->word_bits < 16 ? 16 : a->word_bits, first = a->predicate ? 2 : 1;
  Buf text, cons;
  buf_init(&text, L->arena);
  buf_init(&cons, L->arena);
  LLVMValueRef args[8];
  int n_args = 0;
  if (a->predicate) {
    buf_puts(&text, "@$0 ");
    buf_puts(&cons, "b,");
    args[n_args++] = a->predicate;
  }
  buf_printf(&text, "st%s.global%s%s [ $%d + 0 ], %s;", a->is_volatile ? ".volatile" : "", cache_qualifier(a),
             access_type(L, a), first - 1, operand_list(L, first, n));
  buf_puts(&cons, "l");
  args[n_args++] = a->address;
  words_of(L, a, a->value, args + n_args);
  for (int i = 0; i < n; i++) buf_printf(&cons, ",%c", reg_class(wb));
  n_args += n;
  lower_inline_asm(L, L->void_t, buf_cstr(&text), buf_cstr(&cons), args, n_args, 1);
}

/* ---- atomics ------------------------------------------------------------------- */

static int atomic_native(Lower *L, int op, DType t) {
  int bits = dtype_bits(t), is_float = dtype_is_float(t);
  switch (op) {
  case ATOMIC_CAS: return bits >= 16;
  case ATOM_ADD:
    if (t == DT_BF16) return L->compute_capability >= 90;
    return is_float || bits >= 32;
  case ATOM_MAX: case ATOM_MIN: return !is_float && bits >= 32;
  default: return bits >= 32; /* and, or, xor, xchg */
  }
}

static const char *atomic_suffix(int op, DType t) {
  int bits = dtype_bits(t), is_signed = dtype_kind(t) == DK_SINT;
  switch (op) {
  case ATOM_ADD:
    if (t == DT_FP16) return ".noftz.f16";
    if (t == DT_BF16) return ".noftz.bf16";
    if (t == DT_FP32) return ".f32";
    if (t == DT_FP64) return ".f64";
    return bits == 64 ? ".u64" : ".u32";
  case ATOM_MAX: case ATOM_MIN:
    return bits == 64 ? (is_signed ? ".s64" : ".u64") : (is_signed ? ".s32" : ".u32");
  default: return bits == 64 ? ".b64" : bits == 32 ? ".b32" : ".b16";
  }
}

static const char *atomic_name(int op) { return op == ATOMIC_CAS ? "cas" : tir_atomic_ptx(op); }
static const char *sem_name(int sem) { return tir_sem_ptx(sem); }
static const char *scope_name(int scope) { return tir_scope_ptx(scope); }

/* "atom.acq_rel.gpu.global.add.f32 $0, [ $1 + 0 ], $2;"; a CAS compares
 * with $2 and stores $3 (PTX: atom.cas d, [a], b, c). */
static LLVMValueRef atomic(Lower *L, const AtomicAccess *a) {
  int bits = dtype_bits(a->type), cas = a->op == ATOMIC_CAS;
  char c = reg_class(bits);
  const char *text = arena_printf(L->arena, "atom%s%s.global.%s%s $0, [ $1 + 0 ], $2%s;", sem_name(a->sem),
                                  scope_name(a->scope), atomic_name(a->op), atomic_suffix(a->op, a->type),
                                  cas ? ", $3" : "");
  const char *cons = cas ? arena_printf(L->arena, "=%c,l,%c,%c,~{memory}", c, c, c)
                         : arena_printf(L->arena, "=%c,l,%c,~{memory}", c, c);
  LLVMValueRef args[3] = {a->address, cas ? a->compare : a->value, a->value};
  return lower_inline_asm(L, lower_int_type(L, bits), text, cons, args, cas ? 3 : 2, 1);
}

/* An atomic whose old value nobody reads is a reduction, "red": nothing to
 * wait for, and the predicate is the instruction's, not a branch around it.
 * From sm_90 (PTX ISA 8.1) 2 or 4 consecutive fp32 adds are one vector red.
 * red has no acquire side, nor an exchange: those stay atoms. */
static int reduce(Lower *L, const AtomicAccess *a, LLVMValueRef *values, int n, LLVMValueRef predicate) {
  if (a->op == ATOM_XCHG || (a->sem != SEM_RELAXED && a->sem != SEM_RELEASE)) return 0; /* red has no exch */
  if (n > 1 && !(L->compute_capability >= 90 && a->op == ATOM_ADD && a->type == DT_FP32)) return 0;
  if (n > 1 && L->ptx_isa < 81) L->ptx_isa = 81;
  int first = predicate ? 2 : 1;
  char c = reg_class(dtype_bits(a->type));
  Buf text, cons;
  buf_init(&text, L->arena);
  buf_init(&cons, L->arena);
  LLVMValueRef args[6] = {a->address, predicate};
  buf_printf(&cons, predicate ? "l,b" : "l");
  if (predicate) buf_printf(&text, "@$1 ");
  buf_printf(&text, "red%s%s.global.%s%s%s [ $0 + 0 ], %s", sem_name(a->sem), scope_name(a->scope),
             atomic_name(a->op), n == 1 ? "" : n == 2 ? ".v2" : ".v4", atomic_suffix(a->op, a->type), n > 1 ? "{ " : "");
  for (int i = 0; i < n; i++) {
    args[first + i] = values[i];
    buf_printf(&text, "%s$%d", i ? ", " : "", first + i);
    buf_printf(&cons, ",%c", c);
  }
  buf_printf(&text, "%s;", n > 1 ? " }" : "");
  buf_printf(&cons, ",~{memory}");
  lower_inline_asm(L, L->void_t, buf_cstr(&text), buf_cstr(&cons), args, first + n, 1);
  return 1;
}

/* ---- math and debugging --------------------------------------------------------- */

static LLVMValueRef exp2_approx(Lower *L, LLVMValueRef x, int ftz) {
  return lower_call(L, ftz ? "llvm.nvvm.ex2.approx.ftz.f" : "llvm.nvvm.ex2.approx.f", L->f32, &L->f32, 1, &x);
}

/* LLVM 19 has no intrinsic for div.full.f32 (at most 2 ulp from the
 * rounded quotient, a few instructions; div.rn.f32 takes a range check
 * and a slow path): Triton's fp32 `/` is this instruction. */
static LLVMValueRef div_full(Lower *L, LLVMValueRef x, LLVMValueRef y) {
  LLVMValueRef args[2] = {x, y};
  return lower_inline_asm(L, L->f32, "div.full.f32 $0, $1, $2;", "=f,f,f", args, 2, 0);
}

/* Two f32 to fp8 in one cvt, which puts its first input in the high byte.
 * sm_89 has the instruction too, but from PTX 8.1 on, and the kernels here
 * are PTX 8.0: lower_fp8.c computes the bits there. */
static LLVMValueRef fp8_pair(Lower *L, LLVMValueRef lo, LLVMValueRef hi, DType t) {
  if (L->compute_capability < 90 || !dtype_is_mma_fp8(t)) return NULL; /* float8e4b15 has no cvt */
  LLVMValueRef args[2] = {hi, lo};
  const char *text = arena_printf(L->arena, "cvt.rn.satfinite.%s.f32 $0, $1, $2;", t == DT_FP8E4NV ? "e4m3x2" : "e5m2x2");
  return lower_inline_asm(L, L->i16, text, "=h,f,f", args, 2, 0);
}

/* One value of a packed pair: to fp8 the other input is 0 and the low byte
 * is kept; from fp8 the pair's high byte is 0 and the low half (an f16,
 * exact) widens to f32. */
static LLVMValueRef fp8_convert(Lower *L, LLVMValueRef v, DType t, int to_fp8) {
  if (L->compute_capability < 90 || !dtype_is_mma_fp8(t)) return NULL; /* float8e4b15 has no cvt */
  const char *format = t == DT_FP8E4NV ? "e4m3x2" : "e5m2x2";
  if (to_fp8) return LLVMBuildTrunc(L->b, fp8_pair(L, v, LLVMConstReal(L->f32, 0), t), L->i8, "");
  LLVMValueRef pair = LLVMBuildZExt(L->b, v, L->i16, "");
  const char *text = arena_printf(L->arena, "cvt.rn.f16x2.%s $0, $1;", format);
  LLVMValueRef halves = lower_inline_asm(L, L->i32, text, "=r,h", &pair, 1, 0);
  LLVMValueRef low = LLVMBuildBitCast(L->b, LLVMBuildTrunc(L->b, halves, L->i16, ""), L->f16, "");
  return LLVMBuildFPExt(L->b, low, L->f32, "");
}

static LLVMValueRef round_tf32(Lower *L, LLVMValueRef x) {
  LLVMValueRef bits = lower_call(L, "llvm.nvvm.f2tf32.rna", L->i32, &L->f32, 1, &x);
  return LLVMBuildBitCast(L->b, bits, L->f32, "");
}

static LLVMValueRef string(Lower *L, const char *s) {
  size_t n = strlen(s) + 1;
  LLVMValueRef init = LLVMConstStringInContext(L->ctx, s, (unsigned)n - 1, 0);
  LLVMValueRef g = LLVMAddGlobalInAddressSpace(L->module, LLVMTypeOf(init), "str", 1);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  return LLVMConstAddrSpaceCast(g, L->generic_ptr);
}

static void vprintf_(Lower *L, LLVMValueRef format, LLVMValueRef args) {
  LLVMTypeRef p[2] = {L->generic_ptr, L->generic_ptr};
  LLVMValueRef a[2] = {format, args};
  lower_call(L, "vprintf", L->i32, p, 2, a);
}

static void assert_fail(Lower *L, LLVMValueRef message, LLVMValueRef file, int line, LLVMValueRef function) {
  LLVMTypeRef p[5] = {L->generic_ptr, L->generic_ptr, L->i32, L->generic_ptr, L->i64};
  LLVMValueRef a[5] = {message, file, lower_i32(L, line), function, lower_int(L, L->i64, 1)};
  lower_call(L, "__assertfail", L->void_t, p, 5, a);
}

static void trap(Lower *L) { lower_call(L, "llvm.trap", L->void_t, NULL, 0, NULL); }

static const Target nvptx = {
    .global_space = 1,
    .shared_space = 3,
    .prologue = prologue,
    .program_id = program_id,
    .smid = smid,
    .globaltimer = globaltimer,
    .num_programs = num_programs,
    .barrier = barrier,
    .shuffle_xor = shuffle_xor,
    .shuffle_idx = shuffle_idx,
    .load = load,
    .store = store,
    .atomic_native = atomic_native,
    .atomic = atomic,
    .reduce = reduce,
    .exp2_approx = exp2_approx,
    .div_full = div_full,
    .round_tf32 = round_tf32,
    .fp8_convert = fp8_convert,
    .fp8_pair = fp8_pair,
    .vprintf = vprintf_,
    .assert_fail = assert_fail,
    .trap = trap,
    .string = string,
    TARGET_TC_ENTRIES(nvptx)
};

const Target *target_nvptx(void) { return &nvptx; }
