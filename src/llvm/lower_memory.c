/* Global memory: addptr, load, store and atomics.
 *
 * Loads and stores are vectorised over registers that hold consecutive
 * elements along one dimension, as far as AxisInfo proves the pointers
 * contiguous and aligned and the mask constant, up to 16 bytes: each vector
 * is one predicated access of 32- or 64-bit words (8 x fp16 -> v4.b32).
 * Where the layout replicates a tile, only the owner thread stores, does
 * an atomic or does a volatile load; the value an atomic or a volatile load
 * read then reaches the copies through shared memory.  A scalar store,
 * atomic and volatile load are done by thread 0: volatile memory may change
 * between two threads' reads (a flag another program sets), and every
 * thread must see one value, since branches on scalars must be uniform
 * (lower_control.c).  Other loads are done by every thread that holds the
 * value, as Triton does: the memory is not expected to change under them. */
#include "lower.h"

#include <string.h>

static int log2_floor(int64_t x) { return x > 1 ? 63 - __builtin_clzll((unsigned long long)x) : 0; }

void lower_addptr(Lower *L, const TirOp *op) {
  int res = op->results.data[0];
  const Type *rt = lower_type(L, res), *ot = lower_type(L, op->operands.data[1]);
  LinearLayout ll;
  lower_linear(L, res, &ll);
  Regs p = lower_operand(L, op, 0, rt->rank ? &ll : NULL), o = lower_operand(L, op, 1, rt->rank ? &ll : NULL);
  Regs out = lower_regs(L, p.n);
  LLVMTypeRef elem = rt->elem == DT_I1 ? L->i8 : lower_dtype(L, rt->elem);
  for (int r = 0; r < out.n; r++) {
    LLVMValueRef off = o.v[r];
    if (LLVMTypeOf(off) != L->i64)
      off = dtype_kind(ot->elem) == DK_SINT ? LLVMBuildSExt(L->b, off, L->i64, "") : LLVMBuildZExt(L->b, off, L->i64, "");
    out.v[r] = LLVMBuildGEP2(L->b, elem, p.v[r], &off, 1, "");
  }
  lower_result(L, op, 0, out);
}

/* ---- vectorisation ------------------------------------------------------------------ */

uint32_t lower_vector_register(const Vector *v, uint32_t base, int j) {
  for (int i = 0; i < v->n_bits; i++)
    if (j >> i & 1) base |= 1u << v->bit[i];
  return base;
}

/* The register bits that hold coordinates 1, 2, 4, ... of dimension d, at most max_bits of them. */
static Vector vector_along(const LinearLayout *ll, int d, int max_bits) {
  Vector v = {0, {0}};
  uint32_t stride = (uint32_t)(shape_numel(ll->rank - d - 1, ll->shape + d + 1));
  while (v.n_bits < max_bits) {
    int found = -1;
    for (int i = 0; i < ll->n_reg && found < 0; i++)
      if (ll->reg[i] == stride << v.n_bits && (1LL << v.n_bits) < ll->shape[d]) found = i;
    if (found < 0) break;
    v.bit[v.n_bits++] = found;
  }
  return v;
}

Vector lower_choose_vector(Lower *L, int ptr, int mask, const LinearLayout *ll, int elem_bytes) {
  Vector best = {0, {0}};
  if (!ll->rank) return best;
  const AxisInfo *p = &L->axis[ptr], *m = mask >= 0 ? &L->axis[mask] : NULL;
  for (int d = ll->rank - 1; d >= 0; d--) {
    int64_t n = p->contiguity[d];
    if (p->divisibility[d] / elem_bytes < n) n = p->divisibility[d] / elem_bytes;
    if (m && m->constancy[d] < n) n = m->constancy[d];
    if (16 / elem_bytes < n) n = 16 / elem_bytes;
    Vector v = vector_along(ll, d, log2_floor(n));
    if (v.n_bits > best.n_bits) best = v;
  }
  return best;
}

int lower_is_group_base(const Vector *v, uint32_t r) {
  for (int i = 0; i < v->n_bits; i++)
    if (r >> v->bit[i] & 1) return 0;
  return 1;
}

void lower_note_access(Lower *L, const Vector *v, int n) {
  if (!L->loop_depth) return;
  L->loop_pointer_words += 2 * (n >> v->n_bits);
  if (!v->n_bits && n > 1) L->element_loop_access = 1;
}

static LLVMValueRef and_predicates(Lower *L, LLVMValueRef a, LLVMValueRef b) {
  if (!a) return b;
  if (!b) return a;
  return LLVMBuildAnd(L->b, a, b, "");
}

/* ---- load and store ------------------------------------------------------------------ */

typedef struct Access {
  const Type *t;          /* the pointer tile's type */
  int elem_bytes;
  LLVMTypeRef reg_type;   /* an element in registers */
  LLVMTypeRef mem_type;   /* and in memory (i1 as i8) */
  LLVMTypeRef word;
  int word_bits, words;
} Access;

static int pointee_bytes(const Type *t) { return t->elem == DT_I1 ? 1 : dtype_bits(t->elem) / 8; }

static Access access_of(Lower *L, const Type *t, const Vector *v) {
  Access a;
  a.t = t;
  a.elem_bytes = pointee_bytes(t);
  a.reg_type = lower_dtype(L, t->elem);
  a.mem_type = a.reg_type == L->i1 ? L->i8 : a.reg_type;
  a.word = lower_word_type(L, a.elem_bytes << v->n_bits, a.elem_bytes * 8, &a.word_bits, &a.words);
  return a;
}

static LLVMValueRef pack_group(Lower *L, Regs values, const Vector *v, uint32_t base, const Access *a) {
  LLVMValueRef elems[16];
  for (int j = 0; j < 1 << v->n_bits; j++) elems[j] = lower_to_memory(L, values.v[lower_vector_register(v, base, j)]);
  return lower_pack(L, elems, 1 << v->n_bits, a->word);
}

static GlobalAccess global_access(const Access *a, const Vector *v, LLVMValueRef address, LLVMValueRef predicate) {
  GlobalAccess g;
  memset(&g, 0, sizeof g);
  g.address = address;
  g.type = a->word;
  g.bytes = a->elem_bytes << v->n_bits;
  g.word_bits = a->word_bits;
  g.words = a->words;
  g.predicate = predicate;
  return g;
}

/* The copies of each element of a replicated value take its owner's: all threads see one read. */
static Regs from_owners(Lower *L, int value, const Side *s, Regs regs) {
  const Type *t = lower_type(L, value);
  Exchange x;
  memset(&x, 0, sizeof x);
  x.from = *s;
  x.to = *s;
  x.space_bits = log2_floor(type_numel(t));
  x.elem = lower_elem_type(L, t);
  x.owners_only = 1;
  return lower_exchange(L, &x, regs);
}

void lower_load(Lower *L, const TirOp *op) {
  int res = op->results.data[0], masked = op->flags & LOAD_MASK, has_other = op->flags & LOAD_OTHER;
  int is_volatile = (op->flags & LOAD_VOLATILE) != 0;
  const Type *pt = lower_type(L, op->operands.data[0]);
  LinearLayout ll;
  lower_linear(L, res, &ll);
  Side s;
  lower_side(&ll, NULL, &s);
  LLVMValueRef owner = is_volatile ? lower_owner(L, s.thread, 0) : NULL; /* NULL: no copies, or not volatile */
  const LinearLayout *want = pt->rank ? &ll : NULL;
  Regs ptr = lower_operand(L, op, 0, want);
  Regs mask = masked ? lower_operand(L, op, 1, want) : (Regs){0, NULL, 0};
  Regs other = has_other ? lower_operand(L, op, 2, want) : (Regs){0, NULL, 0};
  Vector v = lower_choose_vector(L, op->operands.data[0], masked ? op->operands.data[1] : -1, &ll, pointee_bytes(pt));
  Access a = access_of(L, pt, &v);
  lower_note_access(L, &v, ptr.n);
  Regs out = lower_regs(L, ptr.n);
  for (uint32_t r = 0; r < (uint32_t)ptr.n; r++) {
    if (!lower_is_group_base(&v, r)) continue;
    GlobalAccess g = global_access(&a, &v, ptr.v[r], and_predicates(L, masked ? mask.v[r] : NULL, owner));
    g.other = has_other && masked ? pack_group(L, other, &v, r, &a) : NULL;
    g.cache = op->str;
    g.evict = (int)op->ival;
    g.is_volatile = is_volatile;
    LLVMValueRef elems[16];
    lower_unpack(L, L->target->load(L, &g), a.mem_type, 1 << v.n_bits, elems);
    for (int j = 0; j < 1 << v.n_bits; j++) out.v[lower_vector_register(&v, r, j)] = lower_from_memory(L, elems[j], a.reg_type);
  }
  if (owner && L->uses[res]) out = from_owners(L, res, &s, out);
  lower_result(L, op, 0, out);
}

void lower_store(Lower *L, const TirOp *op) {
  int ptr_id = op->operands.data[0], masked = op->flags & LOAD_MASK;
  const Type *pt = lower_type(L, ptr_id);
  LinearLayout ll;
  lower_linear(L, ptr_id, &ll);
  const LinearLayout *want = pt->rank ? &ll : NULL;
  Regs ptr = lower_get(L, ptr_id), value = lower_operand(L, op, 1, want);
  Regs mask = masked ? lower_operand(L, op, 2, want) : (Regs){0, NULL, 0};
  Side s;
  lower_side(&ll, NULL, &s);
  LLVMValueRef owner = lower_owner(L, s.thread, 0);
  Vector v = lower_choose_vector(L, ptr_id, masked ? op->operands.data[2] : -1, &ll, pointee_bytes(pt));
  Access a = access_of(L, pt, &v);
  lower_note_access(L, &v, ptr.n);
  for (uint32_t r = 0; r < (uint32_t)ptr.n; r++) {
    if (!lower_is_group_base(&v, r)) continue;
    GlobalAccess g = global_access(&a, &v, ptr.v[r], and_predicates(L, masked ? mask.v[r] : NULL, owner));
    g.value = pack_group(L, value, &v, r, &a);
    g.cache = op->str;
    g.evict = (int)op->ival;
    L->target->store(L, &g);
  }
}

/* ---- atomics ---------------------------------------------------------------------------- */

static LLVMValueRef to_bits(Lower *L, LLVMValueRef v, DType t) {
  return dtype_is_float(t) ? LLVMBuildBitCast(L->b, v, lower_int_type(L, dtype_bits(t)), "") : v;
}

/* The new value a CAS loop writes for op: the interpreter's combine. */
static LLVMValueRef combine(Lower *L, int op, DType t, LLVMValueRef old_bits, LLVMValueRef value) {
  LLVMValueRef x[2] = {dtype_is_float(t) ? LLVMBuildBitCast(L->b, old_bits, lower_dtype(L, t), "") : old_bits, value};
  static const TirCode codes[] = {TIR_ADD, TIR_MAXIMUM, TIR_MINIMUM, TIR_AND, TIR_OR, TIR_XOR};
  if (op == ATOM_XCHG) return to_bits(L, value, t);
  Type ty = {t, 0, 0, {0}, 0};
  return to_bits(L, lower_scalar(L, codes[op], 0, &ty, x), t);
}

/* An atomic the target lacks, as a loop of compare-and-swap on the bits. */
static LLVMValueRef cas_loop(Lower *L, AtomicAccess *a, LLVMValueRef value) {
  LLVMTypeRef it = lower_int_type(L, dtype_bits(a->type));
  GlobalAccess first;
  memset(&first, 0, sizeof first);
  first.address = a->address;
  first.type = it;
  first.word_bits = dtype_bits(a->type);
  first.bytes = first.word_bits / 8;
  first.words = 1;
  first.is_volatile = 1;
  LLVMValueRef start = L->target->load(L, &first);
  LLVMBasicBlockRef before = LLVMGetInsertBlock(L->b), loop = lower_new_block(L, "cas_loop"),
                    done = lower_new_block(L, "cas_done");
  LLVMBuildBr(L->b, loop);
  LLVMPositionBuilderAtEnd(L->b, loop);
  LLVMValueRef expected = LLVMBuildPhi(L->b, it, "");
  AtomicAccess cas = *a;
  cas.op = ATOMIC_CAS;
  cas.compare = expected;
  cas.value = combine(L, a->op, a->type, expected, value);
  LLVMValueRef seen = L->target->atomic(L, &cas);
  LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
  LLVMAddIncoming(expected, &start, &before, 1);
  LLVMAddIncoming(expected, &seen, &end, 1);
  LLVMBuildCondBr(L->b, LLVMBuildICmp(L->b, LLVMIntEQ, seen, expected, ""), done, loop);
  LLVMPositionBuilderAtEnd(L->b, done);
  return seen;
}

/* One element's atomic under `predicate`; the old value (0 where off). */
static LLVMValueRef one_atomic(Lower *L, AtomicAccess *a, LLVMValueRef value, LLVMValueRef predicate) {
  LLVMTypeRef it = lower_int_type(L, dtype_bits(a->type));
  LLVMBasicBlockRef before = LLVMGetInsertBlock(L->b), on = NULL, after = NULL;
  if (predicate) {
    on = lower_new_block(L, "atomic");
    after = lower_new_block(L, "atomic_done");
    LLVMBuildCondBr(L->b, predicate, on, after);
    LLVMPositionBuilderAtEnd(L->b, on);
  }
  LLVMValueRef old;
  if (a->op == ATOMIC_CAS || L->target->atomic_native(L, a->op, a->type)) {
    a->value = to_bits(L, value, a->type);
    old = L->target->atomic(L, a);
  } else {
    old = cas_loop(L, a, value);
  }
  if (!predicate) return old;
  LLVMBasicBlockRef end = LLVMGetInsertBlock(L->b);
  LLVMBuildBr(L->b, after);
  LLVMPositionBuilderAtEnd(L->b, after);
  LLVMValueRef phi = LLVMBuildPhi(L->b, it, "");
  LLVMValueRef zero = LLVMConstNull(it);
  LLVMAddIncoming(phi, &old, &end, 1);
  LLVMAddIncoming(phi, &zero, &before, 1);
  return phi;
}

/* One group of v's consecutive elements (a single one: v NULL) of an atomic
 * whose old values nobody reads, by the target's reduction; 0 if it has none
 * for them. */
static int reduce_group(Lower *L, const TirOp *op, Regs ptr, Regs value, const Vector *v, uint32_t r,
                        LLVMValueRef predicate) {
  const Type *t = lower_type(L, op->results.data[0]);
  AtomicAccess a = {op->kind, t->elem, ptr.v[r], NULL, NULL, (int)op->ival, (int)op->ival2};
  LLVMValueRef bits[16];
  int n = v ? 1 << v->n_bits : 1;
  for (int j = 0; j < n; j++) bits[j] = to_bits(L, value.v[v ? lower_vector_register(v, r, j) : r], t->elem);
  return L->target->reduce(L, &a, bits, n, predicate);
}

/* An atomic whose old values nobody reads, as reductions: vectors where the
 * pointers are contiguous and aligned and the mask constant over them (as a
 * store's), else element by element; 0 where the target has no reduction
 * for the op (the caller then does atomics).  The target answers for the
 * op and the vector's size, never for one element, so a refusal comes at
 * the first group, before anything is emitted. */
static int lower_reduction(Lower *L, const TirOp *op, const LinearLayout *ll, Regs ptr, Regs value, Regs mask,
                           LLVMValueRef owner) {
  const Type *t = lower_type(L, op->results.data[0]);
  int masked = (op->flags & LOAD_MASK) != 0;
  if (!L->target->reduce || !L->target->atomic_native(L, op->kind, t->elem)) return 0;
  Vector v = lower_choose_vector(L, op->operands.data[0], masked ? op->operands.data[2] : -1, ll, dtype_bits(t->elem) / 8);
  for (uint32_t r = 0; r < (uint32_t)ptr.n; r++) {
    LLVMValueRef predicate = and_predicates(L, masked ? mask.v[r] : NULL, owner);
    if (v.n_bits && !lower_is_group_base(&v, r)) continue;
    if (v.n_bits && reduce_group(L, op, ptr, value, &v, r, predicate)) continue;
    for (int j = 0; j < (v.n_bits ? 1 << v.n_bits : 1); j++) {
      uint32_t e = v.n_bits ? lower_vector_register(&v, r, j) : r;
      if (!reduce_group(L, op, ptr, value, NULL, e, and_predicates(L, masked ? mask.v[e] : NULL, owner)))
        return 0;
    }
  }
  return 1;
}

void lower_atomic(Lower *L, const TirOp *op) {
  int res = op->results.data[0], cas = op->code == TIR_ATOMIC_CAS, masked = !cas && (op->flags & LOAD_MASK);
  const Type *rt = lower_type(L, res);
  LinearLayout ll;
  lower_linear(L, res, &ll);
  const LinearLayout *want = rt->rank ? &ll : NULL;
  Regs ptr = lower_operand(L, op, 0, want), value = lower_operand(L, op, cas ? 2 : 1, want);
  Regs compare = cas ? lower_operand(L, op, 1, want) : (Regs){0, NULL, 0};
  Regs mask = masked ? lower_operand(L, op, 2, want) : (Regs){0, NULL, 0};
  Side s;
  lower_side(&ll, NULL, &s);
  LLVMValueRef owner = lower_owner(L, s.thread, 0);
  Regs old = lower_regs(L, ptr.n);
  if (!cas && !L->uses[res] && rt->rank && lower_reduction(L, op, &ll, ptr, value, mask, owner)) {
    for (int r = 0; r < ptr.n; r++) old.v[r] = LLVMGetUndef(lower_dtype(L, rt->elem)); /* never read */
    lower_result(L, op, 0, old);
    return;
  }
  for (int r = 0; r < ptr.n; r++) {
    AtomicAccess a = {cas ? ATOMIC_CAS : op->kind, rt->elem, ptr.v[r], NULL, NULL, (int)op->ival, (int)op->ival2};
    if (cas) a.compare = to_bits(L, compare.v[r], rt->elem);
    LLVMValueRef bits = one_atomic(L, &a, value.v[r], and_predicates(L, masked ? mask.v[r] : NULL, owner));
    old.v[r] = dtype_is_float(rt->elem) ? LLVMBuildBitCast(L->b, bits, lower_dtype(L, rt->elem), "") : bits;
  }
  if (owner && L->uses[res]) old = from_owners(L, res, &s, old); /* the copies learn the owner's old value */
  lower_result(L, op, 0, old);
}
