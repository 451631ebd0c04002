/* sim: ldmatrix, mma.sync and cp.async as calls into the thread simulator
 * (tests/sim/tile_sim.h); register arrays go through stack slots. */
#include "target_tc.h"

static LLVMValueRef array_slot(Lower *L, LLVMTypeRef elem, int n) {
  LLVMValueRef a = LLVMBuildAlloca(L->pro, LLVMArrayType(elem, (unsigned)n), "sim_regs");
  LLVMSetAlignment(a, 16);
  return a;
}

static LLVMValueRef element(Lower *L, LLVMTypeRef elem, LLVMValueRef array, int i) {
  LLVMValueRef index = lower_i32(L, i);
  return LLVMBuildGEP2(L->b, elem, array, &index, 1, "");
}

static LLVMValueRef stored(Lower *L, LLVMTypeRef elem, LLVMValueRef *v, int n) {
  LLVMValueRef a = array_slot(L, elem, n);
  for (int i = 0; i < n; i++) LLVMBuildStore(L->b, v[i], element(L, elem, a, i));
  return a;
}

static void loaded(Lower *L, LLVMTypeRef elem, LLVMValueRef array, int n, LLVMValueRef *out) {
  for (int i = 0; i < n; i++) out[i] = LLVMBuildLoad2(L->b, elem, element(L, elem, array, i), "");
}

void sim_ldmatrix(Lower *L, int count, int trans, LLVMValueRef shared_address, LLVMValueRef *out) {
  LLVMValueRef words = array_slot(L, L->i32, 4);
  LLVMTypeRef p[4] = {L->generic_ptr, L->i32, L->i32, L->generic_ptr};
  LLVMValueRef a[4] = {words, lower_i32(L, count), lower_i32(L, trans), shared_address};
  lower_call(L, "tile_sim_ldmatrix", L->void_t, p, 4, a);
  loaded(L, L->i32, words, count, out);
}

/* The accumulator travels as f32 bits; an s8 mma's i32 registers are bitcast. */
void sim_mma(Lower *L, int kind, LLVMValueRef *d, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c) {
  LLVMValueRef cf[4];
  for (int i = 0; i < 4; i++) cf[i] = kind == MMA_S8 ? LLVMBuildBitCast(L->b, c[i], L->f32, "") : c[i];
  LLVMValueRef out = array_slot(L, L->f32, 4);
  LLVMTypeRef p[5] = {L->i32, L->generic_ptr, L->generic_ptr, L->generic_ptr, L->generic_ptr};
  LLVMValueRef args[5] = {lower_i32(L, kind), out, stored(L, L->i32, a, 4), stored(L, L->i32, b, 2),
                          stored(L, L->f32, cf, 4)};
  lower_call(L, "tile_sim_mma", L->void_t, p, 5, args);
  loaded(L, L->f32, out, 4, d);
  for (int i = 0; kind == MMA_S8 && i < 4; i++) d[i] = LLVMBuildBitCast(L->b, d[i], L->i32, "");
}

void sim_cp_async(Lower *L, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef src_bytes) {
  LLVMTypeRef p[4] = {L->generic_ptr, L->generic_ptr, L->i32, L->i32};
  LLVMValueRef a[4] = {dst, src, lower_i32(L, bytes), src_bytes};
  lower_call(L, "tile_sim_cp_async", L->void_t, p, 4, a);
}

void sim_cp_async_commit(Lower *L) { lower_call(L, "tile_sim_cp_async_commit", L->void_t, NULL, 0, NULL); }

void sim_cp_async_wait(Lower *L, int pending) {
  LLVMValueRef n = lower_i32(L, pending);
  lower_call(L, "tile_sim_cp_async_wait", L->void_t, &L->i32, 1, &n);
}

/* ---- wgmma ---------------------------------------------------------------------- */

static void call0(Lower *L, const char *name) { lower_call(L, name, L->void_t, NULL, 0, NULL); }

void sim_wgmma_fence(Lower *L) { call0(L, "tile_sim_wgmma_fence"); }
void sim_wgmma_commit(Lower *L) { call0(L, "tile_sim_wgmma_commit"); }
void sim_fence_proxy_async(Lower *L) { call0(L, "tile_sim_fence_proxy_async"); }

/* The simulator computes at the call; acc and a register A go through stack arrays. */
void sim_wgmma(Lower *L, int kind, int n, LLVMValueRef *acc, LLVMValueRef a_desc, LLVMValueRef *a_words,
               LLVMValueRef b_desc, int trans_a, int trans_b) {
  LLVMValueRef d = stored(L, L->f32, acc, n / 2);
  LLVMValueRef words = a_desc ? LLVMConstNull(L->generic_ptr) : stored(L, L->i32, a_words, 4);
  LLVMTypeRef p[9] = {L->i32, L->i32, L->generic_ptr, L->i64, L->generic_ptr, L->i64, L->i32, L->i32, L->i32};
  LLVMValueRef a[9] = {lower_i32(L, kind), lower_i32(L, n), d, a_desc ? a_desc : LLVMConstInt(L->i64, 0, 0), words,
                       b_desc, lower_i32(L, 1), lower_i32(L, trans_a), lower_i32(L, trans_b)};
  lower_call(L, "tile_sim_wgmma", L->void_t, p, 9, a);
  loaded(L, L->f32, d, n / 2, acc);
}

void sim_wgmma_wait(Lower *L, int pending, LLVMValueRef *acc, int n_acc, LLVMValueRef *keep, int n_keep) {
  LLVMValueRef x = lower_i32(L, pending);
  lower_call(L, "tile_sim_wgmma_wait", L->void_t, &L->i32, 1, &x);
}

/* ---- TMA stores ------------------------------------------------------------------ */

/* A map field's value, as the launch encodes it: the constant times its
 * parameters, at least 1 for a dimension (a map cannot be empty). */
static LLVMValueRef map_field(Lower *L, const TirMapField *x, int dimension) {
  LLVMValueRef v = lower_int(L, L->i64, x->value);
  for (int i = 0; i < x->n; i++) {
    LLVMValueRef p = lower_get(L, L->f->params.data[x->params[i]].value).v[0];
    v = LLVMBuildMul(L->b, v, LLVMBuildIntCast2(L->b, p, L->i64, 1, ""), "");
  }
  if (!dimension) return v;
  LLVMValueRef one = lower_int(L, L->i64, 1);
  return LLVMBuildSelect(L->b, LLVMBuildICmp(L->b, LLVMIntSLT, v, one, ""), one, v, "");
}

/* No map parameter here: the map's fields go to the simulator, from the kernel's parameters. */
void sim_tma_store_box(Lower *L, int map, LLVMValueRef src, LLVMValueRef c0, LLVMValueRef c1) {
  const TirTensorMap *m = &L->f->tensor_maps.data[map];
  const Type *base = tir_type(L->f, L->f->params.data[m->base].value);
  LLVMTypeRef p[11] = {L->generic_ptr, L->generic_ptr, L->i64, L->i64, L->i64, L->i32,
                       L->i32, L->i32, L->i32, L->i32, L->i32};
  LLVMValueRef a[11] = {src, lower_get(L, L->f->params.data[m->base].value).v[0], map_field(L, &m->dims[0], 1),
                        map_field(L, &m->dims[1], 1), map_field(L, &m->stride, 0), c0, c1, lower_i32(L, m->box[0]),
                        lower_i32(L, m->box[1]), lower_i32(L, m->swizzle), lower_i32(L, dtype_bits(base->elem) / 8)};
  lower_call(L, "tile_sim_tma_store", L->void_t, p, 11, a);
}

/* The simulator stores at the box's call: written and seen at once. */
void sim_tma_store_wait(Lower *L, int writes) { call0(L, "tile_sim_tma_store_wait"); }
