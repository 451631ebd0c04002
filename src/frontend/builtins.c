/* The builtins: the table from lang/builtins.def, argument binding against
 * its signatures, and one checking rule per handler.  Each rule validates
 * its arguments (constexpr-ness, dtypes, shapes) and gives the result type;
 * the typed call keeps every parameter in signature order, defaults filled
 * in, for the lowering. */
#include "sema_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BUILTIN_PARAMS = 12 };

static const struct {
  const char *name, *params, *summary;
  int flags;
} table[] = {
#define BUILTIN(id, handler, op, flags, name, params, summary) {name, params, summary, flags},
#include "builtins.def"
#undef BUILTIN
};

const char *builtin_name(int id) { return table[id].name; }

int builtin_flags(int id) { return table[id].flags; }
const char *builtin_params(int id) { return table[id].params; }
const char *builtin_summary(int id) { return table[id].summary; }
int builtin_count(void) { return B_COUNT; }

int builtin_lookup(const char *name, int flags) {
  for (int i = 0; i < B_COUNT; i++)
    if ((table[i].flags & flags) && !strcmp(table[i].name, name)) return i;
  return -1;
}

/* ---- suggestions --------------------------------------------------------- */

static int edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 40 || lb > 40) return 99;
  int row[41];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int prev = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int cur = row[j];
      int sub = prev + (a[i - 1] != b[j - 1]);
      int best = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
      row[j] = sub < best ? sub : best;
      prev = cur;
    }
  }
  return row[lb];
}

const char *suggest(Sema *S, const char *name, const char *const *cands, int n) {
  (void)S;
  const char *best = NULL;
  int best_d = (int)strlen(name) / 3 + 1;
  if (best_d > 3) best_d = 3;
  for (int i = 0; i < n; i++) {
    int d = edit_distance(name, cands[i]);
    if (d > 0 && d <= best_d && (!best || d < best_d)) {
      best = cands[i];
      best_d = d;
    }
  }
  return best;
}

/* ---- signatures ---------------------------------------------------------- */

typedef struct Param {
  const char *name;
  const char *default_text;  /* NULL: required */
  int rest;                  /* *name: takes the remaining positionals */
} Param;

static int parse_signature(Sema *S, int id, Param *out) {
  const char *p = table[id].params + 1;
  int n = 0;
  while (*p && *p != ')' && n < MAX_BUILTIN_PARAMS) {
    while (*p == ' ') p++;
    Param *pr = &out[n++];
    memset(pr, 0, sizeof *pr);
    if (*p == '*') {
      pr->rest = 1;
      p++;
    }
    const char *start = p;
    while (*p && *p != '=' && *p != ',' && *p != ')') p++;
    pr->name = arena_strndup(S->arena, start, (size_t)(p - start));
    if (*p == '=') {
      start = ++p;
      int depth = 0;
      while (*p && (depth || (*p != ',' && *p != ')'))) {
        depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
        p++;
      }
      pr->default_text = arena_strndup(S->arena, start, (size_t)(p - start));
    }
    if (*p == ',') p++;
  }
  return n;
}

static Node *default_value(Sema *S, Loc loc, const char *text) {
  Source *src = arena_alloc(S->arena, sizeof *src);
  src->name = "<builtin>";
  src->text = text;
  src->len = strlen(text);
  TokenVec toks = lex(src, S->diags);
  Node *e = parse_expression(src, &toks, S->diags);
  Node *v = check_expr(S, e);
  v->loc = loc;
  return v;
}

static int bind(Sema *S, Node *call, int id, Node **args, int n_args, Node **kw, int n_kw, Node **bound,
                int *n_bound) {
  Param ps[MAX_BUILTIN_PARAMS];
  int np = parse_signature(S, id, ps), pos = 0;
  const char *fn = builtin_name(id);
  for (int i = 0; i < np; i++) {
    bound[i] = NULL;
    if (ps[i].rest) {
      Node *t = node_new(S->arena, ND_TUPLE, call->loc);
      while (pos < n_args) vec_push(S->arena, &t->args, args[pos++]);
      bound[i] = t;
    } else if (pos < n_args) {
      bound[i] = args[pos++];
    }
  }
  if (pos < n_args) {
    diag_error(S->diags, args[pos]->loc, "%s() takes at most %d positional argument%s but %d were given", fn, pos,
               pos == 1 ? "" : "s", n_args);
    return 0;
  }
  for (int k = 0; k < n_kw; k++) {
    int found = -1;
    for (int i = 0; i < np; i++)
      if (!ps[i].rest && !strcmp(ps[i].name, kw[k]->name)) found = i;
    if (found < 0) {
      diag_error(S->diags, kw[k]->loc, "%s() got an unexpected keyword argument '%s'", fn, kw[k]->name);
      return 0;
    }
    if (bound[found]) {
      diag_error(S->diags, kw[k]->loc, "%s() got multiple values for argument '%s'", fn, kw[k]->name);
      return 0;
    }
    bound[found] = kw[k]->a;
  }
  for (int i = 0; i < np; i++) {
    if (bound[i]) continue;
    if (!ps[i].default_text) {
      diag_error(S->diags, call->loc, "%s() missing required argument '%s'", fn, ps[i].name);
      return 0;
    }
    bound[i] = default_value(S, call->loc, ps[i].default_text);
  }
  *n_bound = np;
  return 1;
}

/* ---- helpers for the rules ----------------------------------------------- */

typedef struct Call {
  Sema *S;
  Node *node;        /* the source call, for its location */
  int id;
  Node **arg;        /* bound arguments in signature order */
  int n;
} Call;

static const char *fname(Call *c) { return builtin_name(c->id); }

static Node *fail(Call *c, Node *at, const char *fmt, const char *detail) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, detail);
  diag_error(c->S->diags, at ? at->loc : c->node->loc, "%s: %s", fname(c), msg);
  return poison(c->S, c->node->loc);
}

static int is_none(Node *n) { return is_const_kind(n, V_NONE); }

/* A typed call of the builtin with every bound argument. */
static Node *result(Call *c, Type *t) {
  Node *n = typed_node(c->S, ND_CALL, c->node->loc, t);
  Value *f = value_new(c->S, V_BUILTIN);
  f->i = c->id;
  n->a = mk_const(c->S, c->node->loc, f);
  n->name = fname(c);
  for (int i = 0; i < c->n; i++) vec_push(c->S->arena, &n->args, c->arg[i]);
  return n;
}

/* The argument as a run-time value (scalars from constexprs), or NULL. */
static Node *tile_arg(Call *c, int i, const char *what) {
  Node *n = runtime(c->S, c->arg[i]);
  if (!n->type) {
    fail(c, c->arg[i], "%s must be a tile or a scalar", what);
    return NULL;
  }
  c->arg[i] = n;
  return n;
}

static int const_int_arg(Call *c, int i, const char *what, int64_t *out) {
  Value *v = const_of(c->S, c->arg[i], what);
  if (!v) return 0;
  if (v->kind != V_INT && v->kind != V_BOOL) {
    fail(c, c->arg[i], "%s must be a constexpr integer", what);
    return 0;
  }
  if (v->is_u64) {
    fail(c, c->arg[i], "%s must be below 2^63", what);
    return 0;
  }
  *out = v->i;
  return 1;
}

static int const_bool_arg(Call *c, int i, const char *what) {
  Value *v = const_of(c->S, c->arg[i], what);
  int ok;
  return v ? value_truth(v, &ok) : 0;
}

static int dtype_node(Call *c, Node *n, DType *dt, int *is_ptr) {
  if (is_const_kind(n, V_MISSING_DTYPE)) {
    fail(c, n, "%s", sema_missing_dtype_reason(c->S, n->cval->s));
    return 0;
  }
  if (!is_const_kind(n, V_DTYPE)) {
    if (!is_poison(n)) fail(c, n, "%s", "expected a dtype such as tl.float32");
    return 0;
  }
  *dt = n->cval->dtype;
  if (is_ptr) *is_ptr = n->cval->dtype_is_ptr;
  return 1;
}

static int dtype_arg(Call *c, int i, DType *dt, int *is_ptr) { return dtype_node(c, c->arg[i], dt, is_ptr); }

static int normalize_axis(Call *c, int i, int rank, int64_t *axis) {
  if (!const_int_arg(c, i, "axis", axis)) return 0;
  if (*axis < -rank || *axis >= rank) {
    char d[64];
    snprintf(d, sizeof d, "%lld", (long long)*axis);
    diag_error(c->S->diags, c->arg[i]->loc, "%s: axis %s is out of range for a tile of rank %d", fname(c), d, rank);
    return 0;
  }
  if (*axis < 0) *axis += rank;
  return 1;
}

/* A shape given as varargs (f(x, 4, 8)) or as one tuple (f(x, (4, 8))). */
static int shape_arg(Call *c, int i, int *rank, int64_t *shape) {
  Node *t = c->arg[i];
  if (t->kind == ND_TUPLE && t->args.len == 1 && (t->args.data[0]->kind == ND_TUPLE ||
                                                  is_const_kind(t->args.data[0], V_LIST)))
    t = t->args.data[0];
  Value *v = const_of(c->S, t, "a shape");
  return v && check_shape_value(c->S, t->loc, v, rank, shape);
}

static Node *common_broadcast(Call *c, Node **xs, int n) {
  Sema *S = c->S;
  int rank = 0;
  int64_t shape[MAX_RANK];
  Type acc = *xs[0]->type;
  for (int i = 1; i < n; i++) {
    if (!broadcast_shapes(&acc, xs[i]->type, &rank, shape)) {
      diag_error(S->diags, xs[i]->loc, "%s: operand shapes %s and %s cannot broadcast", fname(c),
                 shape_str(S->arena, &acc), shape_str(S->arena, xs[i]->type));
      return NULL;
    }
    acc.rank = rank;
    memcpy(acc.shape, shape, sizeof shape);
    if (type_numel(&acc) > MAX_TILE_ELEMENTS) {
      diag_error(S->diags, xs[i]->loc, "%s: broadcasting makes a tile of more than 2^20 elements", fname(c));
      return NULL;
    }
  }
  for (int i = 0; i < n; i++) xs[i] = broadcast(S, xs[i], acc.rank, acc.shape);
  return xs[0];
}

/* ---- the rules ----------------------------------------------------------- */

static Node *check_program_id(Call *c) {
  int64_t axis;
  if (!const_int_arg(c, 0, "axis", &axis)) return poison(c->S, c->node->loc);
  if (axis < 0 || axis > 2) return fail(c, c->arg[0], "%s", "axis must be 0, 1 or 2");
  return result(c, type_scalar(c->S->arena, DT_I32));
}

static Node *check_arange(Call *c) {
  int64_t start, end;
  if (!const_int_arg(c, 0, "start", &start) || !const_int_arg(c, 1, "end", &end)) return poison(c->S, c->node->loc);
  int64_t n;
  if (__builtin_sub_overflow(end, start, &n)) n = INT64_MAX; /* and so too many */
  if (n <= 0 || (n & (n - 1)) || n > MAX_TILE_ELEMENTS) {
    char d[160];
    snprintf(d, sizeof d, "the range [%lld, %lld) has %s%lld elements, which is not a power of two up to 2^20",
             (long long)start, (long long)end, n == INT64_MAX ? "more than " : "", (long long)n);
    return fail(c, c->node, "%s", d);
  }
  if (start < INT32_MIN || end > INT32_MAX) return fail(c, c->node, "%s", "the range must fit in int32");
  Type *t = type_tile(c->S->arena, type_scalar(c->S->arena, DT_I32), 1, &n);
  return result(c, t);
}

static Node *check_zeros(Call *c) {
  int rank;
  int64_t shape[MAX_RANK];
  DType dt;
  int vi = c->id == B_FULL ? 1 : -1, di = c->id == B_FULL ? 2 : 1, is_ptr;
  if (!shape_arg(c, 0, &rank, shape) || !dtype_arg(c, di, &dt, &is_ptr)) return poison(c->S, c->node->loc);
  if (is_ptr) return fail(c, c->arg[di], "%s", "makes tiles of numbers; the dtype cannot be a pointer type");
  if (vi > 0) {
    Node *v = tile_arg(c, vi, "the fill value");
    if (!v) return poison(c->S, c->node->loc);
    if (v->type->rank) return fail(c, v, "%s", "the fill value must be a scalar");
    c->arg[vi] = cast(c->S, v, dt, 0);
  }
  return result(c, type_tile(c->S->arena, type_scalar(c->S->arena, dt), rank, shape));
}

static Node *pointer_arg(Call *c) {
  Node *p = c->arg[0];
  if (!p->type || !p->type->is_ptr) {
    if (!is_poison(p))
      fail(c, p, "the pointer argument must be a pointer or a tile of pointers, not %s",
           describe(c->S, p));
    return NULL;
  }
  return p;
}

/* The pointer a store or an atomic writes through; NULL after an error (a tl.const one, as Triton's). */
static Node *writable_pointer_arg(Call *c) {
  Node *p = pointer_arg(c);
  if (p && p->type->is_const) {
    fail(c, p, "%s", "cannot store to a constant pointer (a tl.const parameter's)");
    return NULL;
  }
  return p;
}

static int mask_arg(Call *c, int i) {
  if (is_none(c->arg[i])) return 1;
  Node *m = tile_arg(c, i, "mask");
  if (!m) return 0;
  if (m->type->elem != DT_I1 || m->type->is_ptr) {
    fail(c, m, "the mask must be a boolean tile (i1), not %s", type_str(c->S->arena, m->type));
    diag_note(c->S->diags, m->loc, "build masks with comparisons, such as offsets < n_elements");
    return 0;
  }
  return 1;
}

static const char *const load_cache_modifiers[] = {"", ".ca", ".cg", ".cv", NULL};
static const char *const store_cache_modifiers[] = {"", ".wb", ".cg", ".cs", ".wt", NULL};
/* The values lang/memory.def spells for eviction_policy=, sem= and scope=. */
static const char *const eviction_policies[] = {
#define EVICTION(id, name, ptx) name,
#include "memory.def"
    NULL};
static const char *const memory_semantics[] = {
#define MEM_SEM(id, name, ptx) name,
#include "memory.def"
    NULL};
static const char *const memory_scopes[] = {
#define MEM_SCOPE(id, name, ptx) name,
#include "memory.def"
    NULL};

static int string_option(Call *c, int i, const char *what, const char *const *allowed) {
  Value *v = const_of(c->S, c->arg[i], what);
  if (!v) return 0;
  if (v->kind == V_NONE) return 1;
  Buf list;
  buf_init(&list, c->S->arena);
  for (int k = 0; allowed[k]; k++) {
    if (v->kind == V_STR && !strcmp(v->s, allowed[k])) return 1;
    if (*allowed[k]) buf_printf(&list, "%s'%s'", list.len ? ", " : "", allowed[k]);
  }
  fail(c, c->arg[i], "%s", arena_printf(c->S->arena, "unsupported %s %s (expected one of %s)", what,
                                        value_str(c->S->arena, v), buf_cstr(&list)));
  return 0;
}

/* boundary_check= and padding_option= are for block pointers (Triton refuses them on pointer tiles). */
static int no_block_options(Call *c, int check, int padding) {
  Value *v = const_of(c->S, c->arg[check], "boundary_check");
  if (!v) return 0;
  if ((v->kind == V_LIST && v->items.len) || (v->kind != V_LIST && v->kind != V_NONE)) {
    fail(c, c->arg[check], "%s", "boundary_check is for block pointers (tl.make_block_ptr); mask a pointer tile instead");
    return 0;
  }
  Value *p = padding < 0 ? NULL : const_of(c->S, c->arg[padding], "padding_option");
  if (padding >= 0 && (!p || (p->kind == V_STR && p->slen))) {
    if (p) fail(c, c->arg[padding], "%s", "padding_option is for block pointers (tl.make_block_ptr); give other= instead");
    return 0;
  }
  return 1;
}

static Node *check_load(Call *c) {
  Sema *S = c->S;
  if (c->arg[0]->kind == ND_DESC ? !desc_block_load(S, c->node, c->arg) : !no_block_options(c, 3, 4))
    return poison(S, c->node->loc);
  Node *p = pointer_arg(c);
  if (!p || !mask_arg(c, 1)) return poison(S, c->node->loc);
  if (!is_none(c->arg[2]) && is_none(c->arg[1]))
    return fail(c, c->arg[2], "%s", "'other' needs a 'mask': masked-off lanes are what it fills");
  if (!string_option(c, 5, "cache_modifier", load_cache_modifiers) ||
      !string_option(c, 6, "eviction_policy", eviction_policies))
    return poison(S, c->node->loc);
  Node *xs[3] = {p};
  int n = 1;
  if (!is_none(c->arg[1])) xs[n++] = c->arg[1];
  if (!is_none(c->arg[2])) {
    Node *o = tile_arg(c, 2, "other");
    if (!o) return poison(S, c->node->loc);
    if (o->type->is_ptr) return fail(c, o, "%s", "'other' must be a number, not a pointer");
    xs[n++] = cast(S, o, p->type->elem, 0);
  }
  if (!common_broadcast(c, xs, n)) return poison(S, c->node->loc);
  c->arg[0] = xs[0];
  if (!is_none(c->arg[1])) c->arg[1] = xs[1];
  if (!is_none(c->arg[2])) c->arg[2] = xs[n - 1];
  return result(c, type_with_elem(S->arena, xs[0]->type, p->type->elem, 0));
}

/* Broadcasts a value to the pointer's shape (never the other way) and casts it. */
static Node *value_for_pointer(Call *c, int i, Node *p) {
  Sema *S = c->S;
  Node *v = tile_arg(c, i, "the value");
  if (!v) return NULL;
  if (v->type->is_ptr) {
    fail(c, v, "%s", "storing pointers is not supported");
    return NULL;
  }
  int rank;
  int64_t shape[MAX_RANK];
  if (!broadcast_shapes(v->type, p->type, &rank, shape) || rank != p->type->rank ||
      memcmp(shape, p->type->shape, sizeof(int64_t) * (size_t)rank)) {
    diag_error(S->diags, v->loc, "%s: a value of shape %s cannot be stored through pointers of shape %s", fname(c),
               shape_str(S->arena, v->type), shape_str(S->arena, p->type));
    return NULL;
  }
  return cast(S, broadcast(S, v, rank, shape), p->type->elem, 0);
}

static int mask_for_pointer(Call *c, int i, Node *p) {
  if (!mask_arg(c, i)) return 0;
  if (is_none(c->arg[i])) return 1;
  Node *xs[2] = {c->arg[i], p};
  if (!common_broadcast(c, xs, 2)) return 0;
  if (!type_same_shape(xs[1]->type, p->type)) {
    fail(c, c->arg[i], "%s", "the mask has more dimensions than the pointer");
    return 0;
  }
  c->arg[i] = xs[0];
  return 1;
}

static Node *check_store(Call *c) {
  if (c->arg[0]->kind == ND_DESC ? !desc_block_store(c->S, c->node, c->arg) : !no_block_options(c, 3, -1))
    return poison(c->S, c->node->loc);
  Node *p = writable_pointer_arg(c);
  if (!p) return poison(c->S, c->node->loc);
  Node *v = value_for_pointer(c, 1, p);
  if (!v || !mask_for_pointer(c, 2, p) || !string_option(c, 4, "cache_modifier", store_cache_modifiers) ||
      !string_option(c, 5, "eviction_policy", eviction_policies))
    return poison(c->S, c->node->loc);
  c->arg[1] = v;
  return result(c, NULL);
}

static Node *check_make_descriptor(Call *c) { return desc_make_tensor(c->S, c->node, c->arg); }
static Node *check_descriptor_load(Call *c) { return desc_load(c->S, c->node, c->arg); }
static Node *check_descriptor_store(Call *c) { return desc_store(c->S, c->node, c->arg); }
static Node *check_extern_elementwise(Call *c) { return extern_elementwise_call(c->S, c->node, c->arg); }
static Node *check_descriptor_atomic(Call *c) { return desc_atomic(c->S, c->node, c->id, c->arg); }
static Node *check_descriptor_gather(Call *c) { return desc_gather(c->S, c->node, c->arg); }
static Node *check_descriptor_scatter(Call *c) { return desc_scatter(c->S, c->node, c->arg); }
static Node *check_make_block_ptr(Call *c) { return desc_make_block_ptr(c->S, c->node, c->arg); }
static Node *check_advance(Call *c) { return desc_advance(c->S, c->node, c->arg); }

static Node *check_atomic_rmw(Call *c) {
  Node *p = writable_pointer_arg(c);
  if (!p) return poison(c->S, c->node->loc);
  DType et = p->type->elem;
  int bitwise = c->id == B_ATOMIC_AND || c->id == B_ATOMIC_OR || c->id == B_ATOMIC_XOR;
  if (bitwise && dtype_is_float(et)) return fail(c, p, "%s", "needs pointers to integers");
  if (dtype_bits(et) <= 8 || (dtype_bits(et) == 16 && dtype_is_int(et))) /* i1, i8, u8, fp8, i16, u16 */
    return fail(c, p, "%s", "atomics need 16-bit floats or 32/64-bit elements");
  Node *v = value_for_pointer(c, 1, p);
  if (!v || !mask_for_pointer(c, 2, p) || !string_option(c, 3, "sem", memory_semantics) ||
      !string_option(c, 4, "scope", memory_scopes))
    return poison(c->S, c->node->loc);
  c->arg[1] = v;
  return result(c, type_with_elem(c->S->arena, p->type, et, 0));
}

static Node *check_atomic_cas(Call *c) {
  Node *p = writable_pointer_arg(c);
  if (!p) return poison(c->S, c->node->loc);
  if (dtype_bits(p->type->elem) < 16) return fail(c, p, "%s", "needs 16, 32 or 64-bit elements");
  Node *cmp = value_for_pointer(c, 1, p);
  Node *v = cmp ? value_for_pointer(c, 2, p) : NULL;
  if (!v || !string_option(c, 3, "sem", memory_semantics) || !string_option(c, 4, "scope", memory_scopes))
    return poison(c->S, c->node->loc);
  c->arg[1] = cmp;
  c->arg[2] = v;
  return result(c, type_with_elem(c->S->arena, p->type, p->type->elem, 0));
}

static int dot_operand_ok(DType t) {
  return t == DT_FP16 || t == DT_BF16 || t == DT_FP32 || t == DT_FP64 || t == DT_I8 || dtype_is_fp8(t);
}

static Node *check_dot(Call *c);

/* fp8 operands (e4m3, e5m2, or one of each, as Triton allows) accumulate in
 * fp32.  Both become fp16 first, exactly (every fp8 value is an fp16 value):
 * Triton's fallback where the GPU has no fp8 tensor cores, and what every
 * target runs unless accelerate-matmul finds the fp8 tiles behind the
 * conversions fit a wgmma (src/tgir/accelerate_matmul.c).  Products and
 * sums are an fp8 MMA's (exact products, fp32 sums) but for their order. */
static Node *check_fp8_dot(Call *c, Node *a, Node *b) {
  DType out;
  if (!dtype_arg(c, 6, &out, NULL)) return poison(c->S, c->node->loc);
  if (out != DT_FP32)
    return fail(c, c->arg[6], "%s", "out_dtype must be float32 for fp8 operands");
  c->arg[0] = cast(c->S, a, DT_FP16, 0);
  c->arg[1] = cast(c->S, b, DT_FP16, 0);
  return check_dot(c);
}

static Node *check_dot(Call *c) {
  Sema *S = c->S;
  Node *a = tile_arg(c, 0, "input"), *b = a ? tile_arg(c, 1, "other") : NULL;
  if (!b) return poison(S, c->node->loc);
  Type *ta = a->type, *tb = b->type;
  if (ta->rank < 2 || ta->rank > 3 || tb->rank != ta->rank)
    return fail(c, c->node, "operands must both be 2-D (or both 3-D, batched); got %s",
                arena_printf(S->arena, "%s and %s", type_str(S->arena, ta), type_str(S->arena, tb)));
  int r = ta->rank;
  int64_t M = ta->shape[r - 2], K = ta->shape[r - 1], K2 = tb->shape[r - 2], N = tb->shape[r - 1];
  if (K != K2)
    return fail(c, c->node, "%s", arena_printf(S->arena, "inner dimensions differ: %s @ %s", shape_str(S->arena, ta),
                                               shape_str(S->arena, tb)));
  if (r == 3 && ta->shape[0] != tb->shape[0]) return fail(c, c->node, "%s", "batch dimensions differ");
  if (M < 16 || N < 16 || K < 16)
    return fail(c, c->node, "%s", arena_printf(S->arena, "every dimension must be at least 16 (M=%lld, N=%lld, K=%lld)",
                                               (long long)M, (long long)N, (long long)K));
  if (ta->is_ptr || tb->is_ptr || !dot_operand_ok(ta->elem) || !dot_operand_ok(tb->elem))
    return fail(c, c->node, "%s", "operands must be fp16, bf16, fp32, fp64, fp8 or i8 tiles");
  if (dtype_is_fp8(ta->elem) && dtype_is_fp8(tb->elem)) return check_fp8_dot(c, a, b);
  if (ta->elem != tb->elem)
    return fail(c, c->node, "%s", arena_printf(S->arena, "operands must have the same dtype, got %s and %s",
                                               dtype_name(ta->elem), dtype_name(tb->elem)));
  DType out;
  if (!dtype_arg(c, 6, &out, NULL)) return poison(S, c->node->loc);
  if (ta->elem == DT_I8) out = DT_I32;
  else if (ta->elem == DT_FP64) out = DT_FP64;
  else if (out != DT_FP32 && !(out == DT_FP16 && ta->elem == DT_FP16))
    return fail(c, c->arg[6], "%s", "out_dtype must be float32 (or float16 for fp16 operands)");
  Value *prec = const_of(S, c->arg[3], "input_precision");
  if (!prec) return poison(S, c->node->loc);
  if (prec->kind != V_NONE && (prec->kind != V_STR || tir_kind_lookup(TIR_DOT, prec->s, prec->slen) < 0))
    return fail(c, c->arg[3], "input_precision must be %s", tir_kind_choices(TIR_DOT, 0, S->arena));
  if (!const_of(S, c->arg[4], "allow_tf32")) return poison(S, c->node->loc);
  int64_t shape[MAX_RANK] = {0};
  if (r == 3) shape[0] = ta->shape[0];
  shape[r - 2] = M;
  shape[r - 1] = N;
  Type *rt = type_tile(S->arena, type_scalar(S->arena, out), r, shape);
  if (!is_none(c->arg[2])) {
    Node *acc = tile_arg(c, 2, "acc");
    if (!acc) return poison(S, c->node->loc);
    if (!type_equal(acc->type, rt))
      return fail(c, acc, "%s", arena_printf(S->arena, "acc has type %s but the product has type %s",
                                             type_str(S->arena, acc->type), type_str(S->arena, rt)));
  }
  return result(c, rt);
}

Type *reduced_type(Sema *S, const Type *t, int64_t axis, int all, int keep_dims, DType elem) {
  Type r = *t;
  r.elem = elem;
  if (all) {
    for (int i = 0; i < t->rank; i++) r.shape[i] = 1;
    if (!keep_dims) r.rank = 0;
  } else if (keep_dims) {
    r.shape[axis] = 1;
  } else {
    for (int i = (int)axis; i < t->rank - 1; i++) r.shape[i] = t->shape[i + 1];
    r.rank--;
  }
  return type_tile(S->arena, &r, r.rank, r.shape);
}

static DType widened_for_sum(DType t) {
  return dtype_is_int(t) && dtype_bits(t) < 32 ? (dtype_kind(t) == DK_UINT ? DT_U32 : DT_I32) : t;
}

static Node *check_reduce(Call *c) {
  Sema *S = c->S;
  Node *x = tile_arg(c, 0, "input");
  if (!x) return poison(S, c->node->loc);
  if (x->type->is_ptr) return fail(c, x, "%s", "cannot reduce pointers");
  if (x->type->rank == 0) return fail(c, x, "%s", "input must be a tile, not a scalar");
  if (refuse_fp8(S, x->loc, fname(c), x->type->elem)) return poison(S, c->node->loc);
  int is_arg = c->id == B_ARGMAX || c->id == B_ARGMIN;
  int64_t axis = 0;
  int all = is_none(c->arg[1]);
  if (all && is_arg) return fail(c, c->node, "%s", "needs an axis");
  if (!all && !normalize_axis(c, 1, x->type->rank, &axis)) return poison(S, c->node->loc);
  int keep = const_bool_arg(c, c->id == B_SUM ? 2 : is_arg ? 3 : 4, "keep_dims");
  DType elem = x->type->elem;
  if (c->id == B_SUM) {
    elem = widened_for_sum(elem);
    if (!is_none(c->arg[3]) && !dtype_arg(c, 3, &elem, NULL)) return poison(S, c->node->loc);
  }
  if (is_arg) elem = DT_I32;
  Type *rt = reduced_type(S, x->type, axis, all, keep, elem);
  int with_indices = (c->id == B_MAX || c->id == B_MIN) && const_bool_arg(c, 2, "return_indices");
  if (!with_indices) return result(c, rt);
  /* (values, indices): two reductions of one input, evaluated once */
  c->arg[0] = materialize(S, x, c->node->loc);
  Node *vals = result(c, rt);
  Node *idx = result(c, type_with_elem(S->arena, rt, DT_I32, 0));
  idx->ival = 1;
  Node *t = node_new(S->arena, ND_TUPLE, c->node->loc);
  vec_push(S->arena, &t->args, vals);
  vec_push(S->arena, &t->args, idx);
  return t;
}

static Node *check_scan(Call *c) {
  Node *x = tile_arg(c, 0, "input");
  int64_t axis;
  if (!x || !normalize_axis(c, 1, x->type->rank, &axis)) return poison(c->S, c->node->loc);
  if (x->type->is_ptr || x->type->rank == 0) return fail(c, x, "%s", "input must be a tile of numbers");
  if (refuse_fp8(c->S, x->loc, fname(c), x->type->elem)) return poison(c->S, c->node->loc);
  if (!const_of(c->S, c->arg[2], "reverse")) return poison(c->S, c->node->loc);
  return result(c, type_with_elem(c->S->arena, x->type, widened_for_sum(x->type->elem), 0));
}

static Node *check_combine(Call *c) { return combine_call(c->S, c->node, c->id, c->arg, c->n); }

static Node *check_map_elementwise(Call *c) { return map_elementwise_call(c->S, c->node, c->arg); }

static Node *check_float_math(Call *c) {
  Node *x = tile_arg(c, 0, "x");
  if (!x) return poison(c->S, c->node->loc);
  if (x->type->is_ptr || (x->type->elem != DT_FP32 && x->type->elem != DT_FP64)) {
    Node *r = fail(c, x, "expects fp32 or fp64, got %s", type_str(c->S->arena, x->type));
    if (!x->type->is_ptr) diag_note(c->S->diags, x->loc, "convert first, e.g. x.to(tl.float32)");
    return r;
  }
  return result(c, x->type);
}

static Node *check_sqrt_rn(Call *c) {
  Node *x = tile_arg(c, 0, "x");
  if (!x) return poison(c->S, c->node->loc);
  if (x->type->is_ptr || x->type->elem != DT_FP32) {
    Node *r = fail(c, x, "expects fp32, as Triton's, got %s", type_str(c->S->arena, x->type));
    if (!x->type->is_ptr) diag_note(c->S->diags, x->loc, "convert first, e.g. x.to(tl.float32)");
    return r;
  }
  return result(c, x->type);
}

static Node *check_abs(Call *c) {
  Node *x = tile_arg(c, 0, "x");
  if (!x) return poison(c->S, c->node->loc);
  if (x->type->is_ptr) return fail(c, x, "%s", "expects numbers, not pointers");
  if (refuse_fp8(c->S, x->loc, fname(c), x->type->elem)) return poison(c->S, c->node->loc);
  return result(c, x->type);
}

/* Elementwise ops on numbers: promote like arithmetic, broadcast together. */
static Node *elementwise(Call *c, int first, int n, int floats_only) {
  Sema *S = c->S;
  Node *xs[3];
  DType ct = DT_I1;
  int acc_weak = 1;
  for (int i = 0; i < n; i++) {
    xs[i] = tile_arg(c, first + i, "operand");
    if (!xs[i]) return NULL;
    if (xs[i]->type->is_ptr) {
      fail(c, xs[i], "%s", "expects numbers, not pointers");
      return NULL;
    }
    DType t = xs[i]->type->elem;
    ct = i == 0 ? t : promote(ct, acc_weak, t, is_const(xs[i]), 0);
    acc_weak &= is_const(xs[i]);
  }
  if (floats_only && !dtype_is_float(ct)) {
    fail(c, xs[0], "expects floating-point operands, got %s", dtype_name(ct));
    return NULL;
  }
  if (refuse_fp8(S, xs[0]->loc, fname(c), ct)) return NULL;
  if (!common_broadcast(c, xs, n)) return NULL;
  for (int i = 0; i < n; i++) c->arg[first + i] = cast(S, xs[i], ct, 0);
  return c->arg[first];
}

/* propagate_nan= (argument i): None or tl.PropagateNan's NONE (0) and ALL
 * (0xFFFF, Triton's enum values), bound as tile IR's NAN_NONE or NAN_ALL. */
static int propagate_nan_arg(Call *c, int i) {
  Value *v = const_of(c->S, c->arg[i], "propagate_nan");
  if (!v) return 0;
  int all = v->kind == V_INT && v->i == 0xFFFF;
  if (v->kind != V_NONE && !all && !(v->kind == V_INT && v->i == 0)) {
    fail(c, c->arg[i], "%s", arena_printf(c->S->arena, "propagate_nan must be tl.PropagateNan.NONE or "
                                                       "tl.PropagateNan.ALL, not %s", value_str(c->S->arena, v)));
    return 0;
  }
  c->arg[i] = mk_const(c->S, c->arg[i]->loc, value_int(c->S, all ? NAN_ALL : NAN_NONE));
  return 1;
}

static Node *check_binary_math(Call *c) {
  if (!propagate_nan_arg(c, 2)) return poison(c->S, c->node->loc);
  if (is_const(c->arg[0]) && is_const(c->arg[1]) && !c->arg[0]->type && !c->arg[1]->type) {
    Value *better = fold_binary(c->S, c->node->loc, c->id == B_MINIMUM ? TK_LT : TK_GT, c->arg[1]->cval,
                                c->arg[0]->cval);
    if (better) return better->i ? c->arg[1] : c->arg[0];
  }
  Node *x = elementwise(c, 0, 2, 0);
  return x ? result(c, x->type) : poison(c->S, c->node->loc);
}

static Node *check_clamp(Call *c) {
  if (c->id == B_CLAMP && !propagate_nan_arg(c, 3)) return poison(c->S, c->node->loc);
  Node *x = elementwise(c, 0, 3, 1);
  return x ? result(c, x->type) : poison(c->S, c->node->loc);
}

static Node *check_fma(Call *c) { return check_clamp(c); }

/* The result of elementwise operands `x` (NULL: they failed) whose common
 * type must be `a` or `b`; `expects` says so, with the type found for %s. */
static Node *elementwise_in(Call *c, Node *x, DType a, DType b, const char *expects) {
  if (!x) return poison(c->S, c->node->loc);
  if (x->type->elem != a && x->type->elem != b) return fail(c, x, expects, dtype_name(x->type->elem));
  return result(c, x->type);
}

static Node *check_div_rn(Call *c) {
  return elementwise_in(c, elementwise(c, 0, 2, 1), DT_FP32, DT_FP64,
                        "expects fp32 or fp64, got %s (convert first: x.to(tl.float32))");
}

/* tl.fdiv(x, y): `/` on floats.  Triton makes a literal operand a tensor
 * first, so it takes part in promotion (fp16 with 3.0 divides in fp32) and
 * an integer literal is refused. */
static Node *check_fdiv(Call *c) {
  Node *xs[2];
  for (int i = 0; i < 2; i++) {
    xs[i] = tile_arg(c, i, i ? "y" : "x");
    if (!xs[i]) return poison(c->S, c->node->loc);
    if (xs[i]->type->is_ptr || !dtype_is_float(xs[i]->type->elem))
      return fail(c, xs[i], "both operands must be floats, got %s", type_str(c->S->arena, xs[i]->type));
  }
  DType ct = promote(xs[0]->type->elem, 0, xs[1]->type->elem, 0, 1);
  return binary(c->S, c->node->loc, TK_SLASH, cast(c->S, xs[0], ct, 0), cast(c->S, xs[1], ct, 0));
}

/* tl.umulhi(x, y): the high half of the double-width product, for the
 * dtypes Triton takes (32 and 64 bits, signed or not). */
static Node *check_umulhi(Call *c) {
  Node *x = elementwise(c, 0, 2, 0);
  if (!x) return poison(c->S, c->node->loc);
  DType t = x->type->elem;
  if (x->type->is_ptr || dtype_is_float(t) || (dtype_bits(t) != 32 && dtype_bits(t) != 64))
    return fail(c, x, "expects 32- or 64-bit integers, got %s", dtype_name(t));
  return result(c, x->type);
}

static Node *check_where(Call *c) {
  Sema *S = c->S;
  Node *cond = tile_arg(c, 0, "condition");
  if (!cond) return poison(S, c->node->loc);
  if (is_const(cond) && !c->arg[1]->type && !c->arg[2]->type && cond->type->rank == 0) {
    int ok;
    return value_truth(cond->cval, &ok) ? c->arg[1] : c->arg[2];
  }
  c->arg[0] = to_bool(S, cond);
  Node *x = tile_arg(c, 1, "x"), *y = x ? tile_arg(c, 2, "y") : NULL;
  if (!y) return poison(S, c->node->loc);
  Node *xs[3] = {c->arg[0], x, y};
  if (!common_broadcast(c, xs, 3)) return poison(S, c->node->loc);
  c->arg[0] = xs[0];
  if (x->type->is_ptr || y->type->is_ptr) {
    if (x->type->elem != y->type->elem || x->type->is_ptr != y->type->is_ptr)
      return fail(c, c->node, "%s", "pointer operands must have the same type");
    c->arg[1] = xs[1];
    c->arg[2] = xs[2];
    return result(c, xs[1]->type);
  }
  DType ct = promote(x->type->elem, is_const(x), y->type->elem, is_const(y), 0);
  c->arg[1] = cast(S, xs[1], ct, 0);
  c->arg[2] = cast(S, xs[2], ct, 0);
  return result(c, c->arg[1]->type);
}

static Node *check_expand_dims(Call *c) {
  Sema *S = c->S;
  Node *x = tile_arg(c, 0, "input");
  Value *axes = x ? const_of(S, c->arg[1], "axis") : NULL;
  if (!axes) return poison(S, c->node->loc);
  int n = axes->kind == V_LIST ? axes->items.len : 1;
  int rank = x->type->rank + n;
  if (rank > MAX_RANK) return fail(c, c->node, "%s", "too many dimensions");
  int is_new[MAX_RANK] = {0};
  for (int i = 0; i < n; i++) {
    Value *a = axes->kind == V_LIST ? axes->items.data[i] : axes;
    if (a->kind != V_INT || a->i < -rank || a->i >= rank)
      return fail(c, c->arg[1], "axis %s is out of range", value_str(S->arena, a));
    int ax = (int)(a->i < 0 ? a->i + rank : a->i);
    if (is_new[ax]) return fail(c, c->arg[1], "%s", "repeated axis");
    is_new[ax] = 1;
  }
  int64_t shape[MAX_RANK];
  for (int i = 0, src = 0; i < rank; i++) shape[i] = is_new[i] ? 1 : x->type->shape[src++];
  return result(c, type_tile(S->arena, x->type, rank, shape));
}

static Node *check_broadcast_to(Call *c) {
  Sema *S = c->S;
  Node *x = tile_arg(c, 0, "input");
  int rank, r2;
  int64_t shape[MAX_RANK], out[MAX_RANK];
  if (!x || !shape_arg(c, 1, &rank, shape)) return poison(S, c->node->loc);
  Type target = {x->type->elem, x->type->is_ptr, rank, {0}, 0};
  memcpy(target.shape, shape, sizeof shape);
  if (!broadcast_shapes(x->type, &target, &r2, out) || r2 != rank || memcmp(out, shape, sizeof(int64_t) * (size_t)rank))
    return fail(c, c->node, "%s", arena_printf(S->arena, "cannot broadcast shape %s to %s", shape_str(S->arena, x->type),
                                               shape_str(S->arena, &target)));
  return result(c, type_tile(S->arena, x->type, rank, shape));
}

static Node *check_reshape(Call *c) {
  Sema *S = c->S;
  Node *x = tile_arg(c, 0, "input");
  int rank;
  int64_t shape[MAX_RANK];
  if (!x || !shape_arg(c, 1, &rank, shape)) return poison(S, c->node->loc);
  Type *t = type_tile(S->arena, x->type, rank, shape);
  if (type_numel(t) != type_numel(x->type))
    return fail(c, c->node, "%s", arena_printf(S->arena, "cannot reshape %s (%lld elements) to %s (%lld elements)",
                                               shape_str(S->arena, x->type), (long long)type_numel(x->type),
                                               shape_str(S->arena, t), (long long)type_numel(t)));
  return result(c, t);
}

static Node *check_permute(Call *c) {
  Sema *S = c->S;
  Node *x = tile_arg(c, 0, "input");
  if (!x) return poison(S, c->node->loc);
  Node *dims = c->arg[1];
  if (dims->kind == ND_TUPLE && dims->args.len == 1 && dims->args.data[0]->kind == ND_TUPLE) dims = dims->args.data[0];
  Value *v = const_of(S, dims, "dims");
  if (!v) return poison(S, c->node->loc);
  int rank = x->type->rank;
  int perm[MAX_RANK];
  if (v->items.len == 0) {
    if (rank != 2) return fail(c, c->node, "%s", "with no dims, needs a 2-D tile");
    perm[0] = 1;
    perm[1] = 0;
  } else {
    if (v->items.len != rank) return fail(c, dims, "%s", "dims must list every dimension once");
    int seen[MAX_RANK] = {0};
    for (int i = 0; i < rank; i++) {
      Value *d = v->items.data[i];
      if (d->kind != V_INT || d->i < 0 || d->i >= rank || seen[d->i]++)
        return fail(c, dims, "%s", "dims must be a permutation of 0..rank-1");
      perm[i] = (int)d->i;
    }
  }
  int64_t shape[MAX_RANK];
  for (int i = 0; i < rank; i++) shape[i] = x->type->shape[perm[i]];
  return result(c, type_tile(S->arena, x->type, rank, shape));
}

/* The two operands of join, interleave and cat: tiles or scalars of one
 * dtype (no promotion, as Triton), broadcast to one shape. */
static int pair_args(Call *c, const char *first, const char *second) {
  Sema *S = c->S;
  Node *xs[2] = {tile_arg(c, 0, first), NULL};
  if (!xs[0] || !(xs[1] = tile_arg(c, 1, second))) return 0;
  const Type *a = xs[0]->type, *b = xs[1]->type;
  if (a->elem != b->elem || a->is_ptr != b->is_ptr) {
    fail(c, c->node, "%s", arena_printf(S->arena, "%s and %s differ in dtype (%s and %s); cast one with .to()", first,
                                        second, type_str(S->arena, type_tile(S->arena, a, 0, a->shape)),
                                        type_str(S->arena, type_tile(S->arena, b, 0, b->shape))));
    return 0;
  }
  if (!common_broadcast(c, xs, 2)) return 0;
  c->arg[0] = xs[0];
  c->arg[1] = xs[1];
  if (xs[0]->type->rank + 1 > MAX_RANK) {
    fail(c, c->node, "%s", "too many dimensions");
    return 0;
  }
  if (2 * type_numel(xs[0]->type) > MAX_TILE_ELEMENTS) {
    fail(c, c->node, "%s", "the result would have more than 2^20 elements");
    return 0;
  }
  return 1;
}

/* join: a new last dimension of 2; interleave: that dimension merged into
 * the one before it (two scalars make a tile of 2 either way). */
static Node *check_join(Call *c) {
  if (!pair_args(c, "a", "b")) return poison(c->S, c->node->loc);
  const Type *t = c->arg[0]->type;
  int64_t shape[MAX_RANK];
  memcpy(shape, t->shape, sizeof shape);
  int rank = t->rank;
  if (c->id == B_JOIN || rank == 0) shape[rank++] = 2;
  else shape[rank - 1] *= 2;
  return result(c, type_tile(c->S->arena, t, rank, shape));
}

/* (a[..., 0], a[..., 1]): two calls on one evaluation of a, told apart by ival. */
static Node *check_split(Call *c) {
  Sema *S = c->S;
  Node *x = tile_arg(c, 0, "a");
  if (!x) return poison(S, c->node->loc);
  const Type *t = x->type;
  if (t->rank == 0 || t->shape[t->rank - 1] != 2)
    return fail(c, x, "%s", arena_printf(S->arena, "needs a tile whose last dimension is 2, got %s",
                                         t->rank ? shape_str(S->arena, t) : "a scalar"));
  c->arg[0] = materialize(S, x, c->node->loc);
  Type *half = type_tile(S->arena, t, t->rank - 1, t->shape);
  Node *pair = node_new(S->arena, ND_TUPLE, c->node->loc);
  for (int k = 0; k < 2; k++) {
    Node *r = result(c, half);
    r->ival = k;
    vec_push(S->arena, &pair->args, r);
  }
  return pair;
}

/* cat along dim: both operands have one shape (tile dimensions are powers
 * of two, so only equal sizes add up to one); can_reorder is accepted and
 * the elements are never reordered, as Triton does now. */
static Node *check_cat(Call *c) {
  Sema *S = c->S;
  Node *a = tile_arg(c, 0, "input"), *b = a ? tile_arg(c, 1, "other") : NULL;
  if (!b) return poison(S, c->node->loc);
  if (a->type->rank == 0 || !type_same_shape(a->type, b->type))
    return fail(c, c->node, "%s", arena_printf(S->arena, "input and other must be tiles of one shape, got %s and %s",
                                               shape_str(S->arena, a->type), shape_str(S->arena, b->type)));
  int64_t dim;
  int ok = const_of(S, c->arg[2], "can_reorder") && pair_args(c, "input", "other");
  if (!ok || !normalize_axis(c, 3, a->type->rank, &dim)) return poison(S, c->node->loc);
  c->arg[3] = mk_const(S, c->arg[3]->loc, value_int(S, dim));
  Type *t = type_tile(S->arena, c->arg[0]->type, c->arg[0]->type->rank, c->arg[0]->type->shape);
  t->shape[dim] *= 2;
  return result(c, t);
}

/* flip along dim (the last when None); dim is made non-negative for the lowering. */
static Node *check_flip(Call *c) {
  Sema *S = c->S;
  Node *x = tile_arg(c, 0, "x");
  if (!x) return poison(S, c->node->loc);
  if (x->type->rank == 0) return fail(c, x, "%s", "x must be a tile, not a scalar");
  int64_t dim = x->type->rank - 1;
  if (!is_none(c->arg[1]) && !normalize_axis(c, 1, x->type->rank, &dim)) return poison(S, c->node->loc);
  c->arg[1] = mk_const(S, c->arg[1]->loc, value_int(S, dim));
  return result(c, x->type);
}

/* gather(src, index, axis): index is an integer tile of src's rank whose
 * sizes off the axis are src's; the result has index's shape (as Triton). */
static Node *check_gather(Call *c) {
  Sema *S = c->S;
  Node *src = tile_arg(c, 0, "src"), *index = src ? tile_arg(c, 1, "index") : NULL;
  if (!index) return poison(S, c->node->loc);
  const Type *s = src->type, *x = index->type;
  if (s->rank == 0) return fail(c, src, "%s", "src must be a tile, not a scalar");
  if (x->is_ptr || !dtype_is_int(x->elem) || x->elem == DT_I1)
    return fail(c, index, "%s", arena_printf(S->arena, "index must be an integer tile, got %s", type_str(S->arena, x)));
  if (x->rank != s->rank)
    return fail(c, index, "%s", arena_printf(S->arena, "index must have src's rank %d, got %s", s->rank,
                                             x->rank ? shape_str(S->arena, x) : "a scalar"));
  int64_t axis;
  if (!normalize_axis(c, 2, s->rank, &axis)) return poison(S, c->node->loc);
  for (int d = 0; d < s->rank; d++)
    if (d != axis && x->shape[d] != s->shape[d])
      return fail(c, index, "%s", arena_printf(S->arena, "index %s and src %s differ in dimension %d; only axis %d may",
                                               shape_str(S->arena, x), shape_str(S->arena, s), d, (int)axis));
  c->arg[2] = mk_const(S, c->arg[2]->loc, value_int(S, axis));
  return result(c, type_tile(S->arena, s, x->rank, x->shape));
}

/* broadcast(input, other): the pair broadcast to their common shape. */
static Node *check_broadcast(Call *c) {
  Sema *S = c->S;
  Node *xs[2] = {tile_arg(c, 0, "input"), NULL};
  if (!xs[0] || !(xs[1] = tile_arg(c, 1, "other")) || !common_broadcast(c, xs, 2)) return poison(S, c->node->loc);
  Node *pair = node_new(S->arena, ND_TUPLE, c->node->loc);
  for (int k = 0; k < 2; k++) vec_push(S->arena, &pair->args, xs[k]);
  return pair;
}

static Node *check_cast(Call *c) {
  Sema *S = c->S;
  Node *x = tile_arg(c, 0, "input");
  DType dt;
  int to_ptr;
  if (!x || !dtype_arg(c, 1, &dt, &to_ptr)) return poison(S, c->node->loc);
  int bitcast = const_bool_arg(c, 3, "bitcast");
  if (to_ptr != x->type->is_ptr && dtype_kind(to_ptr ? x->type->elem : dt) != DK_FLOAT &&
      dtype_bits(to_ptr ? x->type->elem : dt) == 64) {
    /* a 64-bit integer to a pointer and back is the address itself, with or without bitcast=True, as
       in Triton (tutorial 08 loads its matrices' addresses as uint64) */
    bitcast = 1;
    c->arg[3] = mk_const(S, c->arg[3]->loc, value_bool(S, 1));
  }
  if (to_ptr != x->type->is_ptr && !(bitcast && (to_ptr ? dtype_bits(x->type->elem) == 64 : dtype_bits(dt) == 64)))
    return fail(c, c->arg[1], "%s", arena_printf(S->arena, "cannot convert %s to %s%s", type_str(S->arena, x->type),
                                                 to_ptr ? "*" : "", dtype_name(dt)));
  if (bitcast && !to_ptr && !x->type->is_ptr && dtype_bits(dt) != dtype_bits(x->type->elem))
    return fail(c, c->arg[1], "%s", arena_printf(S->arena, "cannot bitcast %s to %s: sizes differ (%d and %d bits)",
                                                 dtype_name(x->type->elem), dtype_name(dt),
                                                 dtype_bits(x->type->elem), dtype_bits(dt)));
  Value *rounding = const_of(S, c->arg[2], "fp_downcast_rounding");
  if (!rounding) return poison(S, c->node->loc);
  if (rounding->kind != V_NONE && (rounding->kind != V_STR || tir_modifier_lookup(TIR_CAST, rounding->s, rounding->slen) < 0))
    return fail(c, c->arg[2], "fp_downcast_rounding must be %s", tir_kind_choices(TIR_CAST, 1, S->arena));
  if (rounding->kind == V_STR && dtype_is_fp8(dt) && !bitcast && !(rounding->slen == 4 && !memcmp(rounding->s, "rtne", 4)))
    return fail(c, c->arg[2], "%s", "conversions to fp8 round to nearest even (rtne) only");
  return result(c, type_with_elem(S->arena, x->type, dt, to_ptr));
}

static Node *check_pointer_type(Call *c) {
  DType dt;
  int is_ptr;
  if (!dtype_arg(c, 0, &dt, &is_ptr)) return poison(c->S, c->node->loc);
  if (is_ptr) return fail(c, c->arg[0], "%s", "pointers to pointers are not supported");
  return mk_const(c->S, c->node->loc, value_dtype(c->S, dt, 1));
}

/* get_int_dtype(bitwidth, signed): Triton's constexpr function; 1 bit is int1 either way. */
static Node *check_get_int_dtype(Call *c) {
  int64_t bits;
  Value *is_signed = const_of(c->S, c->arg[1], "signed");
  if (!const_int_arg(c, 0, "bitwidth", &bits) || !is_signed) return poison(c->S, c->node->loc);
  int ok, want_signed = value_truth(is_signed, &ok);
  if (!ok) return fail(c, c->arg[1], "%s", "signed must be a constexpr bool");
  for (int dt = 0; dt < DT_COUNT; dt++) {
    int matches = dtype_bits((DType)dt) == bits && (bits == 1 || dtype_is_signed((DType)dt) == want_signed);
    if (matches && dtype_is_int((DType)dt)) return mk_const(c->S, c->node->loc, value_dtype(c->S, (DType)dt, 0));
  }
  char what[96];
  snprintf(what, sizeof what, "%lld bits, %ssigned", (long long)bits, want_signed ? "" : "un");
  return fail(c, c->arg[0], "no integer dtype has %s (1, 8, 16, 32 or 64 bits)", what);
}

static Node *check_hint(Call *c) {
  Node *x = tile_arg(c, 0, "input");
  Value *v = x ? const_of(c->S, c->arg[1], "values") : NULL;
  if (!v) return poison(c->S, c->node->loc);
  if (!x->type->is_ptr && !dtype_is_int(x->type->elem)) return fail(c, x, "%s", "applies to integers and pointers");
  int n = v->kind == V_LIST ? v->items.len : 1;
  if (n != (x->type->rank ? x->type->rank : 1))
    return fail(c, c->arg[1], "%s", "give one value per dimension");
  for (int i = 0; i < n; i++) {
    Value *d = v->kind == V_LIST ? v->items.data[i] : v;
    if (d->kind != V_INT || d->i <= 0) return fail(c, c->arg[1], "%s", "values must be positive integers");
  }
  return result(c, x->type);
}

static Node *check_static_assert(Call *c) {
  Node *cond = c->arg[0];
  if (cond->type && !is_const(cond))
    return fail(c, cond, "%s", "needs a constexpr condition; use tl.device_assert for run-time checks");
  Value *v = const_of(c->S, cond, "the condition");
  Value *msg = const_of(c->S, c->arg[1], "the message");
  if (!v || !msg) return poison(c->S, c->node->loc);
  int ok;
  if (!value_truth(v, &ok))
    diag_error(c->S->diags, c->node->loc, "static assertion failed%s%s", msg->kind == V_STR && msg->slen ? ": " : "",
               msg->kind == V_STR ? msg->s : "");
  return mk_const(c->S, c->node->loc, value_new(c->S, V_NONE));
}

static Node *check_static_print(Call *c) {
  Sema *S = c->S;
  Buf b;
  buf_init(&b, S->arena);
  Node *t = c->arg[0];
  for (int i = 0; i < t->args.len; i++) {
    Node *v = t->args.data[i];
    buf_puts(&b, i ? " " : "");
    buf_puts(&b, describe(S, v));
  }
  diag_note(S->diags, c->node->loc, "static_print: %s", buf_cstr(&b));
  return mk_const(S, c->node->loc, value_new(S, V_NONE));
}

/* tl.to_tensor(x): a constexpr number as the run-time scalar it becomes on its own. */
static Node *check_to_tensor(Call *c) {
  Node *x = runtime(c->S, c->arg[0]);
  if (x->type) return x;
  return fail(c, c->arg[0], "%s", "takes a number, a boolean or a tile");
}

/* tl.assume(cond): Triton hands the promise to LLVM; tile's analyses do not
 * read it yet, so once checked it leaves no code (what a false promise
 * gives is undefined in both). */
static Node *check_assume(Call *c) {
  Node *cond = c->arg[0];
  if (is_const(cond) && !cond->type) {
    int ok;
    Value *v = const_of(c->S, cond, "the condition");
    if (!v) return poison(c->S, c->node->loc);
    if (!value_truth(v, &ok)) return fail(c, cond, "%s", "the condition is the constexpr False");
    return mk_const(c->S, c->node->loc, value_new(c->S, V_NONE));
  }
  cond = tile_arg(c, 0, "the condition");
  if (!cond) return poison(c->S, c->node->loc);
  if (cond->type->is_ptr || cond->type->elem != DT_I1)
    return fail(c, cond, "the condition must be a boolean (a comparison), not %s", type_str(c->S->arena, cond->type));
  return mk_const(c->S, c->node->loc, value_new(c->S, V_NONE));
}

static Node *check_device_assert(Call *c) {
  Node *cond = tile_arg(c, 0, "the condition");
  if (!cond || !mask_arg(c, 2)) return poison(c->S, c->node->loc);
  c->arg[0] = to_bool(c->S, cond);
  Value *msg = const_of(c->S, c->arg[1], "the message");
  if (!msg) return poison(c->S, c->node->loc);
  if (msg->kind != V_STR) return fail(c, c->arg[1], "%s", "the message must be a string");
  return result(c, NULL);
}

static Node *check_device_print(Call *c) {
  Value *prefix = const_of(c->S, c->arg[0], "the prefix");
  if (!prefix) return poison(c->S, c->node->loc);
  if (prefix->kind != V_STR) return fail(c, c->arg[0], "%s", "the first argument must be a string prefix");
  Node *t = c->arg[1];
  for (int i = 0; i < t->args.len; i++) {
    t->args.data[i] = runtime(c->S, t->args.data[i]);
    if (!t->args.data[i]->type) return fail(c, t->args.data[i], "%s", "prints numbers and tiles only");
  }
  return result(c, NULL);
}

static int string_arg(Call *c, int i, const char *what) {
  Value *v = const_of(c->S, c->arg[i], what);
  if (v && v->kind != V_STR) fail(c, c->arg[i], "%s must be a string", what);
  return v && v->kind == V_STR;
}

/* inline_asm_elementwise's result dtypes: one, or a tuple of them (several results, a tuple returned). */
static int asm_dtypes(Call *c, DType *dts, int *n) {
  Node *d = c->arg[3];
  int tuple = d->kind == ND_TUPLE;
  *n = tuple ? d->args.len : 1;
  if (tuple && (*n == 0 || *n > MAX_ASM_ARGS)) {
    fail(c, d, "dtype must be a dtype or a tuple of 1 to %s dtypes", "16");
    return 0;
  }
  for (int i = 0; i < *n; i++)
    if (!dtype_node(c, tuple ? d->args.data[i] : d, &dts[i], NULL)) return 0;
  return 1;
}

/* pack: each run of the asm takes `pack` consecutive elements along the last dimension, which the
 * layout then keeps in one thread's registers (docs/language.md). */
static int asm_pack_ok(Call *c, int64_t pack, const Type *t) {
  if (pack < 1 || pack > 16 || (pack & (pack - 1))) {
    fail(c, c->arg[5], "%s", "pack must be 1, 2, 4, 8 or 16");
    return 0;
  }
  if (pack > 1 && (!t->rank || t->shape[t->rank - 1] % pack)) {
    fail(c, c->arg[5], "pack=%s needs tiles whose last dimension is a multiple of it",
         arena_printf(c->S->arena, "%lld", (long long)pack));
    return 0;
  }
  return 1;
}

/* Several results: one call node per result (ival its index) on one evaluation of the args, all
 * assigned at once, so that lowering makes them one op (lower.c's lower_inline_asm). */
static Node *asm_results(Call *c, const Type *shape, const DType *dts, int n) {
  Sema *S = c->S;
  Node **xs = c->arg[2]->args.data;
  for (int i = 0; i < c->arg[2]->args.len; i++) xs[i] = materialize(S, xs[i], c->node->loc);
  Node *tuple = node_new(S->arena, ND_TUPLE, c->node->loc);
  for (int k = 0; k < n; k++) {
    Node *r = result(c, type_with_elem(S->arena, shape, dts[k], 0));
    r->ival = k;
    vec_push(S->arena, &tuple->args, r);
  }
  return materialize(S, tuple, c->node->loc);
}

/* tl.inline_asm_elementwise: PTX once per `pack` elements of the broadcast args (not promoted), one
 * result per dtype. */
static Node *check_inline_asm(Call *c) {
  Node *args = c->arg[2];
  int64_t pack, pure;
  DType dts[MAX_ASM_ARGS];
  int n_results;
  if (!string_arg(c, 0, "asm") || !string_arg(c, 1, "constraints")) return poison(c->S, c->node->loc);
  if (args->kind != ND_TUPLE || args->args.len == 0 || args->args.len > MAX_ASM_ARGS)
    return fail(c, args, "args must be a list or tuple of 1 to %s tiles", "16");
  if (!asm_dtypes(c, dts, &n_results) || !const_int_arg(c, 4, "is_pure", &pure) ||
      !const_int_arg(c, 5, "pack", &pack))
    return poison(c->S, c->node->loc);
  Node **xs = args->args.data;
  for (int i = 0; i < args->args.len; i++) {
    xs[i] = runtime(c->S, xs[i]);
    if (!xs[i]->type || xs[i]->type->is_ptr || xs[i]->type->elem == DT_I1)
      return fail(c, xs[i], "%s", "args must be number tiles or scalars (not pointers or booleans)");
  }
  Node *x = common_broadcast(c, xs, args->args.len);
  if (!x || !asm_pack_ok(c, pack, x->type)) return poison(c->S, c->node->loc);
  if (c->arg[3]->kind == ND_TUPLE) return asm_results(c, x->type, dts, n_results);
  return result(c, type_with_elem(c->S->arena, x->type, dts[0], 0));
}

static Node *check_debug_barrier(Call *c) { return result(c, NULL); }

/* gdc_wait, gdc_launch_dependents: programmatic dependent launch's waits and
 * signals.  Tile's launches never let a grid start before the one it
 * depends on has finished (no PDL launch attribute yet), and then both are
 * no-ops on the GPU too, so they leave no code. */
static Node *check_gdc(Call *c) { return mk_const(c->S, c->node->loc, value_new(c->S, V_NONE)); }

/* smid(), globaltimer(): PTX's %smid (i32) and %globaltimer (i64). */
static Node *check_special_register(Call *c) {
  return result(c, type_scalar(c->S->arena, c->id == B_GLOBALTIMER ? DT_I64 : DT_I32));
}

/* num_warps(), num_threads(): constexprs, as in Triton, from the warps the kernel is compiled for. */
static Node *check_launch_shape(Call *c) {
  int warps = c->S->num_warps;
  return mk_const(c->S, c->node->loc, value_int(c->S, c->id == B_NUM_THREADS ? warps * 32 : warps));
}

static Node *check_random(Call *c) {
  Node *seed = tile_arg(c, 0, "seed"), *off = seed ? tile_arg(c, 1, "offset") : NULL;
  int64_t rounds;
  if (!off || !const_int_arg(c, 2, "n_rounds", &rounds)) return poison(c->S, c->node->loc);
  if (seed->type->rank || !dtype_is_int(seed->type->elem) || seed->type->is_ptr)
    return fail(c, seed, "%s", "the seed must be an integer scalar");
  if (!dtype_is_int(off->type->elem) || off->type->is_ptr) return fail(c, off, "%s", "offsets must be integers");
  if (rounds <= 0 || rounds > 64) return fail(c, c->arg[2], "%s", "n_rounds must be between 1 and 64");
  DType dt = c->id == B_RANDINT ? DT_U32 : DT_FP32;
  return result(c, type_with_elem(c->S->arena, off->type, dt, 0));
}

/* tl.range's options after the bounds: num_stages (3) and loop_unroll_factor (4) integers or None,
 * the flags (5..8) bools; num_stages within tile_options' range, an unroll factor that cannot blow
 * the kernel up (below 2: no unrolling, as Triton). */
enum { MAX_UNROLL_FACTOR = 64 };

static int loop_option_ok(Call *c, int i) {
  Value *v = const_of(c->S, c->arg[i], "a loop option");
  if (!v) return 0;
  const char *problem = NULL;
  if (i <= 4 && v->kind != V_NONE && v->kind != V_INT) problem = "must be an integer or None";
  else if (i > 4 && v->kind != V_BOOL && v->kind != V_INT) problem = "must be a bool";
  else if (i == 3 && v->kind == V_INT && (v->i < 0 || v->i > ARCH_MAX_STAGES || v->is_u64))
    problem = arena_printf(c->S->arena, "must be from 0 to %d", ARCH_MAX_STAGES);
  else if (i == 4 && v->kind == V_INT && (v->i > MAX_UNROLL_FACTOR || v->is_u64))
    problem = arena_printf(c->S->arena, "must be at most %d", MAX_UNROLL_FACTOR);
  if (!problem) return 1;
  Param params[MAX_BUILTIN_PARAMS]; /* the option's name, from lang/builtins.def's signature */
  parse_signature(c->S, c->id, params);
  diag_error(c->S->diags, c->arg[i]->loc, "tl.range's %s %s", params[i].name, problem);
  return 0;
}

static Node *check_range(Call *c) {
  if (!c->S->in_for_iter)
    return fail(c, c->node, "%s", "can only be the iterable of a for loop");
  for (int i = 0; i < 3; i++) {
    if (i > 0 && is_none(c->arg[i])) continue;
    Node *b = runtime(c->S, c->arg[i]);
    int per_element = c->S->mapping && c->id != B_STATIC_RANGE; /* tl.map_elementwise's elements (sema.c) */
    if (!b->type || (b->type->rank && !per_element) || b->type->is_ptr || !dtype_is_int(b->type->elem))
      return fail(c, c->arg[i], "%s", "bounds and step must be integer scalars");
  }
  for (int i = 3; i < c->n; i++)
    if (!loop_option_ok(c, i)) return poison(c->S, c->node->loc);
  return result(c, NULL);
}

/* tl.condition(c, disable_licm): only a while loop's condition, which sema
 * takes from the call (the first argument, checked there as any). */
static Node *check_condition(Call *c) {
  if (!c->S->in_while_cond) return fail(c, c->node, "%s", "can only be the condition of a while loop");
  Value *v = const_of(c->S, c->arg[1], "tl.condition's disable_licm");
  if (!v) return poison(c->S, c->node->loc);
  if (v->kind != V_BOOL && v->kind != V_INT) return fail(c, c->arg[1], "%s", "disable_licm must be a bool");
  return result(c, NULL);
}

static Node *check_py_minmax(Call *c) {
  Sema *S = c->S;
  Node *t = c->arg[0];
  if (t->args.len == 1 && t->args.data[0]->kind == ND_TUPLE) t = t->args.data[0];
  if (t->args.len == 0) return fail(c, c->node, "%s", "expects at least one argument");
  Node *acc = t->args.data[0];
  for (int i = 1; i < t->args.len; i++) {
    Node *pair[2] = {acc, t->args.data[i]};
    acc = check_builtin_call(S, c->node, c->id == B_PY_MIN ? B_MINIMUM : B_MAXIMUM, NULL, pair, 2, NULL, 0);
    if (is_poison(acc)) return acc;
  }
  return acc;
}

static Node *check_py_number(Call *c) {
  Sema *S = c->S;
  Node *x = c->arg[0];
  if (x->type && !is_const(x))
    return fail(c, x, "%s", "applies to constexprs only; convert run-time values with .to(dtype)");
  Value *v = const_of(S, x, "the argument");
  if (!v) return poison(S, c->node->loc);
  double f = 0;
  if (v->kind == V_STR) {
    const char *s = v->s;
    if (!strcmp(s, "inf") || !strcmp(s, "+inf") || !strcmp(s, "infinity")) f = INFINITY;
    else if (!strcmp(s, "-inf") || !strcmp(s, "-infinity")) f = -INFINITY;
    else if (!strcmp(s, "nan")) f = NAN;
    else {
      char *end;
      f = strtod(s, &end);
      if (*end || !*s) return fail(c, x, "%s", "could not convert the string to a number");
    }
  } else if (v->kind == V_INT && c->id == B_PY_INT) {
    return mk_const(S, c->node->loc, v); /* from 2^63 too, as Python's */
  } else if (v->kind == V_INT || v->kind == V_BOOL) {
    f = v->is_u64 ? (double)(uint64_t)v->i : (double)v->i;
  } else if (v->kind == V_FLOAT) {
    f = v->f;
  } else {
    return fail(c, x, "%s", "expects a number or a string");
  }
  if (c->id == B_PY_FLOAT) return mk_const(S, c->node->loc, value_float(S, f));
  if (c->id == B_PY_BOOL) return mk_const(S, c->node->loc, value_bool(S, f != 0));
  if (!(f > -9.2e18 && f < 9.2e18)) return fail(c, x, "%s", "the value does not fit in a 64-bit integer");
  return mk_const(S, c->node->loc, value_int(S, v->kind == V_INT ? v->i : (int64_t)f));
}

static Node *check_py_len(Call *c) {
  Node *x = c->arg[0];
  if (x->type && !is_const(x)) {
    if (x->type->rank == 0) return fail(c, x, "%s", "a scalar has no length");
    return mk_const(c->S, c->node->loc, value_int(c->S, x->type->shape[0]));
  }
  if (x->kind == ND_TUPLE) return mk_const(c->S, c->node->loc, value_int(c->S, x->args.len));
  Value *v = const_of(c->S, x, "the argument");
  if (!v) return poison(c->S, c->node->loc);
  if (v->kind == V_STR) return mk_const(c->S, c->node->loc, value_int(c->S, (int64_t)v->slen));
  return fail(c, x, "%s", "expects a tuple, a string or a tile");
}

/* Whether x is an instance of the class value cls; -1 when cls is not a class isinstance knows. */
static int instance_of(Node *x, const Value *cls) {
  int desc = x->kind == ND_DESC && x->ival == DESC_TENSOR;
  switch (cls->kind) {
  case V_TENSOR: return !desc && (x->type != NULL || x->kind == ND_DESC); /* a block pointer is a tensor in Triton */
  case V_CONSTEXPR: return is_const(x) && !x->type;
  case V_CLASS:
    if (!strcmp(cls->s, "dtype"))
      return is_const(x) && !x->type && (x->cval->kind == V_DTYPE || x->cval->kind == V_MISSING_DTYPE);
    if (!strcmp(cls->s, "tuple_type")) return is_const_kind(x, V_TUPLE_TYPE);
    if (!strcmp(cls->s, "tuple")) return x->kind == ND_TUPLE || is_const_kind(x, V_LIST);
    if (!strcmp(cls->s, "block_type")) return is_const_kind(x, V_BLOCK_TYPE); /* a tile's x.type, not a scalar's */
    if (!strcmp(cls->s, "slice")) return 0; /* slices are only written in subscripts */
    return desc;
  case V_BUILTIN: /* tl.pointer_type, a class in Triton: a pointer dtype (x.dtype of a pointer) */
    if (cls->i != B_POINTER_TYPE) return -1;
    return is_const(x) && !x->type && x->cval->kind == V_DTYPE && x->cval->dtype_is_ptr;
  case V_LIST:
    for (int i = 0; i < cls->items.len; i++) {
      int r = instance_of(x, cls->items.data[i]);
      if (r != 0) return r;
    }
    return 0;
  default: return -1;
  }
}

/* isinstance(obj, classinfo), folded: what a helper taking either a
 * descriptor or a pointer (tutorial 06) asks of its argument. */
static Node *check_py_isinstance(Call *c) {
  Value *cls = const_of(c->S, c->arg[1], "the class");
  if (!cls || is_poison(c->arg[0])) return poison(c->S, c->node->loc);
  int r = instance_of(c->arg[0], cls);
  if (r < 0)
    return fail(c, c->arg[1], "%s", "the class must be tl.tensor, tl.tensor_descriptor, tl.constexpr, tl.dtype, tl.pointer_type, tl.block_type, tl.tuple or tl.slice, or a tuple of them");
  return mk_const(c->S, c->node->loc, value_bool(c->S, r));
}

/* hasattr(module, "name"), folded: how a library asks which Triton it runs
 * on (hasattr(tl, "gather")); tile's own namespaces answer for tile. */
/* The constant name of getattr / hasattr (a string); NULL after an error. */
static const char *attribute_name(Call *c) {
  Value *name = const_of(c->S, c->arg[1], "the attribute's name");
  if (name && name->kind != V_STR) fail(c, c->arg[1], "%s", "the attribute's name must be a string");
  return name && name->kind == V_STR ? name->s : NULL;
}

/* hasattr(obj, name): a constexpr bool, whether obj.name resolves (a module, a tile, a dtype, ...). */
static Node *check_py_hasattr(Call *c) {
  const char *name = attribute_name(c);
  if (!name) return poison(c->S, c->node->loc);
  return mk_const(c->S, c->node->loc, value_bool(c->S, sema_has_attribute(c->S, c->arg[0], c->node->loc, name)));
}

/* getattr(obj, name[, default]): obj.name with a constant name; the default where it has none. */
static Node *check_py_getattr(Call *c) {
  const char *name = attribute_name(c);
  if (!name) return poison(c->S, c->node->loc);
  const NodeVec *rest = &c->arg[2]->args; /* *default */
  if (rest->len > 1) return fail(c, rest->data[1], "%s", "getattr takes at most 3 arguments");
  if (rest->len == 1 && !sema_has_attribute(c->S, c->arg[0], c->node->loc, name)) return rest->data[0];
  Node *attr = node_new(c->S->arena, ND_ATTR, c->node->loc);
  attr->name = name;
  return sema_attribute(c->S, c->arg[0], attr);
}

Node *check_builtin_call(Sema *S, Node *call, int id, Node *self, Node **args, int n_args, Node **kw, int n_kw) {
  Node *all[66];
  int n = 0;
  if (self) all[n++] = self;
  for (int i = 0; i < n_args && n < 65; i++) all[n++] = args[i];
  if (S->selecting && (builtin_flags(id) & EFFECT)) { /* both branches run: the effect would happen on both */
    diag_error(S->diags, call->loc, "tl.map_elementwise: %s() under an if or a loop on the elements is part of Triton "
               "but not supported by tile yet (tile runs both branches, and a loop's body, for every element)",
               builtin_name(id));
    return poison(S, call->loc);
  }
  Node *bound[MAX_BUILTIN_PARAMS];
  Call c = {S, call, id, bound, 0};
  if (!bind(S, call, id, all, n, kw, n_kw, bound, &c.n)) return poison(S, call->loc);
  for (int i = 0; i < c.n; i++)
    if (is_poison(bound[i])) return bound[i];
  switch (id) {
#define BUILTIN(id, handler, op, flags, name, params, summary) case B_##id: return check_##handler(&c);
#include "builtins.def"
#undef BUILTIN
  default: return poison(S, call->loc);
  }
}

static const char *flag_text(int flags) {
  if (flags & PY) return "Python builtin";
  if (flags & CUDA) return "`tl.extra.cuda.`";
  if (flags & DESC) return "descriptor method";
  if (flags & TL && flags & METHOD) return "`tl.`, method";
  return flags & METHOD ? "method" : "`tl.`";
}

/* A parameter's default as written (the standard library's are literals). */
static void print_default(const Node *d, Buf *out) {
  switch (d->kind) {
  case ND_NONE: buf_puts(out, "None"); break;
  case ND_BOOL: buf_puts(out, d->ival ? "True" : "False"); break;
  case ND_INT: buf_printf(out, "%lld", (long long)d->ival); break;
  case ND_FLOAT: buf_printf(out, "%g", d->fval); break;
  case ND_STR: buf_printf(out, "'%.*s'", (int)d->str_len, d->str); break;
  case ND_NAME: buf_puts(out, d->name); break;
  default: buf_puts(out, "..."); break;
  }
}

/* A docstring on one line (a table cell): runs of white space become one space. */
static void print_docstring(const Node *f, Buf *out) {
  const Node *first = f->body.len ? f->body.data[0] : NULL;
  if (!first || first->kind != ND_EXPR_STMT || !first->a || first->a->kind != ND_STR) return;
  int space = 0, started = 0;
  for (size_t i = 0; i < first->a->str_len; i++) {
    char ch = first->a->str[i];
    if (ch == ' ' || ch == '\n' || ch == '\t') {
      space = 1;
      continue;
    }
    if (space && started) buf_putn(out, " ", 1);
    buf_putn(out, ch == '|' ? "/" : &ch, 1);
    space = 0, started = 1;
  }
}

/* One row per function of lang/stdlib.tl: its parameters and its docstring. */
static void stdlib_reference(const Module *stdlib, Buf *out) {
  for (int i = 0; stdlib && i < stdlib->root->body.len; i++) {
    const Node *f = stdlib->root->body.data[i];
    if (f->kind != ND_FUNCDEF || f->name[0] == '_') continue; /* private helpers, as in Python */
    buf_printf(out, "| `%s` | `(", f->name);
    for (int p = 0; p < f->args.len; p++) {
      const Node *param = f->args.data[p];
      buf_printf(out, "%s%s", p ? ", " : "", param->name);
      if (param->b) buf_puts(out, "="), print_default(param->b, out);
    }
    buf_puts(out, ")` | `tl.`, standard library | ");
    print_docstring(f, out);
    buf_puts(out, " |\n");
  }
}

void builtins_reference(const Module *stdlib, Buf *out) {
  buf_puts(out, "| builtin | parameters | reachable as | semantics |\n|---|---|---|---|\n");
  for (int i = 0; i < B_COUNT; i++)
    buf_printf(out, "| `%s` | `%s` | %s | %s |\n", table[i].name, table[i].params, flag_text(table[i].flags),
               table[i].summary);
  stdlib_reference(stdlib, out);
}
