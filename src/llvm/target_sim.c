/* The "sim" target's primitives: host LLVM IR (address space 0 throughout)
 * where every GPU operation is a call into the thread simulator, whose ABI
 * is tests/sim/tile_sim.h.  A predicated access branches around its call. */
#include "target_tc.h"

#include <string.h>

enum { SIM_SIGNED, SIM_UNSIGNED, SIM_FLOAT };                                     /* TILE_SIM_KIND_* */

static void prologue(Lower *L) {
  L->tid = lower_call(L, "tile_sim_tid", L->i32, NULL, 0, NULL);
  L->warp = LLVMBuildLShr(L->pro, L->tid, lower_i32(L, LANE_BITS), "");
  L->shared = lower_call(L, "tile_sim_shared", L->generic_ptr, NULL, 0, NULL);
}

static LLVMValueRef program_id(Lower *L, int axis) {
  LLVMValueRef a = lower_i32(L, axis);
  return lower_call(L, "tile_sim_ctaid", L->i32, &L->i32, 1, &a);
}

static LLVMValueRef num_programs(Lower *L, int axis) {
  LLVMValueRef a = lower_i32(L, axis);
  return lower_call(L, "tile_sim_nctaid", L->i32, &L->i32, 1, &a);
}

/* The simulator runs every program on one SM, as the interpreter does. */
static LLVMValueRef smid(Lower *L) { return lower_i32(L, 0); }

static LLVMValueRef globaltimer(Lower *L) { return lower_call(L, "tile_sim_globaltimer", L->i64, NULL, 0, NULL); }

static void barrier(Lower *L) { lower_call(L, "tile_sim_barrier", L->void_t, NULL, 0, NULL); }

static LLVMValueRef shuffle_xor(Lower *L, LLVMValueRef value, int lane_mask) {
  LLVMTypeRef p[2] = {L->i32, L->i32};
  LLVMValueRef a[2] = {value, lower_i32(L, lane_mask)};
  return lower_call(L, "tile_sim_shfl_xor", L->i32, p, 2, a);
}

static LLVMValueRef shuffle_idx(Lower *L, LLVMValueRef value, LLVMValueRef lane) {
  LLVMTypeRef p[2] = {L->i32, L->i32};
  LLVMValueRef a[2] = {value, lane};
  return lower_call(L, "tile_sim_shfl_idx", L->i32, p, 2, a);
}

/* A stack slot for the bytes of one access, made in the prologue. */
static LLVMValueRef slot(Lower *L, LLVMTypeRef t) {
  LLVMValueRef a = LLVMBuildAlloca(L->pro, t, "slot");
  LLVMSetAlignment(a, 16);
  return a;
}

/* Runs what the caller emits next only where `predicate` holds: returns
 * the block to continue in after the caller is done (NULL: no branch). */
static LLVMBasicBlockRef begin_predicated(Lower *L, LLVMValueRef predicate) {
  if (!predicate) return NULL;
  LLVMBasicBlockRef on = lower_new_block(L, "sim_on"), after = lower_new_block(L, "sim_after");
  LLVMBuildCondBr(L->b, predicate, on, after);
  LLVMPositionBuilderAtEnd(L->b, on);
  return after;
}

static void end_predicated(Lower *L, LLVMBasicBlockRef after) {
  if (!after) return;
  LLVMBuildBr(L->b, after);
  LLVMPositionBuilderAtEnd(L->b, after);
}

static LLVMValueRef load(Lower *L, const GlobalAccess *a) {
  LLVMValueRef tmp = slot(L, a->type);
  LLVMBuildStore(L->b, a->other ? a->other : LLVMConstNull(a->type), tmp);
  LLVMBasicBlockRef after = begin_predicated(L, a->predicate);
  LLVMTypeRef p[3] = {L->generic_ptr, L->generic_ptr, L->i32};
  LLVMValueRef args[3] = {tmp, a->address, lower_i32(L, a->bytes)};
  lower_call(L, "tile_sim_load", L->void_t, p, 3, args);
  end_predicated(L, after);
  return LLVMBuildLoad2(L->b, a->type, tmp, "");
}

static void store(Lower *L, const GlobalAccess *a) {
  LLVMValueRef tmp = slot(L, a->type);
  LLVMBasicBlockRef after = begin_predicated(L, a->predicate);
  LLVMBuildStore(L->b, a->value, tmp);
  LLVMTypeRef p[3] = {L->generic_ptr, L->generic_ptr, L->i32};
  LLVMValueRef args[3] = {a->address, tmp, lower_i32(L, a->bytes)};
  lower_call(L, "tile_sim_store", L->void_t, p, 3, args);
  end_predicated(L, after);
}

/* Integers and 32/64-bit float adds; float max/min and 16-bit floats go
 * through the shared CAS loop, which the simulator then tests too. */
static int atomic_native(Lower *L, int op, DType t) {
  int bits = dtype_bits(t), is_float = dtype_is_float(t);
  if (op == ATOMIC_CAS) return bits >= 16;
  if (is_float) return op == ATOM_ADD && bits >= 32;
  return bits >= 32;
}

/* a->op is TILE_SIM_ATOMIC_*: both are lang/memory.def's order, then CAS. */
static LLVMValueRef atomic(Lower *L, const AtomicAccess *a) {
  int bits = dtype_bits(a->type);
  int kind = dtype_is_float(a->type) ? SIM_FLOAT : dtype_kind(a->type) == DK_SINT ? SIM_SIGNED : SIM_UNSIGNED;
  LLVMValueRef value = LLVMBuildZExt(L->b, a->value, L->i64, "");
  LLVMValueRef compare = a->compare ? LLVMBuildZExt(L->b, a->compare, L->i64, "") : lower_int(L, L->i64, 0);
  LLVMTypeRef p[6] = {L->i32, L->i32, L->i32, L->generic_ptr, L->i64, L->i64};
  LLVMValueRef args[6] = {lower_i32(L, a->op), lower_i32(L, kind), lower_i32(L, bits / 8), a->address, value,
                          compare};
  LLVMValueRef old = lower_call(L, "tile_sim_atomic", L->i64, p, 6, args);
  return LLVMBuildTrunc(L->b, old, lower_int_type(L, bits), "");
}

static LLVMValueRef exp2_approx(Lower *L, LLVMValueRef x, int ftz) {
  return lower_call(L, ftz ? "tile_sim_ex2_approx_ftz" : "tile_sim_ex2_approx", L->f32, &L->f32, 1, &x);
}

/* The simulator divides exactly, as the interpreter does. */
static LLVMValueRef div_full(Lower *L, LLVMValueRef x, LLVMValueRef y) { return LLVMBuildFDiv(L->b, x, y, ""); }

/* cvt.rna.tf32.f32 in integer arithmetic, as the interpreter rounds:
 * finite values have 0x1000 added to their bits (ties away from zero), then
 * the low 13 bits cleared; infinities and NaN pass. */
static LLVMValueRef round_tf32(Lower *L, LLVMValueRef x) {
  LLVMValueRef bits = LLVMBuildBitCast(L->b, x, L->i32, "");
  LLVMValueRef rounded = LLVMBuildAnd(L->b, LLVMBuildAdd(L->b, bits, lower_i32(L, 0x1000), ""),
                                      lower_i32(L, (int32_t)0xffffe000u), "");
  LLVMValueRef exponent = LLVMBuildAnd(L->b, bits, lower_i32(L, 0x7f800000), "");
  LLVMValueRef special = LLVMBuildICmp(L->b, LLVMIntEQ, exponent, lower_i32(L, 0x7f800000), "");
  return LLVMBuildBitCast(L->b, LLVMBuildSelect(L->b, special, bits, rounded, ""), L->f32, "");
}

static LLVMValueRef string(Lower *L, const char *s) {
  LLVMValueRef init = LLVMConstStringInContext(L->ctx, s, (unsigned)strlen(s), 0);
  LLVMValueRef g = LLVMAddGlobal(L->module, LLVMTypeOf(init), "str");
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  return g;
}

static void vprintf_(Lower *L, LLVMValueRef format, LLVMValueRef args) {
  LLVMTypeRef p[2] = {L->generic_ptr, L->generic_ptr};
  LLVMValueRef a[2] = {format, args};
  lower_call(L, "tile_sim_vprintf", L->i32, p, 2, a);
}

static void assert_fail(Lower *L, LLVMValueRef message, LLVMValueRef file, int line, LLVMValueRef function) {
  LLVMTypeRef p[5] = {L->generic_ptr, L->generic_ptr, L->i32, L->generic_ptr, L->i64};
  LLVMValueRef a[5] = {message, file, lower_i32(L, line), function, lower_int(L, L->i64, 1)};
  lower_call(L, "tile_sim_assertfail", L->void_t, p, 5, a);
}

static const Target sim = {
    .global_space = 0,
    .shared_space = 0,
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
    .exp2_approx = exp2_approx,
    .div_full = div_full,
    .round_tf32 = round_tf32,
    .vprintf = vprintf_,
    .assert_fail = assert_fail,
    .string = string,
    TARGET_TC_ENTRIES(sim)
};

const Target *target_sim(void) { return &sim; }
