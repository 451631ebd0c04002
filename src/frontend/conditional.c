/* Names a module binds inside module-level if, try and with blocks, as
 * kernel libraries write them for several Triton versions and targets:
 *
 *     try:    from triton.language.extra.libdevice import tanh
 *     except: from triton.language.extra.cuda.libdevice import tanh
 *
 *     if hasattr(triton.language, "gather"): gather = tl.gather
 *     else:                                  def gather(...): return None
 *
 *     if os.environ.get("FAST") == "1": def exp(x): ...  (host state tile cannot know)
 *     else:                             def exp(x): ...
 *
 * Such a binding is used for a name nothing at module level binds.  Each
 * `if` test above one is evaluated as a constexpr, quietly, in the module's
 * scope: a binding on a branch the test rules out is skipped.  Of the
 * rest, the last that tile can resolve wins (a test tile cannot evaluate,
 * like the environment's, leaves its else branch, usually the default).
 * An except's import is a fallback for the try's, both kept. */
#include "sema_impl.h"

#include <string.h>

static void conditionals_in(Sema *S, const NodeVec *block, const Branch *branch);

static void add(Sema *S, const char *name, Node *binding, const Branch *branch) {
  Conditional c = {name, binding, branch};
  vec_push(S->arena, &S->here->conditionals, c);
}

static void conditionals_of(Sema *S, const Node *s, const Branch *branch) {
  switch (s->kind) {
  case ND_IMPORT:
    for (int j = 0; j < s->args.len; j++)
      if (strcmp(s->args.data[j]->name, "*")) add(S, s->args.data[j]->name, s->args.data[j], branch);
    return;
  case ND_FUNCDEF: add(S, s->name, (Node *)s, branch); return;
  case ND_ASSIGN:
    if (s->args.len == 1 && s->args.data[0]->kind == ND_NAME) add(S, s->args.data[0]->name, (Node *)s, branch);
    return;
  case ND_IF: {
    Branch *then = arena_alloc(S->arena, sizeof *then), *other = arena_alloc(S->arena, sizeof *other);
    *then = (Branch){s->a, 0, branch};
    *other = (Branch){s->a, 1, branch};
    conditionals_in(S, &s->body, then);
    conditionals_in(S, &s->orelse, other);
    return;
  }
  case ND_TRY:
    conditionals_in(S, &s->body, branch);
    conditionals_in(S, &s->args, branch);   /* the except clauses */
    conditionals_in(S, &s->orelse, branch);
    conditionals_in(S, &s->kwargs, branch); /* finally */
    return;
  case ND_EXCEPT:
  case ND_WITH: conditionals_in(S, &s->body, branch); return;
  default: return;
  }
}

static void conditionals_in(Sema *S, const NodeVec *block, const Branch *branch) {
  for (int i = 0; i < block->len; i++) conditionals_of(S, block->data[i], branch);
}

/* The bindings inside one module-level statement (if, try, with). */
void conditionals_build(Sema *S, const Node *stmt) {
  if (stmt->kind == ND_IF || stmt->kind == ND_TRY || stmt->kind == ND_WITH) conditionals_of(S, stmt, NULL);
}

int conditional_defines(const ModuleState *m, const char *name) {
  for (int i = 0; i < m->conditionals.len; i++)
    if (!strcmp(m->conditionals.data[i].name, name)) return 1;
  return 0;
}

void sema_quiet_begin(Sema *S, Quiet *q) {
  q->loud = S->diags;
  q->was_quiet = S->quiet;
  diags_init(&q->diags, S->arena, q->loud->guard);
  q->diags.max_errors = 1 << 30;
  S->diags = &q->diags;
  S->quiet = 1;
}

int sema_quiet_end(Sema *S, Quiet *q) {
  S->diags = q->loud;
  S->quiet = q->was_quiet;
  return q->diags.errors;
}

/* `e` checked in the module's scope with its errors kept out of the
 * compilation's; NULL when it has any. */
Node *sema_quiet_expr(Sema *S, Node *e) {
  Quiet q;
  Scope scope = S->scope;
  const char *prefix = S->prefix;
  NodeVec *out = S->out, scratch = {0};
  sema_quiet_begin(S, &q);
  S->scope = (Scope){0};
  S->prefix = NULL;
  S->out = &scratch;
  Node *v = check_expr(S, e);
  S->scope = scope;
  S->prefix = prefix;
  S->out = out;
  return sema_quiet_end(S, &q) || is_poison(v) ? NULL : v;
}

/* Whether a test rules its branch out: known as a constexpr, and the other way. */
static int ruled_out(Sema *S, const Branch *b) {
  for (; b; b = b->outer) {
    Node *v = sema_quiet_expr(S, b->test);
    int ok, truth = v && is_const(v) && !v->type ? value_truth(v->cval, &ok) : -1;
    if (truth >= 0 && ok && truth == b->in_else) return 1;
  }
  return 0;
}

/* The value a binding gives, or NULL when tile cannot resolve it (an import
 * it does not understand, an assignment whose value is host code's). */
static Node *resolve(Sema *S, Loc loc, const Conditional *c) {
  Node *b = c->binding;
  if (b->kind == ND_FUNCDEF) {
    Value *fv = value_new(S, V_FUNC);
    fv->func = b;
    return mk_const(S, loc, fv);
  }
  if (b->kind == ND_ASSIGN) return sema_quiet_expr(S, b->b);
  if (is_host_module(b->str)) return NULL;
  Node *v = import_value(S, loc, b->str);
  return v ? v : module_import(S, loc, b->str);
}

/* A name only conditional bindings give (see above); NULL when none; an
 * error at the last import when none resolves and it was an import. */
Node *conditional_name(Sema *S, Loc loc, const char *name) {
  const Conditional *last = NULL;
  for (int i = S->here->conditionals.len - 1; i >= 0; i--) {
    const Conditional *c = &S->here->conditionals.data[i];
    if (strcmp(c->name, name)) continue;
    if (!last) last = c;
    if (ruled_out(S, c->branch)) continue;
    Node *v = resolve(S, loc, c);
    if (v) return v;
  }
  if (!last) return NULL;
  if (last->binding->kind == ND_ASSIGN) {
    diag_error(S->diags, loc, "'%s' is assigned host code's value; a kernel cannot use it", name);
    diag_note(S->diags, last->binding->loc, "assigned here");
  } else {
    diag_error(S->diags, loc, "'%s' comes from '%s', which tile does not understand", name,
               last->binding->kind == ND_FUNCDEF ? name : last->binding->str);
    diag_note(S->diags, last->binding->loc, "imported here");
  }
  return poison(S, loc);
}
