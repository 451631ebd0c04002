/* Specialisation of a kernel: which function is the kernel, the types of
 * its parameters (signature, annotations), its constexpr values (-D,
 * defaults, an autotune config) and its decorators' tuning metadata; then
 * the typed body. */
#include "sema_impl.h"

#include <string.h>

/* Text from the command line gets a Source of its own, so an error in it
 * is shown with a caret like an error in a file. */
static const Source *cli_source(Sema *S, const char *name, const char *text) {
  Source *src = arena_alloc(S->arena, sizeof *src);
  src->name = name;
  src->text = arena_strdup(S->arena, text);
  src->len = strlen(text);
  return src;
}

/* The place of bytes [offset, offset+len) of a one-line text that starts at `base`. */
static Loc loc_at(Loc base, size_t offset, size_t len) {
  base.offset += (uint32_t)offset;
  base.col += (int)offset;
  base.len = (int)(len ? len : 1);
  return base;
}

static Loc loc_in(const Source *src, size_t offset, size_t len) {
  Loc start = {src, 0, 1, 1, 1};
  return loc_at(start, offset, len);
}

/* One signature entry: "*fp32", "*fp16:16", "i32", "i64:16", "i32:1".  `t`
 * is the signature's text, which starts at `base`. */
static int parse_sig_entry(Sema *S, const char *t, Loc base, size_t start, size_t end, KernelParam *p) {
  while (start < end && t[start] == ' ') start++;
  while (end > start && t[end - 1] == ' ') end--;
  Loc loc = loc_at(base, start, end - start);
  size_t colon = start;
  while (colon < end && t[colon] != ':') colon++;
  int is_ptr = start < end && t[start] == '*';
  char name[32] = {0};
  size_t n = colon - start - (size_t)is_ptr;
  if (n < sizeof name) memcpy(name, t + start + is_ptr, n);
  int dt = dtype_lookup(name);
  if (dt < 0) {
    diag_error(S->diags, loc, "unknown type '%.*s' in signature (expected e.g. *fp32, i32, *fp16:16)",
               (int)(end - start), t + start);
    return 0;
  }
  p->type = is_ptr ? type_pointer(S->arena, (DType)dt) : type_scalar(S->arena, (DType)dt);
  p->divisibility = 1;
  if (colon < end) {
    const char *hint = t + colon + 1;
    size_t hn = end - colon - 1;
    int sixteen = hn == 2 && !memcmp(hint, "16", 2);
    if (sixteen && (is_ptr || dtype_is_int((DType)dt))) p->divisibility = 16;
    else if (sixteen) { /* a divisibility hint on a float: the loader would refuse it */
      diag_error(S->diags, loc_at(base, colon, end - colon),
                 "the hint ':16' (divisible by 16) is for pointers and integers, not %s", name);
      return 0;
    } else if (hn == 1 && hint[0] == '1' && !is_ptr && dtype_is_int((DType)dt)) {
      p->is_constexpr = p->specialized = 1;
      p->value = value_int(S, 1);
    } else {
      diag_error(S->diags, loc_at(base, colon, end - colon), "unknown hint ':%.*s' (expected :16, or :1 on an integer)",
                 (int)hn, hint);
      return 0;
    }
  }
  return 1;
}

static int runtime_param_count(CheckedKernel *k) {
  int n = 0;
  for (int i = 0; i < k->params.len; i++) n += !k->params.data[i].is_constexpr;
  return n;
}

static int apply_signature(Sema *S, const char *sig) {
  const Source *src = cli_source(S, "<signature>", sig);
  CheckedKernel *k = S->kernel;
  int want = runtime_param_count(k), i = 0;
  size_t start = 0, len = src->len;
  int ok = 1;
  for (int idx = 0; idx < k->params.len && start <= len; idx++) {
    KernelParam *p = &k->params.data[idx];
    if (p->is_constexpr) continue;
    size_t end = start;
    while (end < len && src->text[end] != ',') end++;
    if (start == len && i < want) break;
    ok &= parse_sig_entry(S, src->text, loc_in(src, 0, 0), start, end, p);
    i++;
    start = end + 1;
  }
  int given = i;
  for (size_t j = start; j < len; j++) given += src->text[j] == ',' || j == start;
  if (given != want) {
    diag_error(S->diags, loc_in(src, 0, len),
               "the signature has %d entries but kernel '%s' has %d non-constexpr parameters", given,
               k->def->name, want);
    return 0;
  }
  return ok;
}

/* A parameter annotation: tl.constexpr, "*fp32", tl.float32, int, float. */
static void apply_annotation(Sema *S, Node *param, KernelParam *p) {
  Node *a = param->a;
  if (!a) return;
  if (a->kind == ND_STR) { /* "*fp32": places inside it are one past the quote */
    parse_sig_entry(S, a->str, loc_at(a->loc, 1, 0), 0, a->str_len, p);
    return;
  }
  if (a->kind == ND_NAME && (!strcmp(a->name, "int") || !strcmp(a->name, "float") || !strcmp(a->name, "bool"))) {
    DType dt = a->name[0] == 'i' ? DT_I32 : a->name[0] == 'f' ? DT_FP32 : DT_I1;
    p->type = type_scalar(S->arena, dt);
    return;
  }
  Node *v = check_expr(S, a);
  if (is_const_kind(v, V_CONSTEXPR)) p->is_constexpr = 1;
  else if (is_const_kind(v, V_TENSOR)) return; /* p: tl.tensor says nothing the signature does not */
  else if (is_const_kind(v, V_DTYPE))
    p->type = v->cval->dtype_is_ptr ? type_pointer(S->arena, v->cval->dtype) : type_scalar(S->arena, v->cval->dtype);
  else if (!is_poison(v))
    diag_error(S->diags, a->loc, "unsupported parameter annotation (expected tl.constexpr, a dtype or a signature string like \"*fp32\")");
}

static KernelParam *find_param(CheckedKernel *k, const char *name, size_t n) {
  for (int i = 0; i < k->params.len; i++)
    if (strlen(k->params.data[i].name) == n && !strncmp(k->params.data[i].name, name, n)) return &k->params.data[i];
  return NULL;
}

/* The constexpr value of a -D NAME=VALUE: the whole argument is lexed, so
 * an error in VALUE is shown in place within it. */
static Value *define_value(Sema *S, const Source *src, size_t name_len) {
  TokenVec toks = lex(src, S->diags);
  if (S->diags->errors) return NULL;
  if (toks.len < 2 || toks.data[0].kind != TK_NAME || toks.data[0].loc.len != (int)name_len ||
      toks.data[1].kind != TK_ASSIGN) {
    diag_error(S->diags, loc_in(src, 0, name_len), "-D needs NAME=VALUE with NAME a parameter name");
    return NULL;
  }
  TokenVec value = {toks.data + 2, toks.len - 2, toks.len - 2};
  if (value.data[0].kind == TK_NEWLINE || value.data[0].kind == TK_EOF) {
    diag_error(S->diags, loc_in(src, name_len, 1), "-D %.*s= has no value", (int)name_len, src->text);
    return NULL;
  }
  Node *e = parse_expression(src, &value, S->diags);
  return e ? const_of(S, check_expr(S, e), "a -D value") : NULL;
}

static void apply_define(Sema *S, const char *def) {
  const Source *src = cli_source(S, "<-D>", def);
  const char *eq = strchr(src->text, '=');
  if (!eq || eq == src->text) {
    diag_error(S->diags, loc_in(src, 0, src->len), "-D needs NAME=VALUE");
    return;
  }
  size_t n = (size_t)(eq - src->text);
  KernelParam *p = find_param(S->kernel, src->text, n);
  if (!p || !p->is_constexpr) {
    if (p)
      diag_error(S->diags, loc_in(src, 0, n), "'%.*s' is a run-time parameter of '%s': its type comes from --signature",
                 (int)n, src->text, S->kernel->def->name);
    else
      diag_error(S->diags, loc_in(src, 0, n), "kernel '%s' has no constexpr parameter '%.*s'", S->kernel->def->name,
                 (int)n, src->text);
    return;
  }
  if (p->value_from_define) {
    diag_error(S->diags, loc_in(src, 0, n), "-D %.*s is given twice", (int)n, src->text);
    return;
  }
  p->value_from_define = 1;
  Value *v = define_value(S, src, n);
  if (v) p->value = v;
}

/* ---- decorators ---------------------------------------------------------- */

static const char *callee_name(Node *call) {
  Node *f = call->kind == ND_CALL ? call->a : call;
  return f->kind == ND_NAME || f->kind == ND_ATTR ? f->name : "";
}

static Value *eval_meta(Sema *S, Node *n);

static Value *eval_comprehension(Sema *S, Node *n) {
  Value *iter = NULL;
  if (n->b->kind == ND_CALL && !strcmp(callee_name(n->b), "range")) {
    Value *bounds[3] = {value_int(S, 0), NULL, value_int(S, 1)};
    int na = n->b->args.len;
    if (na < 1 || na > 3) goto bad;
    for (int i = 0; i < na; i++) {
      Value *v = const_of(S, check_expr(S, n->b->args.data[i]), "a range bound");
      if (!v || v->kind != V_INT) goto bad;
      bounds[na == 1 ? 1 : i] = v;
    }
    if (bounds[2]->i == 0) goto bad;
    iter = value_new(S, V_LIST);
    for (int64_t i = bounds[0]->i; bounds[2]->i > 0 ? i < bounds[1]->i : i > bounds[1]->i; i += bounds[2]->i) {
      if (iter->items.len > 4096) goto bad;
      vec_push(S->arena, &iter->items, value_int(S, i));
    }
  } else {
    iter = eval_meta(S, n->b);
  }
  if (!iter || iter->kind != V_LIST) goto bad;
  Value *out = value_new(S, V_LIST);
  Node *target = n->args.data[0];
  for (int i = 0; i < iter->items.len; i++) {
    if (target->kind != ND_NAME) goto bad;
    Binding b = {target->name, mk_const(S, target->loc, iter->items.data[i])};
    vec_push(S->arena, &S->scope, b);
    int keep = 1;
    if (n->c) {
      int ok;
      Value *c = eval_meta(S, n->c);
      keep = c && value_truth(c, &ok);
    }
    if (keep) {
      Value *e = eval_meta(S, n->a);
      if (!e) return NULL;
      vec_push(S->arena, &out->items, e);
    }
    S->scope.len--;
  }
  return out;
bad:
  diag_error(S->diags, n->loc, "this comprehension cannot be evaluated at compile time");
  return NULL;
}

static Value *eval_config(Sema *S, Node *n) {
  Value *cfg = value_new(S, V_CONFIG);
  if (n->args.len > 0) {
    Value *d = eval_meta(S, n->args.data[0]);
    if (!d || d->kind != V_CONFIG) {
      diag_error(S->diags, n->args.data[0]->loc, "triton.Config's first argument must be a dict of meta-parameters");
      return NULL;
    }
    *cfg = *d;
  }
  for (int i = 0; i < n->kwargs.len; i++) {
    Node *kw = n->kwargs.data[i];
    if (!strcmp(kw->name, "pre_hook")) continue;
    Value *v = eval_meta(S, kw->a);
    if (!v) return NULL;
    if (!strcmp(kw->name, "kwargs") && v->kind == V_CONFIG) { /* triton.Config(kwargs={...}) */
      for (int j = 0; j < v->keys.len; j++) {
        vec_push(S->arena, &cfg->keys, v->keys.data[j]);
        vec_push(S->arena, &cfg->items, v->items.data[j]);
      }
      continue;
    }
    vec_push(S->arena, &cfg->keys, arena_printf(S->arena, "@%s", kw->name));
    vec_push(S->arena, &cfg->items, v);
  }
  return cfg;
}

static Value *eval_dict(Sema *S, Node *n) {
  Value *d = value_new(S, V_CONFIG);
  for (int i = 0; i < n->args.len; i++) {
    Value *k = eval_meta(S, n->args.data[i]);
    Value *v = eval_meta(S, n->kwargs.data[i]);
    if (!k || !v) return NULL;
    if (k->kind != V_STR) {
      diag_error(S->diags, n->args.data[i]->loc, "dictionary keys must be strings naming meta-parameters");
      return NULL;
    }
    vec_push(S->arena, &d->keys, k->s);
    vec_push(S->arena, &d->items, v);
  }
  return d;
}

/* Decorator arguments are host-side Python: dicts, lists, comprehensions,
 * triton.Config calls and lambdas, over constants. */
static Value *eval_meta(Sema *S, Node *n) {
  switch (n->kind) {
  case ND_DICT: return eval_dict(S, n);
  case ND_LISTCOMP: return eval_comprehension(S, n);
  case ND_LAMBDA: {
    Value *v = value_new(S, V_LAMBDA);
    v->func = n;
    return v;
  }
  case ND_LIST:
  case ND_TUPLE: {
    Value *v = value_new(S, V_LIST);
    for (int i = 0; i < n->args.len; i++) {
      Value *item = eval_meta(S, n->args.data[i]);
      if (!item) return NULL;
      vec_push(S->arena, &v->items, item);
    }
    return v;
  }
  case ND_BINOP: { /* configs_a + configs_b, 2 ** i */
    Value *x = eval_meta(S, n->a), *y = x ? eval_meta(S, n->b) : NULL;
    Value *r = y ? fold_binary(S, n->loc, n->op, x, y) : NULL;
    if (y && !r) diag_error(S->diags, n->loc, "unsupported operands for '%s' in a decorator", token_kind_name(n->op));
    return r;
  }
  case ND_CALL:
    if (!strcmp(callee_name(n), "Config")) return eval_config(S, n);
    /* fall through */
  default: return const_of(S, check_expr(S, n), "a decorator argument");
  }
}

static Node *keyword(Node *call, const char *name) {
  for (int i = 0; i < call->kwargs.len; i++)
    if (!strcmp(call->kwargs.data[i]->name, name)) return call->kwargs.data[i]->a;
  return NULL;
}

static int meta_int(Value *cfg, const char *key, int fallback) {
  for (int i = 0; i < cfg->keys.len; i++)
    if (!strcmp(cfg->keys.data[i], key) && cfg->items.data[i]->kind == V_INT) return (int)cfg->items.data[i]->i;
  return fallback;
}

static void record_configs(Sema *S, Node *dec, Value *list) {
  KernelMeta *m = &S->kernel->meta;
  for (int i = 0; i < list->items.len; i++) {
    Value *c = list->items.data[i];
    if (c->kind != V_CONFIG) {
      diag_error(S->diags, dec->loc, "autotune configs must be triton.Config(...) values");
      return;
    }
    TuneConfig tc = {0};
    tc.loc = dec->loc;
    tc.num_warps = meta_int(c, "@num_warps", 4);
    tc.num_stages = meta_int(c, "@num_stages", 3);
    tc.num_ctas = meta_int(c, "@num_ctas", 1);
    for (int j = 0; j < c->keys.len; j++) {
      if (c->keys.data[j][0] == '@') continue;
      vec_push(S->arena, &tc.names, c->keys.data[j]);
      vec_push(S->arena, &tc.values, c->items.data[j]);
    }
    vec_push(S->arena, &m->configs, tc);
  }
}

/* A list of parameter names (key=, reset_to_zero=, restore_value=) into *out;
 * `pointers`: each must name a pointer parameter (annotated or not). */
static void record_names(Sema *S, Node *list, const char *what, int pointers, NameList *out) {
  Value *names = list ? eval_meta(S, list) : NULL;
  if (names && names->kind != V_LIST) {
    diag_error(S->diags, list->loc, "autotune %s must be a list of parameter names", what);
    return;
  }
  for (int i = 0; names && i < names->items.len; i++) {
    Value *k = names->items.data[i];
    KernelParam *p = k->kind == V_STR ? find_param(S->kernel, k->s, k->slen) : NULL;
    if (!p) {
      diag_error(S->diags, list->loc, "autotune %s %s is not a parameter of '%s'", what, value_str(S->arena, k),
                 S->kernel->def->name);
    } else if (pointers && (p->is_constexpr || (p->type && !p->type->is_ptr))) {
      diag_error(S->diags, list->loc, "autotune %s '%s' must be a pointer parameter (a buffer) of '%s'", what, p->name,
                 S->kernel->def->name);
    } else {
      vec_push(S->arena, out, p->name);
    }
  }
}

/* warmup= or rep=: milliseconds, a positive number. */
static double budget_ms(Sema *S, Node *dec, const char *name) {
  Node *n = keyword(dec, name);
  Value *v = n ? eval_meta(S, n) : NULL;
  if (!v) return 0;
  double ms = v->kind == V_INT ? (double)v->i : v->kind == V_FLOAT ? v->f : -1;
  if (ms > 0 && ms <= 60000) return ms;
  diag_error(S->diags, n->loc, "autotune %s must be a number of milliseconds from 0 to 60000", name);
  return 0;
}

/* Keywords of Triton's autotune that tile accepts without acting on them. */
static void warn_ignored(Sema *S, Node *dec) {
  static const char *const known[] = {"configs", "key", "reset_to_zero", "restore_value", "warmup", "rep",
                                      "cache_results", "use_cuda_graph"};
  for (int i = 0; i < dec->kwargs.len; i++) {
    Node *kw = dec->kwargs.data[i];
    size_t j = 0;
    while (j < sizeof known / sizeof *known && strcmp(kw->name, known[j])) j++;
    if (j < sizeof known / sizeof *known) continue;
    diag_warning(S->diags, kw->loc, "@triton.autotune's '%s' is ignored: every config is timed", kw->name);
  }
}

static void check_autotune(Sema *S, Node *dec) {
  Node *configs = keyword(dec, "configs");
  if (!configs && dec->args.len) configs = dec->args.data[0];
  Node *key = keyword(dec, "key");
  if (!key && dec->args.len > 1) key = dec->args.data[1];
  if (!configs) {
    diag_error(S->diags, dec->loc, "@triton.autotune needs configs=[triton.Config(...), ...]");
    return;
  }
  Value *list = eval_meta(S, configs);
  if (list && list->kind == V_LIST) record_configs(S, dec, list);
  KernelMeta *m = &S->kernel->meta;
  record_names(S, key, "key", 0, &m->keys);
  record_names(S, keyword(dec, "reset_to_zero"), "reset_to_zero", 1, &m->reset_to_zero);
  record_names(S, keyword(dec, "restore_value"), "restore_value", 1, &m->restore_value);
  m->warmup_ms = budget_ms(S, dec, "warmup");
  m->rep_ms = budget_ms(S, dec, "rep");
  warn_ignored(S, dec);
}

static void check_heuristics(Sema *S, Node *dec) {
  Node *arg = dec->args.len ? dec->args.data[0] : keyword(dec, "values");
  Value *d = arg ? eval_meta(S, arg) : NULL;
  if (!d || d->kind != V_CONFIG) {
    if (arg && !d) return;
    diag_error(S->diags, dec->loc, "@triton.heuristics needs a dict of meta-parameter names to lambdas");
    return;
  }
  for (int i = 0; i < d->keys.len; i++) {
    if (d->items.data[i]->kind != V_LAMBDA) {
      diag_error(S->diags, arg->loc, "heuristic '%s' must be a lambda", d->keys.data[i]);
      continue;
    }
    vec_push(S->arena, &S->kernel->meta.heuristic_names, d->keys.data[i]);
    vec_push(S->arena, &S->kernel->meta.heuristic_lambdas, d->items.data[i]->func);
  }
}

static void check_decorators(Sema *S, Node *def) {
  for (int i = 0; i < def->kwargs.len; i++) {
    Node *dec = def->kwargs.data[i];
    const char *name = callee_name(dec);
    if (!strcmp(name, "jit")) continue;
    if (dec->kind == ND_CALL && !strcmp(name, "autotune")) check_autotune(S, dec);
    else if (dec->kind == ND_CALL && !strcmp(name, "heuristics")) check_heuristics(S, dec);
    else diag_warning(S->diags, dec->loc, "unknown decorator ignored");
  }
}

/* ---- the kernel ---------------------------------------------------------- */

/* Marks the module functions that `n` calls by bare name, except `caller` itself. */
static void mark_calls(Sema *S, const Node *n, const char *caller) {
  if (!n) return;
  if (n->kind == ND_CALL && n->a->kind == ND_NAME && strcmp(n->a->name, caller)) {
    int count;
    Symbol *sym = symbols_find(S, n->a->name, &count);
    for (int i = 0; i < count; i++) sym[i].called = 1;
  }
  mark_calls(S, n->a, caller);
  mark_calls(S, n->b, caller);
  mark_calls(S, n->c, caller);
  const NodeVec *lists[] = {&n->args, &n->kwargs, &n->body, &n->orelse};
  for (int l = 0; l < 4; l++)
    for (int i = 0; i < lists[l]->len; i++) mark_calls(S, lists[l]->data[i], caller);
}

/* One walk over every function, not one per candidate (quadratic in a file of 10,000 kernels). */
static int called_by_others(Sema *S, Node *fn) {
  int count;
  Symbol *sym = symbols_find(S, fn->name, &count);
  for (int i = 0; i < count; i++)
    if (sym[i].called) return 1;
  return 0;
}

static int is_jit(Node *fn) {
  for (int i = 0; i < fn->kwargs.len; i++) {
    const char *d = callee_name(fn->kwargs.data[i]);
    if (!strcmp(d, "jit") || !strcmp(d, "autotune") || !strcmp(d, "heuristics")) return 1;
  }
  return 0;
}

static int any_jit(const Module *m) {
  for (int i = 0; i < m->root->body.len; i++)
    if (m->root->body.data[i]->kind == ND_FUNCDEF && is_jit(m->root->body.data[i])) return 1;
  return 0;
}

/* The kernel: the function named, else the one @jit function (any function
 * when none is decorated) that no other function calls. */
static Node *select_kernel(Sema *S, const char *name) {
  const Module *m = S->mod;
  Node *found = NULL;
  int n_roots = 0, jit_only = any_jit(m);
  Buf names;
  buf_init(&names, S->arena);
  for (int i = 0; i < m->root->body.len && !name; i++)
    if (m->root->body.data[i]->kind == ND_FUNCDEF) mark_calls(S, m->root->body.data[i], m->root->body.data[i]->name);
  for (int i = 0; i < m->root->body.len; i++) {
    Node *fn = m->root->body.data[i];
    if (fn->kind != ND_FUNCDEF) continue;
    if (name && !strcmp(fn->name, name)) return fn;
    if (!name && (!jit_only || is_jit(fn)) && !called_by_others(S, fn)) {
      found = fn;
      buf_printf(&names, "%s%s", n_roots++ ? ", " : "", fn->name);
    }
  }
  Loc nowhere = {0};
  if (name) diag_error(S->diags, nowhere, "no function named '%s'", name);
  else if (n_roots == 0) diag_error(S->diags, nowhere, "no kernel to compile");
  else if (n_roots > 1)
    diag_error(S->diags, nowhere, "several kernels (%s): choose one with tilec --kernel or tile_options.kernel",
               buf_cstr(&names));
  return n_roots == 1 && !name ? found : NULL;
}

static void collect_params(Sema *S) {
  CheckedKernel *k = S->kernel;
  Node *def = k->def;
  for (int i = 0; i < def->args.len; i++) {
    KernelParam p = {0};
    p.name = def->args.data[i]->name;
    p.loc = def->args.data[i]->loc;
    p.divisibility = 1;
    apply_annotation(S, def->args.data[i], &p);
    vec_push(S->arena, &k->params, p);
  }
}

/* Applies what the caller gives: the signature, -D values, a config. */
static int apply_options(Sema *S, const SemaOptions *opts) {
  CheckedKernel *k = S->kernel;
  Node *def = k->def;
  if (opts->signature && !apply_signature(S, opts->signature)) return 0;
  for (int i = 0; i < opts->n_defines; i++) apply_define(S, opts->defines[i]);
  if (opts->config >= 0) {
    if (opts->config >= k->meta.configs.len) {
      Loc nowhere = {0};
      diag_error(S->diags, nowhere, "config %d: kernel '%s' has %d autotune configs", opts->config, def->name,
                 k->meta.configs.len);
      return 0;
    }
    TuneConfig *tc = &k->meta.configs.data[opts->config];
    for (int i = 0; i < tc->names.len; i++) {
      KernelParam *p = find_param(k, tc->names.data[i], strlen(tc->names.data[i]));
      if (p && p->is_constexpr && !p->value) p->value = tc->values.data[i];
    }
  }
  return S->diags->errors == 0;
}

static void give_default_types(Sema *S) {
  for (int i = 0; i < S->kernel->params.len; i++) {
    KernelParam *p = &S->kernel->params.data[i];
    if (p->is_constexpr && !p->value && !S->kernel->def->args.data[i]->b) p->value = value_int(S, 16);
    if (!p->is_constexpr && !p->type)
      p->type = strstr(p->name, "ptr") ? type_pointer(S->arena, DT_FP32) : type_scalar(S->arena, DT_I32);
  }
}

static int params_typed(CheckedKernel *k) {
  for (int i = 0; i < k->params.len; i++)
    if (!k->params.data[i].is_constexpr && !k->params.data[i].type) return 0;
  return 1;
}

/* Binds every parameter in the kernel's scope and builds the typed PARAMs. */
static int bind_kernel_params(Sema *S, Node *typed) {
  CheckedKernel *k = S->kernel;
  for (int i = 0; i < k->params.len; i++) {
    KernelParam *p = &k->params.data[i];
    Node *src = k->def->args.data[i];
    if (p->is_constexpr && !p->value && src->b) p->value = const_of(S, check_expr(S, src->b), "a constexpr default");
    if (p->is_constexpr && !p->value) {
      diag_error(S->diags, p->loc, "constexpr parameter '%s' has no value", p->name);
      diag_note(S->diags, p->loc, k->meta.configs.len ? "give it with -D %s=VALUE, or pick an autotune config with --config N"
                                                      : "give it with -D %s=VALUE", p->name);
      continue;
    }
    Node *param = node_new(S->arena, ND_PARAM, p->loc);
    param->name = p->name;
    if (p->is_constexpr) {
      param->cval = p->value;
      sema_bind(S, p->name, const_to_node(S, p->loc, p->value));
    } else {
      param->type = p->type;
      Node *ref = typed_node(S, ND_NAME, p->loc, p->type);
      ref->name = p->name;
      sema_bind(S, p->name, ref);
    }
    vec_push(S->arena, &typed->args, param);
  }
  return S->diags->errors == 0;
}

/* The kernel's function, its parameters and decorators; 0 after errors. */
static int declare(Sema *S, const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d) {
  S->arena = d->arena;
  S->diags = d;
  S->mod = m;
  S->stdlib = stdlib;
  symbols_build(S);
  S->kernel = arena_alloc(d->arena, sizeof *S->kernel);
  Node *def = select_kernel(S, opts->kernel);
  if (!def) return 0;
  S->kernel->def = def;
  collect_params(S);
  check_decorators(S, def);
  return d->errors == 0;
}

CheckedKernel *sema_declare(const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d) {
  Sema S = {0};
  return declare(&S, m, stdlib, opts, d) ? S.kernel : NULL;
}

CheckedKernel *sema_check(const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d) {
  Sema S = {0};
  if (!declare(&S, m, stdlib, opts, d) && !S.kernel->def) return NULL;
  Node *def = S.kernel->def;
  if (!apply_options(&S, opts)) return NULL;
  if (opts->default_types) give_default_types(&S);
  if (!params_typed(S.kernel) && !opts->signature && !opts->require_types) return S.kernel;
  for (int i = 0; i < S.kernel->params.len; i++) {
    KernelParam *p = &S.kernel->params.data[i];
    if (!p->is_constexpr && !p->type) {
      diag_error(d, p->loc, "parameter '%s' has no type", p->name);
      diag_note(d, p->loc, "give a --signature, or annotate it (%s: \"*fp32\")", p->name);
    }
  }
  Node *typed = node_new(d->arena, ND_FUNCDEF, def->loc);
  typed->name = def->name;
  typed->origin = def;
  if (d->errors || !bind_kernel_params(&S, typed)) return NULL;
  sema_check_body(&S, &def->body, &typed->body);
  S.kernel->def = typed;
  S.kernel->typed = 1;
  return d->errors ? NULL : S.kernel;
}
