/* Tensor descriptors (tl.make_tensor_descriptor, a tensordesc parameter)
 * and block pointers (tl.make_block_ptr, tl.advance), as Triton 3.6 has
 * them.  Both are checker values, not run-time types: a DESC node holding
 * the base pointer, shape, strides and (block pointers) offsets as scalars,
 * and the block shape as constants.  A load or store through one becomes
 * what a kernel would write by hand, so tile IR, the interpreter and every
 * target need nothing new:
 *
 *     ptr  = base + (off_0 + arange(B_0))[:, None] * stride_0 + (off_1 + arange(B_1))[None, :]
 *     mask = 0 <= off_d + arange(B_d) < shape_d   for each checked dimension d
 *
 * (a stride known to be 1 adds the index without a multiply: the form
 * tgir/tma.c and AxisInfo recognise as contiguous).  docs/language.md,
 * "Tensor descriptors and block pointers". */
#include "sema_impl.h"

#include <string.h>

enum { MAX_DESC_RANK = 5 };  /* Triton's limit, and the tensor memory accelerator's */

static const char *desc_kind_name(const Node *d) {
  return d->ival == DESC_BLOCK_PTR ? "block pointer" : "tensor descriptor";
}

int desc_rank(const Node *d) { return d->args.len; }

static int64_t block_dim(const Node *d, int i) { return d->cval->items.data[i]->i; }

const char *desc_str(Sema *S, const Node *d) {
  Buf b;
  buf_init(&b, S->arena);
  buf_printf(&b, "a %s of %s[", desc_kind_name(d), dtype_name(d->a->type->elem));
  for (int i = 0; i < desc_rank(d); i++) buf_printf(&b, "%s%lld", i ? ", " : "", (long long)block_dim(d, i));
  buf_puts(&b, "]");
  return buf_cstr(&b);
}

/* The items of a shape, strides or offsets argument: a tuple or list, a
 * constexpr tuple, or one value (Triton takes a scalar for one dimension). */
static int items_of(Sema *S, Node *n, Node **out) {
  if (is_const_kind(n, V_LIST)) n = const_to_node(S, n->loc, n->cval);
  if (n->kind != ND_TUPLE) {
    out[0] = n;
    return 1;
  }
  int k = n->args.len < MAX_DESC_RANK + 1 ? n->args.len : MAX_DESC_RANK + 1;
  memcpy(out, n->args.data, sizeof(Node *) * (size_t)k);
  return n->args.len;
}

static int fail_at(Sema *S, Node *at, const char *fn, const char *msg) {
  diag_error(S->diags, at->loc, "%s: %s", fn, msg);
  return 0;
}

/* An integer scalar in dtype `to`, evaluated once.  `narrow_ok`: an i64
 * value may become i32 (shapes of a tensor descriptor, as Triton's
 * make_scalar); otherwise a 64-bit offset is an error, as in Triton. */
static Node *index_scalar(Sema *S, Node *v, DType to, int narrow_ok, const char *fn, const char *what) {
  v = runtime(S, v);
  if (!v->type || v->type->rank || v->type->is_ptr || !dtype_is_int(v->type->elem) || v->type->elem == DT_I1) {
    fail_at(S, v, fn, arena_printf(S->arena, "%s must be integer scalars, not %s", what, describe(S, v)));
    return NULL;
  }
  if (to == DT_I32 && dtype_bits(v->type->elem) == 64 && !is_const(v) && !narrow_ok) {
    fail_at(S, v, fn, arena_printf(S->arena, "%s are 32-bit; this is %s (convert it with .to(tl.int32))", what,
                                   type_str(S->arena, v->type)));
    return NULL;
  }
  return materialize(S, cast(S, v, to, 0), v->loc);
}

/* `n` items of `arg` as scalars of dtype `to` into out[]; the count must be `rank`. */
static int index_list(Sema *S, Node *arg, int rank, DType to, int narrow_ok, const char *fn, const char *what,
                      Node **out) {
  Node *items[MAX_DESC_RANK + 1];
  int n = items_of(S, arg, items);
  if (n != rank)
    return fail_at(S, arg, fn, arena_printf(S->arena, "%d %s for a %d-dimensional block (one per dimension)", n, what,
                                            rank));
  for (int i = 0; i < n; i++)
    if (!(out[i] = index_scalar(S, items[i], to, narrow_ok, fn, what))) return 0;
  return 1;
}

/* The block shape: constexpr powers of two, 1 to 5 of them. */
static Value *block_shape_arg(Sema *S, Node *arg, const char *fn, int *rank) {
  Value *v = const_of(S, arg, "the block shape");
  int64_t shape[MAX_RANK];
  if (!v || !check_shape_value(S, arg->loc, v, rank, shape)) return NULL;
  if (*rank > MAX_DESC_RANK) {
    fail_at(S, arg, fn, arena_printf(S->arena, "blocks have 1 to %d dimensions, this one %d", MAX_DESC_RANK, *rank));
    return NULL;
  }
  if (v->kind == V_LIST) return v;
  Value *list = value_new(S, V_LIST);
  vec_push(S->arena, &list->items, v);
  return list;
}

static Node *base_arg(Sema *S, Node *base, const char *fn) {
  if (!base->type || !base->type->is_ptr || base->type->rank) {
    fail_at(S, base, fn, arena_printf(S->arena, "the base must be a scalar pointer, not %s", describe(S, base)));
    return NULL;
  }
  return materialize(S, base, base->loc);
}

static Node *new_desc(Sema *S, Loc loc, int kind, Node *base, Value *block) {
  Node *d = node_new(S->arena, ND_DESC, loc);
  d->ival = kind;
  d->a = base;
  d->cval = block;
  d->str = "zero";
  return d;
}

static int padding_arg(Sema *S, Node *arg, const char *fn, DType elem, int allow_empty, const char **out) {
  Value *v = const_of(S, arg, "padding_option");
  if (!v) return 0;
  const char *s = v->kind == V_STR ? v->s : v->kind == V_NONE ? "" : NULL;
  if (!s || (strcmp(s, "zero") && strcmp(s, "nan") && (!allow_empty || *s)))
    return fail_at(S, arg, fn, arena_printf(S->arena, "unsupported padding_option %s (expected 'zero' or 'nan')",
                                            value_str(S->arena, v)));
  if (!strcmp(s, "nan") && !dtype_is_float(elem))
    return fail_at(S, arg, fn, "padding_option 'nan' is for floating-point tensors");
  *out = *s ? s : "zero";
  return 1;
}

/* tl.make_tensor_descriptor(base, shape, strides, block_shape, padding_option) */
Node *desc_make_tensor(Sema *S, Node *call, Node **arg) {
  const char *fn = "make_tensor_descriptor";
  int rank;
  Node *base = base_arg(S, arg[0], fn);
  Value *block = base ? block_shape_arg(S, arg[3], fn, &rank) : NULL;
  if (!block) return poison(S, call->loc);
  Node *d = new_desc(S, call->loc, DESC_TENSOR, base, block);
  Node *shape[MAX_DESC_RANK], *strides[MAX_DESC_RANK];
  if (!index_list(S, arg[1], rank, DT_I32, 1, fn, "shape", shape) ||
      !index_list(S, arg[2], rank, DT_I64, 0, fn, "strides", strides) ||
      !padding_arg(S, arg[4], fn, base->type->elem, 0, &d->str))
    return poison(S, call->loc);
  Node *last = strides[rank - 1];
  if (!is_const(last) || last->cval->i != 1) {
    fail_at(S, last, fn, "the last stride must be the constexpr 1 (the innermost dimension is contiguous)");
    return poison(S, call->loc);
  }
  int64_t bytes = block_dim(d, rank - 1) * dtype_bits(base->type->elem) / 8;
  if (bytes < 16) {
    fail_at(S, arg[3], fn, arena_printf(S->arena, "the block's last dimension has %lld bytes; descriptors need at "
                                        "least 16", (long long)bytes));
    return poison(S, call->loc);
  }
  for (int i = 0; i < rank; i++) {
    vec_push(S->arena, &d->args, shape[i]);
    vec_push(S->arena, &d->kwargs, strides[i]);
  }
  return d;
}

/* tl.make_block_ptr(base, shape, strides, offsets, block_shape, order) */
Node *desc_make_block_ptr(Sema *S, Node *call, Node **arg) {
  const char *fn = "make_block_ptr";
  int rank;
  Node *base = base_arg(S, arg[0], fn);
  Value *block = base ? block_shape_arg(S, arg[4], fn, &rank) : NULL;
  Value *order = block ? const_of(S, arg[5], "order") : NULL;
  if (!order) return poison(S, call->loc);
  Node *d = new_desc(S, call->loc, DESC_BLOCK_PTR, base, block);
  int seen[MAX_DESC_RANK] = {0}, n = order->kind == V_LIST ? order->items.len : 1;
  for (int i = 0; i < n && n == rank; i++) {
    Value *o = order->kind == V_LIST ? order->items.data[i] : order;
    n = o->kind == V_INT && o->i >= 0 && o->i < rank && !seen[o->i]++ ? n : -1;
  }
  if (n != rank) {
    fail_at(S, arg[5], fn, arena_printf(S->arena, "order must be a permutation of 0..%d, not %s", rank - 1,
                                        value_str(S->arena, order)));
    return poison(S, call->loc);
  }
  Node *shape[MAX_DESC_RANK], *strides[MAX_DESC_RANK], *offsets[MAX_DESC_RANK];
  if (!index_list(S, arg[1], rank, DT_I64, 0, fn, "shape", shape) ||
      !index_list(S, arg[2], rank, DT_I64, 0, fn, "strides", strides) ||
      !index_list(S, arg[3], rank, DT_I32, 0, fn, "offsets", offsets))
    return poison(S, call->loc);
  for (int i = 0; i < rank; i++) {
    vec_push(S->arena, &d->args, shape[i]);
    vec_push(S->arena, &d->kwargs, strides[i]);
    vec_push(S->arena, &d->body, offsets[i]);
  }
  return d;
}

/* A descriptor parameter from its parts (typed names, the last stride the constant 1). */
Node *desc_param(Sema *S, Loc loc, const DescParam *p, Node **parts) {
  Value *block = value_new(S, V_LIST);
  for (int i = 0; i < p->rank; i++) vec_push(S->arena, &block->items, value_int(S, p->block[i]));
  Node *d = new_desc(S, loc, DESC_TENSOR, parts[0], block);
  Node *call = node_new(S->arena, ND_CALL, loc);
  for (int i = 0; i < p->rank; i++) {
    Node *stride = parts[1 + p->rank + i];
    if (i < p->rank - 1) { /* 16-byte rows, as Triton's TensorDescriptor asserts: vector loads */
      Node *hint[2] = {stride, mk_const(S, loc, value_int(S, 128 / dtype_bits(p->dtype)))};
      stride = check_builtin_call(S, call, B_MULTIPLE_OF, NULL, hint, 2, NULL, 0);
    }
    vec_push(S->arena, &d->args, parts[1 + i]);
    vec_push(S->arena, &d->kwargs, stride);
  }
  return d;
}

/* The descriptor argument of a builtin, or NULL after an error. */
static Node *desc_arg(Sema *S, Node *n, int kind, const char *fn) {
  if (n->kind == ND_DESC && n->ival == kind) return n;
  const char *want = kind == DESC_TENSOR ? "a tensor descriptor" : "a block pointer (tl.make_block_ptr)";
  fail_at(S, n, fn, arena_printf(S->arena, "expected %s, not %s", want,
                                 n->kind == ND_DESC ? desc_str(S, n) : describe(S, n)));
  return NULL;
}

Node *desc_with_offsets(Sema *S, Node *d, Node **offsets) {
  Node *r = node_new(S->arena, ND_DESC, d->loc);
  *r = *d;
  r->body = (NodeVec){0};
  for (int i = 0; i < desc_rank(d); i++) vec_push(S->arena, &r->body, offsets[i]);
  return r;
}

/* tl.advance(ptr, offsets): the same block pointer, offsets added. */
Node *desc_advance(Sema *S, Node *call, Node **arg) {
  Node *d = desc_arg(S, arg[0], DESC_BLOCK_PTR, "advance");
  Node *by[MAX_DESC_RANK], *offsets[MAX_DESC_RANK];
  if (!d || !index_list(S, arg[1], desc_rank(d), DT_I32, 0, "advance", "offsets", by)) return poison(S, call->loc);
  for (int i = 0; i < desc_rank(d); i++) {
    int zero = is_const(by[i]) && by[i]->cval->kind == V_INT && by[i]->cval->i == 0;
    offsets[i] = zero ? d->body.data[i] : materialize(S, binary(S, by[i]->loc, TK_PLUS, d->body.data[i], by[i]), call->loc);
    if (is_poison(offsets[i])) return offsets[i];
  }
  return desc_with_offsets(S, d, offsets);
}

/* Whether two descriptors are the same but for their offsets: what a
 * loop or an if may change in a block pointer. */
int desc_same_but_offsets(const Node *x, const Node *y) {
  if (x->kind != ND_DESC || y->kind != ND_DESC || x->ival != y->ival || x->a != y->a ||
      !value_equal(x->cval, y->cval) || strcmp(x->str, y->str))
    return 0;
  for (int i = 0; i < desc_rank(x); i++)
    if (x->args.data[i] != y->args.data[i] || x->kwargs.data[i] != y->kwargs.data[i]) return 0;
  return 1;
}

/* ---- addresses and masks --------------------------------------------------------------- */

static Node *call_builtin(Sema *S, Node *call, int id, Node **args, int n, Node **kw, int n_kw) {
  return check_builtin_call(S, call, id, NULL, args, n, kw, n_kw);
}

static Node *keyword(Sema *S, Loc loc, const char *name, Node *value) {
  Node *k = node_new(S->arena, ND_KEYWORD, loc);
  k->name = name;
  k->a = value;
  return k;
}

/* off + arange(0, B) along dimension `dim` of a rank-`rank` block (1 elsewhere). */
static Node *block_index(Sema *S, Node *call, Node *off, int64_t n, int dim, int rank) {
  Node *range_args[2] = {mk_const(S, call->loc, value_int(S, 0)), mk_const(S, call->loc, value_int(S, n))};
  Node *idx = binary(S, call->loc, TK_PLUS, off, call_builtin(S, call, B_ARANGE, range_args, 2, NULL, 0));
  if (rank == 1 || is_poison(idx)) return idx;
  Value *axes = value_new(S, V_LIST);
  for (int i = 0; i < rank; i++)
    if (i != dim) vec_push(S->arena, &axes->items, value_int(S, i));
  Node *expand_args[2] = {idx, const_to_node(S, call->loc, axes)};
  return call_builtin(S, call, B_EXPAND_DIMS, expand_args, 2, NULL, 0);
}

static Node *in_bounds(Sema *S, Loc loc, Node *idx, Node *extent) {
  Node *zero = mk_const(S, loc, value_int(S, 0));
  return binary(S, loc, TK_AMP, binary(S, loc, TK_GE, idx, zero), binary(S, loc, TK_LT, idx, extent));
}

/* ptr and mask with dimension i's index tile idx added: its stride times it, and its bounds when
 * `check` (mask NULL while no dimension is checked). */
static void add_dimension(Sema *S, Node *call, Node *d, int i, Node *idx, int check, Node **ptr, Node **mask) {
  Node *stride = d->kwargs.data[i];
  int unit = is_const(stride) && stride->cval->i == 1;
  *ptr = binary(S, call->loc, TK_PLUS, *ptr, unit ? idx : binary(S, call->loc, TK_STAR, idx, stride));
  if (check) {
    Node *m = in_bounds(S, call->loc, idx, d->args.data[i]);
    *mask = *mask ? binary(S, call->loc, TK_AMP, *mask, m) : m;
  }
}

/* The tiles of addresses and mask done: a mask that drops no dimension still has the block's shape. */
static int address_done(Sema *S, Node *ptr, Node **mask) {
  if (*mask && !is_poison(*mask) && !is_poison(ptr) && !type_same_shape((*mask)->type, ptr->type))
    *mask = broadcast(S, *mask, ptr->type->rank, ptr->type->shape);
  return !is_poison(ptr) && (!*mask || !is_poison(*mask));
}

/* The pointer tile of the block at `offsets` and the mask of its elements
 * inside the shape along the dimensions `checked` (bits), NULL when none. */
static int block_address(Sema *S, Node *call, Node *d, Node **offsets, unsigned checked, Node **ptr, Node **mask) {
  int rank = desc_rank(d);
  *ptr = d->a;
  *mask = NULL;
  for (int i = 0; i < rank; i++) {
    Node *idx = block_index(S, call, offsets[i], block_dim(d, i), i, rank);
    if (is_poison(idx)) return 0;
    add_dimension(S, call, d, i, idx, checked >> i & 1, ptr, mask);
  }
  return address_done(S, *ptr, mask);
}

static Node *padding_value(Sema *S, Loc loc, const char *padding) {
  Value *v = strcmp(padding, "nan") ? value_int(S, 0) : value_float(S, __builtin_nan(""));
  return mk_const(S, loc, v);
}

static unsigned all_dims(int rank) { return (1u << rank) - 1; }

/* The pointer tile and mask of desc.load's or desc.store's block (arg[0] the descriptor, arg[1] the
 * offsets); NULL after an error. */
static Node *desc_block(Sema *S, Node *call, Node **arg, const char *fn, Node **ptr, Node **mask) {
  Node *d = desc_arg(S, arg[0], DESC_TENSOR, fn);
  Node *offsets[MAX_DESC_RANK];
  if (!d || !index_list(S, arg[1], desc_rank(d), DT_I32, 0, fn, "offsets", offsets) ||
      !block_address(S, call, d, offsets, all_dims(desc_rank(d)), ptr, mask))
    return NULL;
  return d;
}

/* tl.load of descriptor d's addresses: elements outside its shape (masked off) read its padding. */
static Node *load_masked(Sema *S, Node *call, Node *d, Node *ptr, Node *mask) {
  Node *kw[2] = {keyword(S, call->loc, "mask", mask), keyword(S, call->loc, "other", padding_value(S, call->loc, d->str))};
  return call_builtin(S, call, B_LOAD, &ptr, 1, kw, 2);
}

/* tl.store of value to a descriptor's addresses: elements outside its shape are not written. */
static Node *store_masked(Sema *S, Node *call, Node *ptr, Node *mask, Node *value) {
  Node *args[2] = {ptr, value};
  Node *kw[1] = {keyword(S, call->loc, "mask", mask)};
  return call_builtin(S, call, B_STORE, args, 2, kw, 1);
}

/* desc.load(offsets) */
Node *desc_load(Sema *S, Node *call, Node **arg) {
  Node *ptr, *mask, *d = desc_block(S, call, arg, "load_tensor_descriptor", &ptr, &mask);
  return d ? load_masked(S, call, d, ptr, mask) : poison(S, call->loc);
}

/* desc.store(offsets, value) */
Node *desc_store(Sema *S, Node *call, Node **arg) {
  Node *ptr, *mask;
  if (!desc_block(S, call, arg, "store_tensor_descriptor", &ptr, &mask)) return poison(S, call->loc);
  return store_masked(S, call, ptr, mask, arg[2]);
}

/* The element types Triton's descriptor atomics take (its semantic.py's asserts). */
static int desc_atomic_dtype_ok(int id, DType t) {
  int int32_or_64 = t == DT_I32 || t == DT_U32 || t == DT_I64 || t == DT_U64;
  if (id == B_DESC_ATOMIC_ADD) return t == DT_I32 || t == DT_U32 || t == DT_U64 || t == DT_FP32 || t == DT_FP16 ||
                                       t == DT_BF16;
  if (id == B_DESC_ATOMIC_MIN || id == B_DESC_ATOMIC_MAX) return int32_or_64 || t == DT_FP16 || t == DT_BF16;
  return int32_or_64;
}

/* desc.atomic_add(offsets, value) and the other reductions: tl.atomic_<op> on the block's pointer tile
 * and mask, relaxed (a TMA reduction orders nothing either); its old values are the result, where
 * Triton's has none. */
Node *desc_atomic(Sema *S, Node *call, int id, Node **arg) {
  const char *fn = arena_printf(S->arena, "desc.%s", builtin_name(id));
  Node *ptr, *mask, *d = desc_block(S, call, arg, fn, &ptr, &mask);
  if (!d) return poison(S, call->loc);
  DType t = d->a->type->elem;
  if (!desc_atomic_dtype_ok(id, t)) {
    fail_at(S, call, fn, arena_printf(S->arena, "%s: Triton's descriptor atomics take no %s elements", desc_str(S, d),
                                        dtype_name(t)));
    return poison(S, call->loc);
  }
  static const int rmw[] = {B_ATOMIC_ADD, B_ATOMIC_MIN, B_ATOMIC_MAX, B_ATOMIC_AND, B_ATOMIC_OR, B_ATOMIC_XOR};
  Node *args[2] = {ptr, arg[2]};
  Node *kw[2] = {keyword(S, call->loc, "mask", mask), keyword(S, call->loc, "sem", mk_const(S, call->loc,
                                                                                             value_string(S, "relaxed")))};
  return call_builtin(S, call, rmw[id - B_DESC_ATOMIC_ADD], args, 2, kw, 2);
}

/* The addresses and mask of desc.gather's or desc.scatter's rows: x_offsets (arg[1]) a 1-D integer
 * tile, each a row of the block [1, C] at column y_offset (arg[2]); NULL after an error. */
static Node *row_block(Sema *S, Node *call, Node **arg, const char *fn, Node **ptr, Node **mask) {
  Node *d = desc_arg(S, arg[0], DESC_TENSOR, fn), *rows = arg[1];
  if (!d) return NULL;
  if (desc_rank(d) != 2 || block_dim(d, 0) != 1) {
    fail_at(S, call, fn, arena_printf(S->arena, "needs a 2-dimensional descriptor of one-row blocks, not %s",
                                        desc_str(S, d)));
    return NULL;
  }
  if (!rows->type || rows->type->is_ptr || rows->type->rank != 1 || !dtype_is_int(rows->type->elem) ||
      rows->type->elem == DT_I1) {
    fail_at(S, rows, fn, arena_printf(S->arena, "x_offsets must be a 1-D integer tile, not %s", describe(S, rows)));
    return NULL;
  }
  Node *y = index_scalar(S, arg[2], DT_I32, 0, fn, "offsets");
  if (!y) return NULL;
  Node *expand_args[2] = {cast(S, rows, DT_I32, 0), mk_const(S, call->loc, value_int(S, 1))};
  Node *row_idx = call_builtin(S, call, B_EXPAND_DIMS, expand_args, 2, NULL, 0);
  Node *col_idx = block_index(S, call, y, block_dim(d, 1), 1, 2);
  if (is_poison(row_idx) || is_poison(col_idx)) return NULL;
  *ptr = d->a;
  *mask = NULL;
  add_dimension(S, call, d, 0, row_idx, 1, ptr, mask);
  add_dimension(S, call, d, 1, col_idx, 1, ptr, mask);
  return address_done(S, *ptr, mask) ? d : NULL;
}

/* desc.gather(x_offsets, y_offset) */
Node *desc_gather(Sema *S, Node *call, Node **arg) {
  Node *ptr, *mask, *d = row_block(S, call, arg, "desc.gather", &ptr, &mask);
  return d ? load_masked(S, call, d, ptr, mask) : poison(S, call->loc);
}

/* desc.scatter(value, x_offsets, y_offset): arg[1] the value, the row_block arguments after it */
Node *desc_scatter(Sema *S, Node *call, Node **arg) {
  Node *ptr, *mask, *rows_arg[3] = {arg[0], arg[2], arg[3]};
  if (!row_block(S, call, rows_arg, "desc.scatter", &ptr, &mask)) return poison(S, call->loc);
  return store_masked(S, call, ptr, mask, arg[1]);
}

/* boundary_check=(0, 1): the dimensions whose bounds a block pointer's load or store checks. */
static int boundary_dims(Sema *S, Node *arg, int rank, const char *fn, unsigned *out) {
  Value *v = const_of(S, arg, "boundary_check");
  if (!v) return 0;
  *out = 0;
  int n = v->kind == V_LIST ? v->items.len : v->kind == V_NONE ? 0 : 1;
  for (int i = 0; i < n; i++) {
    Value *dim = v->kind == V_LIST ? v->items.data[i] : v;
    if (dim->kind != V_INT || dim->i < 0 || dim->i >= rank)
      return fail_at(S, arg, fn, arena_printf(S->arena, "boundary_check names dimension %s of a %d-dimensional block",
                                              value_str(S->arena, dim), rank));
    *out |= 1u << dim->i;
  }
  return 1;
}

/* tl.load(ptr, boundary_check=, padding_option=) on a block pointer: the
 * pointer tile, mask and `other` a plain load takes (arg: the load's bound
 * arguments, rewritten in place). */
int desc_block_load(Sema *S, Node *call, Node **arg) {
  Node *d = arg[0];
  unsigned dims;
  const char *padding;
  if (d->ival != DESC_BLOCK_PTR)
    return fail_at(S, d, "load", arena_printf(S->arena, "this is %s; load from it with desc.load(offsets)",
                                              desc_str(S, d)));
  if (!is_const_kind(arg[1], V_NONE) || !is_const_kind(arg[2], V_NONE))
    return fail_at(S, is_const_kind(arg[1], V_NONE) ? arg[2] : arg[1], "load",
                   "a block pointer's load takes boundary_check= and padding_option=, not mask= and other=");
  if (!boundary_dims(S, arg[3], desc_rank(d), "load", &dims) ||
      !padding_arg(S, arg[4], "load", d->a->type->elem, 1, &padding))
    return 0;
  Node *ptr, *mask;
  if (!block_address(S, call, d, d->body.data, dims, &ptr, &mask)) return 0;
  arg[0] = ptr;
  if (mask) {
    arg[1] = mask;
    arg[2] = padding_value(S, call->loc, padding);
  }
  return 1;
}

/* tl.store(ptr, value, boundary_check=) on a block pointer (arg as above). */
int desc_block_store(Sema *S, Node *call, Node **arg) {
  Node *d = arg[0];
  unsigned dims;
  if (d->ival != DESC_BLOCK_PTR)
    return fail_at(S, d, "store", arena_printf(S->arena, "this is %s; store through it with desc.store(offsets, value)",
                                               desc_str(S, d)));
  if (!is_const_kind(arg[2], V_NONE))
    return fail_at(S, arg[2], "store", "a block pointer's store takes boundary_check=, not mask=");
  if (!boundary_dims(S, arg[3], desc_rank(d), "store", &dims)) return 0;
  Node *ptr, *mask;
  if (!block_address(S, call, d, d->body.data, dims, &ptr, &mask)) return 0;
  arg[0] = ptr;
  if (mask) arg[2] = mask;
  return 1;
}

/* ---- attributes ---------------------------------------------------------------------- */

static Node *tuple_of(Sema *S, Loc loc, NodeVec *items) {
  Node *t = node_new(S->arena, ND_TUPLE, loc);
  for (int i = 0; i < items->len; i++) vec_push(S->arena, &t->args, items->data[i]);
  return t;
}

static Node *bound_method(Sema *S, Loc loc, int id, Node *self) {
  Value *v = value_new(S, V_BUILTIN);
  v->i = id;
  v->self = self;
  return mk_const(S, loc, v);
}

/* desc.load, desc.store, the DESC builtins (desc.atomic_add, ...), desc.shape, desc.strides, desc.block_shape,
 * desc.dtype, desc.block_type; ptr.advance for a block pointer. */
Node *desc_attribute(Sema *S, Node *d, Node *n) {
  int rank = desc_rank(d), tensor = d->ival == DESC_TENSOR;
  const char *a = n->name;
  if (tensor && !strcmp(a, "load")) return bound_method(S, n->loc, B_LOAD_TENSOR_DESCRIPTOR, d);
  if (tensor && !strcmp(a, "store")) return bound_method(S, n->loc, B_STORE_TENSOR_DESCRIPTOR, d);
  int method = tensor ? builtin_lookup(a, DESC) : -1;
  if (method >= 0) return bound_method(S, n->loc, method, d);
  if (!tensor && !strcmp(a, "advance")) return bound_method(S, n->loc, B_ADVANCE, d);
  if (!strcmp(a, "shape") && tensor) return tuple_of(S, n->loc, &d->args);
  if (!strcmp(a, "strides") && tensor) return tuple_of(S, n->loc, &d->kwargs);
  if (!strcmp(a, "block_shape")) return const_to_node(S, n->loc, d->cval);
  /* a tensor descriptor's dtype is its elements'; a block pointer's, as in Triton, a pointer type
   * (p.dtype.element_ty is what a store through it converts to) */
  if (!strcmp(a, "dtype")) return mk_const(S, n->loc, value_dtype(S, d->a->type->elem, !tensor));
  if (!strcmp(a, "block_type") || !strcmp(a, "type")) {
    int64_t shape[MAX_DESC_RANK];
    for (int i = 0; i < rank; i++) shape[i] = block_dim(d, i);
    return mk_const(S, n->loc, value_type_of(S, type_tile(S->arena, type_scalar(S->arena, d->a->type->elem), rank, shape)));
  }
  diag_error(S->diags, n->loc, "%s has no attribute '%s'", desc_str(S, d), a);
  return poison(S, n->loc);
}
