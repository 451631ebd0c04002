/* The host evaluator (host.h): a tree-walking interpreter of the Python
 * subset that autotune configs and heuristics are written in.  Values live
 * in the compilation's arena; lists and dicts are shared by reference, as
 * in Python, so `configs.append(...)` works.  An operation on an UNKNOWN
 * gives that UNKNOWN back, so the first thing that could not be evaluated is
 * the one reported, and only if a kernel needs it. */
#include "host.h"
#include "../support/arch.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct HostEnv {
  Vec(const char *) names;
  HostVec vals;
  HostEnv *parent;  /* NULL: the module's globals */
};

struct Host {
  Arena *arena;
  const Module *mod;
  const Node *upto;
  HostTarget target;
  HostEnv *globals;
  int ran_module;
  long steps;
  int depth;
  HostVal *stopped;  /* the limit reached, once it is: every later evaluation gives it */
  int in_try;        /* inside a try's body or else block (exec_try) */
  HostImport import; /* the package's imports (host_set_import); NULL: none */
  void *import_ctx;
};

typedef enum { FLOW_NEXT, FLOW_RETURN, FLOW_BREAK, FLOW_CONTINUE, FLOW_FAIL } Flow;

/* A call's arguments, positional then keyword. */
typedef struct Args {
  Loc loc;
  HostVec pos;
  Vec(const char *) names;
  HostVec kw;
  HostVal *self;
} Args;

typedef HostVal *(*BuiltinFn)(Host *h, Args *a);

static HostVal *eval(Host *h, HostEnv *env, Node *n);
static Flow exec_block(Host *h, HostEnv *env, NodeVec *body, HostVal **out);

/* ---- values --------------------------------------------------------------------------- */

HostVal *host_value(Host *h, HostKind k) {
  HostVal *v = arena_alloc(h->arena, sizeof *v);
  v->kind = k;
  return v;
}

/* Ints, bools and floats: one constructor, the kind saying which field counts. */
static HostVal *scalar(Host *h, HostKind k, int64_t i, double f) {
  HostVal *v = host_value(h, k);
  v->i = i;
  v->f = f;
  return v;
}

HostVal *host_int(Host *h, int64_t i) { return scalar(h, H_INT, i, 0); }
static HostVal *host_float(Host *h, double f) { return scalar(h, H_FLOAT, 0, f); }
static HostVal *host_bool(Host *h, int b) { return scalar(h, H_BOOL, b != 0, 0); }

static HostVal *host_strn(Host *h, const char *s, size_t n) {
  HostVal *v = host_value(h, H_STR);
  v->s = arena_strndup(h->arena, s, n);
  v->slen = n;
  return v;
}

HostVal *host_str(Host *h, const char *s) { return host_strn(h, s, strlen(s)); }

HostVal *host_unknown(Host *h, Loc loc, const char *fmt, ...) {
  HostVal *v = host_value(h, H_UNKNOWN);
  char text[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  v->s = arena_strdup(h->arena, text);
  v->loc = loc;
  return v;
}

static HostVal *named(Host *h, HostKind k, const char *s) {
  HostVal *v = host_value(h, k);
  v->s = s;
  return v;
}

static int is_number(const HostVal *v) { return v->kind == H_INT || v->kind == H_BOOL || v->kind == H_FLOAT; }
static int is_int(const HostVal *v) { return v->kind == H_INT || v->kind == H_BOOL; }
static int is_seq(const HostVal *v) { return v->kind == H_LIST || v->kind == H_TUPLE; }
static double as_float(const HostVal *v) { return v->kind == H_FLOAT ? v->f : (double)v->i; }

const char *host_type_name(const HostVal *v) {
  static const char *const names[] = {"NoneType", "bool", "int", "float", "str", "list", "tuple", "dict", "object",
                                      "Config", "function", "builtin", "module", "type", "int", "unknown"};
  return names[v->kind];
}

int host_truth(const HostVal *v) {
  switch (v->kind) {
  case H_NONE: return 0;
  case H_BOOL:
  case H_INT: return v->i != 0;
  case H_FLOAT: return v->f != 0;
  case H_STR: return v->slen != 0;
  case H_LIST:
  case H_TUPLE:
  case H_DICT: return v->items.len != 0;
  default: return 1;
  }
}

static int equal(const HostVal *x, const HostVal *y) {
  if (is_number(x) && is_number(y)) return as_float(x) == as_float(y) && (!is_int(x) || !is_int(y) || x->i == y->i);
  if (x->kind != y->kind) return 0;
  switch (x->kind) {
  case H_NONE: return 1;
  case H_STR: return x->slen == y->slen && !memcmp(x->s, y->s, x->slen);
  case H_MODULE:
  case H_TYPE: return !strcmp(x->s, y->s);
  case H_LIST:
  case H_TUPLE:
  case H_DICT:
    if (x->items.len != y->items.len) return 0;
    for (int i = 0; i < x->items.len; i++)
      if (!equal(x->items.data[i], y->items.data[i]) || (x->kind == H_DICT && !equal(x->keys.data[i], y->keys.data[i])))
        return 0;
    return 1;
  default: return x == y;
  }
}

static int dict_find(const HostVal *d, const HostVal *key) {
  for (int i = 0; i < d->keys.len; i++)
    if (equal(d->keys.data[i], key)) return i;
  return -1;
}

HostVal *host_dict_get(const HostVal *d, const char *key) {
  for (int i = 0; i < d->keys.len; i++)
    if (d->keys.data[i]->kind == H_STR && !strcmp(d->keys.data[i]->s, key)) return d->items.data[i];
  return NULL;
}

void host_dict_set(Host *h, HostVal *d, HostVal *key, HostVal *value) {
  int i = dict_find(d, key);
  if (i >= 0) {
    d->items.data[i] = value;
    return;
  }
  vec_push(h->arena, &d->keys, key);
  vec_push(h->arena, &d->items, value);
}

static void repr_into(Buf *b, const HostVal *v, int depth) {
  if (depth > 8) return buf_puts(b, "...");
  switch (v->kind) {
  case H_NONE: buf_puts(b, "None"); return;
  case H_BOOL: buf_puts(b, v->i ? "True" : "False"); return;
  case H_INT: buf_printf(b, "%lld", (long long)v->i); return;
  case H_FLOAT: buf_printf(b, "%g", v->f); return;
  case H_STR: buf_printf(b, "'%.*s'", (int)(v->slen > 60 ? 60 : v->slen), v->s); return;
  case H_LIST:
  case H_TUPLE:
    buf_puts(b, v->kind == H_LIST ? "[" : "(");
    for (int i = 0; i < v->items.len && i < 16; i++) {
      if (i) buf_puts(b, ", ");
      repr_into(b, v->items.data[i], depth + 1);
    }
    buf_puts(b, v->items.len > 16 ? ", ...]" : v->kind == H_LIST ? "]" : v->items.len == 1 ? ",)" : ")");
    return;
  case H_MODULE:
  case H_TYPE: buf_puts(b, v->s); return;
  default: buf_printf(b, "<%s>", host_type_name(v));
  }
}

const char *host_repr(Arena *a, const HostVal *v) {
  Buf b;
  buf_init(&b, a);
  repr_into(&b, v, 0);
  return buf_cstr(&b);
}

void host_report(Diags *d, HostVal *v, Loc use, const char *what) {
  if (v->i) return;
  v->i = 1;
  diag_error(d, v->loc.src ? v->loc : use, "cannot evaluate host code: %s", v->s);
  if (v->loc.src && (v->loc.offset != use.offset || v->loc.src != use.src))
    diag_note(d, use, "%s needs this value", what);
}

/* ---- limits ----------------------------------------------------------------------------- */

int host_stopped(const Host *h) { return h->stopped != NULL; }

/* Counts one step at n; the limit's UNKNOWN once it is reached. */
static HostVal *step(Host *h, Node *n) {
  if (h->stopped) return h->stopped;
  if (++h->steps <= HOST_MAX_STEPS) return NULL;
  h->stopped = host_unknown(h, n->loc, "evaluation stopped after %d steps (the host evaluator's limit)",
                            HOST_MAX_STEPS);
  return h->stopped;
}

static HostVal *too_many(Host *h, Loc loc, long long n) {
  return host_unknown(h, loc, "a collection of %lld elements is larger than the host evaluator's limit of %d", n,
                      HOST_MAX_ITEMS);
}

static HostVal *push_item(Host *h, HostVal *seq, HostVal *item, Loc loc) {
  if (seq->items.len >= HOST_MAX_ITEMS) return too_many(h, loc, (long long)seq->items.len + 1);
  vec_push(h->arena, &seq->items, item);
  return NULL;
}

/* ---- scopes ------------------------------------------------------------------------------ */

static HostEnv *env_new(Host *h, HostEnv *parent) {
  HostEnv *e = arena_alloc(h->arena, sizeof *e);
  e->parent = parent;
  return e;
}

static HostVal **env_slot(HostEnv *e, const char *name) {
  for (int i = e->names.len - 1; i >= 0; i--)
    if (!strcmp(e->names.data[i], name)) return &e->vals.data[i];
  return NULL;
}

static void env_set(Host *h, HostEnv *e, const char *name, HostVal *v) {
  HostVal **slot = env_slot(e, name);
  if (slot) {
    *slot = v;
    return;
  }
  vec_push(h->arena, &e->names, name);
  vec_push(h->arena, &e->vals, v);
}

static HostVal *lookup_builtin(Host *h, const char *name);

static HostVal *lookup(Host *h, HostEnv *env, Node *n) {
  for (HostEnv *e = env; e; e = e->parent) {
    HostVal **slot = env_slot(e, n->name);
    if (slot) return *slot;
  }
  HostVal *v = lookup_builtin(h, n->name);
  return v ? v : host_unknown(h, n->loc, "name '%s' is not defined", n->name);
}

/* ---- operators ------------------------------------------------------------------------------ */

static HostVal *int_result(Host *h, Loc loc, int overflow, int64_t r) {
  return overflow ? host_unknown(h, loc, "integer overflow (the host evaluator's integers have 64 bits)")
                  : host_int(h, r);
}

static HostVal *checked(Host *h, Loc loc, const int64_t *r) { return int_result(h, loc, !r, r ? *r : 0); }

static HostVal *int_pow(Host *h, Loc loc, int64_t base, int64_t exp) {
  int64_t r = 1;
  for (int64_t i = 0; i < exp; i++)
    if (__builtin_mul_overflow(r, base, &r)) return int_result(h, loc, 1, 0);
  return host_int(h, r);
}

static HostVal *int_binary(Host *h, Loc loc, TokenKind op, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (op) {
  case TK_PLUS: return checked(h, loc, __builtin_add_overflow(x, y, &r) ? NULL : &r);
  case TK_MINUS: return checked(h, loc, __builtin_sub_overflow(x, y, &r) ? NULL : &r);
  case TK_STAR: return checked(h, loc, __builtin_mul_overflow(x, y, &r) ? NULL : &r);
  case TK_SLASH: return y ? host_float(h, (double)x / (double)y) : host_unknown(h, loc, "division by zero");
  case TK_FLOORDIV:
  case TK_PERCENT:
    if (!y) return host_unknown(h, loc, "division by zero");
    if (x == INT64_MIN && y == -1) return op == TK_PERCENT ? host_int(h, 0) : int_result(h, loc, 1, 0);
    r = x / y - ((x % y != 0) && ((x < 0) != (y < 0)));
    return host_int(h, op == TK_FLOORDIV ? r : x - r * y);
  case TK_POW: return y >= 0 && (y < 64 || x == 0 || x == 1 || x == -1) ? int_pow(h, loc, x, y > 64 ? 64 + (y & 1) : y)
                      : y < 0 ? host_float(h, pow((double)x, (double)y)) : int_result(h, loc, 1, 0);
  case TK_AMP: return host_int(h, x & y);
  case TK_PIPE: return host_int(h, x | y);
  case TK_CARET: return host_int(h, x ^ y);
  case TK_SHL: return y >= 0 && y < 63 && (x << y) >> y == x ? host_int(h, x << y) : int_result(h, loc, 1, 0);
  case TK_SHR: return y >= 0 ? host_int(h, x >> (y > 63 ? 63 : y)) : host_unknown(h, loc, "negative shift count");
  default: return NULL;
  }
}

static HostVal *float_binary(Host *h, Loc loc, TokenKind op, double x, double y) {
  if (y == 0 && (op == TK_SLASH || op == TK_FLOORDIV || op == TK_PERCENT)) return host_unknown(h, loc, "division by zero");
  double r;
  switch (op) {
  case TK_PLUS: r = x + y; break;
  case TK_MINUS: r = x - y; break;
  case TK_STAR: r = x * y; break;
  case TK_SLASH: r = x / y; break;
  case TK_FLOORDIV: r = floor(x / y); break;
  case TK_PERCENT: r = x - y * floor(x / y); break; /* the divisor's sign, as Python's */
  case TK_POW: r = pow(x, y); break;
  default: return NULL;
  }
  return host_float(h, r);
}

/* seq * n and n * seq: lists, tuples and strings repeated. */
static HostVal *repeat(Host *h, Loc loc, const HostVal *seq, int64_t times) {
  int64_t len = seq->kind == H_STR ? (int64_t)seq->slen : seq->items.len, count = times > 0 ? times : 0;
  if (len && count > HOST_MAX_ITEMS / len) return too_many(h, loc, (long long)(len * (count < HOST_MAX_ITEMS ? count : HOST_MAX_ITEMS)));
  HostVal *r = host_value(h, seq->kind);
  if (seq->kind == H_STR) {
    Buf b;
    buf_init(&b, h->arena);
    for (int64_t i = 0; i < count; i++) buf_putn(&b, seq->s, seq->slen);
    r->s = buf_cstr(&b);
    r->slen = b.len;
    return r;
  }
  for (int64_t i = 0; i < count; i++)
    for (int j = 0; j < seq->items.len; j++) vec_push(h->arena, &r->items, seq->items.data[j]);
  return r;
}

static HostVal *concat(Host *h, Loc loc, const HostVal *x, const HostVal *y) {
  HostVal *r = host_value(h, x->kind);
  if (x->kind == H_STR) {
    if (x->slen + y->slen > HOST_MAX_ITEMS) return too_many(h, loc, (long long)(x->slen + y->slen));
    Buf b;
    buf_init(&b, h->arena);
    buf_putn(&b, x->s, x->slen);
    buf_putn(&b, y->s, y->slen);
    r->s = buf_cstr(&b);
    r->slen = b.len;
    return r;
  }
  if (x->items.len + y->items.len > HOST_MAX_ITEMS) return too_many(h, loc, (long long)x->items.len + y->items.len);
  for (int i = 0; i < x->items.len; i++) vec_push(h->arena, &r->items, x->items.data[i]);
  for (int i = 0; i < y->items.len; i++) vec_push(h->arena, &r->items, y->items.data[i]);
  return r;
}

/* An argument known only to be a multiple of d: `x % m` is 0 where m divides d. */
static HostVal *multiple_binary(Host *h, Loc loc, TokenKind op, const HostVal *x, const HostVal *y) {
  if (x->kind == H_MULTIPLE && op == TK_PERCENT && is_int(y) && y->i && x->i % y->i == 0) return host_int(h, 0);
  const HostVal *m = x->kind == H_MULTIPLE ? x : y;
  return host_unknown(h, m->loc.src ? m->loc : loc, "%s", m->s);
}

static HostVal *binary(Host *h, Loc loc, TokenKind op, HostVal *x, HostVal *y) {
  if (x->kind == H_UNKNOWN) return x;
  if (y->kind == H_UNKNOWN) return y;
  if (x->kind == H_MULTIPLE || y->kind == H_MULTIPLE) return multiple_binary(h, loc, op, x, y);
  HostVal *r = NULL;
  if (is_int(x) && is_int(y)) r = int_binary(h, loc, op, x->i, y->i);
  else if (is_number(x) && is_number(y)) r = float_binary(h, loc, op, as_float(x), as_float(y));
  else if (op == TK_PLUS && x->kind == y->kind && (x->kind == H_STR || is_seq(x))) r = concat(h, loc, x, y);
  else if (op == TK_STAR && (x->kind == H_STR || is_seq(x)) && is_int(y)) r = repeat(h, loc, x, y->i);
  else if (op == TK_STAR && (y->kind == H_STR || is_seq(y)) && is_int(x)) r = repeat(h, loc, y, x->i);
  else if (op == TK_PIPE && x->kind == H_DICT && y->kind == H_DICT) {
    r = host_value(h, H_DICT);
    for (int s = 0; s < 2; s++)
      for (int i = 0; i < (s ? y : x)->keys.len; i++) host_dict_set(h, r, (s ? y : x)->keys.data[i], (s ? y : x)->items.data[i]);
  }
  return r ? r : host_unknown(h, loc, "unsupported operand types for '%s': %s and %s", token_kind_name(op),
                               host_type_name(x), host_type_name(y));
}

/* -1, 0, 1 for x <, ==, > y; 2 when they do not order. */
static int order(const HostVal *x, const HostVal *y) {
  if (is_number(x) && is_number(y)) {
    if (is_int(x) && is_int(y)) return (x->i > y->i) - (x->i < y->i);
    double a = as_float(x), b = as_float(y);
    return a < b ? -1 : a > b ? 1 : a == b ? 0 : 2;
  }
  if (x->kind == H_STR && y->kind == H_STR) {
    int c = memcmp(x->s, y->s, x->slen < y->slen ? x->slen : y->slen);
    if (c) return c < 0 ? -1 : 1;
    return (x->slen > y->slen) - (x->slen < y->slen);
  }
  if (is_seq(x) && x->kind == y->kind) {
    for (int i = 0; i < x->items.len && i < y->items.len; i++) {
      int c = order(x->items.data[i], y->items.data[i]);
      if (c) return c;
    }
    return (x->items.len > y->items.len) - (x->items.len < y->items.len);
  }
  return 2;
}

static int find_in(const HostVal *s, const HostVal *part) {
  for (size_t i = 0; i + part->slen <= s->slen; i++)
    if (!memcmp(s->s + i, part->s, part->slen)) return 1;
  return 0;
}

static HostVal *contains(Host *h, Loc loc, HostVal *item, HostVal *in) {
  if (in->kind == H_STR && item->kind == H_STR)
    return host_bool(h, find_in(in, item));
  if (is_seq(in)) {
    for (int i = 0; i < in->items.len; i++)
      if (equal(item, in->items.data[i])) return host_bool(h, 1);
    return host_bool(h, 0);
  }
  if (in->kind == H_DICT) return host_bool(h, dict_find(in, item) >= 0);
  return host_unknown(h, loc, "'in' needs a list, tuple, dict or string, not %s", host_type_name(in));
}

static HostVal *compare(Host *h, Node *n, HostVal *x, HostVal *y) {
  if (x->kind == H_UNKNOWN) return x;
  if (y->kind == H_UNKNOWN) return y;
  if (x->kind == H_MULTIPLE || y->kind == H_MULTIPLE) return multiple_binary(h, n->loc, n->op, x, y);
  HostVal *r;
  switch (n->op) {
  case TK_EQ: r = host_bool(h, equal(x, y)); break;
  case TK_NE: r = host_bool(h, !equal(x, y)); break;
  case TK_KW_IS: r = host_bool(h, x == y || (x->kind == y->kind && (x->kind == H_NONE || x->kind == H_BOOL) && equal(x, y))); break;
  case TK_KW_IN: r = contains(h, n->loc, x, y); break;
  default: {
    int c = order(x, y);
    if (c == 2) return host_unknown(h, n->loc, "'%s' does not order %s and %s", token_kind_name(n->op), host_type_name(x),
                                    host_type_name(y));
    r = host_bool(h, n->op == TK_LT ? c < 0 : n->op == TK_LE ? c <= 0 : n->op == TK_GT ? c > 0 : c >= 0);
  }
  }
  if (n->negated && r->kind == H_BOOL) r = host_bool(h, !r->i);
  return r;
}

static HostVal *unary(Host *h, Node *n, HostVal *x) {
  if (x->kind == H_UNKNOWN) return x;
  if (n->op == TK_KW_NOT) return x->kind == H_MULTIPLE ? multiple_binary(h, n->loc, n->op, x, x) : host_bool(h, !host_truth(x));
  if (n->op == TK_MINUS && is_int(x)) return int_binary(h, n->loc, TK_MINUS, 0, x->i);
  if (n->op == TK_MINUS && x->kind == H_FLOAT) return host_float(h, -x->f);
  if (n->op == TK_PLUS && is_number(x)) return x->kind == H_BOOL ? host_int(h, x->i) : x;
  if (n->op == TK_TILDE && is_int(x)) return host_int(h, ~x->i);
  return host_unknown(h, n->loc, "bad operand for unary '%s': %s", token_kind_name(n->op), host_type_name(x));
}

/* ---- iteration ---------------------------------------------------------------------------- */

/* The elements `for` walks over: a list, a tuple, a dict's keys, a string's characters. */
static HostVal *iterable(Host *h, Loc loc, HostVal *v) {
  if (v->kind == H_UNKNOWN || is_seq(v)) return v;
  HostVal *r = host_value(h, H_TUPLE);
  if (v->kind == H_DICT) r->items = v->keys;
  else if (v->kind == H_STR)
    for (size_t i = 0; i < v->slen; i++) vec_push(h->arena, &r->items, host_strn(h, v->s + i, 1));
  else return host_unknown(h, loc, "%s is not iterable", host_type_name(v));
  return r;
}

/* Binds a for or comprehension target (a name, or a tuple of targets); an UNKNOWN if it cannot. */
static HostVal *bind(Host *h, HostEnv *env, Node *target, HostVal *v) {
  if (v->kind == H_UNKNOWN) return v;
  if (target->kind == ND_NAME) {
    env_set(h, env, target->name, v);
    return NULL;
  }
  if (target->kind == ND_TUPLE || target->kind == ND_LIST) {
    HostVal *seq = iterable(h, target->loc, v);
    if (seq->kind == H_UNKNOWN) return seq;
    if (seq->items.len != target->args.len)
      return host_unknown(h, target->loc, "cannot unpack %d values into %d names", seq->items.len, target->args.len);
    for (int i = 0; i < target->args.len; i++) {
      HostVal *bad = bind(h, env, target->args.data[i], seq->items.data[i]);
      if (bad) return bad;
    }
    return NULL;
  }
  if (target->kind == ND_SUBSCRIPT && target->args.len == 1) {
    HostVal *obj = eval(h, env, target->a), *key = eval(h, env, target->args.data[0]);
    if (obj->kind == H_UNKNOWN) return obj;
    if (key->kind == H_UNKNOWN) return key;
    if (obj->kind == H_DICT) {
      host_dict_set(h, obj, key, v);
      return NULL;
    }
    if (obj->kind == H_LIST && is_int(key)) {
      int64_t i = key->i < 0 ? key->i + obj->items.len : key->i;
      if (i < 0 || i >= obj->items.len) return host_unknown(h, target->loc, "list index out of range");
      obj->items.data[i] = v;
      return NULL;
    }
  }
  return host_unknown(h, target->loc, "cannot assign to this expression in host code");
}

/* A set is a tuple of distinct elements here: what config code asks of one
 * (`in`, `len`, iteration) answers the same, in the order written. */
static HostVal *distinct(Host *h, HostVal *seq) {
  HostVal *set = host_value(h, H_TUPLE);
  for (int i = 0; i < seq->items.len; i++) {
    int seen = 0;
    for (int j = 0; j < set->items.len && !seen; j++) seen = equal(set->items.data[j], seq->items.data[i]);
    if (!seen) vec_push(h->arena, &set->items, seq->items.data[i]);
  }
  return set;
}

/* One clause of a comprehension and the clauses after it. */
static HostVal *comprehend(Host *h, HostEnv *env, Node *n, int clause, HostVal *out) {
  if (clause == n->args.len) {
    HostVal *e = eval(h, env, n->a);
    if (e->kind == H_UNKNOWN) return e;
    if (out->kind == H_DICT) {
      HostVal *v = eval(h, env, n->c);
      if (v->kind == H_UNKNOWN) return v;
      host_dict_set(h, out, e, v);
      return out->items.len > HOST_MAX_ITEMS ? too_many(h, n->loc, out->items.len) : NULL;
    }
    return push_item(h, out, e, n->loc);
  }
  Node *c = n->args.data[clause];
  HostVal *seq = iterable(h, c->b->loc, eval(h, env, c->b));
  if (seq->kind == H_UNKNOWN) return seq;
  for (int i = 0; i < seq->items.len; i++) {
    HostVal *bad = bind(h, env, c->a, seq->items.data[i]);
    int keep = 1;
    for (int j = 0; !bad && keep && j < c->body.len; j++) {
      HostVal *cond = eval(h, env, c->body.data[j]);
      if (cond->kind == H_UNKNOWN || cond->kind == H_MULTIPLE) bad = cond->kind == H_UNKNOWN ? cond : multiple_binary(h, c->loc, TK_KW_IF, cond, cond);
      keep = host_truth(cond);
    }
    if (!bad && keep) bad = comprehend(h, env, n, clause + 1, out);
    if (bad) return bad;
  }
  return NULL;
}

static HostVal *comprehension(Host *h, HostEnv *env, Node *n) {
  HostVal *out = host_value(h, n->c ? H_DICT : H_LIST);
  HostVal *bad = comprehend(h, env_new(h, env), n, 0, out);
  return bad ? bad : n->ival ? distinct(h, out) : out;
}

/* ---- expressions ---------------------------------------------------------------------------- */

static HostVal *attribute(Host *h, Loc loc, HostVal *obj, const char *name);
static HostVal *subscript(Host *h, HostEnv *env, Node *n);

static HostVal *display(Host *h, HostEnv *env, Node *n, HostKind kind) {
  HostVal *v = host_value(h, kind);
  for (int i = 0; i < n->args.len; i++) {
    Node *e = n->args.data[i];
    int star = e->kind == ND_UNARY && (e->op == TK_STAR || e->op == TK_POW);
    HostVal *item = eval(h, env, star ? e->a : e);
    if (item->kind == H_UNKNOWN) return item;
    if (star && kind == H_DICT) { /* {**d, ...} */
      if (item->kind != H_DICT) return host_unknown(h, e->loc, "'**' needs a dict, not %s", host_type_name(item));
      for (int j = 0; j < item->keys.len; j++) host_dict_set(h, v, item->keys.data[j], item->items.data[j]);
    } else if (star) { /* [*xs, *ys] */
      HostVal *seq = iterable(h, e->loc, item);
      if (seq->kind == H_UNKNOWN) return seq;
      for (int j = 0; j < seq->items.len; j++) vec_push(h->arena, &v->items, seq->items.data[j]);
    } else if (kind == H_DICT) {
      HostVal *value = eval(h, env, n->kwargs.data[i]);
      if (value->kind == H_UNKNOWN) return value;
      host_dict_set(h, v, item, value);
    } else {
      vec_push(h->arena, &v->items, item);
    }
  }
  return v;
}

/* Positional (with *seq spread) and keyword (with **dict spread) arguments. */
static HostVal *eval_args(Host *h, HostEnv *env, Node *call, Args *a) {
  for (int i = 0; i < call->args.len; i++) {
    Node *arg = call->args.data[i];
    int star = arg->kind == ND_UNARY && (arg->op == TK_STAR || arg->op == TK_POW);
    HostVal *v = eval(h, env, star ? arg->a : arg);
    if (v->kind == H_UNKNOWN) return v;
    if (!star) {
      vec_push(h->arena, &a->pos, v);
    } else if (arg->op == TK_STAR) {
      HostVal *seq = iterable(h, arg->loc, v);
      if (seq->kind == H_UNKNOWN) return seq;
      for (int j = 0; j < seq->items.len; j++) vec_push(h->arena, &a->pos, seq->items.data[j]);
    } else {
      if (v->kind != H_DICT) return host_unknown(h, arg->loc, "'**' needs a dict, not %s", host_type_name(v));
      for (int j = 0; j < v->keys.len; j++) {
        if (v->keys.data[j]->kind != H_STR) return host_unknown(h, arg->loc, "'**' needs string keys");
        vec_push(h->arena, &a->names, v->keys.data[j]->s);
        vec_push(h->arena, &a->kw, v->items.data[j]);
      }
    }
  }
  for (int i = 0; i < call->kwargs.len; i++) {
    HostVal *v = eval(h, env, call->kwargs.data[i]->a);
    if (v->kind == H_UNKNOWN) return v;
    vec_push(h->arena, &a->names, call->kwargs.data[i]->name);
    vec_push(h->arena, &a->kw, v);
  }
  return NULL;
}

static HostVal *call_value(Host *h, HostVal *fn, Args *a);

static HostVal *eval_call(Host *h, HostEnv *env, Node *n) {
  HostVal *fn = eval(h, env, n->a);
  if (fn->kind == H_UNKNOWN) return fn;
  Args a = {.loc = n->loc};
  HostVal *bad = eval_args(h, env, n, &a);
  return bad ? bad : call_value(h, fn, &a);
}

static HostVal *boolop(Host *h, HostEnv *env, Node *n) {
  HostVal *x = eval(h, env, n->a);
  if (x->kind == H_UNKNOWN) return x;
  if (x->kind == H_MULTIPLE) return multiple_binary(h, n->loc, n->op, x, x);
  int t = host_truth(x);
  if (n->op == TK_KW_AND ? !t : t) return x;
  return eval(h, env, n->b);
}

static HostVal *eval(Host *h, HostEnv *env, Node *n) {
  HostVal *stop = step(h, n);
  if (stop) return stop;
  HostVal *v;
  switch (n->kind) {
  case ND_INT:
    if (n->is_u64)
      return host_unknown(h, n->loc, "integers of 2^63 or more are kernel constexprs only; host code has no such value in tile");
    return host_int(h, n->ival);
  case ND_FLOAT: return host_float(h, n->fval);
  case ND_BOOL: return host_bool(h, (int)n->ival);
  case ND_NONE: return host_value(h, H_NONE);
  case ND_STR: return host_strn(h, n->str, n->str_len);
  case ND_NAME: return lookup(h, env, n);
  case ND_ATTR:
    v = eval(h, env, n->a);
    return v->kind == H_UNKNOWN ? v : attribute(h, n->loc, v, n->name);
  case ND_CALL: return eval_call(h, env, n);
  case ND_SUBSCRIPT: return subscript(h, env, n);
  case ND_TUPLE: return display(h, env, n, H_TUPLE);
  case ND_LIST: return display(h, env, n, H_LIST);
  case ND_DICT: return display(h, env, n, H_DICT);
  case ND_SET:
    v = display(h, env, n, H_TUPLE);
    return v->kind == H_UNKNOWN ? v : distinct(h, v);
  case ND_LISTCOMP: return comprehension(h, env, n);
  case ND_BINOP: {
    HostVal *x = eval(h, env, n->a);
    return x->kind == H_UNKNOWN ? x : binary(h, n->loc, n->op, x, eval(h, env, n->b));
  }
  case ND_UNARY: return unary(h, n, eval(h, env, n->a));
  case ND_COMPARE: {
    HostVal *x = eval(h, env, n->a);
    return x->kind == H_UNKNOWN ? x : compare(h, n, x, eval(h, env, n->b));
  }
  case ND_BOOLOP: return boolop(h, env, n);
  case ND_IFEXP:
    v = eval(h, env, n->a);
    if (v->kind == H_UNKNOWN) return v;
    if (v->kind == H_MULTIPLE) return multiple_binary(h, n->loc, TK_KW_IF, v, v);
    return eval(h, env, host_truth(v) ? n->b : n->c);
  case ND_ASSIGN: /* NAME := value */
    v = eval(h, env, n->b);
    env_set(h, env, n->args.data[0]->name, v);
    return v;
  case ND_LAMBDA:
    v = host_value(h, H_FUNC);
    v->node = n;
    v->env = env;
    return v;
  default: return host_unknown(h, n->loc, "this %s cannot be evaluated in host code", node_kind_name(n->kind));
  }
}

/* ---- subscripts and attributes ----------------------------------------------------------------- */

static int64_t clamp_index(int64_t i, int64_t len) {
  if (i < 0) i += len;
  return i < 0 ? 0 : i > len ? len : i;
}

static HostVal *slice(Host *h, HostEnv *env, Node *s, HostVal *seq) {
  int64_t bound[3] = {0, seq->kind == H_STR ? (int64_t)seq->slen : seq->items.len, 1};
  Node *parts[3] = {s->a, s->b, s->c};
  for (int i = 0; i < 3; i++) {
    if (!parts[i]) continue;
    HostVal *v = eval(h, env, parts[i]);
    if (v->kind == H_UNKNOWN) return v;
    if (!is_int(v)) return host_unknown(h, parts[i]->loc, "slice indices must be integers");
    bound[i] = v->i;
  }
  if (bound[2] != 1) return host_unknown(h, s->loc, "slices with a step are not evaluated in host code");
  int64_t len = seq->kind == H_STR ? (int64_t)seq->slen : seq->items.len;
  int64_t lo = parts[0] ? clamp_index(bound[0], len) : 0, hi = parts[1] ? clamp_index(bound[1], len) : len;
  if (seq->kind == H_STR) return host_strn(h, seq->s + lo, hi > lo ? (size_t)(hi - lo) : 0);
  HostVal *r = host_value(h, seq->kind);
  for (int64_t i = lo; i < hi; i++) vec_push(h->arena, &r->items, seq->items.data[i]);
  return r;
}

static HostVal *subscript(Host *h, HostEnv *env, Node *n) {
  HostVal *obj = eval(h, env, n->a);
  if (obj->kind == H_UNKNOWN) return obj;
  if (n->args.len != 1) return host_unknown(h, n->loc, "only one index is evaluated in host code");
  Node *ix = n->args.data[0];
  if (ix->kind == ND_SLICE && (is_seq(obj) || obj->kind == H_STR)) return slice(h, env, ix, obj);
  HostVal *key = eval(h, env, ix);
  if (key->kind == H_UNKNOWN) return key;
  if (obj->kind == H_DICT) {
    int i = dict_find(obj, key);
    return i >= 0 ? obj->items.data[i] : host_unknown(h, n->loc, "key %s is not in the dict", host_repr(h->arena, key));
  }
  if ((is_seq(obj) || obj->kind == H_STR) && is_int(key)) {
    int64_t len = obj->kind == H_STR ? (int64_t)obj->slen : obj->items.len, i = key->i < 0 ? key->i + len : key->i;
    if (i < 0 || i >= len) return host_unknown(h, n->loc, "index %lld is out of range (length %lld)", (long long)key->i, (long long)len);
    return obj->kind == H_STR ? host_strn(h, obj->s + i, 1) : obj->items.data[i];
  }
  return host_unknown(h, n->loc, "%s cannot be indexed by %s", host_type_name(obj), host_type_name(key));
}

/* ---- builtins ---------------------------------------------------------------------------------- */

static HostVal *arity(Host *h, Args *a, int lo, int hi, const char *name) {
  if (a->pos.len >= lo && a->pos.len <= hi) return NULL;
  return host_unknown(h, a->loc, "%s() takes %d to %d arguments, not %d", name, lo, hi, a->pos.len);
}

static HostVal *kwarg(Args *a, const char *name) {
  for (int i = 0; i < a->names.len; i++)
    if (!strcmp(a->names.data[i], name)) return a->kw.data[i];
  return NULL;
}

static HostVal *arg_seq(Host *h, Args *a, int i) { return iterable(h, a->loc, a->pos.data[i]); }

static HostVal *b_range(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 3, "range");
  if (bad) return bad;
  int64_t b[3] = {0, 0, 1};
  for (int i = 0; i < a->pos.len; i++) {
    if (!is_int(a->pos.data[i])) return host_unknown(h, a->loc, "range() needs integers, not %s", host_type_name(a->pos.data[i]));
    b[a->pos.len == 1 ? 1 : i] = a->pos.data[i]->i;
  }
  if (!b[2]) return host_unknown(h, a->loc, "range() step must not be zero");
  HostVal *r = host_value(h, H_TUPLE);
  for (int64_t i = b[0]; b[2] > 0 ? i < b[1] : i > b[1]; i += b[2]) {
    if ((bad = push_item(h, r, host_int(h, i), a->loc))) return bad;
    if (__builtin_add_overflow(i, b[2], &(int64_t){0})) break;
  }
  return r;
}

static HostVal *b_len(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 1, "len"), *v = bad ? NULL : a->pos.data[0];
  if (bad) return bad;
  if (v->kind == H_STR) return host_int(h, (int64_t)v->slen);
  if (is_seq(v) || v->kind == H_DICT) return host_int(h, v->items.len);
  return host_unknown(h, a->loc, "len() of %s", host_type_name(v));
}

/* min and max: of the arguments, or of one iterable; key= applied to each. */
static HostVal *extreme(Host *h, Args *a, int want) {
  HostVal *items = a->pos.len == 1 ? arg_seq(h, a, 0) : NULL;
  if (items && items->kind == H_UNKNOWN) return items;
  HostVec *v = items ? &items->items : &a->pos;
  if (!v->len) return host_unknown(h, a->loc, "%s() of an empty sequence", want < 0 ? "min" : "max");
  HostVal *key = kwarg(a, "key"), *best = NULL, *best_key = NULL;
  for (int i = 0; i < v->len; i++) {
    HostVal *k = v->data[i];
    if (key) {
      Args ka = {.loc = a->loc};
      vec_push(h->arena, &ka.pos, k);
      if ((k = call_value(h, key, &ka))->kind == H_UNKNOWN) return k;
    }
    int c = best ? order(k, best_key) : want;
    if (c == 2) return host_unknown(h, a->loc, "%s() cannot order %s and %s", want < 0 ? "min" : "max", host_type_name(k), host_type_name(best_key));
    if (c == want) best = v->data[i], best_key = k;
  }
  return best;
}

static HostVal *b_min(Host *h, Args *a) { return extreme(h, a, -1); }
static HostVal *b_max(Host *h, Args *a) { return extreme(h, a, 1); }

static HostVal *call1(Host *h, HostVal *fn, HostVal *x, Loc loc) {
  Args a = {.loc = loc};
  vec_push(h->arena, &a.pos, x);
  return call_value(h, fn, &a);
}

static HostVal *b_filter(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 2, 2, "filter"), *seq = bad ? NULL : arg_seq(h, a, 1);
  if (bad || seq->kind == H_UNKNOWN) return bad ? bad : seq;
  HostVal *r = host_value(h, H_LIST);
  for (int i = 0; i < seq->items.len; i++) {
    HostVal *x = seq->items.data[i];
    HostVal *keep = a->pos.data[0]->kind == H_NONE ? x : call1(h, a->pos.data[0], x, a->loc);
    if (keep->kind == H_UNKNOWN) return keep;
    if (host_truth(keep)) vec_push(h->arena, &r->items, x);
  }
  return r;
}

static HostVal *b_map(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 2, 2, "map"), *seq = bad ? NULL : arg_seq(h, a, 1);
  if (bad || seq->kind == H_UNKNOWN) return bad ? bad : seq;
  HostVal *r = host_value(h, H_LIST);
  for (int i = 0; i < seq->items.len; i++) {
    HostVal *y = call1(h, a->pos.data[0], seq->items.data[i], a->loc);
    if (y->kind == H_UNKNOWN) return y;
    vec_push(h->arena, &r->items, y);
  }
  return r;
}

static HostVal *b_zip(Host *h, Args *a) {
  HostVal *r = host_value(h, H_LIST);
  int n = a->pos.len ? HOST_MAX_ITEMS : 0;
  for (int i = 0; i < a->pos.len; i++) {
    HostVal *s = arg_seq(h, a, i);
    if (s->kind == H_UNKNOWN) return s;
    a->pos.data[i] = s;
    if (s->items.len < n) n = s->items.len;
  }
  for (int j = 0; j < n; j++) {
    HostVal *t = host_value(h, H_TUPLE);
    for (int i = 0; i < a->pos.len; i++) vec_push(h->arena, &t->items, a->pos.data[i]->items.data[j]);
    vec_push(h->arena, &r->items, t);
  }
  return r;
}

static HostVal *b_enumerate(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 2, "enumerate"), *s = bad ? NULL : arg_seq(h, a, 0);
  if (bad || s->kind == H_UNKNOWN) return bad ? bad : s;
  int64_t start = a->pos.len > 1 && is_int(a->pos.data[1]) ? a->pos.data[1]->i : 0;
  HostVal *r = host_value(h, H_LIST);
  for (int i = 0; i < s->items.len; i++) {
    HostVal *t = host_value(h, H_TUPLE);
    vec_push(h->arena, &t->items, host_int(h, start + i));
    vec_push(h->arena, &t->items, s->items.data[i]);
    vec_push(h->arena, &r->items, t);
  }
  return r;
}

static HostVal *b_sum(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 2, "sum"), *s = bad ? NULL : arg_seq(h, a, 0);
  if (bad || s->kind == H_UNKNOWN) return bad ? bad : s;
  HostVal *total = a->pos.len > 1 ? a->pos.data[1] : host_int(h, 0);
  for (int i = 0; i < s->items.len && total->kind != H_UNKNOWN; i++) total = binary(h, a->loc, TK_PLUS, total, s->items.data[i]);
  return total;
}

static HostVal *any_all(Host *h, Args *a, int want) {
  HostVal *bad = arity(h, a, 1, 1, want ? "all" : "any"), *s = bad ? NULL : arg_seq(h, a, 0);
  if (bad || s->kind == H_UNKNOWN) return bad ? bad : s;
  for (int i = 0; i < s->items.len; i++)
    if (host_truth(s->items.data[i]) != want) return host_bool(h, !want);
  return host_bool(h, want);
}

static HostVal *b_any(Host *h, Args *a) { return any_all(h, a, 0); }
static HostVal *b_all(Host *h, Args *a) { return any_all(h, a, 1); }

static HostVal *b_abs(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 1, "abs"), *x = bad ? NULL : a->pos.data[0];
  if (bad) return bad;
  if (is_int(x)) return x->i < 0 ? int_binary(h, a->loc, TK_MINUS, 0, x->i) : host_int(h, x->i);
  if (x->kind == H_FLOAT) return host_float(h, fabs(x->f));
  return host_unknown(h, a->loc, "abs() of %s", host_type_name(x));
}

static HostVal *b_sorted(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 1, "sorted"), *s = bad ? NULL : arg_seq(h, a, 0);
  if (bad || s->kind == H_UNKNOWN) return bad ? bad : s;
  HostVal *r = host_value(h, H_LIST), *rev = kwarg(a, "reverse");
  for (int i = 0; i < s->items.len; i++) { /* insertion sort: stable, as Python's */
    HostVal *x = s->items.data[i];
    vec_push(h->arena, &r->items, x);
    int j = r->items.len - 1;
    for (; j > 0; j--) {
      int c = order(r->items.data[j - 1], x);
      if (c == 2) return host_unknown(h, a->loc, "sorted() cannot order %s", host_type_name(x));
      if (rev && host_truth(rev) ? c >= 0 : c <= 0) break;
      r->items.data[j] = r->items.data[j - 1];
    }
    r->items.data[j] = x;
    if ((bad = step(h, &(Node){.loc = a->loc}))) return bad;
  }
  return r;
}

static HostVal *b_reversed(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 1, "reversed"), *s = bad ? NULL : arg_seq(h, a, 0);
  if (bad || s->kind == H_UNKNOWN) return bad ? bad : s;
  HostVal *r = host_value(h, H_LIST);
  for (int i = s->items.len - 1; i >= 0; i--) vec_push(h->arena, &r->items, s->items.data[i]);
  return r;
}

static HostVal *b_print(Host *h, Args *a) { return (void)a, host_value(h, H_NONE); } /* no I/O: hermetic */

static int is_instance(const HostVal *x, const HostVal *t) {
  if (t->kind == H_TUPLE) {
    for (int i = 0; i < t->items.len; i++)
      if (is_instance(x, t->items.data[i])) return 1;
    return 0;
  }
  if (t->kind != H_TYPE) return 0;
  return !strcmp(t->s, host_type_name(x)) || (!strcmp(t->s, "int") && x->kind == H_BOOL);
}

static HostVal *b_isinstance(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 2, 2, "isinstance");
  return bad ? bad : host_bool(h, is_instance(a->pos.data[0], a->pos.data[1]));
}

/* int(x), float(x), str(x), bool(x), list(it), tuple(it), dict(d or **kw). */
static HostVal *convert(Host *h, const char *type, Args *a) {
  HostVal *x = a->pos.len ? a->pos.data[0] : NULL;
  if (!strcmp(type, "dict")) {
    HostVal *d = host_value(h, H_DICT);
    for (int i = 0; x && x->kind == H_DICT && i < x->keys.len; i++) host_dict_set(h, d, x->keys.data[i], x->items.data[i]);
    for (int i = 0; i < a->names.len; i++) host_dict_set(h, d, host_str(h, a->names.data[i]), a->kw.data[i]);
    return d;
  }
  if (!x) return !strcmp(type, "list") ? host_value(h, H_LIST) : !strcmp(type, "tuple") ? host_value(h, H_TUPLE)
                 : !strcmp(type, "str") ? host_str(h, "") : !strcmp(type, "float") ? host_float(h, 0) : !strcmp(type, "bool") ? host_bool(h, 0) : host_int(h, 0);
  if (!strcmp(type, "list") || !strcmp(type, "tuple")) {
    HostVal *s = iterable(h, a->loc, x), *r = host_value(h, type[0] == 'l' ? H_LIST : H_TUPLE);
    if (s->kind == H_UNKNOWN) return s;
    for (int i = 0; i < s->items.len; i++) vec_push(h->arena, &r->items, s->items.data[i]);
    return r;
  }
  if (!strcmp(type, "bool")) return host_bool(h, host_truth(x));
  if (!strcmp(type, "str")) return x->kind == H_STR ? x : host_str(h, host_repr(h->arena, x));
  if (!strcmp(type, "float") && is_number(x)) return host_float(h, as_float(x));
  if (!strcmp(type, "int") && is_int(x)) return host_int(h, x->i);
  if (!strcmp(type, "int") && x->kind == H_FLOAT && fabs(x->f) < 9.2e18) return host_int(h, (int64_t)x->f);
  return host_unknown(h, a->loc, "%s() of %s is not evaluated in host code", type, host_type_name(x));
}

/* ---- triton and the target ------------------------------------------------------------------- */

static HostVal *b_config(Host *h, Args *a) {
  HostVal *c = host_value(h, H_CONFIG), *kwargs = a->pos.len ? a->pos.data[0] : kwarg(a, "kwargs");
  HostVal *options = host_value(h, H_DICT);
  if (!kwargs || kwargs->kind != H_DICT)
    return host_unknown(h, a->loc, "triton.Config's first argument must be a dict of meta-parameters");
  const char *const order_of[] = {"num_warps", "num_stages", "num_ctas", "maxnreg"}; /* Triton's Config(...) order */
  for (int i = 0; i < 4 && i + 1 < a->pos.len; i++) host_dict_set(h, options, host_str(h, order_of[i]), a->pos.data[i + 1]);
  for (int i = 0; i < a->names.len; i++)
    if (strcmp(a->names.data[i], "kwargs")) host_dict_set(h, options, host_str(h, a->names.data[i]), a->kw.data[i]);
  vec_push(h->arena, &c->items, kwargs);
  vec_push(h->arena, &c->items, options);
  c->loc = a->loc; /* where a bad option is reported */
  return c;
}

static HostVal *int_args(Host *h, Args *a, int n, const char *name) {
  HostVal *bad = arity(h, a, n, n, name);
  for (int i = 0; !bad && i < n; i++)
    if (!is_int(a->pos.data[i])) bad = host_unknown(h, a->loc, "%s() needs integers, not %s", name, host_type_name(a->pos.data[i]));
  return bad;
}

static HostVal *b_cdiv(Host *h, Args *a) {
  HostVal *bad = int_args(h, a, 2, "cdiv");
  if (bad) return bad;
  int64_t x = a->pos.data[0]->i, y = a->pos.data[1]->i, r;
  if (!y) return host_unknown(h, a->loc, "division by zero");
  if (__builtin_add_overflow(x, y - (y > 0 ? 1 : -1), &r)) return int_result(h, a->loc, 1, 0);
  return int_binary(h, a->loc, TK_FLOORDIV, r, y);
}

static HostVal *b_next_power_of_2(Host *h, Args *a) {
  HostVal *bad = int_args(h, a, 1, "next_power_of_2");
  if (bad) return bad;
  int64_t n = a->pos.data[0]->i, p = 1;
  while (p < n && p < ((int64_t)1 << 62)) p <<= 1;
  return p < n ? int_result(h, a->loc, 1, 0) : host_int(h, p);
}

static HostVal *b_identity(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 1, "constexpr");
  return bad ? bad : a->pos.data[0];
}

/* The --arch target's row of src/support/arch.def (sm_90 when none is given). */
static const Arch *target_arch(const Host *h) {
  const Arch *arch = arch_find(h->target.arch ? h->target.arch : "sm_90");
  return arch ? arch : arch_find("sm_90");
}

static int target_cc(const Host *h) { return target_arch(h)->cc; }

/* SMs of the arch's reference GPU, unless given. */
static int target_sms(const Host *h) { return h->target.num_sms > 0 ? h->target.num_sms : target_arch(h)->sms; }

static int target_shared(const Host *h) { return (int)arch_smem_per_program(target_arch(h)); }

static void record_set(Host *h, HostVal *r, const char *key, HostVal *v) { host_dict_set(h, r, host_str(h, key), v); }

static HostVal *b_current_target(Host *h, Args *a) {
  HostVal *r = host_value(h, H_RECORD);
  (void)a;
  record_set(h, r, "backend", host_str(h, "cuda"));
  record_set(h, r, "arch", host_int(h, target_cc(h)));
  record_set(h, r, "warp_size", host_int(h, 32));
  return r;
}

static HostVal *b_capability(Host *h, Args *a) {
  HostVal *r = host_value(h, H_TUPLE);
  (void)a;
  vec_push(h->arena, &r->items, host_int(h, target_cc(h) / 10));
  vec_push(h->arena, &r->items, host_int(h, target_cc(h) % 10));
  return r;
}

static HostVal *b_torch_properties(Host *h, Args *a) {
  HostVal *r = host_value(h, H_RECORD);
  (void)a;
  record_set(h, r, "multi_processor_count", host_int(h, target_sms(h)));
  record_set(h, r, "major", host_int(h, target_cc(h) / 10));
  record_set(h, r, "minor", host_int(h, target_cc(h) % 10));
  record_set(h, r, "warp_size", host_int(h, 32));
  return r;
}

static HostVal *b_driver_properties(Host *h, Args *a) {
  HostVal *r = host_value(h, H_DICT);
  (void)a;
  record_set(h, r, "multiprocessor_count", host_int(h, target_sms(h)));
  record_set(h, r, "max_shared_mem", host_int(h, target_shared(h)));
  record_set(h, r, "max_num_regs", host_int(h, 65536));
  record_set(h, r, "warpSize", host_int(h, 32));
  return r;
}

static HostVal *b_zero(Host *h, Args *a) { return (void)a, host_int(h, 0); }
static HostVal *b_true(Host *h, Args *a) { return (void)a, host_bool(h, 1); }

/* ---- torch.finfo, torch.iinfo: the limits of torch's standard dtypes ------------------------------ */

/* A torch dtype's format: integers by width and sign, IEEE-style floats by exponent and mantissa
 * widths (their limits follow from these).  torch's aliases (torch.float, torch.half) included. */
typedef struct TorchFormat {
  const char *name;   /* torch.NAME */
  int is_float;
  int bits;           /* all of it */
  int exponent;       /* floats: exponent bits; integers: 1 if signed */
  int mantissa;       /* floats: stored mantissa bits */
  double largest;     /* floats: the largest finite value where it is not IEEE's (e4m3fn has no infinity) */
} TorchFormat;

static const TorchFormat torch_formats[] = {
    {"float16", 1, 16, 5, 10, 0}, {"half", 1, 16, 5, 10, 0}, {"bfloat16", 1, 16, 8, 7, 0}, {"float32", 1, 32, 8, 23, 0},
    {"float", 1, 32, 8, 23, 0}, {"float64", 1, 64, 11, 52, 0}, {"double", 1, 64, 11, 52, 0}, {"int8", 0, 8, 1, 0, 0},
    {"int16", 0, 16, 1, 0, 0}, {"short", 0, 16, 1, 0, 0}, {"int32", 0, 32, 1, 0, 0}, {"int", 0, 32, 1, 0, 0},
    {"int64", 0, 64, 1, 0, 0}, {"long", 0, 64, 1, 0, 0}, {"uint8", 0, 8, 0, 0, 0}, {"uint16", 0, 16, 0, 0, 0},
    {"uint32", 0, 32, 0, 0, 0}, {"float8_e5m2", 1, 8, 5, 2, 0}, {"float8_e4m3fn", 1, 8, 4, 3, 448},
};

/* The format of a torch.NAME argument, or NULL after making *bad the reason there is none. */
static const TorchFormat *torch_format(Host *h, Args *a, const char *fn, int is_float, HostVal **bad) {
  *bad = arity(h, a, 1, 1, fn);
  if (*bad) return NULL;
  const HostVal *d = a->pos.data[0];
  if (d->kind == H_MODULE && !strncmp(d->s, "torch.", 6))
    for (size_t i = 0; i < sizeof torch_formats / sizeof *torch_formats; i++)
      if (!strcmp(d->s + 6, torch_formats[i].name) && torch_formats[i].is_float == is_float) return &torch_formats[i];
  *bad = host_unknown(h, a->loc, "%s(%s) is not known to tile (it knows torch's standard %s dtypes)", fn,
                      host_repr(h->arena, d), is_float ? "float" : "integer");
  return NULL;
}

static HostVal *b_finfo(Host *h, Args *a) {
  HostVal *bad, *r = host_value(h, H_RECORD);
  const TorchFormat *f = torch_format(h, a, "torch.finfo", 1, &bad);
  if (!f) return bad;
  int max_exp = (1 << (f->exponent - 1)) - 1;
  double largest = f->largest ? f->largest : (2 - ldexp(1, -f->mantissa)) * ldexp(1, max_exp);
  double tiny = ldexp(1, 1 - max_exp);
  record_set(h, r, "bits", host_int(h, f->bits));
  record_set(h, r, "max", host_float(h, largest));
  record_set(h, r, "min", host_float(h, -largest));
  record_set(h, r, "eps", host_float(h, ldexp(1, -f->mantissa)));
  record_set(h, r, "tiny", host_float(h, tiny));
  record_set(h, r, "smallest_normal", host_float(h, tiny));
  record_set(h, r, "resolution", host_float(h, pow(10, -floor(f->mantissa * log10(2)))));
  return r;
}

static HostVal *b_iinfo(Host *h, Args *a) {
  HostVal *bad, *r = host_value(h, H_RECORD);
  const TorchFormat *f = torch_format(h, a, "torch.iinfo", 0, &bad);
  if (!f) return bad;
  int64_t max = f->exponent ? (int64_t)(UINT64_MAX >> (65 - f->bits)) : (int64_t)(UINT64_MAX >> (64 - f->bits));
  record_set(h, r, "bits", host_int(h, f->bits));
  record_set(h, r, "max", host_int(h, max));
  record_set(h, r, "min", host_int(h, f->exponent ? -max - 1 : 0));
  return r;
}

/* ---- methods ------------------------------------------------------------------------------------ */

static HostVal *m_append(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 1, "append");
  return bad ? bad : (bad = push_item(h, a->self, a->pos.data[0], a->loc)) ? bad : host_value(h, H_NONE);
}

static HostVal *m_extend(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 1, "extend"), *s = bad ? NULL : arg_seq(h, a, 0);
  if (bad || s->kind == H_UNKNOWN) return bad ? bad : s;
  for (int i = 0; i < s->items.len; i++)
    if ((bad = push_item(h, a->self, s->items.data[i], a->loc))) return bad;
  return host_value(h, H_NONE);
}

static HostVal *m_get(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 2, "get");
  if (bad) return bad;
  int i = dict_find(a->self, a->pos.data[0]);
  return i >= 0 ? a->self->items.data[i] : a->pos.len > 1 ? a->pos.data[1] : host_value(h, H_NONE);
}

/* d.keys(), d.values(), d.items(): lists (views are not needed by configs). */
static HostVal *dict_view(Host *h, Args *a, int which) {
  HostVal *r = host_value(h, H_LIST);
  for (int i = 0; i < a->self->keys.len; i++) {
    HostVal *x = which == 0 ? a->self->keys.data[i] : a->self->items.data[i];
    if (which == 2) {
      x = host_value(h, H_TUPLE);
      vec_push(h->arena, &x->items, a->self->keys.data[i]);
      vec_push(h->arena, &x->items, a->self->items.data[i]);
    }
    vec_push(h->arena, &r->items, x);
  }
  return r;
}

static HostVal *m_keys(Host *h, Args *a) { return dict_view(h, a, 0); }
static HostVal *m_values(Host *h, Args *a) { return dict_view(h, a, 1); }
static HostVal *m_items(Host *h, Args *a) { return dict_view(h, a, 2); }

static HostVal *m_update(Host *h, Args *a) {
  HostVal *d = a->pos.len ? a->pos.data[0] : NULL;
  for (int i = 0; d && d->kind == H_DICT && i < d->keys.len; i++) host_dict_set(h, a->self, d->keys.data[i], d->items.data[i]);
  for (int i = 0; i < a->names.len; i++) host_dict_set(h, a->self, host_str(h, a->names.data[i]), a->kw.data[i]);
  return host_value(h, H_NONE);
}

static HostVal *m_copy(Host *h, Args *a) {
  HostVal *r = host_value(h, a->self->kind);
  r->keys = a->self->keys, r->items = a->self->items;
  r->keys.cap = r->items.cap = r->items.len; /* a push reallocates: the copy is its own */
  return r;
}

static HostVal *affix(Host *h, Args *a, int end) {
  HostVal *bad = arity(h, a, 1, 1, end ? "endswith" : "startswith"), *x = bad ? NULL : a->pos.data[0];
  if (bad) return bad;
  if (x->kind != H_STR) return host_unknown(h, a->loc, "startswith/endswith need a string");
  const HostVal *s = a->self;
  return host_bool(h, x->slen <= s->slen && !memcmp(s->s + (end ? s->slen - x->slen : 0), x->s, x->slen));
}

static HostVal *m_startswith(Host *h, Args *a) { return affix(h, a, 0); }
static HostVal *m_endswith(Host *h, Args *a) { return affix(h, a, 1); }

static HostVal *m_join(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 1, 1, "join"), *s = bad ? NULL : arg_seq(h, a, 0);
  if (bad || s->kind == H_UNKNOWN) return bad ? bad : s;
  HostVal *r = host_str(h, "");
  for (int i = 0; i < s->items.len && r->kind == H_STR; i++) {
    if (s->items.data[i]->kind != H_STR) return host_unknown(h, a->loc, "join() needs strings");
    r = concat(h, a->loc, i ? concat(h, a->loc, r, a->self) : r, s->items.data[i]);
  }
  return r;
}

/* str() of a value, as format() and str() put it. */
static HostVal *str_of(Host *h, HostVal *x) { return x->kind == H_STR ? x : host_str(h, host_repr(h->arena, x)); }

/* How a format string numbers its positional fields: Python takes either {} (the next) or {N}, not both. */
typedef struct Numbering {
  int automatic, manual, next;
} Numbering;

/* One {field} of str.format: empty (the next positional argument), a position, or a keyword's name;
 * a format spec, conversion or item (`{:>4}`, `{!r}`, `{0[1]}`) is beyond the evaluator. */
static HostVal *format_field(Host *h, Args *a, const char *field, Numbering *n) {
  if (strpbrk(field, ":![.")) return host_unknown(h, a->loc, "format(): '{%s}' (a format spec or conversion) is beyond tile's host evaluator", field);
  if (*field && !isdigit((unsigned char)*field)) {
    HostVal *v = kwarg(a, field);
    return v ? str_of(h, v) : host_unknown(h, a->loc, "format(): no argument named '%s'", field);
  }
  char *end = NULL;
  long i = *field ? strtol(field, &end, 10) : n->next++;
  *(*field ? &n->manual : &n->automatic) = 1;
  if (n->manual && n->automatic) /* Python's ValueError */
    return host_unknown(h, a->loc, "format(): cannot switch between automatic field numbering and manual field specification");
  if ((end && *end) || i >= a->pos.len) return host_unknown(h, a->loc, "format(): no positional argument '%s'", field);
  return str_of(h, a->pos.data[i]);
}

static HostVal *m_format(Host *h, Args *a) {
  const HostVal *t = a->self;
  Buf b;
  buf_init(&b, h->arena);
  Numbering numbering = {0, 0, 0};
  for (size_t i = 0; i < t->slen; i++) {
    char c = t->s[i];
    if ((c == '{' || c == '}') && i + 1 < t->slen && t->s[i + 1] == c) { /* {{ and }}: a brace */
      buf_putn(&b, &c, 1), i++;
      continue;
    }
    if (c == '}') return host_unknown(h, a->loc, "format(): a '}' without its '{'");
    if (c != '{') {
      buf_putn(&b, &c, 1);
      continue;
    }
    const char *close = memchr(t->s + i, '}', t->slen - i);
    if (!close) return host_unknown(h, a->loc, "format(): a '{' without its '}'");
    HostVal *v = format_field(h, a, arena_strndup(h->arena, t->s + i + 1, (size_t)(close - t->s) - i - 1), &numbering);
    if (v->kind == H_UNKNOWN) return v;
    if (b.len + v->slen > HOST_MAX_ITEMS) return too_many(h, a->loc, (long long)(b.len + v->slen));
    buf_putn(&b, v->s, v->slen);
    i = (size_t)(close - t->s);
  }
  return host_strn(h, b.len ? b.data : "", b.len);
}

/* str.split(sep=None): runs of whitespace (ends dropped) without sep, else each sep. */
static HostVal *m_split(Host *h, Args *a) {
  HostVal *bad = arity(h, a, 0, 1, "split"), *sep = a->pos.len ? a->pos.data[0] : kwarg(a, "sep");
  if (bad) return bad;
  if (kwarg(a, "maxsplit")) return host_unknown(h, a->loc, "split(): maxsplit is beyond tile's host evaluator");
  if (sep && sep->kind != H_NONE && (sep->kind != H_STR || !sep->slen))
    return host_unknown(h, a->loc, "split() needs a non-empty string separator");
  const HostVal *t = a->self;
  HostVal *r = host_value(h, H_LIST);
  int blanks = !sep || sep->kind == H_NONE;
  size_t i = 0;
  while (i <= t->slen) {
    if (blanks) {
      while (i < t->slen && isspace((unsigned char)t->s[i])) i++;
      if (i == t->slen) break;
    }
    size_t end = i;
    if (blanks)
      while (end < t->slen && !isspace((unsigned char)t->s[end])) end++;
    else
      while (end < t->slen && (t->slen - end < sep->slen || memcmp(t->s + end, sep->s, sep->slen))) end++;
    if (r->items.len == HOST_MAX_ITEMS) return too_many(h, a->loc, (long long)r->items.len + 1);
    vec_push(h->arena, &r->items, host_strn(h, t->s + i, end - i));
    i = end + (blanks ? 0 : sep->slen);
    if (!blanks && end == t->slen) break;
  }
  return r;
}

static HostVal *m_all_kwargs(Host *h, Args *a) {
  HostVal *r = host_value(h, H_DICT);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < a->self->items.data[s]->keys.len; i++)
      host_dict_set(h, r, a->self->items.data[s]->keys.data[i], a->self->items.data[s]->items.data[i]);
  return r;
}

/* ---- the tables --------------------------------------------------------------------------------- */

typedef struct Builtin {
  const char *name;   /* a bare name, a dotted path of triton or torch, or TYPE.method */
  BuiltinFn fn;
} Builtin;

static const Builtin builtins[] = {
    {"range", b_range}, {"len", b_len}, {"min", b_min}, {"max", b_max}, {"filter", b_filter}, {"map", b_map},
    {"zip", b_zip}, {"enumerate", b_enumerate}, {"sum", b_sum}, {"any", b_any}, {"all", b_all}, {"abs", b_abs},
    {"sorted", b_sorted}, {"reversed", b_reversed}, {"print", b_print}, {"isinstance", b_isinstance},
    {"Config", b_config}, {"triton.Config", b_config}, {"triton.cdiv", b_cdiv}, {"tl.cdiv", b_cdiv},
    {"triton.next_power_of_2", b_next_power_of_2}, {"tl.constexpr", b_identity},
    {"triton.runtime.driver.active.get_current_target", b_current_target},
    {"triton.runtime.driver.active.utils.get_device_properties", b_driver_properties},
    {"torch.cuda.get_device_capability", b_capability}, {"torch.cuda.get_device_properties", b_torch_properties},
    {"torch.cuda.current_device", b_zero}, {"torch.cuda.is_available", b_true}, {"torch.finfo", b_finfo},
    {"torch.iinfo", b_iinfo},
    {"list.append", m_append}, {"list.extend", m_extend}, {"list.copy", m_copy}, {"dict.get", m_get},
    {"dict.keys", m_keys}, {"dict.values", m_values}, {"dict.items", m_items}, {"dict.update", m_update},
    {"dict.copy", m_copy}, {"str.startswith", m_startswith}, {"str.endswith", m_endswith}, {"str.join", m_join},
    {"str.format", m_format}, {"str.split", m_split},
    {"Config.all_kwargs", m_all_kwargs},
};
enum { N_BUILTINS = sizeof builtins / sizeof builtins[0] };

static const char *const type_names[] = {"int", "float", "str", "bool", "list", "tuple", "dict"};
static const char *const module_roots[] = {"triton", "tl", "torch", "math", "os", "np", "numpy", "language"};

static HostVal *builtin_named(Host *h, const char *name, HostVal *self) {
  for (int i = 0; i < N_BUILTINS; i++)
    if (!strcmp(builtins[i].name, name)) {
      HostVal *v = host_value(h, H_BUILTIN);
      v->i = i;
      v->self = self;
      v->s = builtins[i].name;
      return v;
    }
  return NULL;
}

static HostVal *lookup_builtin(Host *h, const char *name) {
  HostVal *v = builtin_named(h, name, NULL);
  if (v && !strchr(name, '.')) return v;
  for (size_t i = 0; i < sizeof type_names / sizeof *type_names; i++)
    if (!strcmp(name, type_names[i])) return named(h, H_TYPE, type_names[i]);
  for (size_t i = 0; i < sizeof module_roots / sizeof *module_roots; i++)
    if (!strcmp(name, module_roots[i])) return named(h, H_MODULE, !strcmp(name, "language") ? "tl" : module_roots[i]);
  return NULL;
}

/* triton.language.X is tl.X. */
static const char *module_path(Host *h, const char *base, const char *name) {
  const char *path = arena_printf(h->arena, "%s.%s", base, name);
  return !strcmp(path, "triton.language") ? "tl" : path;
}

static HostVal *attribute(Host *h, Loc loc, HostVal *obj, const char *name) {
  if (obj->kind == H_MODULE) {
    const char *path = module_path(h, obj->s, name);
    HostVal *fn = builtin_named(h, path, NULL);
    return fn ? fn : named(h, H_MODULE, path);
  }
  if (obj->kind == H_RECORD) {
    HostVal *v = host_dict_get(obj, name);
    if (v) return v;
  }
  if (obj->kind == H_CONFIG) {
    if (!strcmp(name, "kwargs")) return obj->items.data[0];
    HostVal *v = host_dict_get(obj->items.data[1], name);
    int fallback = !strcmp(name, "num_warps")    ? ARCH_DEFAULT_WARPS
                   : !strcmp(name, "num_stages") ? ARCH_DEFAULT_STAGES
                   : !strcmp(name, "num_ctas")   ? 1
                                                 : 0;
    if (v || fallback) return v ? v : host_int(h, fallback);
    if (!strcmp(name, "pre_hook") || !strcmp(name, "maxnreg")) return host_value(h, H_NONE);
  }
  HostVal *method = builtin_named(h, arena_printf(h->arena, "%s.%s", host_type_name(obj), name), obj);
  return method ? method : host_unknown(h, loc, "%s has no attribute '%s' the host evaluator knows", host_type_name(obj), name);
}

/* ---- calls -------------------------------------------------------------------------------------- */

/* Binds a def's or lambda's parameters: positional, keyword, defaults, *args, **kwargs. */
static HostVal *bind_params(Host *h, Node *fn, HostEnv *locals, Args *a) {
  NodeVec *params = &fn->args;
  int next = 0;
  HostVal *rest = NULL, *extra = NULL;
  for (int i = 0; i < params->len; i++) {
    Node *p = params->data[i];
    if (p->ival == 1) {
      rest = host_value(h, H_TUPLE);
      while (next < a->pos.len) vec_push(h->arena, &rest->items, a->pos.data[next++]);
      env_set(h, locals, p->name, rest);
      continue;
    }
    if (p->ival == 2) {
      env_set(h, locals, p->name, extra = host_value(h, H_DICT));
      continue;
    }
    HostVal *v = next < a->pos.len && !rest ? a->pos.data[next++] : kwarg(a, p->name);
    if (!v && p->b) v = eval(h, locals, p->b);
    if (!v) return host_unknown(h, a->loc, "missing argument '%s' of %s", p->name, fn->name ? fn->name : "lambda");
    env_set(h, locals, p->name, v);
  }
  if (next < a->pos.len) return host_unknown(h, a->loc, "%s takes %d positional arguments, not %d", fn->name ? fn->name : "lambda", next, a->pos.len);
  for (int i = 0; i < a->names.len; i++) {
    HostVal **slot = env_slot(locals, a->names.data[i]);
    int named_param = 0;
    for (int j = 0; j < params->len; j++) named_param |= !params->data[j]->ival && !strcmp(params->data[j]->name, a->names.data[i]);
    if (named_param && slot) continue;
    if (!extra) return host_unknown(h, a->loc, "unexpected keyword argument '%s'", a->names.data[i]);
    host_dict_set(h, extra, host_str(h, a->names.data[i]), a->kw.data[i]);
  }
  return NULL;
}

static HostVal *call_function(Host *h, HostVal *fn, Args *a) {
  if (h->depth >= HOST_MAX_DEPTH)
    return host_unknown(h, a->loc, "calls nested more than %d deep (the host evaluator's limit)", HOST_MAX_DEPTH);
  HostEnv *locals = env_new(h, fn->env);
  HostVal *bad = bind_params(h, fn->node, locals, a);
  if (bad) return bad;
  if (fn->node->kind == ND_LAMBDA) {
    h->depth++;
    HostVal *r = eval(h, locals, fn->node->a);
    h->depth--;
    return r;
  }
  HostVal *result = host_value(h, H_NONE);
  h->depth++;
  Flow f = exec_block(h, locals, &fn->node->body, &result);
  h->depth--;
  return f == FLOW_BREAK || f == FLOW_CONTINUE ? host_unknown(h, a->loc, "'break' outside a loop") : result;
}

static HostVal *call_value(Host *h, HostVal *fn, Args *a) {
  switch (fn->kind) {
  case H_FUNC: return call_function(h, fn, a);
  case H_BUILTIN:
    a->self = fn->self;
    return builtins[fn->i].fn(h, a);
  case H_TYPE: return convert(h, fn->s, a);
  case H_MODULE: return host_unknown(h, a->loc, "'%s(...)' cannot be evaluated by tile (it is not triton.Config, a "
                                                "triton helper or a target query)", fn->s);
  case H_UNKNOWN: return fn;
  default: return host_unknown(h, a->loc, "%s is not callable", host_type_name(fn));
  }
}

HostVal *host_call(Host *h, HostVal *fn, HostVal **args, int n, Loc loc) {
  Args a = {.loc = loc};
  for (int i = 0; i < n; i++) vec_push(h->arena, &a.pos, args[i]);
  return call_value(h, fn, &a);
}

static int takes_kwargs(const HostVal *fn) {
  if (fn->kind != H_FUNC) return 0;
  for (int i = 0; i < fn->node->args.len; i++)
    if (fn->node->args.data[i]->ival == 2) return 1;
  return 0;
}

HostVal *host_call_kwargs(Host *h, HostVal *fn, HostVal **args, int n, const HostVal *kwargs, Loc loc) {
  Args a = {.loc = loc};
  for (int i = 0; i < n; i++) vec_push(h->arena, &a.pos, args[i]);
  for (int i = 0; takes_kwargs(fn) && i < kwargs->keys.len; i++) {
    if (kwargs->keys.data[i]->kind != H_STR) continue;
    vec_push(h->arena, &a.names, kwargs->keys.data[i]->s);
    vec_push(h->arena, &a.kw, kwargs->items.data[i]);
  }
  return call_value(h, fn, &a);
}

/* ---- statements ---------------------------------------------------------------------------------- */

static Flow fail(HostVal **out, HostVal *why) {
  *out = why;
  return FLOW_FAIL;
}

/* A condition: FAIL when it cannot be decided. */
static Flow condition(Host *h, HostEnv *env, Node *n, int *truth, HostVal **out) {
  HostVal *c = eval(h, env, n);
  if (c->kind == H_MULTIPLE) c = multiple_binary(h, n->loc, TK_KW_IF, c, c);
  if (c->kind == H_UNKNOWN) return fail(out, c);
  *truth = host_truth(c);
  return FLOW_NEXT;
}

static Flow exec_for(Host *h, HostEnv *env, Node *n, HostVal **out) {
  HostVal *seq = iterable(h, n->b->loc, eval(h, env, n->b));
  if (seq->kind == H_UNKNOWN) return fail(out, seq);
  for (int i = 0; i < seq->items.len; i++) {
    HostVal *bad = bind(h, env, n->a, seq->items.data[i]);
    if (bad) return fail(out, bad);
    Flow f = exec_block(h, env, &n->body, out);
    if (f == FLOW_BREAK) return FLOW_NEXT;
    if (f == FLOW_RETURN || f == FLOW_FAIL) return f;
  }
  return exec_block(h, env, &n->orelse, out); /* for ... else: no break */
}

static Flow exec_while(Host *h, HostEnv *env, Node *n, HostVal **out) {
  for (;;) {
    int truth;
    if (condition(h, env, n->a, &truth, out) == FLOW_FAIL) return FLOW_FAIL;
    if (!truth) return exec_block(h, env, &n->orelse, out); /* while ... else: no break */
    Flow f = exec_block(h, env, &n->body, out);
    if (f == FLOW_BREAK) return FLOW_NEXT;
    if (f == FLOW_RETURN || f == FLOW_FAIL) return f;
  }
}

static Flow assign(Host *h, HostEnv *env, Node *n, HostVal **out) {
  HostVal *v = eval(h, env, n->b);
  for (int i = 0; i < n->args.len; i++) {
    Node *t = n->args.data[i];
    HostVal *bad = v->kind == H_UNKNOWN && t->kind == ND_NAME ? (env_set(h, env, t->name, v), NULL) : bind(h, env, t, v);
    if (bad && env == h->globals) continue; /* module level: the names stay unknown, an error only if needed */
    if (bad) return fail(out, bad);
  }
  return FLOW_NEXT;
}

static void unknown_names(Host *h, HostEnv *env, NodeVec *body, HostVal *why);

/* Binds the names a target assigns to `why`. */
static void unknown_target(Host *h, HostEnv *env, Node *t, HostVal *why) {
  if (t->kind == ND_NAME) env_set(h, env, t->name, why);
  if (t->kind == ND_TUPLE || t->kind == ND_LIST)
    for (int i = 0; i < t->args.len; i++) unknown_target(h, env, t->args.data[i], why);
  if (t->kind == ND_UNARY && t->op == TK_STAR) unknown_target(h, env, t->a, why);
}

/* Binds every name a statement may assign to `why`, an UNKNOWN: what a
 * statement the evaluator does not run (class, with, try) defines is then
 * an error where it is needed, with the reason, not an undefined name. */
static void unknown_names_of(Host *h, HostEnv *env, Node *s, HostVal *why) {
  switch (s->kind) {
  case ND_ASSIGN:
    for (int i = 0; i < s->args.len; i++) unknown_target(h, env, s->args.data[i], why);
    break;
  case ND_AUGASSIGN:
  case ND_ANNASSIGN: unknown_target(h, env, s->a, why); break;
  case ND_FUNCDEF:
  case ND_CLASS: env_set(h, env, s->name, why); break;
  case ND_IMPORT:
    for (int i = 0; i < s->args.len; i++) env_set(h, env, s->args.data[i]->name, why);
    break;
  case ND_FOR: unknown_target(h, env, s->a, why); break;
  case ND_EXCEPT:
    if (s->name) env_set(h, env, s->name, why);
    break;
  case ND_WITH:
    for (int i = 0; i < s->args.len; i++)
      if (s->args.data[i]->kind == ND_ASSIGN) unknown_names_of(h, env, s->args.data[i], why);
    break;
  case ND_TRY: unknown_names(h, env, &s->args, why); break;
  default: break;
  }
  if (s->kind == ND_CLASS || s->kind == ND_FUNCDEF) return; /* their bodies are their own scopes */
  unknown_names(h, env, &s->body, why);
  unknown_names(h, env, &s->orelse, why);
  if (s->kind == ND_TRY) unknown_names(h, env, &s->kwargs, why);
}

static void unknown_names(Host *h, HostEnv *env, NodeVec *body, HostVal *why) {
  for (int i = 0; i < body->len; i++) unknown_names_of(h, env, body->data[i], why);
}

/* class, with, global, nonlocal, del, yield: host code the evaluator does
 * not run; raise: an error where it is reached. */
static Flow host_only(Host *h, HostEnv *env, Node *n, HostVal **out) {
  HostVal *why;
  if (n->kind == ND_RAISE) why = host_unknown(h, n->loc, "host code raised an exception here");
  else if (n->kind == ND_CLASS) why = host_unknown(h, n->loc, "'%s' is a class; tile does not evaluate classes", n->name);
  else why = host_unknown(h, n->loc, "tile does not evaluate '%s' statements", ast_keyword(n));
  unknown_names_of(h, env, n, why);
  return fail(out, why);
}

/* import torch as th, from torch import finfo: names bound to what the evaluator knows under a root
 * of module_roots (import a.b binds a), or to what the kernel's package defines (host_set_import's
 * answer).  Another import is taken to succeed and binds nothing, as the module imported when the
 * kernel's did; inside a try, where it may raise instead, the evaluator cannot tell. */
static Flow exec_import(Host *h, HostEnv *env, Node *n, HostVal **out) {
  for (int i = 0; i < n->args.len; i++) {
    const Node *b = n->args.data[i];
    if (!strcmp(b->name, "*")) continue;
    size_t len = strcspn(b->str, ".");
    char *root = arena_strndup(h->arena, b->str, len);
    HostVal *v = lookup_builtin(h, root);
    if (v && v->kind == H_MODULE) {
      for (const char *p = b->str + len; *p == '.' && strcmp(b->name, root); p += len) {
        len = strcspn(++p, ".");
        v = attribute(h, b->loc, v, arena_strndup(h->arena, p, len));
      }
      env_set(h, env, b->name, v);
    } else if (h->import && (v = h->import(h->import_ctx, h, b))) {
      env_set(h, env, b->name, v);
    } else if (h->in_try) {
      return fail(out, host_unknown(h, b->loc, "tile cannot tell whether 'import %s' succeeds here", b->str));
    }
  }
  return FLOW_NEXT;
}

/* try: the path on which nothing raises, which is the only one the evaluator can see (fla's
 * `try: return triton.runtime.driver.active.get_current_target().backend`): the body, its else
 * block, its finally block.  Where the body stops at what the evaluator cannot run, an exception
 * may or may not have been raised there, so the statement's names are that reason. */
static Flow exec_try(Host *h, HostEnv *env, Node *n, HostVal **out) {
  h->in_try++; /* a statement that fails stops the body, even at module level */
  Flow f = exec_block(h, env, &n->body, out);
  if (f == FLOW_NEXT) f = exec_block(h, env, &n->orelse, out);
  h->in_try--;
  if (f == FLOW_FAIL) {
    unknown_names_of(h, env, n, *out);
    return FLOW_FAIL;
  }
  HostVal *last = *out;
  Flow after = exec_block(h, env, &n->kwargs, out);
  if (after != FLOW_NEXT) return after; /* a finally that returns or fails wins */
  *out = last;
  return f;
}

static Flow exec_stmt(Host *h, HostEnv *env, Node *n, HostVal **out) {
  HostVal *stop = step(h, n), *v;
  if (stop) return fail(out, stop);
  int truth;
  switch (n->kind) {
  case ND_EXPR_STMT:
    v = eval(h, env, n->a);
    return v->kind == H_UNKNOWN && env != h->globals ? fail(out, v) : FLOW_NEXT;
  case ND_ASSIGN: return assign(h, env, n, out);
  case ND_ANNASSIGN:
    if (!n->b) return FLOW_NEXT;
    v = eval(h, env, n->b);
    env_set(h, env, n->a->name, v);
    return FLOW_NEXT;
  case ND_AUGASSIGN: {
    HostVal *x = eval(h, env, n->a);
    v = x->kind == H_UNKNOWN ? x : binary(h, n->loc, n->op, x, eval(h, env, n->b));
    if (x->kind == H_LIST && v->kind == H_LIST) x->items = v->items, v = x; /* += extends in place */
    HostVal *bad = v->kind == H_UNKNOWN && n->a->kind == ND_NAME ? (env_set(h, env, n->a->name, v), NULL) : bind(h, env, n->a, v);
    return bad && env != h->globals ? fail(out, bad) : FLOW_NEXT;
  }
  case ND_IF:
    if (condition(h, env, n->a, &truth, out) == FLOW_FAIL) return env == h->globals ? FLOW_NEXT : FLOW_FAIL;
    return exec_block(h, env, truth ? &n->body : &n->orelse, out);
  case ND_FOR: return exec_for(h, env, n, out);
  case ND_WHILE: return exec_while(h, env, n, out);
  case ND_RETURN:
    *out = n->a ? eval(h, env, n->a) : host_value(h, H_NONE);
    return (*out)->kind == H_UNKNOWN ? FLOW_FAIL : FLOW_RETURN;
  case ND_BREAK: return FLOW_BREAK;
  case ND_CONTINUE: return FLOW_CONTINUE;
  case ND_ASSERT:
    if (condition(h, env, n->a, &truth, out) == FLOW_FAIL) return FLOW_FAIL;
    return truth ? FLOW_NEXT : fail(out, host_unknown(h, n->loc, "assertion failed in host code"));
  case ND_FUNCDEF:
    v = host_value(h, H_FUNC);
    v->node = n;
    v->env = env;
    env_set(h, env, n->name, v);
    return FLOW_NEXT;
  case ND_IMPORT: return exec_import(h, env, n, out);
  case ND_PASS: return FLOW_NEXT;
  case ND_TRY: return exec_try(h, env, n, out);
  case ND_CLASS:
  case ND_WITH:
  case ND_RAISE:
  case ND_GLOBAL:
  case ND_DEL:
  case ND_YIELD: return host_only(h, env, n, out);
  default: return fail(out, host_unknown(h, n->loc, "this statement cannot be evaluated in host code"));
  }
}

static Flow exec_block(Host *h, HostEnv *env, NodeVec *body, HostVal **out) {
  for (int i = 0; i < body->len; i++) {
    Flow f = exec_stmt(h, env, body->data[i], out);
    if (f == FLOW_FAIL && env == h->globals && !h->stopped && !h->in_try)
      continue; /* module level: go on, as Python's import would not */
    if (f != FLOW_NEXT) return f;
  }
  return FLOW_NEXT;
}

/* ---- the module ----------------------------------------------------------------------------------- */

Host *host_new(Arena *a, const Module *m, const Node *upto, HostTarget target) {
  Host *h = arena_alloc(a, sizeof *h);
  h->arena = a;
  h->mod = m;
  h->upto = upto;
  h->target = target;
  h->globals = env_new(h, NULL);
  return h;
}

HostTarget host_target(const Host *h) { return h->target; }

void host_set_import(Host *h, HostImport fn, void *ctx) {
  h->import = fn;
  h->import_ctx = ctx;
}

/* The module's statements before the kernel: its constants, config lists and functions. */
static void run_module(Host *h) {
  if (h->ran_module) return;
  h->ran_module = 1;
  NodeVec *body = &h->mod->root->body;
  HostVal *ignored;
  for (int i = 0; i < body->len && body->data[i] != h->upto; i++) {
    NodeVec one = {&body->data[i], 1, 1};
    exec_block(h, h->globals, &one, &ignored);
  }
}

HostVal *host_eval(Host *h, Node *expr) {
  run_module(h);
  return eval(h, h->globals, expr);
}
