/* GPU-layout IR to LLVM IR: the kernel, its values, and the dispatch over
 * ops (one file per op family; lower.h says how values are held).
 *
 * Requires: GPU-layout IR that tgir_verify accepts (every tile value has a
 *   layout; a use in another layout is converted here, so any consistent
 *   assignment lowers).
 * Guarantees: one LLVM module with one kernel named f->name (and for "sim"
 *   the K_sim_entry wrapper), verified; the largest shared-memory scratch in
 *   GpuCode.shared_bytes.
 *
 * The kernel ABI (docs/abi.md is written from this): the parameters are
 * f->params in order, nothing else: pointers as `ptr addrspace(1)` (with
 * `align 16` when the signature promised divisibility by 16), integers at
 * their width (i1 as i8), floats as half/bfloat/float/double.  The block
 * is 1-D with 32 * num_warps threads; the dynamic shared memory is
 * shared_bytes. */
#include "lower.h"
#include "llvm.h"

#include <llvm-c/Analysis.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- errors and values ----------------------------------------------------- */

void lower_fail(Lower *L, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  diag_error(L->diags, L->op ? L->op->loc : (Loc){0}, "cannot generate GPU code%s%s: %s", L->op ? " for " : "",
             L->op ? tir_op_name(L->op->code) : "", msg);
  longjmp(L->fail, 1);
}

Regs lower_regs(Lower *L, int n) {
  Regs r = {n, arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)(n ? n : 1)), 0};
  return r;
}

Regs lower_get(Lower *L, int value) {
  Regs r = L->values[value];
  if (!r.v) lower_fail(L, "internal error: %%%d has no value yet", value);
  return r;
}

void lower_set(Lower *L, int value, Regs r) { L->values[value] = r; }

const Type *lower_type(Lower *L, int value) { return tir_type(L->f, value); }

void lower_linear(Lower *L, int value, LinearLayout *ll) {
  const char *why = NULL;
  if (layout_linear_of(tir_layout(L->f, value), lower_type(L, value), ll, &why))
    lower_fail(L, "%%%d: %s", value, why);
}

Regs lower_operand(Lower *L, const TirOp *op, int k, const LinearLayout *want) {
  int v = op->operands.data[k];
  Regs r = lower_get(L, v);
  if (!want) return r;
  LinearLayout have;
  lower_linear(L, v, &have);
  return lower_move(L, r, &have, want, NULL, lower_elem_type(L, lower_type(L, v)));
}

/* Result k of op, in the layout its type and layout give (the registers
 * must already be in that layout). */
void lower_result(Lower *L, const TirOp *op, int k, Regs r) { lower_set(L, op->results.data[k], r); }

/* ---- types ----------------------------------------------------------------- */

LLVMTypeRef lower_int_type(Lower *L, int bits) { return LLVMIntTypeInContext(L->ctx, (unsigned)bits); }

LLVMTypeRef lower_dtype(Lower *L, DType t) {
  switch (t) {
  case DT_I1: return L->i1;
  case DT_FP16: return L->f16;
  case DT_BF16: return L->bf16;
  case DT_FP32: return L->f32;
  case DT_FP64: return L->f64;
  default: return lower_int_type(L, dtype_bits(t));
  }
}

LLVMTypeRef lower_elem_type(Lower *L, const Type *t) { return t->is_ptr ? L->global_ptr : lower_dtype(L, t->elem); }

int lower_elem_bytes(const Type *t) {
  if (t->is_ptr) return 8;
  return t->elem == DT_I1 ? 1 : dtype_bits(t->elem) / 8;
}

LLVMTypeRef lower_word_type(Lower *L, int bytes, int elem_bits, int *word_bits, int *words) {
  int w = elem_bits == 64 ? 64 : bytes < 4 ? bytes * 8 : 32;
  *word_bits = w;
  *words = bytes * 8 / w;
  LLVMTypeRef word = lower_int_type(L, w);
  return *words == 1 ? word : LLVMVectorType(word, (unsigned)*words);
}

int lower_type_bits(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMHalfTypeKind: case LLVMBFloatTypeKind: return 16;
  case LLVMFloatTypeKind: return 32;
  case LLVMDoubleTypeKind: return 64;
  case LLVMIntegerTypeKind: return (int)LLVMGetIntTypeWidth(t);
  case LLVMVectorTypeKind: return (int)LLVMGetVectorSize(t) * lower_type_bits(LLVMGetElementType(t));
  default: return 64; /* pointers */
  }
}

LLVMValueRef lower_pack(Lower *L, LLVMValueRef *elems, int n, LLVMTypeRef word_type) {
  LLVMTypeRef et = LLVMTypeOf(elems[0]);
  LLVMValueRef v = elems[0];
  if (n > 1) {
    v = LLVMGetUndef(LLVMVectorType(et, (unsigned)n));
    for (int i = 0; i < n; i++) v = LLVMBuildInsertElement(L->b, v, elems[i], lower_i32(L, i), "");
  }
  return LLVMTypeOf(v) == word_type ? v : LLVMBuildBitCast(L->b, v, word_type, "");
}

void lower_unpack(Lower *L, LLVMValueRef word, LLVMTypeRef elem_type, int n, LLVMValueRef *out) {
  LLVMTypeRef vt = n > 1 ? LLVMVectorType(elem_type, (unsigned)n) : elem_type;
  LLVMValueRef v = LLVMTypeOf(word) == vt ? word : LLVMBuildBitCast(L->b, word, vt, "");
  if (n == 1) {
    out[0] = v;
    return;
  }
  for (int i = 0; i < n; i++) out[i] = LLVMBuildExtractElement(L->b, v, lower_i32(L, i), "");
}

LLVMValueRef lower_to_memory(Lower *L, LLVMValueRef v) {
  LLVMTypeRef t = LLVMTypeOf(v);
  if (t == L->i1) return LLVMBuildZExt(L->b, v, L->i8, "");
  if (LLVMGetTypeKind(t) == LLVMPointerTypeKind) return LLVMBuildPtrToInt(L->b, v, L->i64, "");
  return v;
}

LLVMValueRef lower_from_memory(Lower *L, LLVMValueRef v, LLVMTypeRef register_type) {
  if (register_type == L->i1) return LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
  if (LLVMGetTypeKind(register_type) == LLVMPointerTypeKind) return LLVMBuildIntToPtr(L->b, v, register_type, "");
  return v;
}

/* ---- calls and constants ----------------------------------------------------- */

LLVMValueRef lower_i32(Lower *L, int64_t v) { return LLVMConstInt(L->i32, (unsigned long long)v, 1); }
LLVMValueRef lower_int(Lower *L, LLVMTypeRef t, int64_t v) { return LLVMConstInt(t, (unsigned long long)v, 1); }

LLVMValueRef lower_call(Lower *L, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int n, LLVMValueRef *args) {
  LLVMTypeRef ft = LLVMFunctionType(ret, params, (unsigned)n, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(L->module, name);
  if (!fn) fn = LLVMAddFunction(L->module, name, ft);
  return LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n, "");
}

LLVMValueRef lower_intrinsic(Lower *L, const char *name, LLVMTypeRef *types, int n_types, LLVMValueRef *args, int n) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) lower_fail(L, "internal error: LLVM has no intrinsic %s", name);
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(L->module, id, types, (size_t)n_types);
  LLVMTypeRef ft = LLVMIntrinsicGetType(L->ctx, id, types, (size_t)n_types);
  return LLVMBuildCall2(L->b, ft, fn, args, (unsigned)n, "");
}

LLVMValueRef lower_inline_asm(Lower *L, LLVMTypeRef ret, const char *text, const char *constraints,
                              LLVMValueRef *args, int n, int side_effects) {
  LLVMTypeRef params[64];
  if (n > 64) lower_fail(L, "internal error: inline PTX with %d operands", n);
  for (int i = 0; i < n; i++) params[i] = LLVMTypeOf(args[i]);
  LLVMTypeRef ft = LLVMFunctionType(ret, params, (unsigned)n, 0);
  LLVMValueRef asm_ = LLVMGetInlineAsm(ft, (char *)text, strlen(text), (char *)constraints, strlen(constraints),
                                       side_effects, 0, LLVMInlineAsmDialectATT, 0);
  return LLVMBuildCall2(L->b, ft, asm_, args, (unsigned)n, "");
}

LLVMBasicBlockRef lower_new_block(Lower *L, const char *name) { return LLVMAppendBasicBlockInContext(L->ctx, L->fn, name); }

/* ---- per-thread parts ------------------------------------------------------------ */

static int log2_exact(int64_t x) { return x > 0 && !(x & (x - 1)) ? __builtin_ctzll((unsigned long long)x) : -1; }

/* The bits lo..lo+len-1 of %tid.x scaled by `scale` (a run of constants
 * scale, 2 * scale, 4 * scale, ...).  A run of warp bits is taken from
 * L->warp, which the backend knows is the same across a warp: what only
 * depends on the warp (a warpgroup's wgmma descriptors) then stays in
 * uniform registers instead of being moved there before each use. */
static LLVMValueRef tid_bits_scaled(Lower *L, int lo, int len, int64_t scale) {
  LLVMBuilderRef b = L->pro;
  LLVMValueRef from = L->tid;
  if (lo >= LANE_BITS) from = L->warp, lo -= LANE_BITS;
  int shift = log2_exact(scale);
  if (shift >= 0) {
    LLVMValueRef bits = LLVMBuildAnd(b, from, lower_i32(L, ((1LL << len) - 1) << lo), "");
    if (shift > lo) return LLVMBuildShl(b, bits, lower_i32(L, shift - lo), "");
    if (shift < lo) return LLVMBuildLShr(b, bits, lower_i32(L, lo - shift), "");
    return bits;
  }
  LLVMValueRef bits = LLVMBuildAnd(b, LLVMBuildLShr(b, from, lower_i32(L, lo), ""), lower_i32(L, (1LL << len) - 1), "");
  return LLVMBuildMul(b, bits, lower_i32(L, scale), "");
}

LLVMValueRef lower_thread_sum(Lower *L, const int64_t *c) {
  for (int i = 0; i < L->sums.len; i++)
    if (!memcmp(L->sums.data[i].c, c, sizeof(int64_t) * TID_BITS)) return L->sums.data[i].value;
  LLVMValueRef sum = NULL;
  for (int i = 0; i < TID_BITS;) {
    if (!c[i] || (1 << i) >= L->num_threads) {
      i++;
      continue;
    }
    int len = 1;
    while (i + len < TID_BITS && i + len != LANE_BITS && (1 << (i + len)) < L->num_threads && c[i + len] == c[i] << len)
      len++;
    LLVMValueRef term = tid_bits_scaled(L, i, len, c[i]);
    sum = sum ? LLVMBuildAdd(L->pro, sum, term, "") : term;
    i += len;
  }
  if (!sum) sum = lower_i32(L, 0);
  ThreadSum s;
  memcpy(s.c, c, sizeof s.c);
  s.value = sum;
  vec_push(L->arena, &L->sums, s);
  return sum;
}

LLVMValueRef lower_thread_offset(Lower *L, const uint32_t *thread) {
  int64_t c[TID_BITS];
  for (int i = 0; i < TID_BITS; i++) c[i] = thread[i];
  return lower_thread_sum(L, c);
}

LLVMValueRef lower_owner(Lower *L, const uint32_t *thread, int warps_only) {
  int64_t mask = 0;
  for (int i = warps_only ? LANE_BITS : 0; i < TID_BITS && (1 << i) < L->num_threads; i++)
    if (!thread[i]) mask |= 1LL << i;
  if (!mask) return NULL;
  LLVMValueRef bits = LLVMBuildAnd(L->pro, L->tid, lower_i32(L, mask), "");
  return LLVMBuildICmp(L->pro, LLVMIntEQ, bits, lower_i32(L, 0), "owner");
}

LLVMValueRef lower_shared_address(Lower *L, LLVMValueRef byte_offset) {
  return LLVMBuildGEP2(L->b, L->i8, L->shared, &byte_offset, 1, "");
}

uint32_t lower_map(const BitMap *m, uint32_t offset) {
  if (!m) return offset;
  uint32_t r = 0;
  for (int i = 0; offset; i++, offset >>= 1)
    if (offset & 1) r ^= m->image[i];
  return r;
}

void lower_side(const LinearLayout *ll, const BitMap *m, Side *s) {
  memset(s, 0, sizeof *s);
  s->n_reg = ll->n_reg;
  for (int i = 0; i < ll->n_reg; i++) s->reg[i] = lower_map(m, ll->reg[i]);
  for (int i = 0; i < ll->n_lane && i < LANE_BITS; i++) s->thread[i] = lower_map(m, ll->lane[i]);
  for (int i = 0; i < ll->n_warp && i < MAX_WARP_BITS; i++) s->thread[LANE_BITS + i] = lower_map(m, ll->warp[i]);
}

/* ---- ops ------------------------------------------------------------------------- */

static void lower_op(Lower *L, const TirOp *op) {
  L->op = op;
  if (!L->inlining) lower_enter_op(L);
  switch (op->code) {
  case TIR_CONSTANT: lower_constant(L, op); break;
  case TIR_PROGRAM_ID: case TIR_NUM_PROGRAMS: case TIR_SMID: case TIR_GLOBALTIMER: lower_special(L, op); break;
  case TIR_MAKE_RANGE: lower_make_range(L, op); break;
  case TIR_SPLAT: lower_splat(L, op); break;
  case TIR_BROADCAST: case TIR_EXPAND_DIMS: case TIR_RESHAPE: case TIR_TRANS: case TIR_CONVERT_LAYOUT: case TIR_HINT:
    if (!L->deferred[op->results.data[0]]) lower_shape_op(L, op);
    break;
  case TIR_JOIN: lower_join(L, op); break;
  case TIR_SPLIT: lower_split(L, op); break;
  case TIR_GATHER: lower_gather(L, op); break;
  case TIR_ADDPTR: lower_addptr(L, op); break;
  case TIR_LOAD: lower_load(L, op); break;
  case TIR_STORE: lower_store(L, op); break;
  case TIR_ATOMIC_RMW: case TIR_ATOMIC_CAS: lower_atomic(L, op); break;
  case TIR_DOT: lower_dot(L, op); break;
  case TIR_REDUCE: case TIR_REDUCE_COMBINE: lower_reduce(L, op); break;
  case TIR_SCAN: case TIR_SCAN_COMBINE: lower_scan(L, op); break;
  case TIR_RAND: lower_rand(L, op); break;
  case TIR_PRINT: lower_print(L, op); break;
  case TIR_ASSERT: lower_assert(L, op); break;
  case TIR_BARRIER: lower_barrier(L); break;
  case TIR_FOR: lower_for(L, op); break;
  case TIR_IF: lower_if(L, op); break;
  case TIR_WHILE: lower_while(L, op); break;
  case TIR_LOCAL_ALLOC: lower_local_alloc(L, op); break;
  case TIR_MEMDESC_INDEX: lower_memdesc_index(L, op); break;
  case TIR_MEMDESC_TRANS: lower_memdesc_trans(L, op); break;
  case TIR_LOCAL_LOAD: /* deferred: the dot reads the buffer (the read counts from here) */
    if (L->deferred[op->results.data[0]]) lower_buffer_read(L, op->operands.data[0]);
    else lower_local_load(L, op);
    break;
  case TIR_LOCAL_STORE: lower_local_store(L, op); break;
  case TIR_ASYNC_COPY: lower_async_copy(L, op); break;
  case TIR_ASYNC_COMMIT: lower_async_commit(L, op); break;
  case TIR_ASYNC_WAIT: lower_async_wait(L, op); break;
  case TIR_DOT_WAIT: lower_dot_wait(L, op); break;
  case TIR_MBAR_ALLOC: lower_mbar_alloc(L, op); break;
  case TIR_MBAR_WAIT: lower_mbar_wait(L, op); break;
  case TIR_MBAR_INVAL: lower_mbar_inval(L, op); break;
  case TIR_TMA_COPY: lower_tma_copy(L, op); break;
  case TIR_TMA_STORE: lower_tma_store(L, op); break;
  case TIR_RETURN:
    LLVMBuildRetVoid(L->b);
    LLVMPositionBuilderAtEnd(L->b, lower_new_block(L, "after_return"));
    break;
  case TIR_INLINE_ASM: lower_asm_elementwise(L, op); break;
  default:
    if (tir_op_flags(op->code) & EW) lower_elementwise(L, op);
    else lower_fail(L, "no lowering for this op");
  }
}

/* Lowers the ops of b up to (not including) its yield or condition. */
void lower_block(Lower *L, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (op->code == TIR_YIELD || op->code == TIR_CONDITION) return;
    lower_op(L, op);
  }
}

void lower_inline(Lower *L, const TirBlock *b, LLVMValueRef *args, LLVMValueRef *results) {
  const TirOp *op = L->op;
  L->inlining++;
  for (int i = 0; i < b->args.len; i++) {
    Regs r = lower_regs(L, 1);
    r.v[0] = args[i];
    lower_set(L, b->args.data[i], r);
  }
  lower_block(L, b);
  const TirOp *yield = b->ops.data[b->ops.len - 1];
  for (int i = 0; i < yield->operands.len; i++) results[i] = lower_get(L, yield->operands.data[i]).v[0];
  L->inlining--;
  L->op = op;
}

/* ---- the kernel ------------------------------------------------------------------- */

static LLVMTypeRef param_type(Lower *L, const Type *t) { return t->elem == DT_I1 && !t->is_ptr ? L->i8 : lower_elem_type(L, t); }

static void add_attribute(Lower *L, LLVMValueRef fn, unsigned index, const char *name, uint64_t value) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(fn, index, LLVMCreateEnumAttribute(L->ctx, kind, value));
}

/* !nvvm.annotations = !{!{ptr @K, !"key", value}} */
static void annotate_node(Lower *L, const char *key, LLVMMetadataRef value) {
  LLVMMetadataRef ops[3] = {LLVMValueAsMetadata(L->fn), LLVMMDStringInContext2(L->ctx, key, strlen(key)), value};
  LLVMAddNamedMetadataOperand(L->module, "nvvm.annotations",
                              LLVMMetadataAsValue(L->ctx, LLVMMDNodeInContext2(L->ctx, ops, 3)));
}

/* !{ptr @K, !"maxntidx", i32 N} */
static void annotate(Lower *L, const char *key, int value) {
  annotate_node(L, key, LLVMValueAsMetadata(lower_i32(L, value)));
}

/* The tensor maps after the parameters: each a 128-byte CUtensorMap passed
 * by value (.param .align 64 .b8 [128]) and marked grid_constant, so that
 * TMA reads it where it is (a copy in local memory faults). */
static void declare_tensor_maps(Lower *L, int first) {
  int n = L->f->tensor_maps.len;
  if (!n) return;
  LLVMTypeRef map = LLVMArrayType2(L->i8, 128);
  unsigned byval = LLVMGetEnumAttributeKindForName("byval", 5);
  LLVMMetadataRef *indices = arena_alloc(L->arena, sizeof(LLVMMetadataRef) * (size_t)n);
  for (int i = 0; i < n; i++) {
    LLVMAddAttributeAtIndex(L->fn, (unsigned)(first + i + 1), LLVMCreateTypeAttribute(L->ctx, byval, map));
    add_attribute(L, L->fn, (unsigned)(first + i + 1), "align", 64);
    LLVMSetValueName2(LLVMGetParam(L->fn, (unsigned)(first + i)), "tensor_map", 10);
    indices[i] = LLVMValueAsMetadata(lower_i32(L, first + i + 1));
  }
  annotate_node(L, "grid_constant", LLVMMDNodeInContext2(L->ctx, indices, (size_t)n));
}

static void declare_kernel(Lower *L, int sim) {
  int n = L->f->params.len, maps = sim ? 0 : L->f->tensor_maps.len;
  LLVMTypeRef *types = arena_alloc(L->arena, sizeof(LLVMTypeRef) * (size_t)(n + maps + 1));
  for (int i = 0; i < n; i++) types[i] = param_type(L, lower_type(L, L->f->params.data[i].value));
  for (int i = 0; i < maps; i++) types[n + i] = L->generic_ptr;
  L->fn = LLVMAddFunction(L->module, L->f->name, LLVMFunctionType(L->void_t, types, (unsigned)(n + maps), 0));
  for (int i = 0; i < n; i++) {
    const TirParam *p = &L->f->params.data[i];
    LLVMSetValueName2(LLVMGetParam(L->fn, (unsigned)i), p->name, strlen(p->name));
    if (lower_type(L, p->value)->is_ptr && p->divisibility >= 16) add_attribute(L, L->fn, (unsigned)i + 1, "align", 16);
  }
  if (sim) return;
  LLVMSetFunctionCallConv(L->fn, 71); /* PTX_Kernel: an entry point */
  annotate(L, "maxntidx", L->num_threads);
  if (L->gpu->maxnreg) annotate(L, "maxnreg", L->gpu->maxnreg); /* NVPTX prints it as .maxnreg */
  declare_tensor_maps(L, n);
}

/* A kernel whose loops load element by element waits on memory in every
 * iteration, and only more programs per SM hide that: ptxas is asked
 * (.minnctapersm) for as many as shared memory, threads, registers and the
 * hardware allow, the registers being what the busiest loop keeps (values
 * other than pointers its nest carries, and the pointers of its accesses)
 * plus some for temporaries, 64 at least.  Values computed before a loop
 * and used in it (offsets, masks) are not counted: the floor covers them.
 * Left alone, ptxas keeps fewer programs per SM than fit (D10 of
 * docs/decisions.md). */
static void occupancy_hint(Lower *L) {
  enum { TEMPORARY_WORDS = 16, FEWEST_REGISTERS = 64 };
  if (!L->element_loop_access) return;
  int64_t words = L->most_loop_words + TEMPORARY_WORDS;
  if (words < FEWEST_REGISTERS) words = FEWEST_REGISTERS; /* loop bodies need registers of their own */
  int64_t n = arch_programs_per_sm(arch_of_cc(L->compute_capability), L->shared_bytes, words, L->num_threads);
  if (n > 1) annotate(L, "minctasm", (int)n);
}

static void bind_params(Lower *L) {
  for (int i = 0; i < L->f->params.len; i++) {
    const TirParam *p = &L->f->params.data[i];
    LLVMValueRef v = LLVMGetParam(L->fn, (unsigned)i);
    if (lower_type(L, p->value)->elem == DT_I1 && !lower_type(L, p->value)->is_ptr)
      v = LLVMBuildICmp(L->b, LLVMIntNE, v, LLVMConstNull(L->i8), "");
    Regs r = lower_regs(L, 1);
    r.v[0] = v;
    lower_set(L, p->value, r);
  }
}

/* int32_t K_sim_shared_bytes: the dynamic shared memory a program needs, for
 * the simulator to allocate (the GPU launch takes it from GpuCode). */
static void define_sim_shared_bytes(Lower *L) {
  const char *name = arena_printf(L->arena, "%s_sim_shared_bytes", L->f->name);
  LLVMValueRef g = LLVMAddGlobal(L->module, L->i32, name);
  LLVMSetInitializer(g, lower_i32(L, L->shared_bytes));
  LLVMSetGlobalConstant(g, 1);
}

/* void K_sim_entry(void **params): each parameter read through params[i]. */
static void define_sim_entry(Lower *L) {
  const char *name = arena_printf(L->arena, "%s_sim_entry", L->f->name);
  LLVMValueRef entry = LLVMAddFunction(L->module, name, LLVMFunctionType(L->void_t, &L->generic_ptr, 1, 0));
  LLVMPositionBuilderAtEnd(L->b, LLVMAppendBasicBlockInContext(L->ctx, entry, "entry"));
  int n = L->f->params.len;
  LLVMValueRef *args = arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    LLVMValueRef index = lower_i32(L, i);
    LLVMValueRef slot = LLVMBuildGEP2(L->b, L->generic_ptr, LLVMGetParam(entry, 0), &index, 1, "");
    LLVMValueRef p = LLVMBuildLoad2(L->b, L->generic_ptr, slot, "");
    args[i] = LLVMBuildLoad2(L->b, LLVMTypeOf(LLVMGetParam(L->fn, (unsigned)i)), p, "");
  }
  LLVMBuildCall2(L->b, LLVMGlobalGetValueType(L->fn), L->fn, args, (unsigned)n, "");
  LLVMBuildRetVoid(L->b);
}

static void init_types(Lower *L, int sim) {
  LLVMContextRef c = L->ctx;
  L->i1 = LLVMInt1TypeInContext(c);
  L->i8 = LLVMInt8TypeInContext(c);
  L->i16 = LLVMInt16TypeInContext(c);
  L->i32 = LLVMInt32TypeInContext(c);
  L->i64 = LLVMInt64TypeInContext(c);
  L->f16 = LLVMHalfTypeInContext(c);
  L->bf16 = LLVMBFloatTypeInContext(c);
  L->f32 = LLVMFloatTypeInContext(c);
  L->f64 = LLVMDoubleTypeInContext(c);
  L->void_t = LLVMVoidTypeInContext(c);
  L->global_ptr = LLVMPointerTypeInContext(c, sim ? 0 : 1);
  L->shared_ptr = LLVMPointerTypeInContext(c, sim ? 0 : 3);
  L->generic_ptr = LLVMPointerTypeInContext(c, 0);
}

static void build_kernel(Lower *L, int sim) {
  declare_kernel(L, sim);
  LLVMBasicBlockRef entry = lower_new_block(L, "entry"), body = lower_new_block(L, "body");
  LLVMPositionBuilderAtEnd(L->pro, entry);
  LLVMValueRef jump = LLVMBuildBr(L->pro, body);
  LLVMPositionBuilderBefore(L->pro, jump);
  LLVMPositionBuilderBefore(L->b, jump);
  L->target->prologue(L); /* %tid.x and the shared base, before anything uses them */
  L->raw_shared = L->shared;
  L->shared = NULL;        /* set per op: the scratch above the live buffers */
  lower_plan_buffers(L);
  LLVMPositionBuilderAtEnd(L->b, body);
  bind_params(L);
  lower_block(L, L->f->body);
  LLVMBuildRetVoid(L->b);
  if (sim) define_sim_entry(L), define_sim_shared_bytes(L);
}

/* ---- output ------------------------------------------------------------------------- */

static int emit(Lower *L, int want_llir, int want_ptx, GpuCode *out) {
  char *error = NULL;
  if (LLVMVerifyModule(L->module, LLVMReturnStatusAction, &error)) {
    diag_error(L->diags, (Loc){0}, "internal error: the lowering made invalid LLVM IR: %s", error ? error : "");
    LLVMDisposeMessage(error);
    return -1;
  }
  LLVMDisposeMessage(error);
  if (want_llir) {
    char *text = LLVMPrintModuleToString(L->module);
    out->llir = arena_strdup(L->arena, text);
    LLVMDisposeMessage(text);
  }
  if (!want_ptx || L->target == target_sim()) return 0;
  char err[1024] = "", *ptx = NULL;
  size_t len = 0;
  if (lower_link_libdevice(L->module, L->gpu->libdevice, err, sizeof err) ||
      llvm_emit_ptx(L->module, L->gpu, L->element_loop_access, L->ptx_isa, &ptx, &len, err, sizeof err)) {
    diag_error(L->diags, (Loc){0}, "%s", err);
    return -1;
  }
  char *copy = arena_alloc(L->arena, len + 1);
  memcpy(copy, ptx, len + 1);
  free(ptx);
  out->ptx = copy;
  out->ptx_len = len;
  return 0;
}

/* Errors come back through return values; LLVM's remarks and warnings are dropped. */
static void ignore_diagnostic(LLVMDiagnosticInfoRef info, void *user) { (void)info, (void)user; }

static int lower_all(Lower *L, int want_llir, int want_ptx, GpuCode *out) {
  int sim = L->target == target_sim();
  L->module = LLVMModuleCreateWithNameInContext(L->f->name, L->ctx);
  init_types(L, sim);
  L->b = LLVMCreateBuilderInContext(L->ctx);
  L->pro = LLVMCreateBuilderInContext(L->ctx);
  if (setjmp(L->fail)) return -1;
  build_kernel(L, sim);
  if (!sim) occupancy_hint(L);
  out->shared_bytes = L->shared_bytes;
  return emit(L, want_llir, want_ptx, out);
}

int llvm_generate(const TirFunc *f, const GpuTarget *t, int want_llir, int want_ptx, Arena *a, GpuCode *out,
                  Diags *d) {
  memset(out, 0, sizeof *out);
  Lower *L = arena_alloc(a, sizeof *L);
  L->f = f;
  L->gpu = t;
  const Arch *arch = arch_find(t->arch);
  if (!arch) {
    diag_error(d, (Loc){0}, "internal error: unknown target '%s'", t->arch);
    return -1;
  }
  L->target = arch->sim ? target_sim() : target_nvptx();
  L->compute_capability = arch->cc;
  L->wgmma = arch->wgmma;
  L->arena = a;
  L->diags = d;
  L->num_threads = WARP_SIZE * f->num_warps;
  L->axis = tir_axis_info(f);
  L->values = arena_alloc(a, sizeof(Regs) * (size_t)(f->types.len + 1));
  L->uses = arena_alloc(a, sizeof(int) * (size_t)(f->types.len + 1));
  L->defs = arena_alloc(a, sizeof(TirOp *) * (size_t)(f->types.len + 1));
  L->deferred = arena_alloc(a, (size_t)(f->types.len + 1));
  L->dot_waited = arena_alloc(a, (size_t)(f->types.len + 1));
  tir_index_values(f->body, L->uses, L->defs);
  lower_plan_dots(L, f->body);
  L->ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(L->ctx, ignore_diagnostic, NULL); /* the library never prints */
  int status = lower_all(L, want_llir, want_ptx, out);
  if (L->b) LLVMDisposeBuilder(L->b);
  if (L->pro) LLVMDisposeBuilder(L->pro);
  if (L->module) LLVMDisposeModule(L->module);
  LLVMContextDispose(L->ctx);
  return status;
}
