/* The abstract syntax tree.  One node type for every construct: the kind
 * says which fields are in use (documented per field).  The parser builds
 * it untyped; the checker (sema.c) builds a specialised, typed copy of the
 * kernel in which every expression has a type and constexprs are folded. */
#ifndef TILE_AST_H
#define TILE_AST_H

#include "lexer.h"

typedef enum {
#define NODE(id, name) ND_##id,
#include "ast.def"
#undef NODE
  ND_COUNT
} NodeKind;

typedef struct Node Node;
typedef Vec(Node *) NodeVec;
struct Type;
struct Value;

struct Node {
  NodeKind kind;
  Loc loc;
  TokenKind op;        /* BINOP, UNARY, COMPARE, BOOLOP, AUGASSIGN: the operator */
  int negated;         /* COMPARE: 'not in' / 'is not' */
  const char *name;    /* NAME, ATTR field, KEYWORD, PARAM, FUNCDEF, IMPORT alias */
  Node *a;             /* operand, callee, object, value, condition, target, annotation */
  Node *b;             /* right operand, subscript index, default, iterable, then-value */
  Node *c;             /* IFEXP else-value, SLICE step, LISTCOMP filter, ANNASSIGN annotation */
  NodeVec args;        /* CALL positional args, TUPLE/LIST elements, FUNCDEF params, DICT keys */
  NodeVec kwargs;      /* CALL keyword args (KEYWORD nodes), DICT values, FUNCDEF decorators */
  NodeVec body;        /* statement blocks; MODULE top-level statements */
  NodeVec orelse;      /* IF else-branch (elif is a nested IF) */
  int64_t ival;        /* INT, BOOL; LISTCOMP: 1 for a set comprehension */
  int is_u64;          /* INT: ival holds the bits of a literal in [2^63, 2^64), which Triton types uint64 */
  double fval;         /* FLOAT */
  const char *str;     /* STR (decoded) */
  size_t str_len;
  /* filled by the checker on the typed copy */
  struct Type *type;   /* type of an expression; NULL for statements */
  struct Value *cval;  /* CONST: the folded compile-time value */
  Node *origin;        /* the source node this one was specialised from */
};

typedef struct Module {
  Node *root;          /* ND_MODULE */
  const Source *src;
} Module;

const char *node_kind_name(NodeKind k);
/* The keyword of a host-only statement ("class", "with", "global", ...). */
const char *ast_keyword(const Node *n);
Node *node_new(Arena *a, NodeKind kind, Loc loc);

/* How deeply expressions and blocks may nest: parentheses, operator chains
 * (a left-associative chain a + b + c is a tree as deep as it is long),
 * unary operators, elifs, lambdas, indented blocks.  The parser checks its
 * own recursion and the finished tree's depth against it, and the checker
 * its recursion through inlined helpers, so every later recursive walk of
 * a tree has a bounded stack. */
enum { AST_MAX_DEPTH = 1000 };
void ast_too_deep(Diags *d, Loc loc);
/* Reports the first node (in source order) deeper than AST_MAX_DEPTH; 1 if there was one. */
int ast_check_depth(const Node *root, Diags *d);
/* Parses a whole file.  Returns NULL only if the guard fires; syntax errors
 * are reported to `d` and the tree holds what could be recovered. */
Module *parse_module(const Source *src, const TokenVec *toks, Diags *d);
/* Parses one expression (for -D values and signatures); NULL on error. */
Node *parse_expression(const Source *src, const TokenVec *toks, Diags *d);

/* Prints the tree, clang -ast-dump style, one node a line. */
void ast_print(const Node *n, Buf *out);

#endif
