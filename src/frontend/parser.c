/* Recursive-descent parser for the tile language: Python's grammar, the part
 * that Triton kernels use.  A syntax error abandons the current statement
 * (longjmp to the statement loop), skips to the next line and goes on, so
 * one run reports every independent mistake. */
#include "ast.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

typedef struct Parser {
  const Source *src;
  const TokenVec *toks;
  Diags *diags;
  Arena *arena;
  int pos;
  int nesting;          /* recursion depth, against stack exhaustion (AST_MAX_DEPTH) */
  int in_function;
  int in_jit;           /* inside a @jit function: '*args' and '**kwargs' are kernel errors */
  int stmt_start;       /* token index where the current statement began */
  jmp_buf *recover;     /* the innermost statement's recovery point */
} Parser;

static Token *tok(Parser *P) { return &P->toks->data[P->pos]; }
static Token *next_tok(Parser *P) {
  int i = P->pos + 1 < P->toks->len ? P->pos + 1 : P->pos;
  return &P->toks->data[i];
}
static int at(Parser *P, TokenKind k) { return tok(P)->kind == k; }
static Token *advance(Parser *P) {
  Token *t = tok(P);
  if (t->kind != TK_EOF) P->pos++;
  return t;
}
static int accept(Parser *P, TokenKind k) {
  if (!at(P, k)) return 0;
  advance(P);
  return 1;
}

static const char *describe(const Token *t) {
  static const char *const names[] = {"end of file", "end of line", "indent", "dedent"};
  if (t->kind <= TK_DEDENT) return names[t->kind];
  if (t->kind == TK_NAME) return "identifier";
  if (t->kind == TK_INT || t->kind == TK_FLOAT) return "number";
  if (t->kind == TK_STRING) return "string";
  return token_kind_name(t->kind);
}

/* Whether the lexer already reported a bad token in this statement: a parse
 * error there would only echo it. */
static int lexer_error_in_statement(Parser *P) {
  for (int i = P->stmt_start; i <= P->pos && i < P->toks->len; i++)
    if (P->toks->data[i].kind == TK_ERROR) return 1;
  return 0;
}

_Noreturn static void fail_at(Parser *P, Token *t, const char *fmt, const char *arg) {
  if (lexer_error_in_statement(P))
    longjmp(*P->recover, 1);
  if (t->kind == TK_INDENT)
    diag_error(P->diags, t->loc, "unexpected indent");
  else
    diag_error(P->diags, t->loc, fmt, arg);
  longjmp(*P->recover, 1);
}

_Noreturn static void fail_expected(Parser *P, const char *what) {
  Token *t = tok(P);
  if (lexer_error_in_statement(P)) longjmp(*P->recover, 1);
  char msg[160];
  if (t->kind >= TK_POW_EQ || t->kind == TK_NAME)
    snprintf(msg, sizeof msg, "expected %s, found '%.*s'", what, t->loc.len > 40 ? 40 : t->loc.len,
             t->text);
  else
    snprintf(msg, sizeof msg, "expected %s, found %s", what, describe(t));
  fail_at(P, t, "%s", msg);
}

static Token *expect(Parser *P, TokenKind k, const char *what) {
  if (!at(P, k)) fail_expected(P, what);
  return advance(P);
}

/* Expects the bracket that closes `open`; on failure a note shows `open`. */
static void expect_close(Parser *P, TokenKind k, const char *what, const Token *open) {
  if (at(P, k)) {
    advance(P);
    return;
  }
  if (!lexer_error_in_statement(P)) {
    int errors = P->diags->errors;
    jmp_buf here, *outer = P->recover;
    P->recover = &here;
    if (setjmp(here) == 0) fail_expected(P, what);
    P->recover = outer;
    if (P->diags->errors > errors) diag_note(P->diags, open->loc, "to match this '%s'", token_kind_name(open->kind));
  }
  longjmp(*P->recover, 1);
}

static Node *new_node(Parser *P, NodeKind kind, Loc loc) { return node_new(P->arena, kind, loc); }

/* Every cycle in the grammar passes through enter(): parse_test (what
 * brackets, calls, lambdas and conditional expressions hold), the unary
 * and '**' operands, 'not', elif and blocks. */
static void enter(Parser *P) {
  if (++P->nesting <= AST_MAX_DEPTH) return;
  P->nesting = 0;
  if (!lexer_error_in_statement(P)) ast_too_deep(P->diags, tok(P)->loc);
  longjmp(*P->recover, 1);
}
static void leave(Parser *P) { P->nesting--; }

static Node *parse_test(Parser *P);
static Node *parse_expr(Parser *P);
static Node *parse_factor(Parser *P);
static void parse_block(Parser *P, NodeVec *body);
static Node *parse_bool(Parser *P, TokenKind op);
static Node *parse_conditional(Parser *P);
static Node *parse_testlist(Parser *P, Node *(*item)(Parser *));
static Node *parse_starred(Parser *P, Node *(*item)(Parser *));
static Node *parse_host_simple(Parser *P);
static void check_target(Parser *P, Node *t);
static Node *parse_comprehension(Parser *P, const Token *open, Node *element, TokenKind close);

static int at_soft_keyword(Parser *P, const char *word) {
  Token *t = tok(P);
  return t->kind == TK_NAME && t->loc.len == (int)strlen(word) && !strncmp(t->text, word, strlen(word)) && !P->in_jit;
}

/* Where a comprehension's clauses begin: 'for', or host code's 'async for'. */
static int at_comp_for(Parser *P) {
  return at(P, TK_KW_FOR) || (at_soft_keyword(P, "async") && next_tok(P)->kind == TK_KW_FOR);
}

/* Literal strings next to each other concatenate, as in Python. */
static Node *parse_strings(Parser *P) {
  Token *t = advance(P);
  Node *n = new_node(P, ND_STR, t->loc);
  Buf b;
  buf_init(&b, P->arena);
  buf_putn(&b, t->str, t->str_len);
  while (at(P, TK_STRING)) {
    Token *u = advance(P);
    buf_putn(&b, u->str, u->str_len);
  }
  n->str = buf_cstr(&b);
  n->str_len = b.len;
  return n;
}

/* testlist_comp: test (',' test)* [','] inside brackets; `close` ends it. */
static void parse_elements(Parser *P, NodeVec *out, TokenKind close, int *saw_comma) {
  while (!at(P, close)) {
    vec_push(P->arena, out, parse_starred(P, parse_test));
    if (!accept(P, TK_COMMA)) break;
    *saw_comma = 1;
  }
}


/* paren: '(' [test comp_for | test (',' test)* [',']] ')'; a generator
 * expression is evaluated as a list (host code). */
static Node *parse_paren(Parser *P) {
  Token *open = advance(P);
  Node *n = new_node(P, ND_TUPLE, open->loc);
  int comma = 0;
  if (!at(P, TK_RPAREN)) {
    vec_push(P->arena, &n->args, parse_starred(P, parse_test));
    if (at_comp_for(P)) {
      Node *generator = parse_comprehension(P, open, n->args.data[0], TK_RPAREN);
      expect_close(P, TK_RPAREN, "')' to close the generator expression", open);
      return generator;
    }
    if (accept(P, TK_COMMA)) {
      comma = 1;
      parse_elements(P, &n->args, TK_RPAREN, &comma);
    }
  }
  expect_close(P, TK_RPAREN, "')'", open);
  if (n->args.len == 1 && !comma) return n->args.data[0];
  return n;
}

/* A list's or set's elements after the first, and its closing bracket. */
static Node *display_rest(Parser *P, Node *n, Node *first, TokenKind close, const char *closing, const Token *open) {
  vec_push(P->arena, &n->args, first);
  if (accept(P, TK_COMMA)) {
    int comma = 0;
    parse_elements(P, &n->args, close, &comma);
  }
  expect_close(P, close, closing, open);
  return n;
}

/* set: '{' test (',' test)* [','] '}' after its first element, or a set
 * comprehension -- host code. */
static Node *parse_set(Parser *P, const Token *open, Node *first) {
  if (at_comp_for(P)) {
    Node *comp = parse_comprehension(P, open, first, TK_RBRACE);
    comp->ival = 1; /* a set */
    return comp;
  }
  return display_rest(P, new_node(P, ND_SET, open->loc), first, TK_RBRACE, "'}'", open);
}

/* dict: '{' [test ':' test (',' test ':' test)* [','] | comprehension] '}', or a set */
static Node *parse_dict(Parser *P) {
  Token *open = advance(P);
  Node *n = new_node(P, ND_DICT, open->loc);
  while (!at(P, TK_RBRACE)) {
    if (at(P, TK_POW) && !P->in_jit) { /* {**d, ...}: a '**' UNARY as both key and value */
      Node *spread = new_node(P, ND_UNARY, advance(P)->loc);
      spread->op = TK_POW;
      spread->a = parse_expr(P);
      vec_push(P->arena, &n->args, spread);
      vec_push(P->arena, &n->kwargs, spread);
      if (!accept(P, TK_COMMA)) break;
      continue;
    }
    vec_push(P->arena, &n->args, parse_starred(P, parse_test));
    if (n->args.len == 1 && !at(P, TK_COLON)) return parse_set(P, open, n->args.data[0]);
    expect(P, TK_COLON, "':' in dictionary");
    vec_push(P->arena, &n->kwargs, parse_test(P));
    if (n->args.len == 1 && at_comp_for(P)) {
      Node *comp = parse_comprehension(P, open, n->args.data[0], TK_RBRACE);
      comp->c = n->kwargs.data[0];
      return comp;
    }
    if (!accept(P, TK_COMMA)) break;
  }
  expect_close(P, TK_RBRACE, "'}'", open);
  return n;
}

/* comp_for: ('for' targets 'in' or_test ('if' or_test)*)+ -- host code (configs,
 * heuristics).  Each clause is a FOR node: a target, b iterable, body its ifs. */
static void parse_comp_clauses(Parser *P, Node *n) {
  while (at_comp_for(P)) {
    if (!at(P, TK_KW_FOR)) advance(P); /* host code's 'async for' */
    Node *clause = new_node(P, ND_FOR, advance(P)->loc);
    clause->a = parse_testlist(P, parse_expr);
    check_target(P, clause->a);
    expect(P, TK_KW_IN, "'in' in comprehension");
    clause->b = parse_bool(P, TK_KW_OR);
    while (accept(P, TK_KW_IF)) vec_push(P->arena, &clause->body, parse_bool(P, TK_KW_OR));
    vec_push(P->arena, &n->args, clause);
  }
}

/* listcomp: '[' test comp_for ']'; also a generator in a call and, with c the
 * value, a dict comprehension. */
static Node *parse_comprehension(Parser *P, const Token *open, Node *element, TokenKind close) {
  Node *n = new_node(P, ND_LISTCOMP, open->loc);
  n->a = element;
  parse_comp_clauses(P, n);
  if (close != TK_RPAREN)
    expect_close(P, close, close == TK_RBRACKET ? "']' to close the comprehension" : "'}' to close the comprehension",
                 open);
  return n;
}

/* list: '[' [test ((',' test)* [','] | comprehension)] ']' */
static Node *parse_list(Parser *P) {
  Token *open = advance(P);
  Node *n = new_node(P, ND_LIST, open->loc);
  if (!at(P, TK_RBRACKET)) {
    Node *first = parse_starred(P, parse_test);
    if (at_comp_for(P)) return parse_comprehension(P, open, first, TK_RBRACKET);
    return display_rest(P, n, first, TK_RBRACKET, "']'", open);
  }
  expect_close(P, TK_RBRACKET, "']'", open);
  return n;
}

static Node *parse_atom(Parser *P) {
  Token *t = tok(P);
  Node *n;
  switch (t->kind) {
  case TK_NAME:
    n = new_node(P, ND_NAME, advance(P)->loc);
    n->name = arena_strndup(P->arena, t->text, (size_t)t->loc.len);
    return n;
  case TK_INT:
    n = new_node(P, ND_INT, advance(P)->loc);
    n->ival = (int64_t)t->ival;
    n->is_u64 = t->ival > INT64_MAX;
    return n;
  case TK_FLOAT:
    n = new_node(P, ND_FLOAT, advance(P)->loc);
    n->fval = t->fval;
    return n;
  case TK_STRING: return parse_strings(P);
  case TK_KW_TRUE:
  case TK_KW_FALSE:
    n = new_node(P, ND_BOOL, advance(P)->loc);
    n->ival = t->kind == TK_KW_TRUE;
    return n;
  case TK_KW_NONE: return new_node(P, ND_NONE, advance(P)->loc);
  case TK_ELLIPSIS: return new_node(P, ND_ELLIPSIS, advance(P)->loc);
  case TK_LPAREN: return parse_paren(P);
  case TK_LBRACKET: return parse_list(P);
  case TK_LBRACE: return parse_dict(P);
  default: fail_expected(P, "an expression");
  }
}

/* '*' test or '**' test in a call: a UNARY node; host code only. */
static Node *parse_star_arg(Parser *P) {
  if (P->in_jit) fail_at(P, tok(P), "%s", "'*args' and '**kwargs' are not supported in kernels");
  Token *t = advance(P);
  Node *n = new_node(P, ND_UNARY, t->loc);
  n->op = t->kind;
  n->a = parse_test(P);
  return n;
}

/* arglist: (test [comp_for] | NAME '=' test | '*' test | '**' test) (',' ...)* [','] */
static void parse_call_args(Parser *P, Node *call, const Token *open) {
  while (!at(P, TK_RPAREN)) {
    if (at(P, TK_STAR) || at(P, TK_POW)) {
      vec_push(P->arena, &call->args, parse_star_arg(P));
    } else if (at(P, TK_NAME) && next_tok(P)->kind == TK_ASSIGN) {
      Token *name = advance(P);
      advance(P);
      Node *kw = new_node(P, ND_KEYWORD, name->loc);
      kw->name = arena_strndup(P->arena, name->text, (size_t)name->loc.len);
      kw->a = parse_test(P);
      vec_push(P->arena, &call->kwargs, kw);
    } else {
      if (call->kwargs.len)
        fail_at(P, tok(P), "%s", "positional argument follows keyword argument");
      Node *arg = parse_test(P);
      if (at_comp_for(P)) arg = parse_comprehension(P, open, arg, TK_RPAREN); /* f(x for x in xs) */
      vec_push(P->arena, &call->args, arg);
    }
    if (!accept(P, TK_COMMA)) break;
  }
  expect_close(P, TK_RPAREN, "')' to close the call", open);
}

/* subscript: test | [test] ':' [test] [':' [test]] */
static Node *parse_subscript_item(Parser *P) {
  Node *lo = NULL;
  if (!at(P, TK_COLON)) {
    lo = parse_test(P);
    if (!at(P, TK_COLON)) return lo;
  }
  Node *s = new_node(P, ND_SLICE, tok(P)->loc);
  advance(P);
  s->a = lo;
  if (!at(P, TK_COLON) && !at(P, TK_COMMA) && !at(P, TK_RBRACKET)) s->b = parse_test(P);
  if (accept(P, TK_COLON) && !at(P, TK_COMMA) && !at(P, TK_RBRACKET)) s->c = parse_test(P);
  return s;
}

static Node *parse_trailers(Parser *P, Node *n) {
  for (;;) { /* a long chain makes a deep tree: ast_check_depth bounds it */
    Token *open = tok(P);
    if (accept(P, TK_LPAREN)) {
      Node *call = new_node(P, ND_CALL, n->loc);
      call->a = n;
      parse_call_args(P, call, open);
      n = call;
    } else if (accept(P, TK_LBRACKET)) {
      Node *sub = new_node(P, ND_SUBSCRIPT, n->loc);
      sub->a = n;
      if (at(P, TK_RBRACKET)) fail_expected(P, "an index");
      while (!at(P, TK_RBRACKET)) {
        vec_push(P->arena, &sub->args, parse_subscript_item(P));
        if (!accept(P, TK_COMMA)) break;
      }
      expect_close(P, TK_RBRACKET, "']'", open);
      n = sub;
    } else if (accept(P, TK_DOT)) {
      Token *name = expect(P, TK_NAME, "an attribute name after '.'");
      Node *attr = new_node(P, ND_ATTR, name->loc);
      attr->a = n;
      attr->name = arena_strndup(P->arena, name->text, (size_t)name->loc.len);
      n = attr;
    } else {
      return n;
    }
  }
}

/* power: atom trailer* ['**' factor] */
static Node *parse_power(Parser *P) {
  Node *n = parse_trailers(P, parse_atom(P));
  if (at(P, TK_POW)) {
    Node *b = new_node(P, ND_BINOP, advance(P)->loc);
    b->op = TK_POW;
    b->a = n;
    enter(P);
    b->b = parse_factor(P);
    leave(P);
    return b;
  }
  return n;
}

/* factor: ('+'|'-'|'~') factor | ['await'] power  ('await' in host code only, kept as its operand) */
static Node *parse_factor(Parser *P) {
  TokenKind after = next_tok(P)->kind;
  if (at_soft_keyword(P, "await") && (after == TK_NAME || after == TK_LPAREN || after == TK_LBRACKET)) advance(P);
  if (at(P, TK_PLUS) || at(P, TK_MINUS) || at(P, TK_TILDE)) {
    Token *t = advance(P);
    enter(P);
    Node *n = new_node(P, ND_UNARY, t->loc);
    n->op = t->kind;
    n->a = parse_factor(P);
    leave(P);
    return n;
  }
  return parse_power(P);
}

/* Binary operator levels, loosest first; each row is one precedence level. */
static const TokenKind binary_levels[][6] = {
    {TK_PIPE},
    {TK_CARET},
    {TK_AMP},
    {TK_SHL, TK_SHR},
    {TK_PLUS, TK_MINUS},
    {TK_STAR, TK_SLASH, TK_FLOORDIV, TK_PERCENT, TK_AT},
};
enum { N_LEVELS = sizeof binary_levels / sizeof binary_levels[0] };

static int in_level(int level, TokenKind k) {
  for (int i = 0; i < 6 && binary_levels[level][i]; i++)
    if (binary_levels[level][i] == k) return 1;
  return 0;
}

static Node *parse_binary(Parser *P, int level) {
  if (level == N_LEVELS) return parse_factor(P);
  Node *n = parse_binary(P, level + 1);
  while (in_level(level, tok(P)->kind)) { /* a long chain makes a deep tree: ast_check_depth bounds it */
    Token *t = advance(P);
    Node *b = new_node(P, ND_BINOP, t->loc);
    b->op = t->kind;
    b->a = n;
    b->b = parse_binary(P, level + 1);
    n = b;
  }
  return n;
}

static Node *parse_expr(Parser *P) { return parse_binary(P, 0); }

static int comparison_op(Parser *P, TokenKind *op, int *negated) {
  TokenKind k = tok(P)->kind;
  *negated = 0;
  if (k == TK_LT || k == TK_GT || k == TK_LE || k == TK_GE || k == TK_EQ || k == TK_NE ||
      k == TK_KW_IN) {
    advance(P);
    *op = k;
    return 1;
  }
  if (k == TK_KW_IS) {
    advance(P);
    *op = TK_KW_IS;
    *negated = accept(P, TK_KW_NOT);
    return 1;
  }
  if (k == TK_KW_NOT && next_tok(P)->kind == TK_KW_IN) {
    advance(P);
    advance(P);
    *op = TK_KW_IN;
    *negated = 1;
    return 1;
  }
  return 0;
}

/* comparison: expr (comp_op expr)*; a chain a < b < c becomes (a < b) and (b < c). */
static Node *parse_comparison(Parser *P) {
  Node *n = parse_expr(P);
  Node *chain = NULL, *left = n;
  TokenKind op;
  int negated;
  Loc loc = tok(P)->loc;
  while (comparison_op(P, &op, &negated)) {
    Node *c = new_node(P, ND_COMPARE, loc);
    c->op = op;
    c->negated = negated;
    c->a = left;
    c->b = parse_expr(P);
    left = c->b;
    if (!chain) {
      chain = c;
    } else {
      Node *both = new_node(P, ND_BOOLOP, c->loc);
      both->op = TK_KW_AND;
      both->a = chain;
      both->b = c;
      chain = both;
    }
    loc = tok(P)->loc;
  }
  return chain ? chain : n;
}

static Node *parse_not(Parser *P) {
  if (at(P, TK_KW_NOT)) {
    Token *t = advance(P);
    enter(P);
    Node *n = new_node(P, ND_UNARY, t->loc);
    n->op = TK_KW_NOT;
    n->a = parse_not(P);
    leave(P);
    return n;
  }
  return parse_comparison(P);
}

static Node *parse_bool(Parser *P, TokenKind op) {
  Node *n = op == TK_KW_OR ? parse_bool(P, TK_KW_AND) : parse_not(P);
  while (at(P, op)) {
    Node *b = new_node(P, ND_BOOLOP, advance(P)->loc);
    b->op = op;
    b->a = n;
    b->b = op == TK_KW_OR ? parse_bool(P, TK_KW_AND) : parse_not(P);
    n = b;
  }
  return n;
}

/* lambda: 'lambda' [['*' | '**'] NAME ['=' test] (',' ...)*] ':' test -- kept for @heuristics */
static Node *parse_lambda(Parser *P) {
  Node *n = new_node(P, ND_LAMBDA, advance(P)->loc);
  while (at(P, TK_NAME) || at(P, TK_STAR) || at(P, TK_POW)) {
    int stars = at(P, TK_STAR) ? 1 : at(P, TK_POW) ? 2 : 0;
    if (stars) advance(P);
    Token *name = expect(P, TK_NAME, "a parameter name");
    Node *p = new_node(P, ND_PARAM, name->loc);
    p->name = arena_strndup(P->arena, name->text, (size_t)name->loc.len);
    p->ival = stars;
    if (accept(P, TK_ASSIGN)) p->b = parse_test(P);
    vec_push(P->arena, &n->args, p);
    if (!accept(P, TK_COMMA)) break;
  }
  expect(P, TK_COLON, "':' after lambda parameters");
  n->a = parse_test(P);
  return n;
}

/* test: or_test ['if' or_test 'else' test] | lambda */
static Node *parse_test(Parser *P) {
  enter(P);
  Node *n = at(P, TK_KW_LAMBDA) ? parse_lambda(P) : parse_conditional(P);
  if (at(P, TK_WALRUS) && n->kind == ND_NAME && !P->in_jit) { /* NAME ':=' test, host code: an ASSIGN */
    Node *a = new_node(P, ND_ASSIGN, advance(P)->loc);
    vec_push(P->arena, &a->args, n);
    a->b = parse_test(P);
    n = a;
  }
  leave(P);
  return n;
}

static Node *parse_conditional(Parser *P) {
  Node *n = parse_bool(P, TK_KW_OR);
  if (at(P, TK_KW_IF)) {
    Node *ife = new_node(P, ND_IFEXP, advance(P)->loc);
    ife->b = n;
    ife->a = parse_bool(P, TK_KW_OR);
    expect(P, TK_KW_ELSE, "'else' in conditional expression");
    ife->c = parse_test(P);
    n = ife;
  }
  return n;
}

/* '*' expr in a target or a display (`a, *rest = xs`, `[*a, *b]`): a UNARY
 * node; host code only. */
static Node *parse_starred(Parser *P, Node *(*item)(Parser *)) {
  if (!at(P, TK_STAR) || P->in_jit) return item(P);
  Node *n = new_node(P, ND_UNARY, advance(P)->loc);
  n->op = TK_STAR;
  n->a = parse_expr(P);
  return n;
}

/* testlist: test (',' test)* [','] -- a bare tuple when there is a comma */
static Node *parse_testlist(Parser *P, Node *(*item)(Parser *)) {
  Node *first = parse_starred(P, item);
  if (!at(P, TK_COMMA)) return first;
  Node *t = new_node(P, ND_TUPLE, first->loc);
  vec_push(P->arena, &t->args, first);
  while (accept(P, TK_COMMA)) {
    if (at(P, TK_NEWLINE) || at(P, TK_ASSIGN) || at(P, TK_KW_IN) || at(P, TK_SEMI) ||
        at(P, TK_RPAREN))
      break;
    vec_push(P->arena, &t->args, parse_starred(P, item));
  }
  return t;
}

static int is_augassign(TokenKind k) {
  return k == TK_PLUS_EQ || k == TK_MINUS_EQ || k == TK_STAR_EQ || k == TK_SLASH_EQ ||
         k == TK_FLOORDIV_EQ || k == TK_PERCENT_EQ || k == TK_AMP_EQ || k == TK_PIPE_EQ ||
         k == TK_CARET_EQ || k == TK_SHL_EQ || k == TK_SHR_EQ || k == TK_POW_EQ || k == TK_AT_EQ;
}

/* The binary operator an augmented assignment applies ('+=' -> '+'). */
static TokenKind augassign_op(TokenKind k) {
  switch (k) {
  case TK_PLUS_EQ: return TK_PLUS;
  case TK_MINUS_EQ: return TK_MINUS;
  case TK_STAR_EQ: return TK_STAR;
  case TK_SLASH_EQ: return TK_SLASH;
  case TK_FLOORDIV_EQ: return TK_FLOORDIV;
  case TK_PERCENT_EQ: return TK_PERCENT;
  case TK_AMP_EQ: return TK_AMP;
  case TK_PIPE_EQ: return TK_PIPE;
  case TK_CARET_EQ: return TK_CARET;
  case TK_SHL_EQ: return TK_SHL;
  case TK_SHR_EQ: return TK_SHR;
  case TK_POW_EQ: return TK_POW;
  default: return TK_AT;
  }
}

/* Targets of assignments and loops: names and tuples of them; in host code
 * also attributes, elements and starred names (the checker rejects those
 * where a kernel reaches them). */
static void check_target(Parser *P, Node *t) {
  if (t->kind == ND_NAME) return;
  if (t->kind == ND_TUPLE || t->kind == ND_LIST) {
    for (int i = 0; i < t->args.len; i++) check_target(P, t->args.data[i]);
    return;
  }
  if (!P->in_jit && (t->kind == ND_ATTR || t->kind == ND_SUBSCRIPT)) return;
  if (!P->in_jit && t->kind == ND_UNARY && t->op == TK_STAR) {
    check_target(P, t->a);
    return;
  }
  diag_error(P->diags, t->loc,
             t->kind == ND_SUBSCRIPT ? "cannot assign to an element of a tile; use tl.where or tl.store"
                                     : "cannot assign to this expression");
}

/* expr_stmt: testlist (annassign | augassign testlist | ('=' testlist)*) */
static Node *parse_expr_stmt(Parser *P) {
  Token *start = tok(P);
  Node *lhs = parse_testlist(P, parse_test);
  if (at(P, TK_COLON) && lhs->kind == ND_NAME) {
    Node *n = new_node(P, ND_ANNASSIGN, start->loc);
    advance(P);
    n->a = lhs;
    n->c = parse_test(P);
    if (accept(P, TK_ASSIGN)) n->b = parse_testlist(P, parse_test);
    return n;
  }
  if (is_augassign(tok(P)->kind)) {
    Node *n = new_node(P, ND_AUGASSIGN, tok(P)->loc);
    n->op = augassign_op(advance(P)->kind);
    check_target(P, lhs);
    n->a = lhs;
    n->b = parse_testlist(P, parse_test);
    return n;
  }
  if (!at(P, TK_ASSIGN)) {
    Node *n = new_node(P, ND_EXPR_STMT, start->loc);
    n->a = lhs;
    return n;
  }
  Node *n = new_node(P, ND_ASSIGN, tok(P)->loc);
  vec_push(P->arena, &n->args, lhs);
  while (accept(P, TK_ASSIGN))
    vec_push(P->arena, &n->args, at(P, TK_KW_YIELD) ? parse_host_simple(P) : parse_testlist(P, parse_test)); /* x = yield v */
  n->b = n->args.data[--n->args.len]; /* the value is the last; the rest are targets */
  for (int i = 0; i < n->args.len; i++) check_target(P, n->args.data[i]);
  return n;
}

/* dotted: '.'* NAME ('.' NAME)*  (leading dots only where `relative`).
 * The path's text, and its place in *loc. */
static const char *parse_dotted(Parser *P, int relative, Loc *loc) {
  Token *first = tok(P), *last = first;
  int dots = 0; /* `from . import x`: dots alone name the package */
  for (; relative && (at(P, TK_DOT) || at(P, TK_ELLIPSIS)); dots++) last = advance(P);
  if (!relative || at(P, TK_NAME) || !dots) {
    last = expect(P, TK_NAME, "a module name");
    while (at(P, TK_DOT)) {
      advance(P);
      last = expect(P, TK_NAME, "a module name");
    }
  }
  *loc = first->loc;
  if (last->loc.line == first->loc.line) loc->len = (int)(last->loc.offset + (uint32_t)last->loc.len - first->loc.offset);
  return arena_strndup(P->arena, first->text, (size_t)loc->len);
}

/* One name an import binds: `name` the name, `str` the dotted path it is
 * bound to, placed at the path (or the imported name). */
static void import_binding(Parser *P, Node *stmt, const char *name, const char *path, Loc loc) {
  Node *b = new_node(P, ND_IMPORT, loc);
  b->name = name;
  b->str = path;
  b->str_len = strlen(path);
  vec_push(P->arena, &stmt->args, b);
}

static const char *as_name(Parser *P, const char *otherwise) {
  if (!accept(P, TK_KW_AS)) return otherwise;
  Token *t = expect(P, TK_NAME, "a name after 'as'");
  return arena_strndup(P->arena, t->text, (size_t)t->loc.len);
}

/* import: 'import' dotted ['as' NAME] (',' dotted ['as' NAME])*
 *       | 'from' dotted 'import' ('*' | NAME ['as' NAME] (',' ...)* | '(' ... ')')
 * Each name bound is an IMPORT child in args; `import a.b` binds a to "a". */
static Node *parse_import(Parser *P) {
  Token *kw = advance(P);
  Node *n = new_node(P, ND_IMPORT, kw->loc);
  Loc loc;
  if (kw->kind == TK_KW_IMPORT) {
    do {
      const char *path = parse_dotted(P, 0, &loc);
      size_t top = strcspn(path, ".");
      const char *name = as_name(P, NULL);
      import_binding(P, n, name ? name : arena_strndup(P->arena, path, top), name ? path : arena_strndup(P->arena, path, top), loc);
    } while (accept(P, TK_COMMA));
    return n;
  }
  const char *from = parse_dotted(P, 1, &loc);
  expect(P, TK_KW_IMPORT, "'import'");
  if (at(P, TK_STAR)) {
    import_binding(P, n, "*", from, loc);
    advance(P);
    return n;
  }
  Token *open = at(P, TK_LPAREN) ? advance(P) : NULL;
  do {
    if (open && at(P, TK_RPAREN)) break;
    Token *t = expect(P, TK_NAME, "a name to import");
    const char *what = arena_strndup(P->arena, t->text, (size_t)t->loc.len);
    const char *path = arena_printf(P->arena, "%s%s%s", from, from[strlen(from) - 1] == '.' ? "" : ".", what);
    import_binding(P, n, as_name(P, what), path, t->loc);
  } while (accept(P, TK_COMMA));
  if (open) expect_close(P, TK_RPAREN, "')'", open);
  return n;
}

/* raise_stmt: 'raise' [test ['from' test]] -- everywhere: in a kernel it is
 * an error only where the checker reaches it (not in a branch that folds away). */
static Node *parse_raise(Parser *P) {
  Node *n = new_node(P, ND_RAISE, advance(P)->loc);
  if (at(P, TK_NEWLINE) || at(P, TK_SEMI) || at(P, TK_EOF)) return n;
  n->a = parse_test(P);
  if (accept(P, TK_KW_FROM)) n->b = parse_test(P);
  return n;
}

/* global_stmt: ('global' | 'nonlocal') NAME (',' NAME)*
 * del_stmt: 'del' targets;  yield_stmt: 'yield' [testlist] -- host code only. */
static Node *parse_host_simple(Parser *P) {
  Token *t = tok(P);
  if (P->in_jit) fail_at(P, t, "'%s' is not supported in kernels", token_kind_name(t->kind));
  Node *n = new_node(P, t->kind == TK_KW_DEL ? ND_DEL : t->kind == TK_KW_YIELD ? ND_YIELD : ND_GLOBAL, advance(P)->loc);
  n->op = t->kind;
  if (t->kind == TK_KW_YIELD) {
    accept(P, TK_KW_FROM);
    if (!at(P, TK_NEWLINE) && !at(P, TK_SEMI) && !at(P, TK_EOF) && !at(P, TK_RPAREN)) n->a = parse_testlist(P, parse_test);
    return n;
  }
  do {
    Node *x = t->kind == TK_KW_DEL ? parse_expr(P) : NULL;
    if (!x) {
      Token *name = expect(P, TK_NAME, "a name");
      x = new_node(P, ND_NAME, name->loc);
      x->name = arena_strndup(P->arena, name->text, (size_t)name->loc.len);
    }
    vec_push(P->arena, &n->args, x);
  } while (accept(P, TK_COMMA));
  return n;
}

static Node *parse_simple(Parser *P) {
  Token *t = tok(P);
  Node *n;
  switch (t->kind) {
  case TK_KW_PASS: return new_node(P, ND_PASS, advance(P)->loc);
  case TK_KW_BREAK: return new_node(P, ND_BREAK, advance(P)->loc);
  case TK_KW_CONTINUE: return new_node(P, ND_CONTINUE, advance(P)->loc);
  case TK_KW_RETURN:
    n = new_node(P, ND_RETURN, advance(P)->loc);
    if (!at(P, TK_NEWLINE) && !at(P, TK_SEMI)) n->a = parse_testlist(P, parse_test);
    return n;
  case TK_KW_ASSERT:
    n = new_node(P, ND_ASSERT, advance(P)->loc);
    n->a = parse_test(P);
    if (accept(P, TK_COMMA)) n->b = parse_test(P);
    return n;
  case TK_KW_IMPORT:
  case TK_KW_FROM: return parse_import(P);
  case TK_KW_RAISE: return parse_raise(P);
  case TK_KW_GLOBAL:
  case TK_KW_NONLOCAL:
  case TK_KW_DEL:
  case TK_KW_YIELD: return parse_host_simple(P);
  default: return parse_expr_stmt(P);
  }
}

/* simple_stmts: small (';' small)* [';'] NEWLINE */
static void parse_simple_line(Parser *P, NodeVec *body) {
  for (;;) {
    vec_push(P->arena, body, parse_simple(P));
    if (!accept(P, TK_SEMI) || at(P, TK_NEWLINE)) break;
  }
  if (!at(P, TK_EOF)) expect(P, TK_NEWLINE, "end of line");
}

/* if: 'if' test ':' block ('elif' test ':' block)* ['else' ':' block] */
static Node *parse_if(Parser *P) {
  Node *n = new_node(P, ND_IF, advance(P)->loc);
  n->a = parse_test(P);
  parse_block(P, &n->body);
  if (at(P, TK_KW_ELIF)) {
    enter(P); /* an elif is an if nested in the else branch */
    vec_push(P->arena, &n->orelse, parse_if(P));
    leave(P);
  } else if (accept(P, TK_KW_ELSE)) {
    parse_block(P, &n->orelse);
  }
  return n;
}

/* A loop's ['else' ':' block], which runs when the loop ends without a
 * break: host code only (the host evaluator runs it; kernels have no use
 * for it in Triton either). */
static void parse_loop_else(Parser *P, Node *loop, const char *keyword) {
  if (!at(P, TK_KW_ELSE)) return;
  if (P->in_jit) fail_at(P, tok(P), "'%s ... else' is not supported in kernels", keyword);
  advance(P);
  parse_block(P, &loop->orelse);
}

/* for: 'for' targets 'in' testlist ':' block ['else' ':' block] */
static Node *parse_for(Parser *P) {
  Node *n = new_node(P, ND_FOR, advance(P)->loc);
  n->a = parse_testlist(P, parse_expr);
  check_target(P, n->a);
  expect(P, TK_KW_IN, "'in' in for loop");
  n->b = parse_testlist(P, parse_test);
  parse_block(P, &n->body);
  parse_loop_else(P, n, "for");
  return n;
}

static Node *parse_while(Parser *P) {
  Node *n = new_node(P, ND_WHILE, advance(P)->loc);
  n->a = parse_test(P);
  parse_block(P, &n->body);
  parse_loop_else(P, n, "while");
  return n;
}

/* param: ['*' | '**'] NAME [':' test] ['=' test]; stars (ival 1, 2) in host code only.
 * A bare '*' or '/' (keyword-only and positional-only markers, host code
 * only) gives NULL: the host evaluator binds the parameters around it as
 * ordinary ones. */
static Node *parse_param(Parser *P) {
  int stars = at(P, TK_STAR) ? 1 : at(P, TK_POW) ? 2 : 0;
  int marker = at(P, TK_SLASH) || (stars == 1 && next_tok(P)->kind != TK_NAME);
  if ((stars || marker) && P->in_jit)
    fail_at(P, tok(P), "%s", "'*args', '**kwargs' and '/' parameters are not supported in kernels");
  if (marker) {
    advance(P);
    return NULL;
  }
  if (stars) advance(P);
  Token *name = expect(P, TK_NAME, "a parameter name");
  Node *p = new_node(P, ND_PARAM, name->loc);
  p->name = arena_strndup(P->arena, name->text, (size_t)name->loc.len);
  p->ival = stars;
  if (accept(P, TK_COLON)) p->a = parse_test(P);
  if (accept(P, TK_ASSIGN)) p->b = parse_test(P);
  return p;
}

/* `keyword_only`: the index of the first parameter after '*' or '*args'
 * (those may lack a default whatever comes before them). */
static void check_params(Parser *P, Node *fn, int keyword_only) {
  int saw_default = 0;
  for (int i = 0; i < fn->args.len; i++) {
    Node *p = fn->args.data[i];
    for (int j = 0; j < i; j++)
      if (!strcmp(fn->args.data[j]->name, p->name))
        diag_error(P->diags, p->loc, "duplicate parameter '%s'", p->name);
    if (p->b || p->ival) saw_default = 1;
    else if (saw_default && i < keyword_only)
      diag_error(P->diags, p->loc, "parameter '%s' without a default follows one with a default",
                 p->name);
  }
}

/* Whether a decorator list marks a kernel: @jit, @triton.jit(...), @autotune, @heuristics. */
static int is_jit_decorator(NodeVec decorators) {
  for (int i = 0; i < decorators.len; i++) {
    Node *d = decorators.data[i]->kind == ND_CALL ? decorators.data[i]->a : decorators.data[i];
    const char *name = d->kind == ND_NAME || d->kind == ND_ATTR ? d->name : "";
    if (!strcmp(name, "jit") || !strcmp(name, "autotune") || !strcmp(name, "heuristics")) return 1;
  }
  return 0;
}

/* funcdef: decorator* 'def' NAME '(' [param (',' param)*] ')' ['->' test] ':' block */
static Node *parse_funcdef(Parser *P, NodeVec decorators) {
  Token *def = expect(P, TK_KW_DEF, "'def' after decorators");
  if (P->in_function && P->in_jit)
    fail_at(P, def, "%s", "nested function definitions are not supported; define helpers at module level");
  Token *name = expect(P, TK_NAME, "a function name");
  Node *fn = new_node(P, ND_FUNCDEF, name->loc);
  fn->name = arena_strndup(P->arena, name->text, (size_t)name->loc.len);
  fn->kwargs = decorators;
  int outer_function = P->in_function, outer_jit = P->in_jit;
  P->in_jit = decorators.len > 0 && is_jit_decorator(decorators);
  expect(P, TK_LPAREN, "'(' after the function name");
  int keyword_only = INT_MAX;
  while (!at(P, TK_RPAREN)) {
    int star = at(P, TK_STAR);
    Node *p = parse_param(P);
    if (p) vec_push(P->arena, &fn->args, p);
    if (star && keyword_only == INT_MAX) keyword_only = fn->args.len;
    if (!accept(P, TK_COMMA)) break;
  }
  expect(P, TK_RPAREN, "')' to close the parameter list");
  check_params(P, fn, keyword_only);
  if (accept(P, TK_ARROW)) fn->a = parse_test(P);
  P->in_function = 1;
  parse_block(P, &fn->body);
  P->in_function = outer_function;
  P->in_jit = outer_jit;
  return fn;
}

/* classdef: decorator* 'class' NAME ['(' arglist ')'] ':' block -- host code
 * only; its body is parsed as module code (methods are host functions). */
static Node *parse_class(Parser *P, NodeVec decorators) {
  Token *kw = advance(P);
  if (P->in_jit) fail_at(P, kw, "'%s' statements are not supported in kernels", token_kind_name(kw->kind));
  Token *name = expect(P, TK_NAME, "a class name");
  Node *n = new_node(P, ND_CLASS, name->loc);
  n->name = arena_strndup(P->arena, name->text, (size_t)name->loc.len);
  n->kwargs = decorators;
  Token *open = tok(P);
  if (accept(P, TK_LPAREN)) {
    Node *bases = new_node(P, ND_CALL, open->loc);
    parse_call_args(P, bases, open);
    n->args = bases->args;
    for (int i = 0; i < bases->kwargs.len; i++) vec_push(P->arena, &n->args, bases->kwargs.data[i]); /* metaclass=... */
  }
  int outer_function = P->in_function;
  P->in_function = 0;
  parse_block(P, &n->body);
  P->in_function = outer_function;
  return n;
}

static Node *parse_decorated(Parser *P) {
  NodeVec decorators = {0};
  while (accept(P, TK_AT)) {
    vec_push(P->arena, &decorators, parse_test(P));
    expect(P, TK_NEWLINE, "end of line after the decorator");
  }
  if (at(P, TK_KW_CLASS)) return parse_class(P, decorators);
  return parse_funcdef(P, decorators);
}

/* with_stmt: 'with' test ['as' target] (',' test ['as' target])* ':' block --
 * host code only; an item with a target is an ASSIGN of the target. */
static Node *parse_with(Parser *P) {
  Node *n = new_node(P, ND_WITH, advance(P)->loc);
  do {
    Node *e = parse_test(P);
    if (at(P, TK_KW_AS)) {
      Node *a = new_node(P, ND_ASSIGN, advance(P)->loc);
      Node *t = parse_expr(P);
      check_target(P, t);
      vec_push(P->arena, &a->args, t);
      a->b = e;
      e = a;
    }
    vec_push(P->arena, &n->args, e);
  } while (accept(P, TK_COMMA));
  parse_block(P, &n->body);
  return n;
}

/* try_stmt: 'try' block ('except' [test ['as' NAME]] block)* ['else' block]
 *           ['finally' block] -- host code only */
static Node *parse_try(Parser *P) {
  Node *n = new_node(P, ND_TRY, advance(P)->loc);
  parse_block(P, &n->body);
  while (at(P, TK_KW_EXCEPT)) {
    Node *h = new_node(P, ND_EXCEPT, advance(P)->loc);
    if (!at(P, TK_COLON)) h->a = parse_test(P);
    if (accept(P, TK_KW_AS)) {
      Token *name = expect(P, TK_NAME, "a name after 'as'");
      h->name = arena_strndup(P->arena, name->text, (size_t)name->loc.len);
    }
    parse_block(P, &h->body);
    vec_push(P->arena, &n->args, h);
  }
  if (n->args.len && accept(P, TK_KW_ELSE)) parse_block(P, &n->orelse);
  if (accept(P, TK_KW_FINALLY)) parse_block(P, &n->kwargs);
  else if (!n->args.len) fail_expected(P, "'except' or 'finally'");
  return n;
}

static void parse_statement(Parser *P, NodeVec *body);

/* Skips the rest of a broken statement: to the end of its line, and past
 * the indented block that follows it, if any. */
static void synchronize(Parser *P) {
  while (!at(P, TK_NEWLINE) && !at(P, TK_EOF) && !at(P, TK_INDENT) && !at(P, TK_DEDENT)) advance(P);
  accept(P, TK_NEWLINE);
  if (!at(P, TK_INDENT)) return;
  int depth = 0;
  do {
    if (at(P, TK_INDENT)) depth++;
    if (at(P, TK_DEDENT)) depth--;
    advance(P);
  } while (depth > 0 && !at(P, TK_EOF));
}

static void parse_compound(Parser *P, NodeVec *body) {
  Token *t = tok(P);
  TokenKind after = next_tok(P)->kind;
  if (at_soft_keyword(P, "async") && (after == TK_KW_DEF || after == TK_KW_FOR || after == TK_KW_WITH)) {
    advance(P); /* host code: an async def, for or with parses as the plain one */
    t = tok(P);
  }
  switch (t->kind) {
  case TK_KW_IF: vec_push(P->arena, body, parse_if(P)); return;
  case TK_KW_FOR: vec_push(P->arena, body, parse_for(P)); return;
  case TK_KW_WHILE: vec_push(P->arena, body, parse_while(P)); return;
  case TK_AT: vec_push(P->arena, body, parse_decorated(P)); return;
  case TK_KW_DEF: {
    NodeVec none = {0};
    vec_push(P->arena, body, parse_funcdef(P, none));
    return;
  }
  case TK_KW_CLASS: {
    NodeVec none = {0};
    vec_push(P->arena, body, parse_class(P, none));
    return;
  }
  case TK_KW_WITH:
  case TK_KW_TRY:
    if (P->in_jit) fail_at(P, t, "'%s' statements are not supported in kernels", token_kind_name(t->kind));
    vec_push(P->arena, body, t->kind == TK_KW_WITH ? parse_with(P) : parse_try(P));
    return;
  case TK_INDENT: fail_at(P, t, "%s", "unexpected indent");
  case TK_KW_ELIF:
  case TK_KW_ELSE: fail_at(P, t, "'%s' without a matching 'if'", token_kind_name(t->kind));
  default: parse_simple_line(P, body);
  }
}

/* One statement, with its own recovery point. */
static void parse_statement(Parser *P, NodeVec *body) {
  jmp_buf here;
  jmp_buf *outer = P->recover;
  int saved_nesting = P->nesting, saved_start = P->stmt_start;
  volatile int saved_in_function = P->in_function, saved_in_jit = P->in_jit;
  P->stmt_start = P->pos;
  P->recover = &here;
  if (setjmp(here) == 0) {
    parse_compound(P, body);
  } else {
    P->nesting = saved_nesting;
    P->in_function = saved_in_function;
    P->in_jit = saved_in_jit;
    synchronize(P);
  }
  P->recover = outer;
  P->stmt_start = saved_start;
}

/* block: ':' (NEWLINE INDENT stmt+ DEDENT | simple_stmts) */
static void parse_block(Parser *P, NodeVec *body) {
  expect(P, TK_COLON, "':'");
  if (!accept(P, TK_NEWLINE)) {
    parse_simple_line(P, body);
    return;
  }
  if (!at(P, TK_INDENT)) fail_expected(P, "an indented block");
  advance(P);
  enter(P);
  while (!at(P, TK_DEDENT) && !at(P, TK_EOF)) parse_statement(P, body);
  leave(P);
  accept(P, TK_DEDENT);
}

Module *parse_module(const Source *src, const TokenVec *toks, Diags *d) {
  Parser P = {src, toks, d, d->arena, 0, 0, 0, 0, 0, NULL};
  Module *m = arena_alloc(d->arena, sizeof *m);
  m->src = src;
  m->root = new_node(&P, ND_MODULE, toks->data[0].loc);
  while (!at(&P, TK_EOF)) {
    if (accept(&P, TK_NEWLINE)) continue;
    if (at(&P, TK_DEDENT)) { /* only after a lexer indentation error */
      advance(&P);
      continue;
    }
    parse_statement(&P, &m->root->body);
  }
  ast_check_depth(m->root, d);
  return m;
}

Node *parse_expression(const Source *src, const TokenVec *toks, Diags *d) {
  Parser P = {src, toks, d, d->arena, 0, 0, 0, 0, 0, NULL};
  jmp_buf here;
  P.recover = &here;
  if (setjmp(here)) return NULL;
  Node *n = parse_testlist(&P, parse_test);
  accept(&P, TK_NEWLINE);
  if (!at(&P, TK_EOF)) fail_expected(&P, "end of expression");
  return ast_check_depth(n, d) ? NULL : n;
}
