/* Calls of libdevice functions (lang/libdevice.def): `libdevice.tanh(x)`,
 * `tl.extra.cuda.libdevice.pow(x, y)`, `tl.math.tanh(x)`.  As Triton's extern
 * dispatch, the arguments broadcast together but do not promote: their
 * types must be one of the function's signatures exactly (a constexpr
 * argument takes its literal type, i32 or fp32), so fp16 and bf16 are
 * errors. */
#include "sema_impl.h"

#include <string.h>

/* Whether the argument types are one of row's signatures: x one of its types, the others as x says. */
static int matches(int row, Node **xs, int n) {
  DType x = xs[libdevice_x_arg(row)]->type->elem;
  if (!libdevice_takes(row, x)) return 0;
  for (int i = 0; i < n; i++)
    if (xs[i]->type->elem != libdevice_arg(row, i, x)) return 0;
  return 1;
}

/* "(fp32, i32), (fp64, i32)": what the function takes. */
static const char *signatures(Sema *S, int first) {
  Buf b;
  buf_init(&b, S->arena);
  for (int r = first, k = 0; r < LIBDEVICE_COUNT; r++) {
    if (strcmp(libdevice_name(r), libdevice_name(first))) continue;
    for (int wide = 0; wide < 2; wide++) {
      DType x = libdevice_x_type(r, wide);
      if (x == DT_COUNT) continue;
      buf_puts(&b, k++ ? ", (" : "(");
      for (int i = 0; i < libdevice_arity(r); i++)
        buf_printf(&b, "%s%s", i ? ", " : "", dtype_name(libdevice_arg(r, i, x)));
      buf_puts(&b, ")");
    }
  }
  return buf_cstr(&b);
}

static Node *no_variant(Sema *S, Node *call, const char *fn, int first, Node **xs, int n) {
  Buf b;
  buf_init(&b, S->arena);
  int narrow = 0;
  for (int i = 0; i < n; i++) {
    buf_printf(&b, "%s%s", i ? ", " : "", dtype_name(xs[i]->type->elem));
    narrow |= xs[i]->type->elem == DT_FP16 || xs[i]->type->elem == DT_BF16;
  }
  diag_error(S->diags, call->loc, "%s: no variant for (%s); it takes %s", fn, buf_cstr(&b), signatures(S, first));
  if (narrow) diag_note(S->diags, call->loc, "convert first, e.g. x.to(tl.float32)");
  return poison(S, call->loc);
}

/* Broadcasts the arguments to one shape; 0 after an error. */
static int broadcast_args(Sema *S, const char *fn, Node **xs, int n) {
  Type acc = *xs[0]->type;
  for (int i = 1; i < n; i++) {
    int rank;
    int64_t shape[MAX_RANK];
    if (!broadcast_shapes(&acc, xs[i]->type, &rank, shape)) {
      diag_error(S->diags, xs[i]->loc, "%s: operand shapes %s and %s cannot broadcast", fn, shape_str(S->arena, &acc),
                 shape_str(S->arena, xs[i]->type));
      return 0;
    }
    acc.rank = rank;
    memcpy(acc.shape, shape, sizeof shape);
  }
  for (int i = 0; i < n; i++) xs[i] = broadcast(S, xs[i], acc.rank, acc.shape);
  return 1;
}

Node *check_libdevice_call(Sema *S, Node *call, int first, Node **args, int n_args, Node **kw, int n_kw) {
  const char *fn = arena_printf(S->arena, "libdevice.%s", libdevice_name(first));
  int arity = libdevice_arity(first);
  if (n_kw) {
    diag_error(S->diags, kw[0]->loc, "%s() takes its arguments by position only", fn);
    return poison(S, call->loc);
  }
  if (n_args != arity) {
    diag_error(S->diags, call->loc, "%s() takes %d argument%s, got %d", fn, arity, arity == 1 ? "" : "s", n_args);
    return poison(S, call->loc);
  }
  Node *xs[LIBDEVICE_MAX_ARGS];
  for (int i = 0; i < n_args; i++) {
    xs[i] = runtime(S, args[i]);
    if (!xs[i]->type || xs[i]->type->is_ptr) {
      diag_error(S->diags, args[i]->loc, "%s: argument %d must be a number tile or scalar, not %s", fn, i + 1,
                 describe(S, args[i]));
      return poison(S, call->loc);
    }
  }
  if (!broadcast_args(S, fn, xs, n_args)) return poison(S, call->loc);
  int row = -1;
  for (int r = first; r < LIBDEVICE_COUNT && row < 0; r++)
    if (!strcmp(libdevice_name(r), libdevice_name(first)) && matches(r, xs, n_args)) row = r;
  if (row < 0) return no_variant(S, call, fn, first, xs, n_args);
  DType result = libdevice_result(row, xs[libdevice_x_arg(row)]->type->elem);
  Node *n = typed_node(S, ND_CALL, call->loc, type_with_elem(S->arena, xs[0]->type, result, 0));
  Value *f = value_new(S, V_LIBDEVICE);
  f->i = row;
  n->a = mk_const(S, call->loc, f);
  n->name = fn;
  for (int i = 0; i < n_args; i++) vec_push(S->arena, &n->args, xs[i]);
  return n;
}

/* ---- extern_elementwise ---------------------------------------------------------------- */

/* "(fp32, fp32)": a tuple of dtypes as Triton prints a table's key. */
static const char *types_str(Sema *S, Node **xs, int n) {
  Buf b;
  buf_init(&b, S->arena);
  buf_puts(&b, "(");
  for (int i = 0; i < n; i++) buf_printf(&b, "%s%s", i ? ", " : "", dtype_name(xs[i]->type->elem));
  buf_puts(&b, n == 1 ? ",)" : ")");
  return buf_cstr(&b);
}

/* Whether a table key (a tuple of dtypes) is the argument types. */
static int key_is(const Value *key, Node **xs, int n) {
  if (!key || key->kind != V_LIST || key->items.len != n) return 0;
  for (int i = 0; i < n; i++) {
    const Value *t = key->items.data[i];
    if (t->kind != V_DTYPE || t->dtype_is_ptr || t->dtype != xs[i]->type->elem) return 0;
  }
  return 1;
}

/* The libdevice row with `symbol` ("__nv_fdiv_rn") as its narrow or wide function; -1 if none. */
static int row_of_symbol(const char *symbol) {
  for (int r = 0; r < LIBDEVICE_COUNT; r++)
    for (int wide = 0; wide < 2; wide++)
      if (libdevice_x_type(r, wide) != DT_COUNT && !strcmp(libdevice_symbol(r, wide), symbol)) return r;
  return -1;
}

static Node *extern_error(Sema *S, Node *at, const char *message) {
  diag_error(S->diags, at->loc, "extern_elementwise: %s", message);
  return poison(S, at->loc);
}

/* extern_elementwise(lib_name, lib_path, args, {(dtype, ...): (symbol, dtype), ...}, is_pure): Triton's
 * extern dispatch, the table choosing the symbol by the argument types exactly; the call is the libdevice
 * function of that symbol (lib_name and lib_path aside: tile links its own libdevice). */
Node *extern_elementwise_call(Sema *S, Node *call, Node **arg) {
  Node *list = arg[2], *table = arg[3], *xs[LIBDEVICE_MAX_ARGS];
  if (list->kind != ND_TUPLE || list->args.len > LIBDEVICE_MAX_ARGS)
    return extern_error(S, list, arena_printf(S->arena, "args must be a list of at most 4 values, not %s",
                                              describe(S, list)));
  if (table->kind != ND_DICT)
    return extern_error(S, table, arena_printf(S->arena, "arg_type_symbol_dict must be a dictionary, not %s",
                                               describe(S, table)));
  int n = list->args.len;
  for (int i = 0; i < n; i++) {
    xs[i] = runtime(S, list->args.data[i]);
    if (!xs[i]->type || xs[i]->type->is_ptr)
      return extern_error(S, list->args.data[i], arena_printf(S->arena, "an argument must be a number tile or "
                                                              "scalar, not %s", describe(S, list->args.data[i])));
  }
  if (!broadcast_args(S, "extern_elementwise", xs, n)) return poison(S, call->loc);
  Value *entry = NULL;
  for (int i = 0; i < table->args.len && !entry; i++)
    if (key_is(const_of(S, table->args.data[i], "a signature"), xs, n))
      entry = const_of(S, table->kwargs.data[i], "a symbol and dtype");
  if (!entry)
    return extern_error(S, call, arena_printf(S->arena, "no entry of the table is %s (the argument types, exactly: "
                                              "Triton does not promote them)", types_str(S, xs, n)));
  if (entry->kind != V_LIST || entry->items.len != 2 || entry->items.data[0]->kind != V_STR ||
      entry->items.data[1]->kind != V_DTYPE)
    return extern_error(S, call, arena_printf(S->arena, "the entry for %s must be (symbol, dtype), not %s",
                                              types_str(S, xs, n), value_str(S->arena, entry)));
  const char *symbol = entry->items.data[0]->s;
  int row = row_of_symbol(symbol);
  if (row < 0)
    return extern_error(S, call, arena_printf(S->arena, "'%s' is not a libdevice function tile has (lang/libdevice.def; "
                                              "tile links only libdevice)", symbol));
  Node *r = check_libdevice_call(S, call, row, xs, n, NULL, 0);
  if (is_poison(r)) return r;
  int chosen = (int)r->a->cval->i;
  DType x = xs[libdevice_x_arg(chosen)]->type->elem;
  if (strcmp(libdevice_symbol(chosen, x == libdevice_x_type(chosen, 1)), symbol))
    return extern_error(S, call, arena_printf(S->arena, "%s does not take %s", symbol, types_str(S, xs, n)));
  if (r->type->elem != entry->items.data[1]->dtype)
    return extern_error(S, call, arena_printf(S->arena, "%s returns %s, not %s", symbol, dtype_name(r->type->elem),
                                              dtype_name(entry->items.data[1]->dtype)));
  return r;
}
