/* Custom combines: tl.reduce(input, axis, combine_fn, keep_dims) and
 * tl.associative_scan(input, axis, combine_fn, reverse).  The input is a
 * tile or a tuple of N tiles of one shape; combine_fn, a @jit function of
 * 2N scalars returning N, is checked here on scalars of the inputs' element
 * types, its body kept apart from the caller's statements: the lowering
 * makes it the combine region of one reduce_combine or scan_combine op
 * (docs/ir.md).
 *
 * The typed call: args [inputs (a TUPLE), axis, combine_fn, keep_dims or
 * reverse]; body the combine's statements; orelse its 2N parameters (NAMEs,
 * accumulated values first); kwargs its N returned values.  It stands as
 * the value of an ASSIGN to N temporaries, one per result. */
#include "sema_impl.h"

#include <string.h>

enum { MAX_COMBINE = 16 }; /* tiles a combine may carry */

/* Reports "fn: msg" at loc; 0, for the checks' failure. */
static int fail_at(Sema *S, Loc loc, const char *fn, const char *msg) {
  diag_error(S->diags, loc, "%s: %s", fn, msg);
  return 0;
}

/* The input tiles, evaluated once, in order; 0 after an error. */
static int input_tiles(Sema *S, const char *fn, Node *input, Node **tiles) {
  int n = input->kind == ND_TUPLE ? input->args.len : 1;
  if (n < 1 || n > MAX_COMBINE)
    return fail_at(S, input->loc, fn, arena_printf(S->arena, "input must be a tile or a tuple of 1 to %d tiles", MAX_COMBINE));
  for (int i = 0; i < n; i++) {
    Node *x = runtime(S, input->kind == ND_TUPLE ? input->args.data[i] : input);
    if (is_poison(x)) return 0;
    if (!x->type || x->type->rank == 0 || x->type->is_ptr)
      return fail_at(S, x->loc, fn, arena_printf(S->arena, "input must be a tile of numbers, got %s", describe(S, x)));
    if (i && !type_same_shape(x->type, tiles[0]->type))
      return fail_at(S, x->loc, fn, arena_printf(S->arena, "the input tiles must have one shape: %s and %s",
                                                   type_str(S->arena, tiles[0]->type), type_str(S->arena, x->type)));
    tiles[i] = materialize(S, x, x->loc);
  }
  return n;
}

static const char *decorator_name(const Node *d) {
  if (d->kind == ND_CALL) d = d->a;
  return d->kind == ND_NAME || d->kind == ND_ATTR ? d->name : "";
}

/* combine_fn (scalar_fn for map_elementwise, `what`): a @triton.jit function; its definition, or NULL
 * after an error. */
static Node *jit_function_arg(Sema *S, const char *fn, const char *what, Node *arg) {
  if (is_poison(arg)) return NULL;
  if (!is_const_kind(arg, V_FUNC) || arg->cval->self) {
    fail_at(S, arg->loc, fn,
            arena_printf(S->arena, "%s must be a @triton.jit function, got %s", what, describe(S, arg)));
    return NULL;
  }
  Node *def = arg->cval->func;
  for (int i = 0; i < def->kwargs.len; i++)
    if (!strcmp(decorator_name(def->kwargs.data[i]), "jit")) return def;
  diag_error(S->diags, arg->loc, "%s: %s '%s' is not a @triton.jit function", fn, what, def->name);
  diag_note(S->diags, def->loc, "'%s' is defined here", def->name);
  return NULL;
}

/* A combine computes on scalars and nothing else, as Triton's combine
 * regions: no memory, no prints, no tiles, no run-time loops.  1 if n
 * and what it holds are such; else an error at the first offender. */
static int scalar_only(Sema *S, const Node *def, const Node *n) {
  if (!n) return 1;
  const char *why = NULL;
  if (n->kind == ND_CALL && n->a && is_const_kind(n->a, V_BUILTIN) &&
      (builtin_flags((int)n->a->cval->i) & (EFFECT | IN_COMBINE)) == EFFECT)
    why = arena_printf(S->arena, "%s() has a side effect", builtin_name((int)n->a->cval->i));
  else if (n->kind == ND_FOR || n->kind == ND_WHILE) why = "a run-time loop is not supported";
  else if (n->type && n->type->rank > 0) why = arena_printf(S->arena, "%s is a tile; a combine works on scalars", type_str(S->arena, n->type));
  if (why) {
    diag_error(S->diags, n->loc, "in combine_fn '%s': %s", def->name, why);
    return 0;
  }
  const NodeVec *lists[] = {&n->args, &n->kwargs, &n->body, &n->orelse};
  if (!scalar_only(S, def, n->a) || !scalar_only(S, def, n->b) || !scalar_only(S, def, n->c)) return 0;
  for (int l = 0; l < 4; l++)
    for (int i = 0; i < lists[l]->len; i++)
      if (!scalar_only(S, def, lists[l]->data[i])) return 0;
  return 1;
}

/* The combine's returned values as scalars of the inputs' element types
 * (a constexpr is converted, as Triton converts a constant it yields). */
static int combine_results(Sema *S, Node *def, Node *ret, Node **tiles, int n, Loc loc, Node **out) {
  int got = ret->kind == ND_TUPLE ? ret->args.len : is_const_kind(ret, V_NONE) ? 0 : 1;
  if (got != n) {
    diag_error(S->diags, loc, "combine_fn '%s' returns %d value%s, but the input has %d tile%s", def->name, got,
               got == 1 ? "" : "s", n, n == 1 ? "" : "s");
    return 0;
  }
  for (int i = 0; i < n; i++) {
    Node *v = ret->kind == ND_TUPLE ? ret->args.data[i] : ret;
    Type *want = type_tile(S->arena, tiles[i]->type, 0, NULL);
    if (is_const(v) && !v->type && v->cval->kind != V_INT && v->cval->kind != V_FLOAT && v->cval->kind != V_BOOL) {
      diag_error(S->diags, loc, "combine_fn '%s' returns %s as value %d; a combine returns scalars", def->name, describe(S, v), i);
      return 0;
    }
    v = runtime(S, v);
    if (!v->type) {
      diag_error(S->diags, loc, "combine_fn '%s' returns %s as value %d; a combine returns scalars", def->name, describe(S, v), i);
      return 0;
    }
    if (is_const(ret->kind == ND_TUPLE ? ret->args.data[i] : ret)) v = cast(S, v, want->elem, 0);
    if (!type_equal(v->type, want)) {
      diag_error(S->diags, loc, "combine_fn '%s' returns %s as value %d, but input %d has elements of type %s", def->name,
                 type_str(S->arena, v->type), i, i, type_str(S->arena, want));
      return 0;
    }
    out[i] = v;
  }
  return 1;
}

/* Whether def takes 2N positional arguments (parameters with defaults may stay unbound). */
static int takes_pairs(Sema *S, const char *fn, Node *arg, Node *def, int n) {
  int required = 0;
  for (int i = 0; i < def->args.len; i++) required += !def->args.data[i]->b;
  if (required <= 2 * n && 2 * n <= def->args.len) return 1;
  fail_at(S, arg->loc, fn, arena_printf(S->arena, "combine_fn '%s' takes %d argument%s, but a combine of %d tile%s takes %d "
                                        "(the accumulated values, then the next element's)", def->name, def->args.len,
                                        def->args.len == 1 ? "" : "s", n, n == 1 ? "" : "s", 2 * n));
  diag_note(S->diags, def->loc, "'%s' is defined here", def->name);
  return 0;
}

/* Checks combine_fn's body on 2N fresh scalars, into call's body, orelse and kwargs. */
static int check_combine_body(Sema *S, Node *call, Node *def, Node **tiles, int n) {
  Node *params[2 * MAX_COMBINE];
  int id = S->n_temps + 1;
  S->n_temps += 2 * n;
  for (int i = 0; i < 2 * n; i++) {
    params[i] = typed_node(S, ND_NAME, call->loc, type_tile(S->arena, tiles[i % n]->type, 0, NULL));
    params[i]->name = arena_printf(S->arena, "combine.%d", id + i);
    vec_push(S->arena, &call->orelse, params[i]);
  }
  NodeVec *saved = S->out;
  S->out = &call->body;
  int errors = S->diags->errors;
  Loc saved_return = S->return_loc;
  S->return_loc = def->loc;
  Node *ret = call_function(S, call, def, params, 2 * n, NULL, 0);
  Loc return_loc = S->return_loc;
  S->return_loc = saved_return;
  Node *results[MAX_COMBINE];
  if (S->diags->errors > errors || is_poison(ret)) {
    S->out = saved;
    return 0; /* call_function noted the call */
  }
  int ok = combine_results(S, def, ret, tiles, n, return_loc, results);
  S->out = saved;
  if (ok) {
    for (int i = 0; i < n; i++) vec_push(S->arena, &call->kwargs, results[i]);
    for (int i = 0; ok && i < call->body.len; i++) ok = scalar_only(S, def, call->body.data[i]);
    for (int i = 0; ok && i < n; i++) ok = scalar_only(S, def, results[i]);
  }
  if (!ok) diag_note(S->diags, call->loc, "combine_fn '%s' is used here", def->name);
  return ok;
}

/* A result's type: the axis dropped (or kept as 1) for a reduction, all of
 * them for axis=None; a scan keeps the shape. */
static Type *combined_type(Sema *S, const Type *t, int reduce, int64_t axis, int all, int keep_dims) {
  if (!reduce) return type_tile(S->arena, t, t->rank, t->shape);
  return reduced_type(S, t, axis, all, keep_dims, t->elem);
}

static int combine_axis(Sema *S, const char *fn, Node *arg, int rank, int reduce, int64_t *axis) {
  if (is_const_kind(arg, V_NONE)) {
    if (reduce) return 1;
    return fail_at(S, arg->loc, fn, "needs an axis");
  }
  Value *v = const_of(S, arg, "axis");
  if (!v) return 0;
  if (v->kind != V_INT) return fail_at(S, arg->loc, fn, "axis must be a constexpr integer");
  *axis = v->i;
  if (*axis < -rank || *axis >= rank)
    return fail_at(S, arg->loc, fn, arena_printf(S->arena, "axis %lld is out of range for a tile of rank %d", (long long)*axis, rank));
  if (*axis < 0) *axis += rank;
  return 1;
}

/* arg: the bound arguments (input, axis, combine_fn, keep_dims or reverse). */
Node *combine_call(Sema *S, Node *call, int id, Node **arg, int n_args) {
  const char *fn = builtin_name(id);
  int reduce = id == B_REDUCE;
  Node *tiles[MAX_COMBINE] = {0};
  int n = input_tiles(S, fn, arg[0], tiles);
  int64_t axis = 0;
  if (!n || !combine_axis(S, fn, arg[1], tiles[0]->type->rank, reduce, &axis)) return poison(S, call->loc);
  Node *def = jit_function_arg(S, fn, "combine_fn", arg[2]);
  if (def && !takes_pairs(S, fn, arg[2], def, n)) def = NULL;
  Value *flag = def ? const_of(S, arg[3], reduce ? "keep_dims" : "reverse") : NULL;
  if (!flag) return poison(S, call->loc);
  int ok, on = value_truth(flag, &ok);
  Node *typed = typed_node(S, ND_CALL, call->loc, NULL);
  Value *callee = value_new(S, V_BUILTIN);
  callee->i = id;
  typed->a = mk_const(S, call->loc, callee);
  typed->name = fn;
  Node *inputs = node_new(S->arena, ND_TUPLE, arg[0]->loc);
  for (int i = 0; i < n; i++) vec_push(S->arena, &inputs->args, tiles[i]);
  vec_push(S->arena, &typed->args, inputs);
  for (int i = 1; i < n_args; i++) vec_push(S->arena, &typed->args, arg[i]);
  if (!check_combine_body(S, typed, def, tiles, n)) return poison(S, call->loc);
  /* N results: an assignment to N temporaries */
  Node *assign = node_new(S->arena, ND_ASSIGN, call->loc), *out = node_new(S->arena, ND_TUPLE, call->loc);
  int all = reduce && is_const_kind(arg[1], V_NONE);
  for (int i = 0; i < n; i++) {
    Node *t = typed_node(S, ND_NAME, call->loc, combined_type(S, tiles[i]->type, reduce, axis, all, on));
    t->name = arena_printf(S->arena, "tmp.%d", ++S->n_temps);
    vec_push(S->arena, &assign->args, t);
    vec_push(S->arena, &out->args, t);
  }
  typed->type = assign->args.data[0]->type;
  assign->b = typed;
  emit(S, assign);
  return arg[0]->kind == ND_TUPLE ? out : out->args.data[0];
}

/* ---- tl.map_elementwise(scalar_fn, *args, pack=1) ---------------------------------------------- */

/* The args, run-time values broadcast to one shape (as Triton's), each evaluated once; 0 after an error. */
static int mapped_args(Sema *S, const NodeVec *args, Node **out) {
  int rank = 0;
  int64_t shape[MAX_RANK];
  for (int i = 0; i < args->len; i++) {
    out[i] = runtime(S, args->data[i]);
    if (is_poison(out[i])) return 0;
    if (!out[i]->type || out[i]->type->is_ptr)
      return fail_at(S, out[i]->loc, "map_elementwise", arena_printf(S->arena, "the arguments must be numbers, got %s",
                                                                     describe(S, out[i])));
    Type *common = i ? type_tile(S->arena, out[0]->type, rank, shape) : out[i]->type;
    if (!broadcast_shapes(common, out[i]->type, &rank, shape))
      return fail_at(S, out[i]->loc, "map_elementwise",
                     arena_printf(S->arena, "the arguments' shapes %s and %s do not broadcast",
                                  type_str(S->arena, common), type_str(S->arena, out[i]->type)));
  }
  for (int i = 0; i < args->len; i++) out[i] = materialize(S, broadcast(S, out[i], rank, shape), out[i]->loc);
  return 1;
}

/* One of scalar_fn's results as a run-time value of the arguments' shape. */
static Node *mapped_result(Sema *S, Node *v, const Type *shape_of) {
  v = runtime(S, v);
  if (is_poison(v)) return v;
  if (!v->type) {
    diag_error(S->diags, v->loc, "map_elementwise: scalar_fn returns %s; it returns numbers", describe(S, v));
    return poison(S, v->loc);
  }
  return broadcast(S, v, shape_of->rank, shape_of->shape);
}

/* pack: a constexpr from 1 to 16 (Triton's hint of elements per call); 0 after an error. */
static int pack_arg(Sema *S, Node *arg) {
  Value *v = const_of(S, arg, "pack");
  if (v && (v->kind != V_INT || v->is_u64 || v->i < 1 || v->i > 16)) {
    diag_error(S->diags, arg->loc, "map_elementwise: pack must be a constexpr integer from 1 to 16, not %s",
               value_str(S->arena, v));
    return 0;
  }
  return v ? (int)v->i : 0;
}

/* scalar_fn's results, every pack-th one (Triton's: the first of each group of pack), each of the
 * arguments' shape; a tuple when there are several. */
static Node *mapped_results(Sema *S, Node *def, Node *ret, int pack, const Type *shape_of, Loc loc) {
  int n = ret->kind == ND_TUPLE ? ret->args.len : 1;
  if (n % pack) {
    diag_error(S->diags, loc, "map_elementwise: scalar_fn '%s' returns %d value%s, not a multiple of pack=%d",
               def->name, n,
               n == 1 ? "" : "s", pack);
    return poison(S, loc);
  }
  if (ret->kind != ND_TUPLE) return mapped_result(S, ret, shape_of);
  if (n == pack) return mapped_result(S, ret->args.data[0], shape_of);
  Node *out = node_new(S->arena, ND_TUPLE, ret->loc);
  for (int i = 0; i < n; i += pack) vec_push(S->arena, &out->args, mapped_result(S, ret->args.data[i], shape_of));
  return out;
}

/* arg: scalar_fn, the args (a TUPLE), pack.  tile calls scalar_fn on the broadcast tiles themselves,
 * which is the same element by element: an `if` on the elements computes both branches and selects
 * (sema.c select_if, under S->mapping).  With pack > 1 scalar_fn takes pack elements of each
 * argument (a0, a1, b0, b1) and returns pack values of each result (c0, c1, d0, d1): it gets each
 * tile pack times and the first of each group is kept, which is what it computes for every element
 * when element j of a group depends only on the arguments' elements j. */
Node *map_elementwise_call(Sema *S, Node *call, Node **arg) {
  Node *def = jit_function_arg(S, "map_elementwise", "scalar_fn", arg[0]);
  int pack = def ? pack_arg(S, arg[2]) : 0;
  if (!pack) return poison(S, call->loc);
  const NodeVec *args = &arg[1]->args;
  Node *tiles[MAX_COMBINE], *params[4 * MAX_COMBINE];
  if (args->len < 1 || args->len > MAX_COMBINE || args->len * pack > 4 * MAX_COMBINE) {
    fail_at(S, call->loc, "map_elementwise", arena_printf(S->arena, "takes 1 to %d tiles, %d values in all with pack",
                                                          MAX_COMBINE, 4 * MAX_COMBINE));
    return poison(S, call->loc);
  }
  if (!mapped_args(S, args, tiles)) return poison(S, call->loc);
  for (int i = 0; i < args->len * pack; i++) params[i] = tiles[i / pack];
  int errors = S->diags->errors;
  const Type *outer_type = S->mapped_type;
  Node *outer_active = S->active;
  S->mapping++;
  S->mapped_type = tiles[0]->type, S->active = NULL;
  Node *ret = call_function(S, call, def, params, args->len * pack, NULL, 0);
  S->mapped_type = outer_type, S->active = outer_active;
  S->mapping--;
  if (S->diags->errors > errors || is_poison(ret)) return poison(S, call->loc);
  return mapped_results(S, def, ret, pack, tiles[0]->type, call->loc);
}
