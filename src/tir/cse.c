/* Common subexpression elimination.
 *
 * Requires: a verified function.
 * Guarantees: no pure region-less op computes what a visible earlier op
 *   computes (same code, sub-kind, axis, flags, constants, ints, string,
 *   operands and result types).  Visible means earlier in the same block or
 *   earlier in an enclosing block, so the earlier op dominates; an op in a
 *   region is never reused outside it.  The later op's uses take the
 *   earlier op's results and the later op is removed.  reduce_combine and
 *   scan_combine are never merged (their combine regions are not compared).
 * Invalidates: nothing cached.
 *
 * A scoped hash table: entering a region remembers how many entries are
 * visible, leaving it pops back to that, so each lookup is O(1). */
#include "passes.h"

#include <string.h>

typedef struct Entry {
  TirOp *op;
  int next;          /* the entry this one hides in its bucket, -1 for none */
} Entry;

typedef struct Cse {
  TirFunc *f;
  int *subst;        /* per value: the value its uses now take */
  int *heads;        /* per bucket: the newest visible entry, -1 for none */
  uint64_t mask;     /* buckets - 1 */
  Vec(Entry) entries;/* the visible ops, innermost scope last */
} Cse;

static int candidate(const TirOp *op) {
  return (tir_op_flags(op->code) & PURE) && !op->regions[0] && !op->regions[1] && !op->combine && op->results.len > 0;
}

static uint64_t double_bits(double d) {
  uint64_t b;
  memcpy(&b, &d, sizeof b);
  return b;
}

/* A constant's value lives in ival or fval according to its type; the
 * other field is a by-product and must not tell equal constants apart. */
static int constant_is_float(const TirFunc *f, const TirOp *op) {
  return op->code == TIR_CONSTANT && dtype_is_float(tir_type(f, op->results.data[0])->elem);
}

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdu;
}

static uint64_t hash_op(const TirFunc *f, const TirOp *op) {
  uint64_t h = mix((uint64_t)op->code, (uint64_t)op->kind);
  h = mix(h, (uint64_t)op->axis * 31u + (uint64_t)op->flags);
  if (constant_is_float(f, op)) h = mix(h, double_bits(op->fval));
  else h = mix(mix(h, (uint64_t)op->ival), (uint64_t)op->ival2);
  for (int i = 0; i < op->n_ints; i++) h = mix(h, (uint64_t)op->ints[i]);
  for (int i = 0; i < op->operands.len; i++) h = mix(h, (uint64_t)op->operands.data[i]);
  for (int i = 0; i < op->results.len; i++) {
    const Type *t = tir_type(f, op->results.data[i]);
    h = mix(h, (uint64_t)t->elem * 2u + (uint64_t)t->is_ptr);
    for (int d = 0; d < t->rank; d++) h = mix(h, (uint64_t)t->shape[d]);
  }
  return h;
}

static int same_values(const TirFunc *f, const TirOp *a, const TirOp *b) {
  if (constant_is_float(f, a)) return double_bits(a->fval) == double_bits(b->fval);
  if (a->ival != b->ival || a->ival2 != b->ival2) return 0;
  return a->code == TIR_CONSTANT || double_bits(a->fval) == double_bits(b->fval);
}

static int same_op(const TirFunc *f, const TirOp *a, const TirOp *b) {
  if (a->code != b->code || a->kind != b->kind || a->axis != b->axis || a->flags != b->flags ||
      a->n_ints != b->n_ints || a->operands.len != b->operands.len || a->results.len != b->results.len)
    return 0;
  if (!same_values(f, a, b)) return 0;
  if ((a->str == NULL) != (b->str == NULL) || (a->str && strcmp(a->str, b->str))) return 0;
  for (int i = 0; i < a->n_ints; i++)
    if (a->ints[i] != b->ints[i]) return 0;
  for (int i = 0; i < a->operands.len; i++)
    if (a->operands.data[i] != b->operands.data[i]) return 0;
  for (int i = 0; i < a->results.len; i++)
    if (!type_equal(tir_type(f, a->results.data[i]), tir_type(f, b->results.data[i]))) return 0;
  return 1;
}

/* The visible op equal to op, or NULL after making op visible. */
static TirOp *find_or_add(Cse *C, TirOp *op) {
  uint64_t bucket = hash_op(C->f, op) & C->mask;
  for (int e = C->heads[bucket]; e >= 0; e = C->entries.data[e].next)
    if (same_op(C->f, C->entries.data[e].op, op)) return C->entries.data[e].op;
  Entry entry = {op, C->heads[bucket]};
  vec_push(C->f->arena, &C->entries, entry);
  C->heads[bucket] = C->entries.len - 1;
  return NULL;
}

/* Hides the entries added after `mark` (a region is left). */
static void pop_scope(Cse *C, int mark) {
  while (C->entries.len > mark) {
    Entry *e = &C->entries.data[--C->entries.len];
    C->heads[hash_op(C->f, e->op) & C->mask] = e->next;
  }
}

static void cse_block(Cse *C, TirBlock *b) {
  int mark = C->entries.len, kept = 0;
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->operands.len; k++) op->operands.data[k] = C->subst[op->operands.data[k]];
    TirOp *same = candidate(op) ? find_or_add(C, op) : NULL;
    if (same) { /* every use comes later in this walk, so a map suffices */
      for (int k = 0; k < op->results.len; k++) C->subst[op->results.data[k]] = same->results.data[k];
      continue;
    }
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) cse_block(C, op->regions[r]);
    b->ops.data[kept++] = op;
  }
  b->ops.len = kept;
  pop_scope(C, mark);
}

static int count_ops(const TirBlock *b) {
  int n = b->ops.len;
  for (int i = 0; i < b->ops.len; i++)
    for (int r = 0; r < 2; r++)
      if (b->ops.data[i]->regions[r]) n += count_ops(b->ops.data[i]->regions[r]);
  return n;
}

void tir_cse(TirFunc *f) {
  Cse C = {f, NULL, NULL, 0, {0}};
  size_t buckets = 16;
  while (buckets < 2 * (size_t)count_ops(f->body)) buckets *= 2;
  C.mask = buckets - 1;
  C.heads = arena_alloc(f->arena, sizeof *C.heads * buckets);
  for (size_t i = 0; i < buckets; i++) C.heads[i] = -1;
  C.subst = arena_alloc(f->arena, sizeof *C.subst * ((size_t)f->types.len + 1));
  for (int v = 0; v < f->types.len; v++) C.subst[v] = v;
  cse_block(&C, f->body);
}
