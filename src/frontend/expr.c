/* Operators on typed values: Triton's promotion, broadcasting and pointer
 * arithmetic rules, with constexpr operands folded. */
#include "sema_impl.h"

#include <math.h>
#include <string.h>

Node *typed_node(Sema *S, NodeKind kind, Loc loc, Type *t) {
  Node *n = node_new(S->arena, kind, loc);
  n->type = t;
  return n;
}

/* The dtype a constexpr scalar takes in a run-time operation. */
static int literal_dtype(const Value *v, DType *out) {
  switch (v->kind) {
  case V_INT: *out = v->is_u64 ? DT_U64 : literal_int_type(v->i); return 1;
  case V_FLOAT: *out = DT_FP32; return 1;
  case V_BOOL: *out = DT_I1; return 1;
  default: return 0;
  }
}

Type *type_of(Sema *S, Node *n) {
  (void)S;
  return n->type;
}

Node *runtime(Sema *S, Node *n) {
  if (n->type || !is_const(n)) return n;
  DType dt;
  if (!literal_dtype(n->cval, &dt)) return n;
  Node *r = mk_const(S, n->loc, n->cval);
  r->type = type_scalar(S->arena, dt);
  return r;
}

/* A float constexpr that takes an integer type truncates, as C's cast does;
 * out of the type's range (or NaN) C has no value for it, so it is an error
 * (Triton's, too: its builder refuses the value). */
static int float_fits(double f, DType t) {
  if (t == DT_I1) return 1; /* to bool is != 0 */
  int bits = dtype_bits(t), sign = dtype_is_signed(t);
  double x = trunc(f), lo = sign ? -ldexp(1, bits - 1) : 0, hi = ldexp(1, sign ? bits - 1 : bits);
  return x >= lo && x < hi;
}

Node *cast(Sema *S, Node *n, DType elem, int is_ptr) {
  Type *t = n->type;
  if (t->elem == elem && t->is_ptr == is_ptr) return n;
  if (is_const(n) && n->cval->kind == V_FLOAT && dtype_is_int(elem) && !is_ptr && !float_fits(n->cval->f, elem)) {
    diag_error(S->diags, n->loc, "the constexpr %s does not fit in %s", value_str(S->arena, n->cval), dtype_name(elem));
    return poison(S, n->loc);
  }
  if (is_const(n) && t->rank == 0 && !is_ptr) { /* a literal just takes the type */
    Node *r = mk_const(S, n->loc, n->cval);
    r->type = type_scalar(S->arena, elem);
    return r;
  }
  Node *c = typed_node(S, ND_CAST, n->loc, type_with_elem(S->arena, t, elem, is_ptr));
  c->a = n;
  return c;
}

Node *broadcast(Sema *S, Node *n, int rank, const int64_t *shape) {
  Type *t = n->type;
  if (t->rank == rank && !memcmp(t->shape, shape, sizeof(int64_t) * (size_t)rank)) return n;
  Node *b = typed_node(S, ND_BROADCAST, n->loc, type_tile(S->arena, t, rank, shape));
  b->a = n;
  return b;
}

static const char *op_spelling(TokenKind op) { return token_kind_name(op); }

static int is_comparison(TokenKind op) {
  return op == TK_LT || op == TK_LE || op == TK_GT || op == TK_GE || op == TK_EQ || op == TK_NE;
}

static int is_bitwise(TokenKind op) {
  return op == TK_AMP || op == TK_PIPE || op == TK_CARET || op == TK_SHL || op == TK_SHR;
}

static Node *fold_consts(Sema *S, Loc loc, TokenKind op, Node *x, Node *y) {
  int errors = S->diags->errors;
  Value *v = fold_binary(S, loc, op, x->cval, y->cval);
  if (v) return mk_const(S, loc, v);
  if (S->diags->errors == errors) {
    const char *a = describe(S, x), *b = describe(S, y);
    diag_error(S->diags, loc, "unsupported operand types for '%s': %s and %s", op_spelling(op), a, b);
  }
  return poison(S, loc);
}

/* Broadcasts both operands to a common shape; reports and returns 0 when
 * the shapes do not broadcast. */
static int broadcast_pair(Sema *S, Loc loc, const char *what, Node **x, Node **y) {
  int rank;
  int64_t shape[MAX_RANK];
  if (!broadcast_shapes((*x)->type, (*y)->type, &rank, shape)) {
    diag_error(S->diags, loc, "operands of %s have incompatible shapes %s and %s", what,
               type_str(S->arena, (*x)->type), type_str(S->arena, (*y)->type));
    diag_note(S->diags, loc, "shapes %s and %s cannot broadcast", shape_str(S->arena, (*x)->type),
              shape_str(S->arena, (*y)->type));
    return 0;
  }
  if (shape_numel(rank, shape) > MAX_TILE_ELEMENTS) {
    diag_error(S->diags, loc, "broadcasting %s and %s makes a tile of more than 2^20 elements",
               shape_str(S->arena, (*x)->type), shape_str(S->arena, (*y)->type));
    return 0;
  }
  *x = broadcast(S, *x, rank, shape);
  *y = broadcast(S, *y, rank, shape);
  return 1;
}

static Node *make_binop(Sema *S, Loc loc, TokenKind op, Node *x, Node *y, Type *t) {
  Node *n = typed_node(S, ND_BINOP, loc, t);
  n->op = op;
  n->a = x;
  n->b = y;
  return n;
}

/* Pointers compare only with pointers to the same type: an integer or a
 * float has no address to compare with. */
static Node *pointer_compare(Sema *S, Loc loc, TokenKind op, Node *x, Node *y) {
  if (!x->type->is_ptr || !y->type->is_ptr || x->type->elem != y->type->elem) {
    diag_error(S->diags, loc, "invalid pointer comparison: %s %s %s", type_str(S->arena, x->type),
               op_spelling(op), type_str(S->arena, y->type));
    diag_note(S->diags, loc, "a pointer compares only with a pointer of the same type");
    return poison(S, loc);
  }
  if (!broadcast_pair(S, loc, "a comparison", &x, &y)) return poison(S, loc);
  return make_binop(S, loc, op, x, y, type_with_elem(S->arena, x->type, DT_I1, 0));
}

static Node *pointer_arith(Sema *S, Loc loc, TokenKind op, Node *x, Node *y) {
  if (is_comparison(op)) return pointer_compare(S, loc, op, x, y);
  if (op == TK_PLUS && !x->type->is_ptr) { /* offset + pointer */
    Node *t = x;
    x = y;
    y = t;
  }
  if (y->type->is_ptr || (op != TK_PLUS && op != TK_MINUS) || !dtype_is_int(y->type->elem) ||
      y->type->elem == DT_I1) {
    diag_error(S->diags, loc, "invalid pointer arithmetic: %s %s %s", type_str(S->arena, x->type),
               op_spelling(op), type_str(S->arena, y->type));
    if (!y->type->is_ptr && dtype_is_float(y->type->elem))
      diag_note(S->diags, loc, "pointer offsets must be integers; convert with .to(tl.int32)");
    return poison(S, loc);
  }
  if (!broadcast_pair(S, loc, "pointer arithmetic", &x, &y)) return poison(S, loc);
  Node *n = make_binop(S, loc, op, x, y, x->type);
  return n;
}

static int check_operand_kinds(Sema *S, Loc loc, TokenKind op, DType dx, DType dy) {
  if (is_bitwise(op) && (dtype_is_float(dx) || dtype_is_float(dy))) {
    diag_error(S->diags, loc, "operator '%s' requires integer operands, got %s and %s", op_spelling(op),
               dtype_name(dx), dtype_name(dy));
    return 0;
  }
  if (op == TK_FLOORDIV && (dtype_is_float(dx) || dtype_is_float(dy))) {
    diag_error(S->diags, loc, "operator '//' requires integer operands, got %s and %s", dtype_name(dx),
               dtype_name(dy));
    diag_note(S->diags, loc, "use '/' and tl.floor for floating-point floor division");
    return 0;
  }
  if (op == TK_AT) {
    diag_error(S->diags, loc, "operator '@' is not supported on tiles; use tl.dot");
    return 0;
  }
  if (op == TK_POW) {
    diag_error(S->diags, loc, "operator '**' is only defined on constexprs; use tl.exp2 or multiply");
    return 0;
  }
  return 1;
}

int refuse_fp8(Sema *S, Loc loc, const char *what, DType t) {
  if (!dtype_is_fp8(t)) return 0;
  /* GPUs have no fp8 arithmetic: the precision to compute in is the kernel's choice, made with .to */
  diag_error(S->diags, loc, "%s: cannot compute in %s", what, dtype_name(t));
  diag_note(S->diags, loc, "fp8 values are for loads, stores, conversions and tl.dot; convert first, e.g. x.to(tl.float32)");
  return 1;
}

/* The dtype an arithmetic operation computes in. */
static DType computation_type(TokenKind op, Node *x, Node *y) {
  int xw = is_const(x), yw = is_const(y);
  DType dx = x->type->elem, dy = y->type->elem;
  if (op == TK_SLASH && dtype_is_int(dx) && dtype_is_int(dy)) return DT_FP32;
  if (is_bitwise(op) && dx == DT_I1 && dy == DT_I1) return DT_I1;
  return promote(dx, xw, dy, yw, op == TK_SLASH || op == TK_PERCENT);
}

/* Whether two tuples of constexprs (shapes, say) are equal, element by
 * element, as Python's; -1 (reported) when an element is a run-time value. */
static int tuples_equal(Sema *S, Loc loc, const Node *x, const Node *y) {
  if (x->args.len != y->args.len) return 0;
  for (int i = 0; i < x->args.len; i++) {
    const Node *a = x->args.data[i], *b = y->args.data[i];
    int same;
    if (a->kind == ND_TUPLE && b->kind == ND_TUPLE) same = tuples_equal(S, loc, a, b);
    else if (a->kind == ND_TUPLE || b->kind == ND_TUPLE) same = 0;
    else if (is_const(a) && is_const(b) && !a->type && !b->type) same = value_equal(a->cval, b->cval);
    else {
      diag_error(S->diags, loc, "tuples compare only when their elements are constexprs (element %d is not)", i);
      return -1;
    }
    if (same != 1) return same;
  }
  return 1;
}

Node *binary(Sema *S, Loc loc, TokenKind op, Node *x, Node *y) {
  if (is_poison(x) || is_poison(y)) return poison(S, loc);
  if ((op == TK_EQ || op == TK_NE) && x->kind == ND_TUPLE && y->kind == ND_TUPLE) { /* x.shape == (16, 32) */
    int same = tuples_equal(S, loc, x, y);
    return same < 0 ? poison(S, loc) : mk_const(S, loc, value_bool(S, same == (op == TK_EQ)));
  }
  if (is_const(x) && is_const(y) && !x->type && !y->type) return fold_consts(S, loc, op, x, y);
  x = runtime(S, x);
  y = runtime(S, y);
  if (!x->type || !y->type) {
    Node *bad = x->type ? y : x;
    diag_error(S->diags, bad->loc, "operand of '%s' must be a tile or a number, not %s", op_spelling(op),
               describe(S, bad));
    return poison(S, loc);
  }
  if (x->type->is_ptr || y->type->is_ptr) return pointer_arith(S, loc, op, x, y);
  if (!check_operand_kinds(S, loc, op, x->type->elem, y->type->elem)) return poison(S, loc);
  DType ct = computation_type(op, x, y);
  if (refuse_fp8(S, loc, arena_printf(S->arena, "operator '%s'", op_spelling(op)), ct)) return poison(S, loc);
  if ((op == TK_SLASH || op == TK_FLOORDIV || op == TK_PERCENT) && dtype_is_int(x->type->elem) &&
      dtype_is_int(y->type->elem) && !is_const(x) && !is_const(y) && x->type->elem != DT_I1 &&
      y->type->elem != DT_I1 && dtype_is_signed(x->type->elem) != dtype_is_signed(y->type->elem)) {
    diag_error(S->diags, loc, "operator '%s' on %s and %s: the signedness differs, so the result is unlikely to be useful",
               op_spelling(op), dtype_name(x->type->elem), dtype_name(y->type->elem));
    diag_note(S->diags, loc, "convert one operand so both are signed or both unsigned");
    return poison(S, loc);
  }
  if (!broadcast_pair(S, loc, is_comparison(op) ? "a comparison" : "an arithmetic operator", &x, &y))
    return poison(S, loc);
  x = cast(S, x, ct, 0);
  y = cast(S, y, ct, 0);
  Type *t = is_comparison(op) ? type_with_elem(S->arena, x->type, DT_I1, 0) : x->type;
  return make_binop(S, loc, op, x, y, t);
}

Node *to_bool(Sema *S, Node *n) {
  n = runtime(S, n);
  if (!n->type || n->type->elem == DT_I1) return n;
  Node *zero = mk_const(S, n->loc, value_int(S, 0));
  return binary(S, n->loc, TK_NE, n, zero);
}

Node *unary(Sema *S, Loc loc, TokenKind op, Node *x) {
  if (is_poison(x)) return x;
  if (is_const(x) && !x->type) {
    int errors = S->diags->errors;
    Value *v = fold_unary(S, loc, op, x->cval);
    if (v) return mk_const(S, loc, v);
    if (S->diags->errors == errors) /* not an overflow, already reported */
      diag_error(S->diags, loc, "bad operand for unary '%s': %s", op_spelling(op), describe(S, x));
    return poison(S, loc);
  }
  if (!x->type) {
    diag_error(S->diags, loc, "bad operand for unary '%s'", op_spelling(op));
    return poison(S, loc);
  }
  if (x->type->is_ptr) {
    diag_error(S->diags, loc, "unary '%s' is not defined on pointers", op_spelling(op));
    return poison(S, loc);
  }
  if (op == TK_KW_NOT) x = to_bool(S, x);
  if (op == TK_TILDE && dtype_is_float(x->type->elem)) {
    diag_error(S->diags, loc, "operator '~' requires an integer operand, got %s", dtype_name(x->type->elem));
    return poison(S, loc);
  }
  if (op == TK_PLUS) return x;
  if (refuse_fp8(S, loc, arena_printf(S->arena, "unary '%s'", op_spelling(op)), x->type->elem)) return poison(S, loc);
  Node *n = typed_node(S, ND_UNARY, loc, x->type);
  n->op = op;
  n->a = x;
  return n;
}

/* Reads a constexpr shape: an int, or a tuple/list of ints, each a power of
 * two, at most 2^20 elements in all. */
int check_shape_value(Sema *S, Loc loc, Value *v, int *rank, int64_t *shape) {
  int n = v->kind == V_LIST ? v->items.len : 1;
  if (n > MAX_RANK) {
    diag_error(S->diags, loc, "tiles have at most %d dimensions, this shape has %d", MAX_RANK, n);
    return 0;
  }
  int64_t total = 1;
  for (int i = 0; i < n; i++) {
    Value *d = v->kind == V_LIST ? v->items.data[i] : v;
    if (d->kind != V_INT) {
      diag_error(S->diags, loc, "shape dimensions must be constexpr integers, got %s", value_str(S->arena, d));
      return 0;
    }
    if (d->i <= 0 || (d->i & (d->i - 1))) {
      diag_error(S->diags, loc, "tile dimensions must be powers of two, got %lld", (long long)d->i);
      return 0;
    }
    total *= d->i;
    if (total > MAX_TILE_ELEMENTS) {
      diag_error(S->diags, loc, "tile has more than 2^20 elements");
      return 0;
    }
    shape[i] = d->i;
  }
  *rank = n;
  return 1;
}
