/* Grid expressions (grid.h): a recursive-descent parser into a node pool, and their evaluation. */
#include "grid.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Parser {
  const char *p;
  Grid *g;
  GridError *err;
  int depth, names;
} Parser;

static int fail_at(Parser *P, const char *why) {
  if (!P->err->why) P->err->why = why, P->err->at = P->p;
  return -1;
}

static void skip(Parser *P) {
  while (isspace((unsigned char)*P->p)) P->p++;
}

static int eat(Parser *P, const char *token) {
  skip(P);
  size_t n = strlen(token);
  if (strncmp(P->p, token, n)) return 0;
  P->p += n;
  return 1;
}

static int add_node(Parser *P, GridKind kind, int a, int b) {
  if (P->err->why) return -1;
  if (P->g->n_nodes == GRID_MAX_NODES) return fail_at(P, "too long an expression");
  GridNode *n = &P->g->nodes[P->g->n_nodes];
  *n = (GridNode){.kind = kind, .a = a, .b = b};
  return P->g->n_nodes++;
}

static int sum(Parser *P);

/* cdiv(a, b), min(a, b), max(a, b): after the '(' */
static int call(Parser *P, GridKind kind) {
  int a = sum(P);
  int b = eat(P, ",") ? sum(P) : fail_at(P, "a call needs two arguments");
  if (!eat(P, ")")) return fail_at(P, "a missing ')'");
  return add_node(P, kind, a, b);
}

/* NAME, or the lambda's meta['NAME'] (any name before the subscript: Triton's META too). */
static int name(Parser *P) {
  const char *start = P->p;
  while (isalnum((unsigned char)*P->p) || *P->p == '_' || *P->p == '.') P->p++;
  size_t len = (size_t)(P->p - start);
  static const struct { const char *word; GridKind kind; } calls[] = {
      {"cdiv", GRID_CDIV}, {"triton.cdiv", GRID_CDIV}, {"min", GRID_MIN}, {"max", GRID_MAX}};
  for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
    if (strlen(calls[i].word) == len && !strncmp(start, calls[i].word, len) && eat(P, "(")) return call(P, calls[i].kind);
  if (P->p[0] == '[' && (P->p[1] == '\'' || P->p[1] == '"')) {
    const char *end = strchr(P->p + 2, P->p[1]);
    if (!end || end[1] != ']') return fail_at(P, "an unclosed subscript");
    start = P->p + 2, len = (size_t)(end - start), P->p = end + 2;
  }
  if (!len || len > GRID_MAX_NAME) return fail_at(P, len ? "a name too long" : "an empty name");
  int n = add_node(P, GRID_NAME, -1, -1);
  if (n >= 0) memcpy(P->g->nodes[n].name, start, len), P->g->nodes[n].name[len] = 0, P->names = 1;
  return n;
}

static int atom(Parser *P) {
  skip(P);
  if (++P->depth > GRID_MAX_DEPTH) return fail_at(P, "nested too deeply");
  int n;
  if (isdigit((unsigned char)*P->p)) {
    char *end;
    errno = 0;
    long long v = strtoll(P->p, &end, 10);
    if (errno) return fail_at(P, "a number too large");
    P->p = end;
    if ((n = add_node(P, GRID_NUMBER, -1, -1)) >= 0) P->g->nodes[n].value = v;
  } else if (eat(P, "(")) {
    n = sum(P);
    if (!eat(P, ")")) n = fail_at(P, "a missing ')'");
  } else if (isalpha((unsigned char)*P->p) || *P->p == '_') {
    n = name(P);
  } else {
    n = fail_at(P, "something not part of a grid expression");
  }
  P->depth--;
  return n;
}

typedef struct Operator {
  const char *token;
  GridKind kind;
} Operator;

static const Operator PRODUCTS[] = {{"*", GRID_MUL}, {"//", GRID_DIV}, {"%", GRID_REM}, {NULL, 0}};
static const Operator SUMS[] = {{"+", GRID_ADD}, {"-", GRID_SUB}, {NULL, 0}};

/* The operator of `ops` next in the text, eaten; NULL if none is. */
static const Operator *next_operator(Parser *P, const Operator *ops) {
  for (; ops->token; ops++)
    if (eat(P, ops->token)) return ops;
  return NULL;
}

/* Operands of one precedence joined left to right: `operand` (operator operand)*. */
static int chain(Parser *P, int (*operand)(Parser *), const Operator *ops) {
  int n = operand(P);
  for (const Operator *op; n >= 0 && (op = next_operator(P, ops));) n = add_node(P, op->kind, n, operand(P));
  return n;
}

static int product(Parser *P) { return chain(P, atom, PRODUCTS); }

static int sum(Parser *P) { return chain(P, product, SUMS); }

/* A character no grid expression has, said as itself rather than where the grammar stops. */
static const char *stray_character(const char *s) {
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && !isspace((unsigned char)*s) && !strchr("_.+-*/%(),'\"[]", *s)) return s;
  return NULL;
}

/* The end of Triton's tuple `(a, b,)` without its parentheses and last comma: `text` when there are none. */
static size_t tuple_items(const char **text) {
  const char *s = *text;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) n--;
  while (n && isspace((unsigned char)*s)) s++, n--;
  int depth = 0, outer = n > 1 && s[0] == '(' && s[n - 1] == ')';
  for (size_t i = 0; outer && i + 1 < n; i++) { /* the first '(' closes only at the end */
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (!depth) outer = 0;
  }
  if (outer) s++, n -= 2;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  if (outer && n && s[n - 1] == ',') n--;
  *text = s;
  return n;
}

int grid_parse(const char *text, Grid *g, GridError *err) {
  *err = (GridError){0};
  g->n_items = g->n_nodes = 0;
  const char *stray = stray_character(text);
  if (stray) {
    err->why = "is not part of a grid expression (integers, names, + - * // % ( ) , cdiv min max)";
    err->name[0] = *stray;
    return -1;
  }
  char items[4096];
  size_t n = tuple_items(&text);
  if (n >= sizeof items) {
    err->why = "too long an expression";
    return -1;
  }
  memcpy(items, text, n);
  items[n] = 0;
  Parser P = {items, g, err, 0, 0};
  for (;;) {
    P.names = 0;
    int root = sum(&P);
    if (root < 0) break;
    if (g->n_items == GRID_MAX_ITEMS) {
      fail_at(&P, "more than three items");
      break;
    }
    g->item[g->n_items] = root;
    g->has_name[g->n_items++] = P.names;
    if (eat(&P, ",")) continue;
    skip(&P);
    if (*P.p) fail_at(&P, "something not part of a grid expression");
    break;
  }
  if (err->at) err->at = text + (err->at - items); /* the caller's text, which outlives `items` */
  return err->why ? -1 : 0;
}

static long long eval_fail(GridError *err, const char *why) {
  if (!err->why) err->why = why;
  return 0;
}

static long long eval(const Grid *g, int i, GridLookup lookup, void *ctx, GridError *err) {
  const GridNode *n = &g->nodes[i];
  long long v, a, b;
  if (n->kind == GRID_NUMBER) return n->value;
  if (n->kind == GRID_NAME) {
    if (lookup && !lookup(ctx, n->name, &v)) return v;
    if (!err->why) strcpy(err->name, n->name);
    return eval_fail(err, "is not an integer constexpr of the kernel");
  }
  a = eval(g, n->a, lookup, ctx, err);
  b = eval(g, n->b, lookup, ctx, err);
  if (err->why) return 0;
  switch (n->kind) {
  case GRID_CDIV: return b < 1 ? eval_fail(err, "cdiv by a number below 1") : a / b + (a % b > 0);
  case GRID_MIN: return a < b ? a : b;
  case GRID_MAX: return a > b ? a : b;
  case GRID_ADD: return __builtin_add_overflow(a, b, &v) ? eval_fail(err, "a sum too large") : v;
  case GRID_SUB: return __builtin_sub_overflow(a, b, &v) ? eval_fail(err, "a sum too large") : v;
  case GRID_MUL: return __builtin_mul_overflow(a, b, &v) ? eval_fail(err, "a product too large") : v;
  case GRID_DIV: return b < 1 ? eval_fail(err, "a division by a number below 1") : a / b;
  case GRID_REM: return b < 1 ? eval_fail(err, "a division by a number below 1") : a % b;
  default: return eval_fail(err, "a node of no kind");
  }
}

long long grid_eval(const Grid *g, int i, GridLookup lookup, void *ctx, GridError *err) {
  *err = (GridError){0};
  return eval(g, g->item[i], lookup, ctx, err);
}

const char *grid_error_text(const GridError *err, char *buf, unsigned long size) {
  if (err->name[0]) snprintf(buf, size, "'%s' %s", err->name, err->why);
  else if (err->at && *err->at) snprintf(buf, size, "%s at '%s'", err->why, err->at);
  else snprintf(buf, size, "%s", err->why);
  return buf;
}
