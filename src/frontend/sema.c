/* The checker's core: names, expressions, statements, helper instances and
 * the kernel's specialisation.  It walks the kernel the way Triton's code
 * generator traces it: constexprs are evaluated as it goes, so shapes are
 * known and every error can name the exact place. */
#include "host.h"
#include "sema_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_CALL_DEPTH = 64, MAX_UNROLL = 4096 };

/* ---- values as nodes ---------------------------------------------------- */

Node *mk_const(Sema *S, Loc loc, Value *v) {
  Node *n = node_new(S->arena, ND_CONST, loc);
  n->cval = v;
  return n;
}

int is_const(const Node *n) { return n->kind == ND_CONST && n->cval; }
int is_const_kind(const Node *n, ValueKind k) { return is_const(n) && !n->type && n->cval->kind == k; }

/* An error value: a CONST without a value.  Operations on it stay silent,
 * so one mistake gives one message. */
Node *poison(Sema *S, Loc loc) { return node_new(S->arena, ND_CONST, loc); }
int is_poison(const Node *n) { return n->kind == ND_CONST && !n->cval; }

/* What a value is, for messages: its type, its constexpr value, or its kind. */
const char *describe(Sema *S, const Node *n) {
  if (n->type) return type_str(S->arena, n->type);
  if (n->cval) return value_str(S->arena, n->cval);
  if (n->kind == ND_CALL) return arena_printf(S->arena, "the result of %s(), which returns nothing", n->name);
  if (n->kind == ND_DESC) return desc_str(S, n);
  if (n->kind == ND_DICT) return "a dictionary";
  if (n->kind != ND_TUPLE) return "an invalid value";
  Buf b;
  buf_init(&b, S->arena);
  buf_puts(&b, "(");
  for (int i = 0; i < n->args.len; i++) buf_printf(&b, "%s%s", i ? ", " : "", describe(S, n->args.data[i]));
  buf_puts(&b, n->args.len == 1 ? ",)" : ")");
  return buf_cstr(&b);
}

static int is_runtime(const Node *n) { return n->type != NULL; }

void emit(Sema *S, Node *stmt) { vec_push(S->arena, S->out, stmt); }

Value *const_of(Sema *S, Node *n, const char *what) {
  if (is_poison(n)) return NULL;
  if (is_const(n)) return n->cval;
  if (n->kind == ND_TUPLE) {
    Value *v = value_new(S, V_LIST);
    for (int i = 0; i < n->args.len; i++) {
      Value *item = const_of(S, n->args.data[i], what);
      if (!item) return NULL;
      vec_push(S->arena, &v->items, item);
    }
    return v;
  }
  diag_error(S->diags, n->loc, "%s must be a constexpr, but this is a run-time value of type %s", what,
             n->type ? type_str(S->arena, n->type) : "tuple");
  return NULL;
}

Node *const_to_node(Sema *S, Loc loc, Value *v) {
  if (v->kind != V_LIST) return mk_const(S, loc, v);
  Node *t = node_new(S->arena, ND_TUPLE, loc);
  for (int i = 0; i < v->items.len; i++) vec_push(S->arena, &t->args, const_to_node(S, loc, v->items.data[i]));
  return t;
}

/* ---- scopes -------------------------------------------------------------- */

static Node *scope_get(Scope *sc, const char *name) {
  for (int i = sc->len - 1; i >= 0; i--)
    if (!strcmp(sc->data[i].name, name)) return sc->data[i].value;
  return NULL;
}

static void scope_set(Sema *S, Scope *sc, const char *name, Node *value) {
  for (int i = sc->len - 1; i >= 0; i--)
    if (!strcmp(sc->data[i].name, name)) {
      sc->data[i].value = value;
      return;
    }
  Binding b = {name, value};
  vec_push(S->arena, sc, b);
}

static Scope scope_copy(Sema *S, const Scope *sc) {
  Scope c = {0};
  for (int i = 0; i < sc->len; i++) vec_push(S->arena, &c, sc->data[i]);
  return c;
}

/* A reference to a run-time variable, as later uses see it. */
static Node *var_ref(Sema *S, Loc loc, const char *name, Type *t) {
  Node *n = typed_node(S, ND_NAME, loc, t);
  n->name = name;
  return n;
}

/* ---- names --------------------------------------------------------------- */

static Value *namespace_value(Sema *S, const char *name) {
  Value *v = value_new(S, V_NAMESPACE);
  v->s = name;
  return v;
}

static Node *find_function(const Module *m, const char *name) {
  if (!m) return NULL;
  for (int i = 0; i < m->root->body.len; i++) {
    Node *s = m->root->body.data[i];
    if (s->kind == ND_FUNCDEF && !strcmp(s->name, name)) return s;
  }
  return NULL;
}

/* The name a module statement defines as a function or constant, or NULL. */
static const char *defined_name(const Node *s, int *is_function) {
  *is_function = s->kind == ND_FUNCDEF;
  if (*is_function) return s->name;
  if (s->kind == ND_ASSIGN && s->args.len == 1 && s->args.data[0]->kind == ND_NAME) return s->args.data[0]->name;
  if (s->kind == ND_ANNASSIGN && s->b && s->a->kind == ND_NAME) return s->a->name;
  if (s->kind == ND_CLASS) return s->name; /* host code: an error where a kernel uses it */
  return NULL;
}

static int symbol_order(const void *x, const void *y) {
  const Symbol *a = x, *b = y;
  int c = strcmp(a->name, b->name);
  return c ? c : a->index - b->index;
}

/* Host code a kernel file imports for its launcher, decorators and tests (torch, Triton's host
 * modules, the Python modules Triton's tutorials import): accepted, not for kernels to use. */
int is_host_module(const char *path) {
  static const char *const host[] = {"torch", "triton.jit", "triton.autotune", "triton.heuristics", "triton.Config",
                                     "triton.testing", "triton.runtime", "triton.profiler", "triton.tools",
                                     "pytest", "argparse", "contextlib", "dataclasses", "functools", "inspect",
                                     "itertools", "os", "pathlib", "sys", "time", "typing"};
  for (size_t i = 0; i < sizeof host / sizeof host[0]; i++) {
    size_t n = strlen(host[i]);
    if (!strncmp(path, host[i], n) && (path[n] == 0 || path[n] == '.')) return 1;
  }
  return 0;
}

/* Records what the module's imports name.  An import tile does not
 * understand is a warning here and an error only where a kernel uses it. */
static void imports_build(Sema *S, const Node *stmt, int warn) {
  for (int j = 0; j < stmt->args.len; j++) {
    Node *b = stmt->args.data[j];
    if (warn && !is_host_module(b->str) && !import_value(S, b->loc, b->str) && !module_import_found(S, b->str)) {
      if (!strcmp(b->name, "*")) diag_warning(S->diags, b->loc, "tile does not understand the module '%s'; 'import *' from it is ignored", b->str);
      else diag_warning(S->diags, b->loc, "tile does not understand '%s'; a kernel cannot use '%s'", b->str, b->name);
    }
    if (strcmp(b->name, "*")) vec_push(S->arena, &S->here->imports, b);
  }
}

void symbols_build(Sema *S, int warn) {
  const NodeVec *body = &S->here->mod->root->body;
  for (int i = 0; i < body->len; i++) {
    if (body->data[i]->kind == ND_IMPORT) imports_build(S, body->data[i], warn);
    else conditionals_build(S, body->data[i]);
    Symbol sym = {0};
    sym.name = defined_name(body->data[i], &sym.is_function);
    sym.index = i;
    if (sym.name) vec_push(S->arena, &S->here->symbols, sym);
  }
  if (S->here->symbols.len) qsort(S->here->symbols.data, (size_t)S->here->symbols.len, sizeof(Symbol), symbol_order);
}

Symbol *symbols_find(Sema *S, const char *name, int *count) {
  int lo = 0, hi = S->here->symbols.len; /* the first entry not before name */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (strcmp(S->here->symbols.data[mid].name, name) < 0) lo = mid + 1;
    else hi = mid;
  }
  int end = lo;
  while (end < S->here->symbols.len && !strcmp(S->here->symbols.data[end].name, name)) end++;
  *count = end - lo;
  return *count ? &S->here->symbols.data[lo] : NULL;
}

static Node *module_function(Sema *S, const char *name) {
  int n;
  Symbol *sym = symbols_find(S, name, &n);
  for (int i = 0; i < n; i++)
    if (sym[i].is_function) return S->here->mod->root->body.data[sym[i].index];
  return NULL;
}

/* The last assignment to `name` among the module's first `limit` statements. */
static Symbol *find_constant(Sema *S, const char *name, int limit) {
  int n;
  Symbol *sym = symbols_find(S, name, &n);
  for (int i = n - 1; i >= 0; i--)
    if (!sym[i].is_function && sym[i].index < limit) return &sym[i];
  return NULL;
}

/* Whether an expression calls a function of the module that is not a kernel's (no jit decorator; its
 * own, such as @functools.cache, are Python's): Python, which Python runs when it imports the module
 * (fla builds its inline-asm strings so, and probes its platform). */
static int calls_host_function(Sema *S, const Node *n) {
  if (!n) return 0;
  if (n->kind == ND_CALL && n->a && n->a->kind == ND_NAME) {
    const Node *def = module_function(S, n->a->name);
    if (def && def->kind == ND_FUNCDEF && !sema_is_jit(def)) return 1;
  }
  if (calls_host_function(S, n->a) || calls_host_function(S, n->b) || calls_host_function(S, n->c)) return 1;
  for (int i = 0; i < n->args.len; i++)
    if (calls_host_function(S, n->args.data[i])) return 1;
  for (int i = 0; i < n->kwargs.len; i++)
    if (calls_host_function(S, n->kwargs.data[i])) return 1;
  return 0;
}

/* A module constant's value: the host evaluator's where it calls a host function, else (or where that
 * cannot, but the checker can) the checker's; the host evaluator's reason where neither can. */
static Node *host_module_constant(Sema *S, Node *stmt, int at, const char *name, Loc use) {
  struct HostVal *unknown = NULL;
  Value *host = calls_host_function(S, stmt->b) ? host_constexpr_at(S, stmt->b, at, &unknown) : NULL;
  if (host) return const_to_node(S, stmt->b->loc, host);
  if (!unknown) return check_expr(S, stmt->b);
  Node *v = sema_quiet_expr(S, stmt->b);
  if (v) return v;
  host_report(S->diags, unknown, use, arena_printf(S->arena, "module-level '%s'", name));
  return poison(S, use);
}

/* Module constants are evaluated when first used, in an empty scope, so
 * host-side lines that no kernel uses cost nothing.  They are evaluated as
 * Python runs the module: `A = A + 1` reads the A assigned above it. */
static Node *module_constant(Sema *S, Loc use, const char *name) {
  int limit = S->module_limit ? S->module_limit : S->here->mod->root->body.len;
  Symbol *sym = find_constant(S, name, limit);
  if (!sym) return NULL;
  if (sym->value) return sym->value;
  int at = sym->index;
  Node *stmt = S->here->mod->root->body.data[at];
  if (stmt->kind == ND_CLASS) {
    diag_error(S->diags, use, "'%s' is a class, which is host code; a kernel cannot use it", name);
    diag_note(S->diags, stmt->loc, "defined here");
    return sym->value = poison(S, use);
  }
  Scope saved = S->scope;
  int saved_limit = S->module_limit;
  const char *saved_prefix = S->prefix;
  S->scope = (Scope){0};
  S->module_limit = at;
  S->prefix = NULL;
  Node *v = host_module_constant(S, stmt, at, name, use);
  S->scope = saved;
  S->module_limit = saved_limit;
  S->prefix = saved_prefix;
  if (is_runtime(v)) {
    diag_error(S->diags, stmt->b->loc, "module-level '%s' must be a constexpr", name);
    v = poison(S, use);
  }
  if (!S->quiet || !is_poison(v)) sym->value = v; /* a failure seen quietly is reported at its real use */
  return v;
}

/* A name tile lacks (lang/unsupported.def): who has it, and for a target's name what it is. */
typedef struct Unsupported {
  const char *ns, *name, *owner, *what;
} Unsupported;

static const Unsupported *unsupported(const char *ns, const char *name);
static const char *unsupported_reason(Sema *S, const char *what, const Unsupported *u);

/* Names a kernel may reach through `tl.` (builtins, dtypes, the standard library). */
static Node *namespace_member(Sema *S, Loc loc, const char *name) {
  if ((!strncmp(name, "float8", 6) && unsupported("tl", name) != NULL) || !strcmp(name, "void")) {
    /* another target's fp8, and Triton's type of no value: values that constexpr code can compare
     * (`if dtype == tl.float8e4b8:`), an error where a type is needed */
    Value *v = value_new(S, V_MISSING_DTYPE);
    v->s = name;
    return mk_const(S, loc, v);
  }
  int dt = dtype_lookup(name);
  if (dt >= 0 && !strcmp(dtype_triton_name((DType)dt), name)) return mk_const(S, loc, value_dtype(S, (DType)dt, 0));
  if (!strcmp(name, "pi32_t")) return mk_const(S, loc, value_dtype(S, DT_I32, 1)); /* Triton's alias */
  if (!strcmp(name, "constexpr")) return mk_const(S, loc, value_new(S, V_CONSTEXPR));
  if (!strcmp(name, "tensor")) return mk_const(S, loc, value_new(S, V_TENSOR));
  if (!strcmp(name, "tensor_descriptor") || !strcmp(name, "tensor_descriptor_base") || !strcmp(name, "dtype") ||
      !strcmp(name, "const") || !strcmp(name, "tuple") || !strcmp(name, "block_type") || !strcmp(name, "slice") ||
      !strcmp(name, "tuple_type")) {
    Value *v = value_new(S, V_CLASS);
    v->s = name;
    return mk_const(S, loc, v);
  }
  if (!strcmp(name, "language") || !strcmp(name, "core") || !strcmp(name, "standard"))
    return mk_const(S, loc, namespace_value(S, "tl"));
  if (!strcmp(name, "math")) return mk_const(S, loc, namespace_value(S, "tl.math"));
  if (!strcmp(name, "extra")) return mk_const(S, loc, namespace_value(S, "tl.extra"));
  if (!strcmp(name, "PropagateNan")) return mk_const(S, loc, namespace_value(S, "tl.PropagateNan"));
  if (!strcmp(name, "TRITON_MAX_TENSOR_NUMEL")) return mk_const(S, loc, value_int(S, 1048576)); /* Triton 3.6's */
  if (!strcmp(name, "CONSTEXPR_0")) return mk_const(S, loc, value_int(S, 0)); /* core.py's, a parameter default */
  int id = builtin_lookup(name, TL);
  if (id >= 0) {
    Value *v = value_new(S, V_BUILTIN);
    v->i = id;
    return mk_const(S, loc, v);
  }
  Node *fn = find_function(S->stdlib, name);
  if (fn) {
    Value *v = value_new(S, V_FUNC);
    v->func = fn;
    return mk_const(S, loc, v);
  }
  return NULL;
}

static Node *libdevice_member(Sema *S, Loc loc, const char *name) {
  int id = libdevice_lookup(name);
  if (id < 0) return NULL;
  Value *v = value_new(S, V_LIBDEVICE);
  v->i = id;
  return mk_const(S, loc, v);
}

/* ns.name for the namespaces: tl (and its aliases), tl.math (tl, then the
 * libdevice functions, as Triton 2's tl.math), tl.extra, tl.extra.cuda and
 * libdevice. */
static Node *member_of(Sema *S, Loc loc, const char *ns, const char *name) {
  if (!strcmp(ns, "libdevice")) return libdevice_member(S, loc, name);
  if (!strcmp(ns, "tl.PropagateNan")) { /* Triton's enum values, which propagate_nan= accepts (builtins.c) */
    if (!strcmp(name, "NONE")) return mk_const(S, loc, value_int(S, 0));
    if (!strcmp(name, "ALL")) return mk_const(S, loc, value_int(S, 0xFFFF));
    return NULL;
  }
  if (!strcmp(ns, "tl.extra") || !strcmp(ns, "tl.extra.cuda")) {
    if (!strcmp(name, "libdevice")) return mk_const(S, loc, namespace_value(S, "libdevice"));
    if (!strcmp(ns, "tl.extra") && !strcmp(name, "cuda")) return mk_const(S, loc, namespace_value(S, "tl.extra.cuda"));
    int id = !strcmp(ns, "tl.extra.cuda") ? builtin_lookup(name, CUDA) : -1;
    if (id >= 0) {
      Value *v = value_new(S, V_BUILTIN);
      v->i = id;
      return mk_const(S, loc, v);
    }
    return NULL;
  }
  Node *m = namespace_member(S, loc, name);
  if (!m && !strcmp(ns, "tl.math")) m = libdevice_member(S, loc, name);
  return m;
}

/* The value a dotted import path names (triton, triton.language,
 * triton.language.extra.cuda.libdevice, triton.language.math.exp), or NULL. */
Node *import_value(Sema *S, Loc loc, const char *path) {
  size_t n = strcspn(path, ".");
  if (n != 6 || strncmp(path, "triton", 6)) return NULL;
  Node *v = mk_const(S, loc, namespace_value(S, "triton"));
  for (const char *p = path + n; *p == '.'; p += n) {
    p++;
    n = strcspn(p, ".");
    if (!is_const_kind(v, V_NAMESPACE)) return NULL;
    v = member_of(S, loc, v->cval->s, arena_strndup(S->arena, p, n));
    if (!v) return NULL;
  }
  return v;
}

/* A name bound by an import (the last binding of it), NULL when none. */
static Node *imported_name(Sema *S, Loc loc, const char *name) {
  for (int i = S->here->imports.len - 1; i >= 0; i--) {
    Node *b = S->here->imports.data[i];
    if (strcmp(b->name, name)) continue;
    Node *v = is_host_module(b->str) ? NULL : import_value(S, loc, b->str);
    if (!v && !is_host_module(b->str)) v = module_import(S, loc, b->str);
    if (v) return v;
    if (is_host_module(b->str))
      diag_error(S->diags, loc, "'%s' is host code (import %s); a kernel cannot use it", name, b->str);
    else
      diag_error(S->diags, loc, "'%s' comes from '%s', which tile does not understand", name, b->str);
    diag_note(S->diags, b->loc, "imported here");
    return poison(S, loc);
  }
  return NULL;
}

/* A module-level name of the module being checked: a function, a
 * constant, or what an import binds; NULL when none. */
static Node *module_level_name(Sema *S, Loc loc, const char *name) {
  Node *fn = module_function(S, name);
  if (fn) {
    Value *fv = value_new(S, V_FUNC);
    fv->func = fn;
    return mk_const(S, loc, fv);
  }
  Node *v = module_constant(S, loc, name);
  if (!v) v = imported_name(S, loc, name);
  if (!v) v = conditional_name(S, loc, name);
  return v;
}

/* Switches the module whose names are in scope (a helper of another
 * module of the package is checked with its own); returns the one before. */
static ModuleState *module_enter(Sema *S, ModuleState *m, int *saved_limit) {
  ModuleState *before = S->here;
  *saved_limit = S->module_limit;
  S->here = m;
  S->module_limit = 0;
  return before;
}

static void module_leave(Sema *S, ModuleState *before, int saved_limit) {
  S->here = before;
  S->module_limit = saved_limit;
}

Node *sema_module_name(Sema *S, ModuleState *m, Loc loc, const char *name) {
  int limit;
  ModuleState *before = module_enter(S, m, &limit);
  Node *v = module_level_name(S, loc, name);
  module_leave(S, before, limit);
  return v;
}

/* hasattr(obj, name): obj.name resolved with its errors kept out of the compilation's. */
int sema_has_attribute(Sema *S, Node *obj, Loc loc, const char *name) {
  Diags quiet, *loud = S->diags;
  diags_init(&quiet, S->arena, loud->guard);
  quiet.max_errors = 1 << 30;
  NodeVec *out = S->out, scratch = {0};
  int was_quiet = S->quiet;
  S->diags = &quiet;
  S->out = &scratch;
  S->quiet = 1;
  Node *attr = node_new(S->arena, ND_ATTR, loc);
  attr->name = name;
  Node *v = sema_attribute(S, obj, attr);
  S->diags = loud;
  S->out = out;
  S->quiet = was_quiet;
  return !quiet.errors && !is_poison(v);
}

static Node *lookup_name(Sema *S, Loc loc, const char *name) {
  Node *v = scope_get(&S->scope, name);
  if (!v) v = module_level_name(S, loc, name);
  if (v) return v;
  if (!strcmp(name, "tl") || !strcmp(name, "triton") || !strcmp(name, "language"))
    return mk_const(S, loc, namespace_value(S, name));
  int id = builtin_lookup(name, PY);
  if (id >= 0) {
    Value *bv = value_new(S, V_BUILTIN);
    bv->i = id;
    return mk_const(S, loc, bv);
  }
  return namespace_member(S, loc, name);
}

static void undefined_name(Sema *S, Loc loc, const char *name) {
  for (int i = S->dropped.len - 1; i >= 0; i--)
    if (!strcmp(S->dropped.data[i].name, name)) {
      Loc at = S->dropped.data[i].value->loc;
      diag_error(S->diags, loc, "'%.60s' is assigned on only one path of the if at line %d, so it has no value here",
                 name, at.line);
      diag_note(S->diags, at, "give it a value before the if, or in both branches");
      return;
    }
  diag_error(S->diags, loc, "name '%.60s%s' is not defined", name, strlen(name) > 60 ? "..." : "");
  if (!strcmp(name, "libdevice")) {
    diag_note(S->diags, loc, "import it: from triton.language.extra import libdevice");
    return;
  }
  const char *cands[256];
  int n = 0;
  for (int i = 0; i < S->scope.len && n < 200; i++) cands[n++] = S->scope.data[i].name;
  for (int i = 0; i < S->here->mod->root->body.len && n < 220; i++) {
    Node *s = S->here->mod->root->body.data[i];
    if (s->kind == ND_FUNCDEF) cands[n++] = s->name;
  }
  const char *best = suggest(S, name, cands, n);
  if (best) diag_note(S->diags, loc, "did you mean '%s'?", best);
}

/* ---- expressions --------------------------------------------------------- */

/* A constexpr read through a name reports errors where it is used, not
 * where it was defined. */
static Node *at_use(Sema *S, Node *v, Loc loc) {
  if (v->kind == ND_CONST && !v->type) {
    Node *c = node_new(S->arena, ND_CONST, loc);
    c->cval = v->cval;
    return c;
  }
  if (v->kind != ND_TUPLE) return v;
  Node *t = node_new(S->arena, ND_TUPLE, loc);
  for (int i = 0; i < v->args.len; i++) vec_push(S->arena, &t->args, at_use(S, v->args.data[i], loc));
  return t;
}

static Node *check_name(Sema *S, Node *n) {
  Node *v = lookup_name(S, n->loc, n->name);
  if (!v) {
    undefined_name(S, n->loc, n->name);
    return poison(S, n->loc);
  }
  if (is_runtime(v) && v->kind == ND_NAME) return var_ref(S, n->loc, v->name, v->type);
  return at_use(S, v, n->loc);
}

static Node *tile_attribute(Sema *S, Node *obj, Node *n) {
  Type *t = obj->type;
  if (!strcmp(n->name, "dtype")) return mk_const(S, n->loc, value_dtype(S, t->elem, t->is_ptr));
  if (!strcmp(n->name, "numel")) return mk_const(S, n->loc, value_int(S, type_numel(t)));
  if (!strcmp(n->name, "type")) return mk_const(S, n->loc, value_type_of(S, t));
  if (!strcmp(n->name, "shape")) {
    Value *v = value_new(S, V_LIST);
    for (int i = 0; i < t->rank; i++) vec_push(S->arena, &v->items, value_int(S, t->shape[i]));
    return const_to_node(S, n->loc, v);
  }
  if (!strcmp(n->name, "T") && t->rank == 2) {
    Node *arg = obj;
    return check_builtin_call(S, n, B_TRANS, NULL, &arg, 1, NULL, 0);
  }
  int id = builtin_lookup(n->name, METHOD);
  Node *fn = id < 0 ? find_function(S->stdlib, n->name) : NULL;
  if (id >= 0 || fn) {
    Value *v = value_new(S, fn ? V_FUNC : V_BUILTIN);
    v->i = id;
    v->func = fn;
    v->self = obj;
    return mk_const(S, n->loc, v);
  }
  const Unsupported *owner = unsupported("tl", n->name);
  if (owner && strcmp(owner->owner, "Triton") && !owner->what) /* another backend's method: x.insert_slice(...) */
    diag_error(S->diags, n->loc, "%s", unsupported_reason(S, arena_printf(S->arena, "the method %s", n->name), owner));
  else
    diag_error(S->diags, n->loc, "a tile of type %s has no attribute '%s'", type_str(S->arena, t), n->name);
  return poison(S, n->loc);
}

static const char *const namespace_names[] = {
#define BUILTIN(id, handler, op, flags, name, params, summary) #id,
#include "builtins.def"
#undef BUILTIN
};

static const Unsupported *unsupported(const char *ns, const char *name) {
  static const Unsupported table[] = {
#define UNSUPPORTED(ns, name) {ns, name, "Triton", NULL},
#define OTHER_BACKEND(ns, name, backend) {ns, name, backend, NULL},
#define OTHER_TARGET(ns, name, target, what) {ns, name, target, what},
#include "unsupported.def"
#undef OTHER_TARGET
#undef OTHER_BACKEND
#undef UNSUPPORTED
  };
  int in_libdevice = !strcmp(ns, "libdevice") || !strcmp(ns, "tl.math");
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, name) && (!strcmp(table[i].ns, "libdevice") ? in_libdevice : strcmp(ns, "libdevice")))
      return &table[i];
  return NULL;
}

/* Why `what` (a name of u's row, as the kernel wrote it) is an error. */
static const char *unsupported_reason(Sema *S, const char *what, const Unsupported *u) {
  if (u->what)
    return arena_printf(S->arena, "%s (%s) is supported by Triton on %s only; tile's targets are NVIDIA GPUs", what,
                        u->what, u->owner);
  if (!strcmp(u->owner, "Triton")) return arena_printf(S->arena, "%s is part of Triton but not supported by tile yet", what);
  return arena_printf(S->arena, "%s is part of another Triton backend (%s), not supported by tile", what, u->owner);
}

const char *sema_missing_dtype_reason(Sema *S, const char *name) {
  const Unsupported *u = unsupported("tl", name);
  const char *what = arena_printf(S->arena, "tl.%s", name);
  if (!strcmp(name, "void")) return "tl.void is the type of no value (a store's result in Triton): no tile, pointer or argument has it";
  return u ? unsupported_reason(S, what, u) : arena_printf(S->arena, "%s is not supported by tile", what);
}

static void no_member(Sema *S, Loc loc, const char *ns, const char *name) {
  const Unsupported *owner = unsupported(ns, name);
  if (owner) {
    diag_error(S->diags, loc, "%s", unsupported_reason(S, arena_printf(S->arena, "%s.%s", ns, name), owner));
    return;
  }
  diag_error(S->diags, loc, "module '%s' has no attribute '%s'", ns, name);
  if (!strcmp(ns, "libdevice") || !strncmp(ns, "tl.extra", 8) || !strcmp(ns, "tl.PropagateNan")) return;
  const char *cands[B_COUNT + 16];
  int n = 0;
  for (int i = 0; i < B_COUNT; i++)
    if (builtin_flags(i) & (TL | METHOD)) cands[n++] = builtin_name(i);
  for (int i = 0; S->stdlib && i < S->stdlib->root->body.len && n < B_COUNT + 16; i++)
    if (S->stdlib->root->body.data[i]->kind == ND_FUNCDEF) cands[n++] = S->stdlib->root->body.data[i]->name;
  const char *best = suggest(S, name, cands, n);
  if (best) diag_note(S->diags, loc, "did you mean %s.%s?", ns, best);
  (void)namespace_names;
}

/* Whether `name` is what an import of host code binds (import torch), not shadowed. */
static int names_host_import(Sema *S, const char *name) {
  int n;
  if (scope_get(&S->scope, name) || (symbols_find(S, name, &n) && n)) return 0;
  for (int i = S->here->imports.len - 1; i >= 0; i--)
    if (!strcmp(S->here->imports.data[i]->name, name)) return is_host_module(S->here->imports.data[i]->str);
  return 0;
}

/* torch.finfo(torch.float32).min, as FlagGems' module constants are written: an attribute of
 * host code that the host evaluator can compute, hermetically, is a constexpr.  NULL: not host
 * code's, or a host object (the caller's errors apply). */
static Node *host_attribute(Sema *S, Node *n) {
  const Node *root = n;
  while (root->kind == ND_ATTR || root->kind == ND_CALL || root->kind == ND_SUBSCRIPT) root = root->a;
  if (root->kind != ND_NAME || !names_host_import(S, root->name)) return NULL;
  struct HostVal *unknown;
  Value *v = host_constexpr(S, n, &unknown);
  if (v) return mk_const(S, n->loc, v);
  if (!unknown) return NULL;
  host_report(S->diags, unknown, n->loc, "the kernel");
  return poison(S, n->loc);
}

static Node *check_attr(Sema *S, Node *n) {
  Node *host = host_attribute(S, n);
  return host ? host : sema_attribute(S, check_expr(S, n->a), n);
}

/* F.max, where F = torch.finfo(torch.float32) (a host object, V_RECORD). */
static Node *record_attribute(Sema *S, const Value *v, Node *n) {
  Buf names;
  buf_init(&names, S->arena);
  for (int i = 0; i < v->keys.len; i++) {
    if (!strcmp(v->keys.data[i], n->name)) return const_to_node(S, n->loc, v->items.data[i]);
    buf_printf(&names, "%s%s", i ? ", " : "", v->keys.data[i]);
  }
  diag_error(S->diags, n->loc, "this object has no attribute '%s' (it has %s)", n->name, buf_cstr(&names));
  return poison(S, n->loc);
}

static Value *tuple_type_of(Sema *S, const Node *t);

/* obj.NAME, obj checked; n the ATTR node (its name and place).  getattr(obj, "NAME") too. */
Node *sema_attribute(Sema *S, Node *obj, Node *n) {
  if (is_poison(obj)) return obj;
  if (is_runtime(obj)) return tile_attribute(S, obj, n);
  if (obj->kind == ND_DESC) return desc_attribute(S, obj, n);
  Value *v = obj->kind == ND_CONST ? obj->cval : NULL;
  if (v && v->kind == V_NAMESPACE) {
    Node *m = member_of(S, n->loc, v->s, n->name);
    if (m) return m;
    no_member(S, n->loc, v->s, n->name);
    return poison(S, n->loc);
  }
  if (v && v->kind == V_MODULE) {
    Node *m = module_member(S, v->module, n->loc, n->name);
    if (m) return m;
    diag_error(S->diags, n->loc, "module '%s' (%s) has no attribute '%s'", v->s, v->module->file, n->name);
    return poison(S, n->loc);
  }
  if (v && (v->kind == V_DTYPE || v->kind == V_BLOCK_TYPE || (v->kind == V_MISSING_DTYPE && !strcmp(n->name, "is_void")))) {
    if (type_predicate(v, n->name) >= 0) { /* x.dtype.is_fp16: called below, in check_call */
      Value *m = value_new(S, V_TYPE_METHOD);
      m->s = n->name;
      vec_push(S->arena, &m->items, v);
      return mk_const(S, n->loc, m);
    }
    Value *a = type_attribute(S, v, n->name);
    if (a) return const_to_node(S, n->loc, a);
  }
  if (v && v->kind == V_RECORD) return record_attribute(S, v, n);
  if (obj->kind == ND_TUPLE && !strcmp(n->name, "type")) return mk_const(S, n->loc, tuple_type_of(S, obj));
  if (v && v->kind == V_TUPLE_TYPE && !strcmp(n->name, "types")) {
    Value *list = value_new(S, V_LIST);
    list->items = v->items;
    return mk_const(S, n->loc, list);
  }
  int plain = v && (v->kind == V_INT || v->kind == V_FLOAT || v->kind == V_BOOL || v->kind == V_STR ||
                    v->kind == V_NONE || v->kind == V_DTYPE);
  if (plain && !strcmp(n->name, "value")) /* MODE.value: a constexpr's Python value */
    return mk_const(S, n->loc, v);
  if (v && v->kind == V_INT && !strcmp(n->name, "bit_length")) { /* copies of Triton's _log2: x.bit_length() - 1 */
    Value *m = value_new(S, V_TYPE_METHOD);
    m->s = n->name;
    vec_push(S->arena, &m->items, v);
    return mk_const(S, n->loc, m);
  }
  /* Triton makes a number assigned to a name a tensor (acc = 0; acc = acc.to(tl.int64)); tile keeps it a
   * constexpr, and a tile method on it (or its dtype, its type) takes it as the run-time scalar it becomes on its
   * own (language.md 7.1). */
  if (v && (v->kind == V_INT || v->kind == V_FLOAT || v->kind == V_BOOL) &&
      (builtin_lookup(n->name, METHOD) >= 0 || !strcmp(n->name, "dtype") || !strcmp(n->name, "type"))) {
    Node *x = runtime(S, obj);
    if (x->type) return tile_attribute(S, x, n);
  }
  diag_error(S->diags, n->loc, "%s has no attribute '%s'",
             v ? value_str(S->arena, v) : "this tuple", n->name);
  return poison(S, n->loc);
}

/* {key: value, ...}: its keys and values checked; a value only an argument takes (extern_elementwise's
 * table of signatures), as a kernel has no run-time dictionaries. */
static Node *check_dict(Sema *S, Node *n) {
  Node *d = node_new(S->arena, ND_DICT, n->loc);
  for (int i = 0; i < n->args.len; i++) {
    Node *key = check_expr(S, n->args.data[i]), *value = check_expr(S, n->kwargs.data[i]);
    if (is_poison(key) || is_poison(value)) return poison(S, n->loc);
    vec_push(S->arena, &d->args, key);
    vec_push(S->arena, &d->kwargs, value);
  }
  return d;
}

static Node *check_sequence(Sema *S, Node *n) {
  Node *t = node_new(S->arena, ND_TUPLE, n->loc);
  for (int i = 0; i < n->args.len; i++) vec_push(S->arena, &t->args, check_expr(S, n->args.data[i]));
  return t;
}

/* A part of a slice left out or written None (x[None:], x[:None], x[::None]: Python's ':'). */
static int slice_part_absent(const Node *p) { return !p || p->kind == ND_NONE; }

/* x[:, None], x[None, :] on tiles; t[i] on constexpr tuples. */
static Node *check_subscript(Sema *S, Node *n) {
  Node *obj = check_expr(S, n->a);
  if (is_poison(obj)) return obj;
  if (!is_runtime(obj)) {
    Node *idx = n->args.len == 1 ? check_expr(S, n->args.data[0]) : NULL;
    if (obj->kind == ND_TUPLE && idx && is_const_kind(idx, V_INT)) {
      int64_t i = idx->cval->i < 0 ? idx->cval->i + obj->args.len : idx->cval->i;
      if (i >= 0 && i < obj->args.len) return obj->args.data[i];
      diag_error(S->diags, idx->loc, "tuple index %lld out of range (the tuple has %d elements)",
                 (long long)idx->cval->i, obj->args.len);
      return poison(S, n->loc);
    }
    diag_error(S->diags, n->loc, "only tiles and tuples (with a constexpr index) can be subscripted");
    return poison(S, n->loc);
  }
  Type *t = obj->type;
  int64_t shape[MAX_RANK];
  int rank = 0, src_dim = 0;
  for (int i = 0; i < n->args.len; i++) {
    Node *it = n->args.data[i];
    if (it->kind == ND_NONE) {
      if (rank == MAX_RANK) {
        diag_error(S->diags, it->loc, "indexing makes more than %d dimensions", MAX_RANK);
        return poison(S, n->loc);
      }
      shape[rank++] = 1;
    } else if (it->kind == ND_SLICE && src_dim >= t->rank) {
      diag_error(S->diags, it->loc, "too many indices for a tile of rank %d", t->rank);
      return poison(S, n->loc);
    } else if (it->kind == ND_SLICE && slice_part_absent(it->a) && slice_part_absent(it->b) && slice_part_absent(it->c)) {
      shape[rank++] = t->shape[src_dim++];
    } else {
      diag_error(S->diags, it->loc, "tiles can only be indexed with ':' and None");
      return poison(S, n->loc);
    }
  }
  while (src_dim < t->rank && rank < MAX_RANK) shape[rank++] = t->shape[src_dim++]; /* x[None] is x[None, :] */
  if (src_dim != t->rank) {
    diag_error(S->diags, n->loc, "indexing makes more than %d dimensions", MAX_RANK);
    return poison(S, n->loc);
  }
  Node *r = typed_node(S, ND_SUBSCRIPT, n->loc, type_tile(S->arena, t, rank, shape));
  r->a = obj;
  for (int i = 0; i < n->args.len; i++) vec_push(S->arena, &r->args, n->args.data[i]);
  return r;
}

/* Python's int.bit_length(): the bits of |i| without leading zeros (0 for 0). */
static int bit_length(const Value *i) {
  uint64_t magnitude = i->is_u64 || i->i >= 0 ? (uint64_t)i->i : -(uint64_t)i->i;
  return magnitude ? 64 - __builtin_clzll(magnitude) : 0;
}

/* tl.constexpr(v) is v (it must be known at compile time); x.dtype.is_fp16()
 * and n.bit_length() take no arguments. */
static Node *constexpr_call(Sema *S, Node *n, Value *f, Node **args) {
  int want = f->kind == V_CONSTEXPR;
  if (n->args.len != want || n->kwargs.len) {
    diag_error(S->diags, n->loc, "%s takes %s", value_str(S->arena, f),
               want ? "exactly one positional argument" : "no arguments");
    return poison(S, n->loc);
  }
  if (f->kind == V_TYPE_METHOD && f->items.data[0]->kind == V_INT)
    return mk_const(S, n->loc, value_int(S, bit_length(f->items.data[0])));
  if (f->kind == V_TYPE_METHOD) return mk_const(S, n->loc, value_bool(S, type_predicate(f->items.data[0], f->s)));
  if (is_runtime(args[0])) {
    diag_error(S->diags, args[0]->loc, "tl.constexpr needs a compile-time value; this is a run-time %s",
               type_str(S->arena, args[0]->type));
    return poison(S, n->loc);
  }
  return args[0];
}

/* tl.float32(x), as Liger's kernels start a running maximum with tl.float32(-float("inf")): a
 * dtype called on a value is tl.cast(x, dtype); a constexpr number becomes a run-time scalar of
 * that type, as a literal takes a type (refused where it does not fit). */
static Node *dtype_call(Sema *S, Node *n, Node *dtype, Node **args) {
  if (n->args.len != 1 || n->kwargs.len) {
    diag_error(S->diags, n->loc, "%s takes exactly one positional argument, the value to convert",
               value_str(S->arena, dtype->cval));
    return poison(S, n->loc);
  }
  Node *x = runtime(S, args[0]);
  if (is_const(x) && x->type) return cast(S, x, dtype->cval->dtype, 0); /* a literal: range-checked, folded */
  Node *cast_args[2] = {args[0], dtype};
  return check_builtin_call(S, n, B_CAST, NULL, cast_args, 2, NULL, 0);
}

/* tl.dtype("fp32"), as extern_elementwise's tables write types: Triton's dtype names, fp32 but int32
 * (core.py's SINT_TYPES, UINT_TYPES, FP_TYPES). */
static Node *dtype_named(Sema *S, Node *n, Node **args, int n_args, int n_kwargs) {
  Value *name = n_args == 1 && !n_kwargs ? const_of(S, args[0], "dtype's name") : NULL;
  if (!name || name->kind != V_STR) {
    if (!name || n_args != 1 || n_kwargs) diag_error(S->diags, n->loc, "tl.dtype takes one argument, a dtype's name");
    else diag_error(S->diags, args[0]->loc, "tl.dtype takes a dtype's name, not %s", value_str(S->arena, name));
    return poison(S, n->loc);
  }
  for (int t = 0; t < DT_COUNT; t++)
    if (!strcmp(name->s, dtype_is_float((DType)t) ? dtype_name((DType)t) : dtype_triton_name((DType)t)))
      return mk_const(S, n->loc, value_dtype(S, (DType)t, 0));
  if (!strcmp(name->s, "fp8e4b8") || !strcmp(name->s, "fp8e5b16")) {
    Value *v = value_new(S, V_MISSING_DTYPE);
    v->s = !strcmp(name->s, "fp8e4b8") ? "float8e4b8" : "float8e5b16";
    return mk_const(S, n->loc, v);
  }
  diag_error(S->diags, args[0]->loc, "tl.dtype: '%s' is not one of Triton's dtype names (int32, uint8, fp16, bf16, "
             "fp32, fp8e5, ...)", name->s);
  return poison(S, n->loc);
}

/* tl.tuple_type([types]): the type a tuple of values of those types has (x.type). */
static Node *tuple_type_call(Sema *S, Node *n, Node **args) {
  Value *types = n->args.len == 1 && !n->kwargs.len ? const_of(S, args[0], "tl.tuple_type's types") : NULL;
  if (!types || types->kind != V_LIST) {
    if (!types || n->args.len != 1 || n->kwargs.len) diag_error(S->diags, n->loc, "tl.tuple_type takes one argument, a list of types");
    else diag_error(S->diags, args[0]->loc, "tl.tuple_type takes a list of types, not %s", value_str(S->arena, types));
    return poison(S, n->loc);
  }
  Value *v = value_new(S, V_TUPLE_TYPE);
  v->items = types->items;
  return mk_const(S, n->loc, v);
}

/* t.type of a tuple: its elements' types, item by item. */
static Value *tuple_type_of(Sema *S, const Node *t) {
  Value *v = value_new(S, V_TUPLE_TYPE);
  for (int i = 0; i < t->args.len; i++) {
    const Node *x = t->args.data[i];
    Value *item = x->kind == ND_TUPLE ? tuple_type_of(S, x) : x->type ? value_type_of(S, x->type) : NULL;
    if (!item && is_const(x)) item = x->cval;
    if (!item) { /* a descriptor or block pointer: its class */
      item = value_new(S, V_CLASS);
      item->s = "tensor_descriptor";
    }
    vec_push(S->arena, &v->items, item);
  }
  return v;
}

/* tl.tuple(items): Triton's tuple of values, here the tuple itself (a list becomes one). */
static Node *tuple_call(Sema *S, Node *n, Node **args) {
  Node *items = n->args.len == 1 && !n->kwargs.len ? args[0] : NULL;
  if (items && is_const_kind(items, V_LIST)) items = const_to_node(S, n->loc, items->cval);
  if (!items || items->kind != ND_TUPLE) {
    diag_error(S->diags, n->loc, "tl.tuple takes one argument, a list or tuple of values");
    return poison(S, n->loc);
  }
  return items;
}

static Node *check_call(Sema *S, Node *n) {
  Node *host = host_attribute(S, n); /* torch.finfo(torch.float32): an object whose attributes are constexprs */
  if (host) return host;
  Node *callee = check_expr(S, n->a);
  Node *args[64], *kws[64];
  if (n->args.len > 64 || n->kwargs.len > 64) {
    diag_error(S->diags, n->loc, "too many arguments (the limit is 64)");
    return poison(S, n->loc);
  }
  int poisoned = is_poison(callee);
  for (int i = 0; i < n->args.len; i++) {
    args[i] = check_expr(S, n->args.data[i]);
    poisoned |= is_poison(args[i]);
  }
  for (int i = 0; i < n->kwargs.len; i++) {
    Node *kw = node_new(S->arena, ND_KEYWORD, n->kwargs.data[i]->loc);
    kw->name = n->kwargs.data[i]->name;
    kw->a = check_expr(S, n->kwargs.data[i]->a);
    poisoned |= is_poison(kw->a);
    kws[i] = kw;
  }
  if (poisoned) return poison(S, n->loc);
  Value *f = is_const(callee) && !callee->type ? callee->cval : NULL;
  if (f && f->kind == V_BUILTIN)
    return check_builtin_call(S, n, (int)f->i, f->self, args, n->args.len, kws, n->kwargs.len);
  if (f && f->kind == V_LIBDEVICE) return check_libdevice_call(S, n, (int)f->i, args, n->args.len, kws, n->kwargs.len);
  if (f && f->kind == V_FUNC && f->self) { /* x.sigmoid(): x is the first argument */
    if (n->args.len == 64) return poison(S, n->loc);
    memmove(args + 1, args, sizeof args[0] * (size_t)n->args.len);
    args[0] = f->self;
    return call_function(S, n, f->func, args, n->args.len + 1, kws, n->kwargs.len);
  }
  if (f && f->kind == V_FUNC) return call_function(S, n, f->func, args, n->args.len, kws, n->kwargs.len);
  if (f && (f->kind == V_CONSTEXPR || f->kind == V_TYPE_METHOD)) return constexpr_call(S, n, f, args);
  if (f && f->kind == V_DTYPE && !f->dtype_is_ptr) return dtype_call(S, n, callee, args);
  if (f && f->kind == V_CLASS && !strcmp(f->s, "dtype")) return dtype_named(S, n, args, n->args.len, n->kwargs.len);
  if (f && f->kind == V_CLASS && !strcmp(f->s, "tuple")) return tuple_call(S, n, args);
  if (f && f->kind == V_CLASS && !strcmp(f->s, "tuple_type")) return tuple_type_call(S, n, args);
  if (callee->type)
    diag_error(S->diags, n->a->loc, "this is a run-time %s value, not a function", type_str(S->arena, callee->type));
  else
    diag_error(S->diags, n->a->loc, "%s is not callable", describe(S, callee));
  return poison(S, n->loc);
}

static Node *check_boolop(Sema *S, Node *n) {
  Node *x = check_expr(S, n->a);
  if (is_poison(x)) return x;
  if (is_const(x) && !x->type) { /* Python's short circuit on constexprs */
    int ok, t = value_truth(x->cval, &ok);
    if ((n->op == TK_KW_AND && !t) || (n->op == TK_KW_OR && t)) return x;
    return check_expr(S, n->b);
  }
  Node *y = check_expr(S, n->b);
  if (is_poison(y)) return y;
  return binary(S, n->loc, n->op == TK_KW_AND ? TK_AMP : TK_PIPE, to_bool(S, x), to_bool(S, y));
}

/* Left operand first: C leaves the order of a call's arguments open, and
 * the errors must come in source order on every compiler. */
static Node *check_binop(Sema *S, Node *n) {
  Node *x = check_expr(S, n->a);
  return binary(S, n->loc, n->op, x, check_expr(S, n->b));
}

/* `x is None` with x a run-time value (a pointer argument, say): Python's
 * identity, as Triton evaluates it, so a constexpr False (`is not`: True)
 * that folds the branch it guards. */
static Node *runtime_is(Sema *S, Node *n, Node *x, Node *y) {
  if (!is_const_kind(x, V_NONE) && !is_const_kind(y, V_NONE)) {
    diag_error(S->diags, n->loc, "'is' compares a run-time value only with None");
    return poison(S, n->loc);
  }
  return mk_const(S, n->loc, value_bool(S, n->negated));
}

static Node *check_compare(Sema *S, Node *n) {
  Node *x = check_expr(S, n->a), *y = check_expr(S, n->b);
  if (n->op == TK_KW_IN) {
    diag_error(S->diags, n->loc, "'in' is only supported in for loops");
    return poison(S, n->loc);
  }
  if (n->op == TK_KW_IS) {
    if (is_poison(x) || is_poison(y)) return poison(S, n->loc);
    if (is_runtime(x) || is_runtime(y)) return runtime_is(S, n, x, y);
    Value *v = fold_binary(S, n->loc, TK_KW_IS, x->cval, y->cval);
    if (n->negated) v->i = !v->i;
    return mk_const(S, n->loc, v);
  }
  return binary(S, n->loc, n->op, x, y);
}

static Node *check_ifexp(Sema *S, Node *n) {
  Node *c = check_expr(S, n->a);
  if (is_poison(c)) return c;
  if (is_const(c) && !c->type) {
    int ok;
    return check_expr(S, value_truth(c->cval, &ok) ? n->b : n->c);
  }
  Node *x = check_expr(S, n->b), *y = check_expr(S, n->c);
  Node *args[3] = {c, x, y};
  return check_builtin_call(S, n, B_WHERE, NULL, args, 3, NULL, 0);
}

static Node *literal(Sema *S, Node *n) {
  switch (n->kind) {
  case ND_INT: return mk_const(S, n->loc, n->is_u64 ? value_uint(S, (uint64_t)n->ival) : value_int(S, n->ival));
  case ND_FLOAT: return mk_const(S, n->loc, value_float(S, n->fval));
  case ND_BOOL: return mk_const(S, n->loc, value_bool(S, (int)n->ival));
  case ND_NONE: return mk_const(S, n->loc, value_new(S, V_NONE));
  default: {
    Value *v = value_new(S, V_STR);
    v->s = n->str;
    v->slen = n->str_len;
    return mk_const(S, n->loc, v);
  }
  }
}

/* Each helper's tree is within AST_MAX_DEPTH, but inlining nests one in
 * another: the checker's own recursion (and so the typed tree) is bounded
 * here, through all the helpers. */
static int enter(Sema *S, Loc loc) {
  if (S->nesting < AST_MAX_DEPTH) {
    S->nesting++;
    return 1;
  }
  if (!S->too_deep) ast_too_deep(S->diags, loc);
  S->too_deep = 1;
  return 0;
}

static Node *check_node(Sema *S, Node *n);

Node *check_expr(Sema *S, Node *n) {
  if (!enter(S, n->loc)) return poison(S, n->loc);
  Node *r = check_node(S, n);
  S->nesting--;
  return r;
}

static Node *check_node(Sema *S, Node *n) {
  switch (n->kind) {
  case ND_INT:
  case ND_FLOAT:
  case ND_BOOL:
  case ND_NONE:
  case ND_STR: return literal(S, n);
  case ND_NAME: return check_name(S, n);
  case ND_ATTR: return check_attr(S, n);
  case ND_CALL: return check_call(S, n);
  case ND_SUBSCRIPT: return check_subscript(S, n);
  case ND_TUPLE:
  case ND_LIST: return check_sequence(S, n);
  case ND_DICT: return check_dict(S, n);
  case ND_BINOP: return check_binop(S, n);
  case ND_UNARY: return unary(S, n->loc, n->op, check_expr(S, n->a));
  case ND_COMPARE: return check_compare(S, n);
  case ND_BOOLOP: return check_boolop(S, n);
  case ND_IFEXP: return check_ifexp(S, n);
  case ND_CONST: return n;
  default:
    diag_error(S->diags, n->loc, "%s is not supported inside a kernel",
               n->kind == ND_LAMBDA ? "a lambda"
               : n->kind == ND_LISTCOMP ? "a list comprehension" : "this expression");
    return poison(S, n->loc);
  }
}

/* ---- statements ---------------------------------------------------------- */

static void check_block(Sema *S, NodeVec *body, NodeVec *out);

/* The name a variable has in the checked code (helpers' locals are prefixed). */
static const char *local_name(Sema *S, const char *name) {
  return S->prefix ? arena_printf(S->arena, "%s%s", S->prefix, name) : name;
}

static void assign_name(Sema *S, Node *target, Node *value, Loc loc) {
  if (is_runtime(value) && value->kind != ND_TUPLE) {
    const char *name = local_name(S, target->name);
    Node *a = node_new(S->arena, ND_ASSIGN, loc);
    vec_push(S->arena, &a->args, var_ref(S, target->loc, name, value->type));
    a->b = value;
    emit(S, a);
    scope_set(S, &S->scope, target->name, var_ref(S, target->loc, name, value->type));
  } else {
    scope_set(S, &S->scope, target->name, value);
  }
}

static void assign_to(Sema *S, Node *target, Node *value, Loc loc) {
  if (target->kind == ND_NAME) {
    assign_name(S, target, value, loc);
    return;
  }
  if (target->kind != ND_TUPLE && target->kind != ND_LIST) { /* host code's targets, in a helper without @jit */
    diag_error(S->diags, target->loc, target->kind == ND_SUBSCRIPT ? "cannot assign to an element of a tile; use tl.where or tl.store"
                                      : target->kind == ND_ATTR ? "cannot assign to an attribute in a kernel"
                                                                : "cannot assign to this expression in a kernel");
    return;
  }
  /* tuple unpacking */
  Node *tuple = value;
  if (is_const_kind(value, V_LIST)) tuple = const_to_node(S, value->loc, value->cval);
  if (is_poison(value)) {
    for (int i = 0; i < target->args.len; i++) assign_to(S, target->args.data[i], value, loc);
    return;
  }
  if (tuple->kind != ND_TUPLE || tuple->args.len != target->args.len) {
    diag_error(S->diags, loc, "cannot unpack %s into %d names",
               tuple->kind == ND_TUPLE ? arena_printf(S->arena, "%d values", tuple->args.len) : "a single value",
               target->args.len);
    for (int i = 0; i < target->args.len; i++) assign_to(S, target->args.data[i], poison(S, loc), loc);
    return;
  }
  for (int i = 0; i < target->args.len; i++) assign_to(S, target->args.data[i], tuple->args.data[i], loc);
}

/* Evaluates the run-time parts of a value into temporaries, so that
 * `a, b = b, a` reads both before writing either, and `c = d = f()` runs
 * f once. */
Node *materialize(Sema *S, Node *v, Loc loc) {
  if (v->kind == ND_TUPLE) {
    Node *t = node_new(S->arena, ND_TUPLE, v->loc);
    for (int i = 0; i < v->args.len; i++) vec_push(S->arena, &t->args, materialize(S, v->args.data[i], loc));
    return t;
  }
  if (!is_runtime(v) || is_const(v)) return v;
  const char *tmp = arena_printf(S->arena, "tmp.%d", ++S->n_temps);
  Node *a = node_new(S->arena, ND_ASSIGN, loc);
  vec_push(S->arena, &a->args, var_ref(S, v->loc, tmp, v->type));
  a->b = v;
  emit(S, a);
  return var_ref(S, v->loc, tmp, v->type);
}

static void check_assign(Sema *S, Node *n) {
  Node *v = check_expr(S, n->b);
  if (n->args.len > 1 || n->args.data[0]->kind != ND_NAME) v = materialize(S, v, n->loc);
  for (int i = 0; i < n->args.len; i++) assign_to(S, n->args.data[i], v, n->loc);
}

static void check_augassign(Sema *S, Node *n) {
  Node *cur = check_expr(S, n->a);
  Node *v = binary(S, n->loc, n->op, cur, check_expr(S, n->b)); /* x += y is x = x + y, as in Triton */
  if (n->a->kind != ND_NAME) v = materialize(S, v, n->loc);
  assign_to(S, n->a, v, n->loc);
}

static void check_annassign(Sema *S, Node *n) {
  if (!n->b) return;
  Node *v = check_expr(S, n->b);
  Node *ann = check_expr(S, n->c);
  if (is_const_kind(ann, V_CONSTEXPR) && is_runtime(v) && !is_const(v)) {
    diag_error(S->diags, n->b->loc, "'%s' is annotated tl.constexpr but its value is a run-time %s",
               n->a->name, type_str(S->arena, v->type));
    v = poison(S, n->loc);
  }
  assign_to(S, n->a, v, n->loc);
}

/* Triton's tl.multiple_of, max_contiguous and max_constancy annotate their argument in place, so that
 * `tl.multiple_of(a_ptrs, [16, 16])` as a statement (tutorial 08's loop) hints the variable: here it is
 * `a_ptrs = tl.multiple_of(a_ptrs, [16, 16])`, for the uses after it. The variable's name, else NULL. */
static const char *hinted_name(const Node *stmt) {
  if (stmt->kind != ND_EXPR_STMT || stmt->a->kind != ND_CALL) return NULL;
  const Node *call = stmt->a, *f = call->a;
  const char *fn = f->kind == ND_ATTR || f->kind == ND_NAME ? f->name : NULL;
  if (!fn || (strcmp(fn, "multiple_of") && strcmp(fn, "max_contiguous") && strcmp(fn, "max_constancy"))) return NULL;
  return call->args.len >= 1 && call->args.data[0]->kind == ND_NAME ? call->args.data[0]->name : NULL;
}

static void check_assign(Sema *S, Node *n);

static void check_expr_stmt(Sema *S, Node *n) {
  if (n->a->kind == ND_STR) return; /* docstring */
  if (hinted_name(n)) {
    Node *a = node_new(S->arena, ND_ASSIGN, n->loc);
    vec_push(S->arena, &a->args, n->a->args.data[0]);
    a->b = n->a;
    check_assign(S, a);
    return;
  }
  Node *v = check_expr(S, n->a);
  if (is_runtime(v) || v->kind == ND_CALL) {
    Node *s = node_new(S->arena, ND_EXPR_STMT, n->loc);
    s->a = v;
    emit(S, s);
  }
}

static int const_truth(Sema *S, Node *c, int *value) {
  if (!is_const(c) || c->type) return 0;
  int ok;
  *value = value_truth(c->cval, &ok);
  (void)S;
  return 1;
}

/* The type a value has when it must live in a run-time variable. */
static Type *carried_type(Sema *S, Node *v) {
  if (is_runtime(v)) return v->type;
  if (is_const(v)) return runtime(S, v)->type;
  return NULL;
}

static int assigns_name(Node *stmt, const char *name);

static int block_assigns(NodeVec *body, const char *name) {
  for (int i = 0; i < body->len; i++)
    if (assigns_name(body->data[i], name)) return 1;
  return 0;
}

static int target_has(Node *t, const char *name) {
  if (t->kind == ND_NAME) return !strcmp(t->name, name);
  if (t->kind != ND_TUPLE && t->kind != ND_LIST) return 0;
  for (int i = 0; i < t->args.len; i++)
    if (target_has(t->args.data[i], name)) return 1;
  return 0;
}

static int assigns_name(Node *s, const char *name) {
  switch (s->kind) {
  case ND_ASSIGN:
    for (int i = 0; i < s->args.len; i++)
      if (target_has(s->args.data[i], name)) return 1;
    return 0;
  case ND_AUGASSIGN:
  case ND_ANNASSIGN: return target_has(s->a, name);
  case ND_FOR: return target_has(s->a, name) || block_assigns(&s->body, name);
  case ND_IF:
  case ND_WHILE: return block_assigns(&s->body, name) || block_assigns(&s->orelse, name);
  case ND_EXPR_STMT: return hinted_name(s) && !strcmp(hinted_name(s), name);
  default: return 0;
  }
}

static Node *find_target(Node *t, const char *name) {
  if (t->kind == ND_NAME) return strcmp(t->name, name) ? NULL : t;
  for (int i = 0; i < t->args.len; i++) {
    Node *found = find_target(t->args.data[i], name);
    if (found) return found;
  }
  return NULL;
}

/* The name in the last statement of `body` (or of its blocks) that assigns
 * it: where a loop-carried variable's type changes, for the message. */
static Node *last_assignment(NodeVec *body, const char *name) {
  for (int i = body->len - 1; i >= 0; i--) {
    Node *s = body->data[i], *found = NULL;
    if (!assigns_name(s, name)) continue;
    if (s->kind == ND_IF || s->kind == ND_WHILE || s->kind == ND_FOR) {
      found = last_assignment(&s->orelse, name);
      if (!found) found = last_assignment(&s->body, name);
      return found ? found : find_target(s->a, name); /* a for's own target */
    }
    if (s->kind == ND_ASSIGN)
      for (int k = s->args.len - 1; k >= 0 && !found; k--) found = find_target(s->args.data[k], name);
    return found ? found : find_target(s->a, name);
  }
  return NULL;
}

/* Makes `var` hold `value` at the end of a branch that did not assign it. */
static void assign_at_end(Sema *S, NodeVec *body, Loc loc, const char *var, Node *value, Type *t) {
  if (value->kind == ND_NAME && !strcmp(value->name, var)) return;
  Node *a = node_new(S->arena, ND_ASSIGN, loc);
  vec_push(S->arena, &a->args, var_ref(S, loc, var, t));
  a->b = cast(S, runtime(S, value), t->elem, t->is_ptr);
  vec_push(S->arena, body, a);
}

static int is_block_ptr(const Node *n) { return n->kind == ND_DESC && n->ival == DESC_BLOCK_PTR; }

/* A block pointer's offsets as the run-time variables "var.offset.N",
 * given their values at the end of `body`: what a loop carries or an if
 * merges of it (its base, shape and strides cannot change there). */
static Node *block_ptr_vars(Sema *S, NodeVec *body, Loc loc, const char *var, Node *d) {
  Node *vars[MAX_RANK];
  for (int i = 0; i < desc_rank(d); i++) {
    Type *t = d->body.data[i]->type;
    const char *name = arena_printf(S->arena, "%s.offset.%d", var, i);
    assign_at_end(S, body, loc, name, d->body.data[i], t);
    vars[i] = var_ref(S, loc, name, t);
  }
  return desc_with_offsets(S, d, vars);
}

static void block_ptr_changed(Sema *S, Loc loc, const char *name, const char *where) {
  diag_error(S->diags, loc, "block pointer '%s' is made anew %s; only its offsets (tl.advance) can change there",
             name, where);
  diag_note(S->diags, loc, "make it with tl.make_block_ptr before, and move it with tl.advance");
}

/* After a run-time if, a name bound differently in the two branches
 * becomes one run-time variable; both sides must agree on its type. */
static void merge_branches(Sema *S, Node *out, Scope *then_sc, Scope *else_sc) {
  Scope merged = {0};
  for (int i = 0; i < then_sc->len; i++) {
    Binding b = then_sc->data[i];
    Node *other = scope_get(else_sc, b.name);
    if (!other) { /* defined on one path only: not visible after the if */
      Binding d = {b.name, out};
      vec_push(S->arena, &S->dropped, d);
      continue;
    }
    if (other == b.value || (is_const(other) && is_const(b.value) && !other->type && !b.value->type &&
                             other->cval->kind == b.value->cval->kind && value_equal(other->cval, b.value->cval))) {
      vec_push(S->arena, &merged, b);
      continue;
    }
    Binding r = {b.name, poison(S, out->loc)};
    if (is_block_ptr(b.value) && desc_same_but_offsets(b.value, other)) {
      const char *var = local_name(S, b.name);
      r.value = block_ptr_vars(S, &out->body, out->loc, var, b.value);
      block_ptr_vars(S, &out->orelse, out->loc, var, other);
      for (int k = 0; k < desc_rank(r.value); k++) vec_push(S->arena, &out->args, r.value->body.data[k]);
      vec_push(S->arena, &merged, r);
      continue;
    }
    if (is_block_ptr(b.value) && is_block_ptr(other)) {
      block_ptr_changed(S, out->loc, b.name, "in a branch of a run-time if");
      vec_push(S->arena, &merged, r);
      continue;
    }
    Type *tt = is_poison(b.value) ? NULL : carried_type(S, b.value);
    Type *et = is_poison(other) ? NULL : carried_type(S, other);
    if (tt && et && type_equal(tt, et)) {
      const char *var = local_name(S, b.name);
      assign_at_end(S, &out->body, out->loc, var, b.value, tt);
      assign_at_end(S, &out->orelse, out->loc, var, other, tt);
      r.value = var_ref(S, out->loc, var, tt);
      vec_push(S->arena, &out->args, r.value); /* lowering yields exactly these */
    } else if (!is_poison(b.value) && !is_poison(other)) {
      diag_error(S->diags, out->loc, "'%s' has type %s in the then-branch but %s in the else-branch", b.name,
                 describe(S, b.value),
                 describe(S, other));
    }
    vec_push(S->arena, &merged, r);
  }
  for (int i = 0; i < else_sc->len; i++)
    if (!scope_get(then_sc, else_sc->data[i].name)) {
      Binding d = {else_sc->data[i].name, out};
      vec_push(S->arena, &S->dropped, d);
    }
  S->scope = merged;
}

static void check_stmt(Sema *S, Node *n);
static void check_while(Sema *S, Node *n);

/* cond ? a : b element by element (tuples item by item); a poison after an error. */
static Node *selected(Sema *S, Loc loc, Node *cond, Node *a, Node *b) {
  if (a->kind == ND_TUPLE && b->kind == ND_TUPLE && a->args.len == b->args.len) {
    Node *t = node_new(S->arena, ND_TUPLE, loc);
    for (int i = 0; i < a->args.len; i++)
      vec_push(S->arena, &t->args, selected(S, loc, cond, a->args.data[i], b->args.data[i]));
    return t;
  }
  Node *where = node_new(S->arena, ND_CALL, loc), *args[3] = {cond, a, b};
  Node *v = check_builtin_call(S, where, B_WHERE, NULL, args, 3, NULL, 0);
  return is_poison(v) ? v : materialize(S, v, loc);
}

/* The variables after a selected if: those of both branches, chosen element by element. */
static void merge_selected(Sema *S, Loc loc, Node *cond, Scope *then_sc, Scope *else_sc) {
  Scope merged = {0};
  for (int i = 0; i < then_sc->len; i++) {
    Binding b = then_sc->data[i];
    Node *other = scope_get(else_sc, b.name);
    if (!other) continue; /* defined on one path only: not visible after the if */
    if (other != b.value) b.value = selected(S, loc, cond, b.value, other);
    vec_push(S->arena, &merged, b);
  }
  S->scope = merged;
}

/* The elements on a branch's path: those on the enclosing one's (`outer`, NULL: all) where `on` holds. */
static Node *narrowed(Sema *S, Loc loc, Node *outer, Node *on) {
  return outer ? materialize(S, binary(S, loc, TK_AMP, outer, on), loc) : on;
}

/* A run-time if in a tl.map_elementwise function, which tile calls on whole tiles (its condition
 * a tile, or a scalar when the args are): both branches are computed and their values (variables,
 * and the returned value when both return, as with_tails makes them) chosen element by element with
 * tl.where. */
static void select_if(Sema *S, Node *n, Node *cond) {
  cond = materialize(S, cond, n->a->loc); /* its variables may be assigned in the branches */
  for (int i = 0; i < S->scope.len; i++) /* so may the variables the else-branch starts from */
    if (S->scope.data[i].value->kind == ND_NAME && S->scope.data[i].value->type)
      S->scope.data[i].value = materialize(S, S->scope.data[i].value, n->loc);
  Scope before = scope_copy(S, &S->scope);
  Node *ret = S->ret, *active = S->active;
  S->selecting++;
  S->active = narrowed(S, n->loc, active, cond); /* a loop in a branch runs while its own elements loop */
  check_block(S, &n->body, S->out);
  Scope then_sc = S->scope;
  for (int i = 0; i < then_sc.len; i++) /* copied: the else-branch may assign the same variables */
    if (scope_get(&before, then_sc.data[i].name) != then_sc.data[i].value)
      then_sc.data[i].value = materialize(S, then_sc.data[i].value, n->loc);
  Node *then_ret = S->ret ? materialize(S, S->ret, n->loc) : NULL;
  int then_returned = S->returned;
  S->scope = before;
  S->ret = ret;
  S->returned = 0;
  S->active = narrowed(S, n->loc, active, materialize(S, unary(S, n->loc, TK_KW_NOT, cond), n->loc));
  check_block(S, &n->orelse, S->out);
  S->active = active;
  S->selecting--;
  int else_returned = S->returned;
  if (then_returned != else_returned) {
    diag_error(S->diags, S->return_loc, "tl.map_elementwise: a return on only some elements' path (an if on the "
                                         "elements without a return on every path) is part of Triton but not supported by tile yet");
    S->returned = 0;
    return;
  }
  if (then_returned) S->ret = selected(S, n->loc, cond, then_ret, S->ret);
  else merge_selected(S, n->loc, cond, &then_sc, &S->scope);
}

/* The names a helper's returned value is bound to for merging: "return",
 * or "return.0", "return.1", ... for a tuple's items, nested alike. */
static void bind_returned(Sema *S, Scope *sc, const char *name, Node *v) {
  if (v->kind != ND_TUPLE) {
    scope_set(S, sc, name, v);
    return;
  }
  for (int i = 0; i < v->args.len; i++) bind_returned(S, sc, arena_printf(S->arena, "%s.%d", name, i), v->args.data[i]);
}

static Node *returned_value(Sema *S, const char *name, const Node *shape) {
  if (shape->kind != ND_TUPLE) return scope_get(&S->scope, name);
  Node *t = node_new(S->arena, ND_TUPLE, shape->loc);
  for (int i = 0; i < shape->args.len; i++)
    vec_push(S->arena, &t->args, returned_value(S, arena_printf(S->arena, "%s.%d", name, i), shape->args.data[i]));
  return t;
}

/* Whether two returned values can merge: tuples of as many items, item by item, and None only with None. */
static int returns_match(const Node *a, const Node *b) {
  if (a->kind == ND_TUPLE || b->kind == ND_TUPLE) {
    if (a->kind != b->kind || a->args.len != b->args.len) return 0;
    for (int i = 0; i < a->args.len; i++)
      if (!returns_match(a->args.data[i], b->args.data[i])) return 0;
    return 1;
  }
  return is_const_kind(a, V_NONE) == is_const_kind(b, V_NONE);
}

/* A helper's if that with_tails made end every path (a branch that does
 * not return gives None): its value is the branches' returned values,
 * merged as a variable both assign would be (constexprs that differ become
 * run-time values, as Triton makes them tensors).  Nothing follows such an
 * if, so the other variables are not merged. */
static void merge_returns(Sema *S, Node *out, Node *then_ret, Node *else_ret) {
  Node *none = mk_const(S, out->loc, value_new(S, V_NONE));
  Node *a = then_ret ? then_ret : none, *b = else_ret ? else_ret : none;
  if (is_poison(a) || is_poison(b)) {
    S->ret = poison(S, out->loc);
    return;
  }
  if (!returns_match(a, b)) {
    diag_error(S->diags, out->loc, "this helper returns %s on one path of this if and %s on the other", describe(S, a),
               describe(S, b));
    S->ret = poison(S, out->loc);
    return;
  }
  Scope then_sc = {0}, else_sc = {0};
  bind_returned(S, &then_sc, "return", a);
  bind_returned(S, &else_sc, "return", b);
  merge_branches(S, out, &then_sc, &else_sc);
  S->ret = returned_value(S, "return", a);
}

static void check_if(Sema *S, Node *n) {
  Node *c = check_expr(S, n->a);
  int truth;
  if (is_poison(c)) return;
  if (const_truth(S, c, &truth)) { /* constexpr if: only the taken branch exists */
    check_block(S, truth ? &n->body : &n->orelse, S->out);
    return;
  }
  if (S->mapping) { /* scalars too: with_tails' ifs need their returns selected */
    select_if(S, n, to_bool(S, c));
    return;
  }
  if (c->type->rank != 0) {
    diag_error(S->diags, n->a->loc, "the condition of an if must be a scalar, not a tile of type %s",
               type_str(S->arena, c->type));
    return;
  }
  Node *out = node_new(S->arena, ND_IF, n->loc);
  out->a = to_bool(S, c);
  Scope before = scope_copy(S, &S->scope);
  int returned = S->returned;
  Node *ret = S->ret;
  check_block(S, &n->body, &out->body);
  int then_returned = S->returned;
  Scope then_sc = S->scope;
  Node *then_ret = S->ret;
  S->scope = before;
  S->returned = returned;
  S->ret = ret;
  check_block(S, &n->orelse, &out->orelse);
  int else_returned = S->returned;
  if (n->ival == IF_TAIL) { /* each branch held the rest of the function: every path has ended */
    if (S->in_helper) merge_returns(S, out, then_ret, S->ret);
    S->returned = 1;
  } else {
    if ((then_returned || else_returned) && !returned) {
      diag_error(S->diags, S->return_loc, "a return inside an if on a run-time condition is supported only outside "
                                           "loops (assign a variable and return it after the loop)");
      S->returned = 0;
    }
    merge_branches(S, out, &then_sc, &S->scope);
  }
  emit(S, out);
}

/* Names assigned in a run-time loop body that exist before it become
 * run-time variables carried around the loop. */
/* In tl.map_elementwise's function, a number a loop carries as one value
 * for every element (`n = 0`) is a tile of the elements' shape: the loop
 * may change it element by element (an if or a while on the elements). */
static Node *per_element(Sema *S, Node *v) {
  int number = v->type ? v->type->rank == 0 && !v->type->is_ptr
                       : is_const_kind(v, V_INT) || is_const_kind(v, V_FLOAT) || is_const_kind(v, V_BOOL);
  return number ? broadcast(S, runtime(S, v), S->mapped_type->rank, S->mapped_type->shape) : v;
}

static void carry_loop_variables(Sema *S, Node *loop, Scope *carried) {
  for (int i = 0; i < S->scope.len; i++) {
    Binding *b = &S->scope.data[i];
    if (!block_assigns(&loop->body, b->name) || is_poison(b->value)) continue;
    if (is_block_ptr(b->value)) {
      b->value = block_ptr_vars(S, S->out, loop->loc, local_name(S, b->name), b->value);
      vec_push(S->arena, carried, *b);
      continue;
    }
    if (S->mapping) b->value = per_element(S, b->value);
    Type *t = carried_type(S, b->value);
    if (!t) {
      Binding fixed = *b; /* checked after the body: it must not change */
      fixed.value = b->value;
      vec_push(S->arena, carried, fixed);
      continue;
    }
    const char *var = local_name(S, b->name);
    assign_at_end(S, S->out, loop->loc, var, b->value, t);
    b->value = var_ref(S, loop->loc, var, t);
    vec_push(S->arena, carried, *b);
  }
}

/* A value with no run-time type (a tuple, a string, a dtype) cannot change
 * in a run-time loop: after the loop it would depend on the trip count. */
static int check_fixed_value(Sema *S, Node *loop, Binding before, Node *after) {
  if (before.value->type) return 0;
  int same = after == before.value ||
             (is_const(after) && is_const(before.value) && !after->type &&
              after->cval->kind == before.value->cval->kind && value_equal(after->cval, before.value->cval));
  if (!same)
    diag_error(S->diags, loop->loc, "'%s' (%s) changes inside a run-time loop; only numbers and tiles can",
               before.name, describe(S, before.value));
  scope_set(S, &S->scope, before.name, same ? before.value : poison(S, loop->loc));
  return 1;
}

static void check_carried_types(Sema *S, Node *loop, Scope *carried, NodeVec *body_out) {
  for (int i = 0; i < carried->len; i++) {
    Binding before = carried->data[i];
    Node *after = scope_get(&S->scope, before.name);
    if (!after || is_poison(after)) continue;
    if (is_block_ptr(before.value)) {
      if (desc_same_but_offsets(before.value, after)) {
        for (int k = 0; k < desc_rank(after); k++)
          assign_at_end(S, body_out, loop->loc, before.value->body.data[k]->name, after->body.data[k],
                        before.value->body.data[k]->type);
      } else {
        block_ptr_changed(S, loop->loc, before.name, "inside a run-time loop");
      }
      scope_set(S, &S->scope, before.name, before.value);
      continue;
    }
    if (check_fixed_value(S, loop, before, after)) continue;
    Type *t = carried_type(S, after), *want = before.value->type;
    if (t && type_equal(t, want)) {
      assign_at_end(S, body_out, loop->loc, before.value->name, after, t);
      scope_set(S, &S->scope, before.name, before.value);
      continue;
    }
    Node *at = last_assignment(&loop->body, before.name);
    diag_error(S->diags, at ? at->loc : loop->loc,
               "loop-carried variable '%s' has type %s before the loop but %s after an iteration",
               before.name, type_str(S->arena, want),
               describe(S, after));
    diag_note(S->diags, loop->loc, "in this loop; give '%s' its final type before it, e.g. with tl.zeros(..., dtype=...)",
              before.name);
    scope_set(S, &S->scope, before.name, poison(S, loop->loc));
  }
}

/* The typed loop lists the run-time variables it carries (as NAME nodes in
 * args), so lowering carries exactly these. */
static void record_carried(Sema *S, Node *loop, Scope *carried) {
  for (int i = 0; i < carried->len; i++)
    if (is_block_ptr(carried->data[i].value))
      for (int k = 0; k < desc_rank(carried->data[i].value); k++)
        vec_push(S->arena, &loop->args, carried->data[i].value->body.data[k]);
  for (int i = 0; i < carried->len; i++)
    if (carried->data[i].value->type && carried->data[i].value->kind == ND_NAME)
      vec_push(S->arena, &loop->args, carried->data[i].value);
}

/* Keeps only the names that existed before a loop body (Triton drops names
 * first bound inside a loop).  One the body does not assign keeps its value
 * from before: the body may have copied it into a temporary that exists
 * only there (an if on tl.map_elementwise's elements does). */
static void drop_loop_locals(Sema *S, const Scope *before, NodeVec *body) {
  Scope kept = {0};
  for (int i = 0; i < S->scope.len; i++) {
    Binding b = S->scope.data[i];
    Node *old = scope_get((Scope *)before, b.name);
    if (!old) continue;
    if (!block_assigns(body, b.name)) b.value = old;
    vec_push(S->arena, &kept, b);
  }
  S->scope = kept;
}

typedef struct RangeArgs {
  Node *start, *end, *step;
  int is_static;
  Node *call;                /* the typed range call, kept for its options */
} RangeArgs;

static int check_range(Sema *S, Node *iter, RangeArgs *r) {
  memset(r, 0, sizeof *r);
  if (iter->kind != ND_CALL) goto bad;
  Node *callee = check_expr(S, iter->a);
  if (is_poison(callee)) return 0;
  if (!is_const_kind(callee, V_BUILTIN)) goto bad;
  int id = (int)callee->cval->i;
  if (id != B_RANGE && id != B_STATIC_RANGE && id != B_PY_RANGE) goto bad;
  r->is_static = id == B_STATIC_RANGE;
  S->in_for_iter = 1;
  Node *call = check_call(S, iter);
  S->in_for_iter = 0;
  if (is_poison(call)) return 0;
  r->call = call;
  Node *a1 = call->args.data[0], *a2 = call->args.data[1], *st = call->args.data[2];
  int has_end = !is_const_kind(a2, V_NONE);
  r->start = has_end ? a1 : mk_const(S, iter->loc, value_int(S, 0));
  r->end = has_end ? a2 : a1;
  r->step = is_const_kind(st, V_NONE) ? mk_const(S, iter->loc, value_int(S, 1)) : st;
  return 1;
bad:
  diag_error(S->diags, iter->loc, "a for loop must iterate over range(), tl.range() or tl.static_range()");
  return 0;
}

static void check_static_for(Sema *S, Node *n, RangeArgs *r) {
  Value *s = const_of(S, r->start, "the start of tl.static_range");
  Value *e = const_of(S, r->end, "the end of tl.static_range");
  Value *st = const_of(S, r->step, "the step of tl.static_range");
  if (!s || !e || !st) return;
  if (s->kind != V_INT || e->kind != V_INT || st->kind != V_INT || st->i == 0 || s->is_u64 || e->is_u64 || st->is_u64) {
    diag_error(S->diags, n->b->loc, "tl.static_range needs integer bounds below 2^63 and a non-zero step");
    return;
  }
  int64_t i = s->i;
  for (int more = 1; more && (st->i > 0 ? i < e->i : i > e->i); more = !__builtin_add_overflow(i, st->i, &i)) {
    if (++S->unrolled > MAX_UNROLL) {
      diag_error(S->diags, n->loc, "tl.static_range unrolls more than %d iterations in all", MAX_UNROLL);
      return;
    }
    assign_to(S, n->a, mk_const(S, n->a->loc, value_int(S, i)), n->loc);
    check_block(S, &n->body, S->out);
    if (S->returned) return;
  }
}

/* Whether a range's bounds hold tl.map_elementwise's elements (tiles), not one value for them all. */
static int per_element_bounds(Sema *S, Node **bounds) {
  for (int i = 0; i < 3 && S->mapping; i++)
    if (bounds[i]->type->rank) return 1;
  return 0;
}

/* A name the checker binds for a loop it rewrites ("for.3.end"), which no name in a kernel can be. */
static Node *hidden_name(Sema *S, Loc loc, int loop, const char *what) {
  Node *n = node_new(S->arena, ND_NAME, loc);
  n->name = arena_printf(S->arena, "for.%d.%s", loop, what);
  return n;
}

/* An operator node of the source tree, for a statement the checker writes itself. */
static Node *operation(Sema *S, NodeKind kind, TokenKind op, Node *x, Node *y) {
  Node *n = node_new(S->arena, kind, x->loc);
  n->op = op;
  n->a = x;
  n->b = y;
  return n;
}

/* Whether the count k is still in range: k < end for a positive step, k > end for a negative one; a
 * step of the elements picks its direction element by element (a step of 0 ends the loop). */
static Node *in_range(Sema *S, Node *k, Node *end, Node *step, const Node *step_value) {
  if (is_const_kind(step_value, V_INT)) return operation(S, ND_COMPARE, step_value->cval->i > 0 ? TK_LT : TK_GT, k, end);
  Node *zero = node_new(S->arena, ND_INT, step->loc);
  Node *up = operation(S, ND_BINOP, TK_AMP, operation(S, ND_COMPARE, TK_GT, step, zero),
                       operation(S, ND_COMPARE, TK_LT, k, end));
  Node *down = operation(S, ND_BINOP, TK_AMP, operation(S, ND_COMPARE, TK_LT, step, zero),
                         operation(S, ND_COMPARE, TK_GT, k, end));
  return operation(S, ND_BINOP, TK_PIPE, up, down);
}

static Node *assignment(Sema *S, Node *target, Node *value) {
  Node *n = node_new(S->arena, ND_ASSIGN, target->loc);
  vec_push(S->arena, &n->args, target);
  n->b = value;
  return n;
}

/* `for i in range(start, end, step)` whose bounds are tl.map_elementwise's elements: each element
 * counts its own trips, as `k = start` / `while k < end: i = k; body; k += step` does on the elements
 * (check_while); i, assigned in the body, keeps its last value after the loop, as in Python. */
static void check_per_element_for(Sema *S, Node *n, Node **bounds, const Node *step_value, DType it) {
  int id = ++S->n_temps;
  Node *k = hidden_name(S, n->loc, id, "k"), *end = hidden_name(S, n->loc, id, "end");
  Node *step = hidden_name(S, n->loc, id, "step");
  scope_set(S, &S->scope, k->name, per_element(S, cast(S, bounds[0], it, 0)));
  scope_set(S, &S->scope, end->name, materialize(S, bounds[1], n->loc));
  scope_set(S, &S->scope, step->name, materialize(S, bounds[2], n->loc));
  Node *loop = node_new(S->arena, ND_WHILE, n->loc);
  loop->a = in_range(S, k, end, step, step_value);
  vec_push(S->arena, &loop->body, assignment(S, n->a, k));
  for (int i = 0; i < n->body.len; i++) vec_push(S->arena, &loop->body, n->body.data[i]);
  vec_push(S->arena, &loop->body, assignment(S, k, operation(S, ND_BINOP, TK_PLUS, k, step)));
  check_while(S, loop);
}

static void check_for(Sema *S, Node *n) {
  RangeArgs r;
  if (!check_range(S, n->b, &r)) return;
  if (r.is_static) {
    check_static_for(S, n, &r);
    return;
  }
  if (n->a->kind != ND_NAME) {
    diag_error(S->diags, n->a->loc, "the loop variable of a range loop must be a single name");
    return;
  }
  Node *bounds[3] = {r.start, r.end, r.step};
  for (int i = 0; i < 3; i++) {
    bounds[i] = runtime(S, bounds[i]);
    if (!bounds[i]->type || (bounds[i]->type->rank && !S->mapping) || !dtype_is_int(bounds[i]->type->elem) ||
        bounds[i]->type->is_ptr) {
      diag_error(S->diags, bounds[i]->loc, "range bounds must be integer scalars");
      return;
    }
  }
  if (is_const_kind(r.step, V_INT) && r.step->cval->i == 0) {
    diag_error(S->diags, r.step->loc, "range step must not be zero");
    return;
  }
  DType it = promote(bounds[0]->type->elem, 0, promote(bounds[1]->type->elem, 0, bounds[2]->type->elem, 0, 0), 0, 0);
  if (per_element_bounds(S, bounds)) {
    check_per_element_for(S, n, bounds, r.step, it);
    return;
  }
  Node *out = node_new(S->arena, ND_FOR, n->loc);
  out->a = var_ref(S, n->a->loc, local_name(S, n->a->name), type_scalar(S->arena, it));
  out->b = r.call;
  Scope before = scope_copy(S, &S->scope);
  Scope carried = {0};
  carry_loop_variables(S, n, &carried);
  scope_set(S, &S->scope, n->a->name, out->a);
  check_block(S, &n->body, &out->body);
  check_carried_types(S, n, &carried, &out->body);
  Node *target_before = scope_get(&before, n->a->name);
  if (target_before && !scope_get(&carried, n->a->name)) /* the loop variable's name means what it did before */
    scope_set(S, &S->scope, n->a->name, target_before);
  drop_loop_locals(S, &before, &n->body);
  record_carried(S, out, &carried);
  if (S->returned) {
    diag_error(S->diags, S->return_loc, "return inside a run-time loop is not supported");
    S->returned = 0;
  }
  emit(S, out);
}

/* Whether any element of the tile c is true: a while loop on the elements
 * (tl.map_elementwise's function) runs while one of them still loops. */
static Node *any_element(Sema *S, Node *c) {
  Node *count = cast(S, to_bool(S, c), DT_I32, 0);
  return to_bool(S, check_builtin_call(S, c, B_MAX, NULL, &count, 1, NULL, 0));
}

/* The first return in a block, loops and ifs included; NULL when none. */
static const Node *return_in(const NodeVec *body) {
  for (int i = 0; i < body->len; i++) {
    const Node *s = body->data[i], *r = NULL;
    if (s->kind == ND_RETURN) return s;
    if (s->kind == ND_IF || s->kind == ND_WHILE || s->kind == ND_FOR) r = return_in(&s->body);
    if (!r && s->kind == ND_IF) r = return_in(&s->orelse);
    if (r) return r;
  }
  return NULL;
}

/* A name or a chain of attributes of one (tl.condition): checking it
 * emits nothing, so it may be checked twice. */
static int is_dotted_name(const Node *n) {
  while (n->kind == ND_ATTR) n = n->a;
  return n->kind == ND_NAME;
}

/* A while loop's condition: tl.condition(c, disable_licm) gives c, and
 * *no_licm the option. */
static Node *check_while_condition(Sema *S, Node *cond, int *no_licm) {
  Node *callee = cond->kind == ND_CALL && is_dotted_name(cond->a) ? check_expr(S, cond->a) : NULL;
  if (callee && is_poison(callee)) return callee; /* reported once */
  if (!callee || !is_const_kind(callee, V_BUILTIN) || callee->cval->i != B_CONDITION) return check_expr(S, cond);
  S->in_while_cond = 1;
  Node *call = check_call(S, cond);
  S->in_while_cond = 0;
  if (is_poison(call)) return call;
  *no_licm = call->args.data[1]->cval->i != 0;
  return call->args.data[0];
}

static void check_while(Sema *S, Node *n) {
  Node *out = node_new(S->arena, ND_WHILE, n->loc);
  Scope before = scope_copy(S, &S->scope);
  Scope carried = {0};
  const Node *ret = S->mapping ? return_in(&n->body) : NULL;
  if (ret) { /* each element would leave at its own iteration */
    diag_error(S->diags, ret->loc, "tl.map_elementwise: a return inside a loop on the elements is part of Triton "
                                   "but not supported by tile yet (assign a variable and return it after the loop)");
    return;
  }
  carry_loop_variables(S, n, &carried);
  int no_licm = 0;
  Node *c = check_while_condition(S, n->a, &no_licm);
  if (is_poison(c)) return;
  NodeVec body = n->body;
  if (is_runtime(c) && S->active) /* under an if on the elements: only those on its path keep the loop going */
    c = binary(S, n->a->loc, TK_AMP, to_bool(S, c), S->active);
  if (is_runtime(c) && c->type->rank != 0 && S->mapping) {
    /* on the elements: while any still loops, each takes the body where its condition holds (an if on
     * the elements, which selects); the others keep their values */
    Node *on_elements = node_new(S->arena, ND_IF, n->loc);
    on_elements->a = n->a;
    on_elements->body = n->body;
    memset(&body, 0, sizeof body);
    vec_push(S->arena, &body, on_elements);
    c = any_element(S, c);
  }
  if (!is_runtime(c) || c->type->rank != 0) {
    diag_error(S->diags, n->a->loc, "the condition of a while loop must be a run-time scalar");
    return;
  }
  out->a = to_bool(S, c);
  out->ival = no_licm;
  check_block(S, &body, &out->body);
  check_carried_types(S, n, &carried, &out->body);
  drop_loop_locals(S, &before, &n->body);
  record_carried(S, out, &carried);
  emit(S, out);
}

static void check_return(Sema *S, Node *n) {
  Node *v = n->a ? check_expr(S, n->a) : mk_const(S, n->loc, value_new(S, V_NONE));
  if (!S->in_helper && !is_const_kind(v, V_NONE)) {
    diag_error(S->diags, n->loc, "a kernel cannot return a value; store results through pointers");
    return;
  }
  S->ret = v;
  S->returned = 1;
  S->return_loc = n->loc;
  if (!S->in_helper) emit(S, node_new(S->arena, ND_RETURN, n->loc)); /* a helper's value goes to its caller */
}

static void check_assert(Sema *S, Node *n) {
  Node *args[2];
  args[0] = check_expr(S, n->a); /* in order: the initializers of one list are unsequenced */
  args[1] = n->b ? check_expr(S, n->b) : mk_const(S, n->loc, value_string(S, ""));
  if (is_poison(args[0])) return;
  int id = is_const(args[0]) && !args[0]->type ? B_STATIC_ASSERT : B_DEVICE_ASSERT;
  Node *call = check_builtin_call(S, n, id, NULL, args, 2, NULL, 0);
  if (!is_poison(call) && id == B_DEVICE_ASSERT) {
    Node *s = node_new(S->arena, ND_EXPR_STMT, n->loc);
    s->a = call;
    emit(S, s);
  }
}

/* A raise the checker reaches: Triton raises it while compiling, so does
 * tile.  One reached in a helper makes the helper's value an error value,
 * so the caller's use of it stays silent. */
static void check_raise(Sema *S, Node *n) {
  Node *e = n->a && n->a->kind == ND_CALL ? n->a->a : n->a;
  const char *what = e && (e->kind == ND_NAME || e->kind == ND_ATTR) ? e->name : NULL;
  diag_error(S->diags, n->loc, "raise%s%s is reached when the kernel is compiled; a kernel may raise only in a branch that folds away",
             what ? " " : "", what ? what : "");
  if (!S->ret) S->ret = poison(S, n->loc);
}

/* A loop's else block parses in host code only; a helper without a
 * decorator that a kernel calls is checked as kernel code here (the loop
 * itself still is, without its else). */
static void refuse_loop_else(Sema *S, Node *loop) {
  if (loop->orelse.len)
    diag_error(S->diags, loop->loc, "'%s ... else' is not supported in kernels", loop->kind == ND_FOR ? "for" : "while");
}

static void check_stmt(Sema *S, Node *n) {
  switch (n->kind) {
  case ND_ASSIGN: check_assign(S, n); break;
  case ND_AUGASSIGN: check_augassign(S, n); break;
  case ND_ANNASSIGN: check_annassign(S, n); break;
  case ND_EXPR_STMT: check_expr_stmt(S, n); break;
  case ND_IF: check_if(S, n); break;
  case ND_FOR:
    refuse_loop_else(S, n);
    check_for(S, n);
    break;
  case ND_WHILE:
    refuse_loop_else(S, n);
    check_while(S, n);
    break;
  case ND_RETURN: check_return(S, n); break;
  case ND_ASSERT: check_assert(S, n); break;
  case ND_PASS:
  case ND_IMPORT: break;
  case ND_BREAK:
  case ND_CONTINUE:
    diag_error(S->diags, n->loc, "'%s' is not supported in kernels (Triton has no early loop exit)",
               n->kind == ND_BREAK ? "break" : "continue");
    break;
  case ND_FUNCDEF:
    diag_error(S->diags, n->loc, "nested function definitions are not supported; define helpers at module level");
    break;
  case ND_RAISE: check_raise(S, n); break;
  case ND_CLASS:
  case ND_WITH:
  case ND_TRY:
  case ND_GLOBAL:
  case ND_DEL:
  case ND_YIELD: diag_error(S->diags, n->loc, "'%s' statements are not supported in kernels", ast_keyword(n)); break;
  default: diag_error(S->diags, n->loc, "this statement is not supported inside a kernel"); break;
  }
}

/* Whether an if returns on some path (a return in a loop is an error of its own). */
static int if_returns(const Node *s) {
  if (s->kind == ND_RETURN) return 1;
  if (s->kind != ND_IF) return 0;
  for (int i = 0; i < s->body.len; i++)
    if (if_returns(s->body.data[i])) return 1;
  for (int i = 0; i < s->orelse.len; i++)
    if (if_returns(s->orelse.data[i])) return 1;
  return 0;
}

static NodeVec concat(Sema *S, const NodeVec *a, const Node *const *rest, int n_rest) {
  NodeVec v = {0};
  for (int i = 0; i < a->len; i++) vec_push(S->arena, &v, a->data[i]);
  for (int i = 0; i < n_rest; i++) vec_push(S->arena, &v, (Node *)rest[i]);
  return v;
}

/* A kernel's early exits, nested or not (`if cond: ... return`, also under
 * another if): the first if that returns on some path takes the rest of the
 * body into both its branches (copied: IF_TAIL ifs end the kernel on every
 * path), recursively, so the code stays structured; statements after a
 * return are dropped, as they never run.  *budget bounds the copies. */
static NodeVec with_tails(Sema *S, const NodeVec *body, int *budget) {
  NodeVec out = {0};
  for (int i = 0; i < body->len; i++) {
    Node *s = body->data[i];
    vec_push(S->arena, &out, s);
    if (s->kind == ND_RETURN) break;
    if (!if_returns(s) || s->kind != ND_IF || (*budget -= body->len - i) < 0) continue;
    Node *tail = node_new(S->arena, ND_IF, s->loc);
    *tail = *s;
    tail->ival = IF_TAIL;
    NodeVec then = concat(S, &s->body, (const Node *const *)body->data + i + 1, body->len - i - 1);
    NodeVec other = concat(S, &s->orelse, (const Node *const *)body->data + i + 1, body->len - i - 1);
    tail->body = with_tails(S, &then, budget);
    tail->orelse = with_tails(S, &other, budget);
    out.data[out.len - 1] = tail;
    break;
  }
  return out;
}

static void check_block(Sema *S, NodeVec *body, NodeVec *out) {
  if (!enter(S, body->len ? body->data[0]->loc : (Loc){0})) return;
  NodeVec *saved = S->out;
  S->out = out;
  S->block_depth++;
  NodeVec tails;
  if ((S->block_depth == 1 && !S->in_helper) || body == S->function_body) { /* the kernel's, a helper's */
    int budget = MAX_TAIL_STATEMENTS;
    tails = with_tails(S, body, &budget);
    body = &tails;
  }
  for (int i = 0; i < body->len && !S->returned; i++) check_stmt(S, body->data[i]);
  S->block_depth--;
  S->out = saved;
  S->nesting--;
}

/* ---- helper functions ---------------------------------------------------- */

/* Binds call arguments to a def's parameters (positional, keyword, default). */
static int bind_params(Sema *S, Node *call, Node *def, Node **args, int n_args, Node **kw, int n_kw,
                       Node **bound) {
  int n_params = def->args.len;
  if (n_args > n_params) {
    diag_error(S->diags, args[n_params]->loc, "%s() takes %d argument%s but %d were given", def->name, n_params,
               n_params == 1 ? "" : "s", n_args);
    return 0;
  }
  for (int i = 0; i < n_params; i++) bound[i] = i < n_args ? args[i] : NULL;
  for (int k = 0; k < n_kw; k++) {
    int found = -1;
    for (int i = 0; i < n_params; i++)
      if (!strcmp(def->args.data[i]->name, kw[k]->name)) found = i;
    if (found < 0) {
      diag_error(S->diags, kw[k]->loc, "%s() got an unexpected keyword argument '%s'", def->name, kw[k]->name);
      return 0;
    }
    if (bound[found]) {
      diag_error(S->diags, kw[k]->loc, "%s() got multiple values for argument '%s'", def->name, kw[k]->name);
      return 0;
    }
    bound[found] = kw[k]->a;
  }
  for (int i = 0; i < n_params; i++) {
    if (bound[i]) continue;
    Node *p = def->args.data[i];
    if (!p->b) {
      diag_error(S->diags, call->loc, "%s() missing argument '%s'", def->name, p->name);
      diag_note(S->diags, p->loc, "'%s' is declared here", p->name);
      return 0;
    }
    Scope saved = S->scope;
    S->scope = (Scope){0};
    bound[i] = check_expr(S, p->b);
    S->scope = saved;
  }
  return 1;
}

/* Whether a note already points at this place (a recursive call's repeats). */
static int noted_here(Sema *S, Loc loc) {
  for (int i = 0; i < S->diags->list.len; i++) {
    Diag *d = &S->diags->list.data[i];
    if (d->level == DIAG_NOTE && d->loc.src == loc.src && d->loc.offset == loc.offset) return 1;
  }
  return 0;
}

/* Helpers are inlined, as Triton does: the body is checked where it is
 * called, with the arguments' types and constexpr values, its variables
 * renamed "fn.N.var" so they cannot clash with the caller's. */
Node *call_function(Sema *S, Node *call, Node *def, Node **args, int n_args, Node **kw, int n_kw) {
  Node *bound[64];
  if (def->args.len > 64) {
    diag_error(S->diags, def->loc, "too many parameters (the limit is 64)");
    return poison(S, call->loc);
  }
  if (!bind_params(S, call, def, args, n_args, kw, n_kw, bound)) return poison(S, call->loc);
  if (S->depth >= MAX_CALL_DEPTH) {
    diag_error(S->diags, call->loc, "calls nest more than %d deep (is %s recursive?)", MAX_CALL_DEPTH, def->name);
    return poison(S, call->loc);
  }
  ModuleState *home = module_of(S, def);
  int caller_limit;
  ModuleState *caller_module = module_enter(S, home ? home : S->here, &caller_limit);
  Scope caller_scope = S->scope;
  Node *caller_ret = S->ret;
  int caller_returned = S->returned, caller_in_helper = S->in_helper;
  const char *caller_prefix = S->prefix;
  S->scope = (Scope){0};
  S->prefix = arena_printf(S->arena, "%s.%d.", def->name, ++S->n_inlined);
  S->ret = NULL;
  S->returned = 0;
  S->in_helper = 1;
  S->depth++;
  for (int i = 0; i < def->args.len; i++) {
    Node *target = node_new(S->arena, ND_NAME, def->args.data[i]->loc);
    target->name = def->args.data[i]->name;
    assign_to(S, target, bound[i], call->loc);
  }
  int errors = S->diags->errors;
  const NodeVec *function_body = S->function_body;
  S->function_body = &def->body;
  check_block(S, &def->body, S->out);
  S->function_body = function_body;
  if (S->diags->errors > errors && !noted_here(S, call->loc))
    diag_note(S->diags, call->loc, "in '%s', called here", def->name);
  Node *result = S->ret ? S->ret : mk_const(S, call->loc, value_new(S, V_NONE));
  S->depth--;
  S->scope = caller_scope;
  S->ret = caller_ret;
  S->returned = caller_returned;
  S->in_helper = caller_in_helper;
  S->prefix = caller_prefix;
  module_leave(S, caller_module, caller_limit);
  return result;
}

void sema_bind(Sema *S, const char *name, Node *value) { scope_set(S, &S->scope, name, value); }

void sema_check_body(Sema *S, NodeVec *body, NodeVec *out) { check_block(S, body, out); }
