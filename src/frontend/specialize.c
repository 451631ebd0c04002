/* Specialisation of a kernel: which function is the kernel, the types of
 * its parameters (signature, annotations), its constexpr values (-D,
 * defaults, an autotune config) and its decorators' tuning metadata; then
 * the typed body. */
#include "host.h"
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

/* A descriptor's entry, "tensordesc<fp16[64, 64]>" (Triton's AOT spelling):
 * the dtype and the block shape, 1 to 5 powers of two. */
static int parse_desc_entry(Sema *S, const char *t, Loc base, size_t start, size_t end, KernelParam *p) {
  static const char prefix[] = "tensordesc<";
  size_t at = start + sizeof prefix - 1, open = at;
  while (open < end && t[open] != '[') open++;
  char name[32] = {0};
  if (open - at < sizeof name) memcpy(name, t + at, open - at);
  int dt = dtype_lookup(name);
  DescParam *d = arena_alloc(S->arena, sizeof *d);
  if (dt < 0 || open == end) {
    diag_error(S->diags, loc_at(base, at, open - at), "expected a dtype and a block shape: tensordesc<fp16[64, 64]>");
    return 0;
  }
  d->dtype = (DType)dt;
  size_t i = open + 1;
  for (;;) {
    while (i < end && t[i] == ' ') i++;
    size_t num = i;
    int64_t v = 0;
    while (i < end && t[i] >= '0' && t[i] <= '9' && v < (1 << 21)) v = v * 10 + (t[i++] - '0');
    while (i < end && t[i] == ' ') i++;
    if (i == num || v <= 0 || (v & (v - 1)) || d->rank == 5) {
      diag_error(S->diags, loc_at(base, num, i > num ? i - num : 1),
                 "a descriptor's block shape is 1 to 5 powers of two, as in tensordesc<fp16[64, 64]>");
      return 0;
    }
    d->block[d->rank++] = v;
    if (i < end && t[i] == ',') { i++; continue; }
    break;
  }
  if (i + 2 != end || t[i] != ']' || t[i + 1] != '>') {
    diag_error(S->diags, loc_at(base, i, 1), "expected ']>' to end the descriptor's type");
    return 0;
  }
  if (d->block[d->rank - 1] * dtype_bits(d->dtype) / 8 < 16) {
    diag_error(S->diags, loc_at(base, start, end - start),
               "the block's last dimension has %lld bytes; descriptors need at least 16",
               (long long)(d->block[d->rank - 1] * dtype_bits(d->dtype) / 8));
    return 0;
  }
  p->desc = d;
  p->type = type_pointer(S->arena, d->dtype);
  p->divisibility = 16;
  return 1;
}

/* One signature entry: "*fp32", "*fp16:16", "i32", "i64:16", "i32:1",
 * "tensordesc<fp16[64, 64]>".  `t` is the signature's text, which starts
 * at `base`. */
static int parse_sig_entry(Sema *S, const char *t, Loc base, size_t start, size_t end, KernelParam *p) {
  while (start < end && t[start] == ' ') start++;
  while (end > start && t[end - 1] == ' ') end--;
  Loc loc = loc_at(base, start, end - start);
  p->desc = NULL;
  if (end - start > 11 && !strncmp(t + start, "tensordesc<", 11)) return parse_desc_entry(S, t, base, start, end, p);
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
  if (!is_ptr && dtype_is_fp8((DType)dt)) { /* as in Triton: fp8 lives in memory, behind pointers */
    diag_error(S->diags, loc, "an fp8 scalar parameter ('%s') is not supported; pass a pointer (*%s) or fp32", name, name);
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

/* The end of the signature entry at `start`: the next comma outside brackets. */
static size_t entry_end(const char *t, size_t start, size_t len) {
  int depth = 0;
  size_t end = start;
  for (; end < len && (depth || t[end] != ','); end++) depth += t[end] == '[' || t[end] == '<' ? 1 : t[end] == ']' || t[end] == '>' ? -1 : 0;
  return end;
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
    size_t end = entry_end(src->text, start, len);
    if (start == len && i < want) break;
    ok &= parse_sig_entry(S, src->text, loc_in(src, 0, 0), start, end, p);
    i++;
    start = end + 1;
  }
  int given = i;
  for (size_t j = start; j < len; j = entry_end(src->text, j, len) + 1) given++;
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
  else if (is_const_kind(v, V_CLASS) && !strcmp(v->cval->s, "const")) p->is_const = 1; /* the signature gives the type */
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

/* A host value as a constexpr: numbers, strings, bools, None and tuples of them; NULL otherwise. */
static Value *constexpr_of(Sema *S, const HostVal *v) {
  switch (v->kind) {
  case H_INT: return value_int(S, v->i);
  case H_BOOL: return value_bool(S, (int)v->i);
  case H_FLOAT: return value_float(S, v->f);
  case H_NONE: return value_new(S, V_NONE);
  case H_STR: return value_string(S, v->s);
  case H_LIST:
  case H_TUPLE: {
    Value *list = value_new(S, V_LIST);
    for (int i = 0; i < v->items.len; i++) {
      Value *item = constexpr_of(S, v->items.data[i]);
      if (!item) return NULL;
      vec_push(S->arena, &list->items, item);
    }
    return list;
  }
  case H_RECORD: { /* torch.finfo(torch.float32), kept in a variable: its attributes are read later */
    Value *record = value_new(S, V_RECORD);
    for (int i = 0; i < v->items.len; i++) {
      Value *item = constexpr_of(S, v->items.data[i]);
      if (!item) return NULL;
      vec_push(S->arena, &record->keys, v->keys.data[i]->s);
      vec_push(S->arena, &record->items, item);
    }
    return record;
  }
  default: return NULL;
  }
}

static HostVal *host_of(Sema *S, Host *h, const Value *v);

/* A name a module of the kernel's package defines, for the host evaluator: its constexpr value.  The
 * host runs every import of the module, most of them names no decorator reads (functions, host-only
 * objects): each is evaluated quietly, and one without a constexpr value is an UNKNOWN saying so (an
 * error only where a decorator needs it); NULL where the package has no such name. */
static HostVal *package_import(void *ctx, Host *h, const Node *binding) {
  Sema *S = ctx;
  if (is_host_module(binding->str) || !module_import_found(S, binding->str)) return NULL;
  Quiet q;
  sema_quiet_begin(S, &q);
  Node *v = module_import(S, binding->loc, binding->str);
  int errors = sema_quiet_end(S, &q);
  HostVal *r = !errors && v && is_const(v) && !v->type ? host_of(S, h, v->cval) : NULL;
  return r && r->kind != H_UNKNOWN ? r
                                   : host_unknown(h, binding->loc, "'%s' is not a value tile's host evaluator has",
                                                  binding->str);
}

/* The host evaluator for the module's statements before `upto`, its imports of the package answered. */
static Host *module_host(Sema *S, const Node *upto, HostTarget target) {
  Host *h = host_new(S->arena, S->here->mod, upto, target);
  host_set_import(h, package_import, S);
  return h;
}

/* expr evaluated by h, as a constexpr: NULL when it is none, *unknown then the evaluator's reason, or
 * NULL for a host object (torch.pi). */
static Value *host_value_of(Sema *S, Host *h, Node *expr, HostVal **unknown) {
  HostVal *v = host_eval(h, expr);
  *unknown = v->kind == H_UNKNOWN ? v : NULL;
  return *unknown ? NULL : constexpr_of(S, v);
}

/* expr, host code's (torch.finfo(torch.float32).min), evaluated by the host evaluator of the
 * kernel's decorators (a fresh one before they are checked) and taken as a constexpr. */
Value *host_constexpr(Sema *S, Node *expr, HostVal **unknown) {
  Host *h = S->kernel && S->kernel->meta.host ? S->kernel->meta.host : NULL;
  if (!h) h = module_host(S, S->here->mod->root->body.data[0], (HostTarget){0});
  return host_value_of(S, h, expr, unknown);
}

Value *host_constexpr_at(Sema *S, Node *expr, int at, HostVal **unknown) {
  const Host *kernel = S->kernel ? S->kernel->meta.host : NULL;
  HostTarget target = kernel ? host_target(kernel) : (HostTarget){0};
  return host_value_of(S, module_host(S, S->here->mod->root->body.data[at], target), expr, unknown);
}

/* A constexpr as a host value (a -D value, a config's, a default), for heuristics and prune functions. */
static HostVal *host_of(Sema *S, Host *h, const Value *v) {
  HostVal *r;
  switch (v->kind) {
  case V_INT:
    if (v->is_u64)
      return host_unknown(h, (Loc){0}, "the constexpr %s is not a host value in tile", value_str(S->arena, v));
    return host_int(h, v->i);
  case V_BOOL: r = host_value(h, H_BOOL), r->i = v->i; return r;
  case V_FLOAT: r = host_value(h, H_FLOAT), r->f = v->f; return r;
  case V_STR: return host_str(h, v->s);
  case V_NONE: return host_value(h, H_NONE);
  case V_LIST:
    r = host_value(h, H_TUPLE);
    for (int i = 0; i < v->items.len; i++) vec_push(S->arena, &r->items, host_of(S, h, v->items.data[i]));
    return r;
  default: return host_unknown(h, (Loc){0}, "a %s constexpr is not a host value", value_str(S->arena, v));
  }
}

/* Decorator arguments are host code: evaluated by the host evaluator over
 * the module's statements before the kernel.  NULL after an error. */
static HostVal *eval_host(Sema *S, Node *n, const char *what) {
  KernelMeta *m = &S->kernel->meta;
  HostVal *v = host_eval(m->host, n);
  if (v->kind != H_UNKNOWN) return v;
  host_report(S->diags, v, n->loc, what);
  if (!S->diags->errors) diag_error(S->diags, n->loc, "%s cannot be evaluated", what); /* reported before, elsewhere */
  return NULL;
}

/* A decorator argument that only gives constexpr values (autotune's
 * configs, heuristics): one the host evaluator cannot compute (configs read
 * from a file) is kept, and reported only where a value is needed (-D gives
 * them all, say): unevaluated_report.  NULL then. */
static HostVal *eval_host_deferred(Sema *S, Node *n, const char *what) {
  KernelMeta *m = &S->kernel->meta;
  HostVal *v = host_eval(m->host, n);
  if (v->kind != H_UNKNOWN) return v;
  if (host_stopped(m->host)) { /* the evaluator is spent: reported here, not at the next thing it evaluates */
    host_report(S->diags, v, n->loc, what);
    return NULL;
  }
  if (!m->unevaluated) {
    m->unevaluated = v;
    m->unevaluated_what = what;
    m->unevaluated_at = n->loc;
  }
  return NULL;
}

static Node *keyword(Node *call, const char *name) {
  for (int i = 0; i < call->kwargs.len; i++)
    if (!strcmp(call->kwargs.data[i]->name, name)) return call->kwargs.data[i]->a;
  return NULL;
}

static int option_int(Sema *S, const HostVal *options, const char *key, int fallback, Loc loc) {
  const HostVal *v = host_dict_get(options, key);
  if (!v) return fallback;
  if (v->kind == H_INT && v->i > 0 && v->i <= 1024) return (int)v->i;
  diag_error(S->diags, loc, "triton.Config's %s must be a positive integer, not %s", key, host_repr(S->arena, v));
  return fallback;
}

/* maxnreg=: None (Triton's default) or an integer ptxas honours as given;
 * reported at the triton.Config call. */
static int option_maxnreg(Sema *S, const HostVal *options, Loc loc) {
  const HostVal *v = host_dict_get(options, "maxnreg");
  if (!v || v->kind == H_NONE) return 0;
  if (v->kind == H_INT && arch_valid_maxnreg(v->i)) return (int)v->i;
  diag_error(S->diags, loc, "triton.Config's maxnreg must be None or an integer from %d to %d (registers a thread: "
                            "ptxas raises a smaller cap and ignores a larger one), not the %s %s",
             ARCH_FEWEST_MAXNREG, ARCH_MOST_MAXNREG, host_type_name(v), host_repr(S->arena, v));
  return 0;
}

static void record_config(Sema *S, Node *dec, const HostVal *c, int index) {
  TuneConfig tc = {0};
  const HostVal *kwargs = c->items.data[0], *options = c->items.data[1];
  tc.loc = dec->loc;
  tc.index = index;
  tc.num_warps = option_int(S, options, "num_warps", ARCH_DEFAULT_WARPS, dec->loc);
  if (!arch_valid_warps(tc.num_warps))
    diag_error(S->diags, dec->loc, "triton.Config's num_warps must be a power of two from 1 to %d, not %d",
               ARCH_MAX_WARPS, tc.num_warps);
  tc.num_stages = option_int(S, options, "num_stages", ARCH_DEFAULT_STAGES, dec->loc);
  tc.num_ctas = option_int(S, options, "num_ctas", 1, dec->loc);
  tc.maxnreg = option_maxnreg(S, options, c->loc.line ? c->loc : dec->loc);
  for (int j = 0; j < kwargs->keys.len; j++) {
    Value *v = kwargs->keys.data[j]->kind == H_STR ? constexpr_of(S, kwargs->items.data[j]) : NULL;
    if (!v) {
      diag_error(S->diags, dec->loc, "a config's meta-parameter must be a string naming a number, string, bool or "
                                     "tuple, not %s: %s", host_repr(S->arena, kwargs->keys.data[j]),
                 host_repr(S->arena, kwargs->items.data[j]));
      return;
    }
    vec_push(S->arena, &tc.names, kwargs->keys.data[j]->s);
    vec_push(S->arena, &tc.values, v);
  }
  vec_push(S->arena, &S->kernel->meta.configs, tc);
}

static void record_configs(Sema *S, Node *dec, Node *where, const HostVal *list) {
  if (list->kind != H_LIST && list->kind != H_TUPLE) {
    diag_error(S->diags, where->loc, "autotune configs must be a list of triton.Config(...) values, not %s",
               host_type_name(list));
    return;
  }
  for (int i = 0; i < list->items.len; i++) {
    if (list->items.data[i]->kind != H_CONFIG) {
      diag_error(S->diags, where->loc, "autotune configs must be triton.Config(...) values, not %s",
                 host_repr(S->arena, list->items.data[i]));
      return;
    }
    record_config(S, dec, list->items.data[i], i);
  }
}

/* A list of parameter names (key=, reset_to_zero=, restore_value=) into *out;
 * `pointers`: each must name a pointer parameter (annotated or not). */
static void record_names(Sema *S, Node *list, const char *what, int pointers, NameList *out) {
  HostVal *names = list ? eval_host(S, list, arena_printf(S->arena, "@triton.autotune's %s", what)) : NULL;
  if (names && names->kind != H_LIST && names->kind != H_TUPLE) {
    diag_error(S->diags, list->loc, "autotune %s must be a list of parameter names", what);
    return;
  }
  for (int i = 0; names && i < names->items.len; i++) {
    HostVal *k = names->items.data[i];
    KernelParam *p = k->kind == H_STR ? find_param(S->kernel, k->s, k->slen) : NULL;
    if (!p && !strcmp(what, "key")) { /* Triton's autotuner skips such a key (tutorial 08 has a typo in one) */
      diag_warning(S->diags, list->loc, "autotune key %s is not a parameter of '%s'; ignored, as Triton does",
                   host_repr(S->arena, k), S->kernel->def->name);
    } else if (!p) {
      diag_error(S->diags, list->loc, "autotune %s %s is not a parameter of '%s'", what, host_repr(S->arena, k),
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
  HostVal *v = n ? eval_host(S, n, arena_printf(S->arena, "@triton.autotune's %s", name)) : NULL;
  if (!v) return 0;
  double ms = v->kind == H_INT ? (double)v->i : v->kind == H_FLOAT ? v->f : -1;
  if (ms > 0 && ms <= 60000) return ms;
  diag_error(S->diags, n->loc, "autotune %s must be a number of milliseconds from 0 to 60000", name);
  return 0;
}

/* Keywords of Triton's autotune that tile accepts without acting on them. */
static void warn_ignored(Sema *S, Node *dec) {
  static const char *const known[] = {"configs", "key", "reset_to_zero", "restore_value", "warmup", "rep",
                                      "cache_results", "use_cuda_graph", "prune_configs_by"};
  for (int i = 0; i < dec->kwargs.len; i++) {
    Node *kw = dec->kwargs.data[i];
    size_t j = 0;
    while (j < sizeof known / sizeof *known && strcmp(kw->name, known[j])) j++;
    if (j < sizeof known / sizeof *known) continue;
    diag_warning(S->diags, kw->loc, "@triton.autotune's '%s' is ignored: every config is timed", kw->name);
  }
}

int kernel_param_slots(const KernelParam *p) {
  if (p->is_constexpr && !p->specialized) return 0;
  return p->desc && !p->is_desc_part ? 1 + 2 * p->desc->rank : 1;
}

/* The named arguments a prune function or a heuristic sees: constexprs with
 * their values; run-time arguments known only at launch unless a ':1' hint
 * fixes them or ':16' says they are multiples of 16; `launch`: their
 * values at a launch (NULL: none). */
static HostVal *named_args(Sema *S, const LaunchArg *launch, int n_launch) {
  Host *h = S->kernel->meta.host;
  HostVal *d = host_value(h, H_DICT);
  for (int i = 0, position = 0; i < S->kernel->params.len; i++) {
    KernelParam *p = &S->kernel->params.data[i];
    HostVal *v;
    if (p->is_constexpr && p->value) v = host_of(S, h, p->value);
    else if (!p->is_constexpr && position < n_launch && launch[position].kind == LAUNCH_INT)
      v = host_int(h, launch[position].i);
    else if (!p->is_constexpr && position < n_launch && launch[position].kind == LAUNCH_FLOAT)
      v = host_of(S, h, value_float(S, launch[position].f));
    else if (!p->is_constexpr && position < n_launch)
      v = host_unknown(h, p->loc, "argument '%s' is a buffer at this launch (host code sees integers and floats)",
                       p->name);
    else if (p->divisibility == 16 && p->type && !p->type->is_ptr) {
      v = host_value(h, H_MULTIPLE);
      v->i = 16;
      v->loc = p->loc;
      v->s = arena_printf(S->arena, "argument '%s' is known only at launch (its ':16' hint says only that it is a "
                                    "multiple of 16)", p->name);
    } else
      v = host_unknown(h, p->loc, "argument '%s' is known only at launch", p->name);
    position += kernel_param_slots(p);
    host_dict_set(h, d, host_str(h, p->name), v);
  }
  return d;
}

/* prune_configs_by={'early_config_prune': fn, ...}: fn kept for
 * apply_prune, which runs it where the arguments' values are known. */
static void record_prune(Sema *S, Node *dec) {
  Node *by = keyword(dec, "prune_configs_by");
  HostVal *d = by ? eval_host(S, by, "@triton.autotune's prune_configs_by") : NULL;
  if (!d) return;
  if (d->kind != H_DICT) {
    diag_error(S->diags, by->loc, "prune_configs_by must be a dict (early_config_prune, perf_model, top_k), not %s",
               host_type_name(d));
    return;
  }
  if (host_dict_get(d, "perf_model") || host_dict_get(d, "top_k"))
    diag_warning(S->diags, by->loc, "prune_configs_by's perf_model and top_k are ignored: every config is timed");
  HostVal *fn = host_dict_get(d, "early_config_prune");
  if (!fn || fn->kind == H_NONE) return;
  S->kernel->meta.prune = fn;
  S->kernel->meta.prune_at = by->loc;
}

/* The configs early_config_prune kept, in its order, as the kernel's; 0
 * (reported) when it returned one that is not among the decorator's. */
static int keep_configs(Sema *S, const HostVal *kept) {
  KernelMeta *m = &S->kernel->meta;
  Vec(TuneConfig) out = {0};
  for (int i = 0; i < kept->items.len; i++) {
    int found = -1;
    for (int j = 0; j < m->configs.len && found < 0; j++)
      if (kept->items.data[i] == m->config_list->items.data[m->configs.data[j].index]) found = j;
    if (found < 0) {
      diag_error(S->diags, m->prune_at, "early_config_prune returned %s, which is not one of @triton.autotune's "
                                        "configs (tile tunes only those)", host_repr(S->arena, kept->items.data[i]));
      return 0;
    }
    vec_push(S->arena, &out, m->configs.data[found]);
  }
  m->configs.data = out.data;
  m->configs.len = m->configs.cap = out.len;
  return 1;
}

/* early_config_prune(configs, named_args, **named_args), as Triton calls it
 * at a launch, on what is known here: the -D values and defaults, ':1'
 * arguments, a launch's values (the JIT's).  The configs it returns become
 * the kernel's; reading a value not known here is an error, or with
 * `!needed` (tile_pack bundling every config) a warning that keeps them all. */
static void apply_prune(Sema *S, const SemaOptions *opts, int needed) {
  KernelMeta *m = &S->kernel->meta;
  if (!opts->prune_configs || !m->prune || !m->config_list || S->diags->errors) return;
  HostVal *configs = host_value(m->host, H_LIST); /* a copy: the function may change the list it gets */
  for (int i = 0; i < m->config_list->items.len; i++) vec_push(S->arena, &configs->items, m->config_list->items.data[i]);
  HostVal *args[] = {configs, named_args(S, opts->launch, opts->n_launch)};
  HostVal *kept = host_call_kwargs(m->host, m->prune, args, 2, args[1], m->prune_at);
  if (kept->kind == H_UNKNOWN && !needed) {
    diag_warning(S->diags, m->prune_at, "early_config_prune cannot be evaluated here: %s; every config is kept",
                 kept->s);
  } else if (kept->kind == H_UNKNOWN) {
    diag_error(S->diags, m->prune_at, "early_config_prune cannot be evaluated here: %s", kept->s);
    if (!opts->launch)
      diag_note(S->diags, m->prune_at, "ahead of time it sees the constexprs' values and the signature's ':1' "
                                       "arguments; the JIT runs it at each launch that tunes");
  } else if (kept->kind != H_LIST && kept->kind != H_TUPLE) {
    diag_error(S->diags, m->prune_at, "early_config_prune must return a list of configs, not %s", host_type_name(kept));
  } else if (kept->items.len == 0) {
    diag_error(S->diags, m->prune_at, "early_config_prune kept no config");
  } else {
    keep_configs(S, kept);
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
  HostVal *list = eval_host_deferred(S, configs, "@triton.autotune's configs");
  KernelMeta *m = &S->kernel->meta;
  if (list) record_configs(S, dec, configs, list);
  if (list) m->config_list = list;
  record_prune(S, dec);
  record_names(S, key, "key", 0, &m->keys);
  record_names(S, keyword(dec, "reset_to_zero"), "reset_to_zero", 1, &m->reset_to_zero);
  record_names(S, keyword(dec, "restore_value"), "restore_value", 1, &m->restore_value);
  m->warmup_ms = budget_ms(S, dec, "warmup");
  m->rep_ms = budget_ms(S, dec, "rep");
  warn_ignored(S, dec);
}

static void check_heuristics(Sema *S, Node *dec) {
  Node *arg = dec->args.len ? dec->args.data[0] : keyword(dec, "values");
  HostVal *d = arg ? eval_host_deferred(S, arg, "@triton.heuristics") : NULL;
  if (!d || d->kind != H_DICT) {
    if (arg && !d) return;
    diag_error(S->diags, dec->loc, "@triton.heuristics needs a dict of meta-parameter names to lambdas");
    return;
  }
  KernelMeta *m = &S->kernel->meta;
  for (int i = 0; i < d->keys.len; i++) {
    HostVal *fn = d->items.data[i];
    if (d->keys.data[i]->kind != H_STR || fn->kind != H_FUNC) {
      diag_error(S->diags, arg->loc, "heuristic %s must be a lambda", host_repr(S->arena, d->keys.data[i]));
      continue;
    }
    vec_push(S->arena, &m->heuristic_names, d->keys.data[i]->s);
    vec_push(S->arena, &m->heuristic_lambdas, fn->node);
    vec_push(S->arena, &m->heuristic_fns, fn);
  }
}

static void check_decorators(Sema *S, Node *def, const SemaOptions *opts) {
  HostTarget target = {opts->arch, opts->num_sms};
  S->kernel->meta.host = module_host(S, def, target);
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

static void mark_called(Sema *S, const Node *name, const char *caller) {
  if (name->kind != ND_NAME || !strcmp(name->name, caller)) return;
  int count;
  Symbol *sym = symbols_find(S, name->name, &count);
  for (int i = 0; i < count; i++) sym[i].called = 1;
}

/* Marks the module functions that `n` calls by bare name, or passes to a
 * call (tl.reduce's combine_fn), except `caller` itself. */
static void mark_calls(Sema *S, const Node *n, const char *caller) {
  if (!n) return;
  if (n->kind == ND_CALL) {
    mark_called(S, n->a, caller);
    for (int i = 0; i < n->args.len; i++) mark_called(S, n->args.data[i], caller);
    for (int i = 0; i < n->kwargs.len; i++)
      if (n->kwargs.data[i]->a) mark_called(S, n->kwargs.data[i]->a, caller);
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

int sema_is_jit(const Node *fn) {
  for (int i = 0; i < fn->kwargs.len; i++) {
    const char *d = callee_name(fn->kwargs.data[i]);
    if (!strcmp(d, "jit") || !strcmp(d, "autotune") || !strcmp(d, "heuristics")) return 1;
  }
  return 0;
}

static int any_jit(const Module *m) {
  for (int i = 0; i < m->root->body.len; i++)
    if (m->root->body.data[i]->kind == ND_FUNCDEF && sema_is_jit(m->root->body.data[i])) return 1;
  return 0;
}

/* The kernel: the function named, else the one @jit function (any function
 * when none is decorated) that no other function calls. */
static Node *select_kernel(Sema *S, const char *name) {
  const Module *m = S->here->mod;
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
    if (!name && (!jit_only || sema_is_jit(fn)) && !called_by_others(S, fn)) {
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
    p.decl = i;
    apply_annotation(S, def->args.data[i], &p);
    vec_push(S->arena, &k->params, p);
  }
}

static void apply_heuristics(Sema *S, const SemaOptions *opts);

static KernelParam desc_part(Sema *S, const KernelParam *p, int part, const char *what, int dim) {
  KernelParam c = *p;
  c.desc_part = part;
  c.is_desc_part = 1;
  c.name = dim < 0 ? arena_printf(S->arena, "%s.%s", p->name, what) : arena_printf(S->arena, "%s.%s.%d", p->name, what, dim);
  if (part == 0) return c;
  c.type = type_scalar(S->arena, part <= p->desc->rank ? DT_I32 : DT_I64);
  c.divisibility = 1;
  if (part == 2 * p->desc->rank) { /* the last stride: 1, as Triton's TensorDescriptor requires */
    c.is_constexpr = c.specialized = 1;
    c.value = value_int(S, 1);
  }
  return c;
}

/* Each descriptor parameter becomes the parameters it is passed as: its
 * base, shape and strides (what the launch's arguments and the metadata see). */
static void expand_descriptors(Sema *S) {
  CheckedKernel *k = S->kernel;
  Vec(KernelParam) out = {0};
  for (int i = 0; i < k->params.len; i++) {
    KernelParam *p = &k->params.data[i];
    if (!p->desc || p->is_constexpr) {
      vec_push(S->arena, &out, *p);
      continue;
    }
    vec_push(S->arena, &out, desc_part(S, p, 0, "base", -1));
    for (int d = 0; d < p->desc->rank; d++) vec_push(S->arena, &out, desc_part(S, p, 1 + d, "shape", d));
    for (int d = 0; d < p->desc->rank; d++) vec_push(S->arena, &out, desc_part(S, p, 1 + p->desc->rank + d, "stride", d));
  }
  k->params.data = out.data;
  k->params.len = k->params.cap = out.len;
}

/* The values of config opts->config (none: -1) for the constexprs that no
 * -D gives; 0 (reported) when the kernel has no such config. */
static int apply_config(Sema *S, const SemaOptions *opts) {
  CheckedKernel *k = S->kernel;
  if (opts->config < 0) return 1;
  if (opts->config >= k->meta.configs.len) {
    Loc nowhere = {0};
    if (k->meta.unevaluated) host_report(S->diags, k->meta.unevaluated, k->meta.unevaluated_at, k->meta.unevaluated_what);
    else diag_error(S->diags, nowhere, "config %d: kernel '%s' has %d autotune configs", opts->config, k->def->name,
                    k->meta.configs.len);
    return 0;
  }
  TuneConfig *tc = &k->meta.configs.data[opts->config];
  for (int i = 0; i < tc->names.len; i++) {
    KernelParam *p = find_param(k, tc->names.data[i], strlen(tc->names.data[i]));
    if (p && p->is_constexpr && !p->value) p->value = tc->values.data[i];
  }
  return 1;
}

/* Applies what the caller gives: the signature, -D values, a config. */
static int apply_options(Sema *S, const SemaOptions *opts) {
  if (opts->signature && !apply_signature(S, opts->signature)) return 0;
  expand_descriptors(S);
  for (int i = 0; i < opts->n_defines; i++) apply_define(S, opts->defines[i]);
  if (opts->config >= 0) apply_prune(S, opts, 1); /* where a config is picked: only then is its result needed */
  if (!apply_config(S, opts)) return 0;
  if (S->diags->errors == 0) apply_heuristics(S, opts);
  return S->diags->errors == 0;
}

/* @triton.heuristics: each lambda run on the named arguments (the launch's
 * values in the JIT; -D, config and hint values in tilec) unless -D gives
 * the value; in decorator order, so a later one sees an earlier one's. */
static void apply_heuristics(Sema *S, const SemaOptions *opts) {
  KernelMeta *m = &S->kernel->meta;
  for (int i = 0; i < m->heuristic_names.len; i++) {
    const char *name = m->heuristic_names.data[i];
    Loc loc = m->heuristic_lambdas.data[i]->loc;
    KernelParam *p = find_param(S->kernel, name, strlen(name));
    if (!p || !p->is_constexpr) {
      diag_error(S->diags, loc, "heuristic '%s' must name a constexpr parameter of '%s'", name, S->kernel->def->name);
      continue;
    }
    if (p->value_from_define) continue;
    HostVal *args = named_args(S, opts->launch, opts->n_launch);
    HostVal *v = host_call(m->host, m->heuristic_fns.data[i], &args, 1, loc);
    Value *value = v->kind == H_UNKNOWN ? NULL : constexpr_of(S, v);
    if (value) {
      p->value = value;
      continue;
    }
    diag_error(S->diags, loc, "heuristic '%s' cannot be evaluated here: %s", name,
               v->kind == H_UNKNOWN ? v->s : arena_printf(S->arena, "it gave %s", host_repr(S->arena, v)));
    if (opts->launch)
      diag_note(S->diags, loc, "at a launch heuristics see the constexprs and the integer and float arguments");
    else
      diag_note(S->diags, loc, "give its value with -D %s=VALUE", name);
  }
}

static void give_default_types(Sema *S) {
  for (int i = 0; i < S->kernel->params.len; i++) {
    KernelParam *p = &S->kernel->params.data[i];
    if (p->is_constexpr && !p->value && !S->kernel->def->args.data[p->decl]->b) p->value = value_int(S, 16);
    if (!p->is_constexpr && !p->type)
      p->type = strstr(p->name, "ptr") ? type_pointer(S->arena, DT_FP32) : type_scalar(S->arena, DT_I32);
  }
}

static int params_typed(CheckedKernel *k) {
  for (int i = 0; i < k->params.len; i++)
    if (!k->params.data[i].is_constexpr && !k->params.data[i].type) return 0;
  return 1;
}

/* Collects a descriptor's parts; with the last, binds the descriptor's name. */
static void bind_descriptor(Sema *S, const KernelParam *p, Node *ref, Node **parts) {
  parts[p->desc_part] = ref;
  if (p->desc_part < 2 * p->desc->rank) return;
  Node *decl = S->kernel->def->args.data[p->decl];
  sema_bind(S, decl->name, desc_param(S, decl->loc, p->desc, parts));
}

/* Binds every parameter in the kernel's scope and builds the typed PARAMs. */
/* p: tl.const: its pointer type marked constant (Triton's const pointer); 0 after an error. */
static int const_pointer(Sema *S, KernelParam *p) {
  if (!p->type->is_ptr) {
    diag_error(S->diags, p->loc, "tl.const marks a pointer parameter; '%s' is %s", p->name, type_str(S->arena, p->type));
    return 0;
  }
  Type *t = type_with_elem(S->arena, p->type, p->type->elem, 1);
  t->is_const = 1;
  p->type = t;
  return 1;
}

static int bind_kernel_params(Sema *S, Node *typed) {
  CheckedKernel *k = S->kernel;
  Node *parts[1 + 2 * MAX_RANK];
  for (int i = 0; i < k->params.len; i++) {
    KernelParam *p = &k->params.data[i];
    Node *src = k->def->args.data[p->decl];
    if (p->is_constexpr && !p->value && src->b) p->value = const_of(S, check_expr(S, src->b), "a constexpr default");
    if (p->is_constexpr && !p->value) {
      diag_error(S->diags, p->loc, "constexpr parameter '%s' has no value", p->name);
      diag_note(S->diags, p->loc, k->meta.configs.len ? "give it with -D %s=VALUE, or pick an autotune config with --config N"
                                                      : "give it with -D %s=VALUE", p->name);
      if (k->meta.unevaluated) /* the decorator that might have given it */
        diag_note(S->diags, k->meta.unevaluated_at, "%s cannot be evaluated: %s", k->meta.unevaluated_what,
                  k->meta.unevaluated->s);
      continue;
    }
    Node *param = node_new(S->arena, ND_PARAM, p->loc);
    param->name = p->name;
    Node *ref;
    if (p->is_constexpr) {
      param->cval = p->value;
      ref = const_to_node(S, p->loc, p->value);
      if (p->desc) ref = cast(S, runtime(S, ref), DT_I64, 0);
    } else {
      if (p->is_const && !const_pointer(S, p)) continue;
      param->type = p->type;
      ref = typed_node(S, ND_NAME, p->loc, p->type);
      ref->name = p->name;
    }
    sema_bind(S, p->name, ref);
    if (p->desc) bind_descriptor(S, p, ref, parts);
    vec_push(S->arena, &typed->args, param);
  }
  return S->diags->errors == 0;
}

/* The kernel's function, its parameters and decorators; 0 after errors. */
static int declare(Sema *S, const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d) {
  S->arena = d->arena;
  S->diags = d;
  S->here = arena_alloc(d->arena, sizeof *S->here);
  S->here->mod = m;
  S->files = arena_alloc(d->arena, sizeof *S->files); /* the kernel's: checking its body may import more */
  vec_push(S->arena, &S->loaded, S->here); /* the kernel's file, for helpers of other modules that call back */
  S->stdlib = stdlib;
  symbols_build(S, 1);
  S->kernel = arena_alloc(d->arena, sizeof *S->kernel);
  Node *def = select_kernel(S, opts->kernel);
  if (!def) return 0;
  S->kernel->def = def;
  collect_params(S);
  check_decorators(S, def, opts);
  S->kernel->module_files = S->files;
  return d->errors == 0;
}

CheckedKernel *sema_declare(const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d) {
  Sema S = {0};
  if (!declare(&S, m, stdlib, opts, d)) return NULL;
  /* its parameters as launches pass them (a fixed signature's descriptors and ':1' included): the
   * autotuner's key positions, the JIT's prune */
  if (opts->signature && !apply_signature(&S, opts->signature)) return NULL;
  /* the -D values too: one the kernel does not take is the caller's mistake, found before any launch */
  for (int i = 0; i < opts->n_defines; i++) apply_define(&S, opts->defines[i]);
  apply_prune(&S, opts, opts->launch || opts->config >= 0);
  return d->errors ? NULL : S.kernel;
}

CheckedKernel *sema_heuristics(const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d) {
  Sema S = {0};
  if (!declare(&S, m, stdlib, opts, d)) return NULL;
  for (int i = 0; i < opts->n_defines; i++) apply_define(&S, opts->defines[i]);
  if (d->errors == 0 && apply_config(&S, opts)) apply_heuristics(&S, opts);
  return d->errors ? NULL : S.kernel;
}

void sema_launch_shape(const CheckedKernel *k, int config, int num_warps, int num_stages, int *warps, int *stages) {
  if (k && config >= 0 && config < k->meta.configs.len) {
    *warps = k->meta.configs.data[config].num_warps;
    *stages = k->meta.configs.data[config].num_stages;
  }
  if (num_warps) *warps = num_warps;
  if (num_stages) *stages = num_stages;
}

int sema_register_cap(const CheckedKernel *k, int config, int maxnreg) {
  if (maxnreg || !k || config < 0 || config >= k->meta.configs.len) return maxnreg;
  return k->meta.configs.data[config].maxnreg;
}

/* num_warps as the driver will launch with it. */
static int launch_warps(const CheckedKernel *k, const SemaOptions *opts) {
  int warps = ARCH_DEFAULT_WARPS, stages = ARCH_DEFAULT_STAGES;
  sema_launch_shape(k, opts->config, opts->num_warps, 0, &warps, &stages);
  return warps;
}

CheckedKernel *sema_check(const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d) {
  Sema S = {0};
  if (!declare(&S, m, stdlib, opts, d) && !S.kernel->def) return NULL;
  Node *def = S.kernel->def;
  if (!apply_options(&S, opts)) return NULL;
  S.num_warps = launch_warps(S.kernel, opts);
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
