/* Compile-time (constexpr) values and their arithmetic, with Python's
 * semantics: integers floor-divide and take the divisor's sign in %, as the
 * Python that evaluates Triton's constexprs does. */
#include "sema_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

Value *value_new(Sema *S, ValueKind kind) {
  Value *v = arena_alloc(S->arena, sizeof *v);
  v->kind = kind;
  return v;
}

Value *value_int(Sema *S, int64_t i) {
  Value *v = value_new(S, V_INT);
  v->i = i;
  return v;
}

Value *value_uint(Sema *S, uint64_t u) {
  Value *v = value_int(S, (int64_t)u);
  v->is_u64 = u > INT64_MAX;
  return v;
}

Value *value_float(Sema *S, double f) {
  Value *v = value_new(S, V_FLOAT);
  v->f = f;
  return v;
}

Value *value_bool(Sema *S, int b) {
  Value *v = value_new(S, V_BOOL);
  v->i = b != 0;
  return v;
}

Value *value_string(Sema *S, const char *s) {
  Value *v = value_new(S, V_STR);
  v->s = s;
  v->slen = strlen(s);
  return v;
}

Value *value_dtype(Sema *S, DType t, int is_ptr) {
  Value *v = value_new(S, V_DTYPE);
  v->dtype = t;
  v->dtype_is_ptr = is_ptr;
  return v;
}

static void print_value(Buf *b, const Value *v) {
  switch (v->kind) {
  case V_INT:
    if (v->is_u64) buf_printf(b, "%llu", (unsigned long long)v->i);
    else buf_printf(b, "%lld", (long long)v->i);
    break;
  case V_FLOAT: {
    if (isinf(v->f)) buf_puts(b, v->f > 0 ? "inf" : "-inf");
    else if (isnan(v->f)) buf_puts(b, "nan");
    else {
      char tmp[64];
      snprintf(tmp, sizeof tmp, "%.17g", v->f);
      if (!strpbrk(tmp, ".e")) strcat(tmp, ".0");
      buf_puts(b, tmp);
    }
    break;
  }
  case V_BOOL: buf_puts(b, v->i ? "True" : "False"); break;
  case V_STR:
    buf_puts(b, "'");
    for (size_t i = 0; i < v->slen && i < 200; i++) {
      unsigned char c = (unsigned char)v->s[i];
      if (c < 0x20 || c == 0x7f || c == '\'' || c == '\\') buf_printf(b, "\\x%02x", c);
      else buf_putn(b, (const char *)&c, 1);
    }
    buf_puts(b, "'");
    break;
  case V_NONE: buf_puts(b, "None"); break;
  case V_DTYPE: buf_printf(b, "%s%s", v->dtype_is_ptr ? "*" : "", dtype_name(v->dtype)); break;
  case V_FUNC: buf_printf(b, "function %s", v->func->name); break;
  case V_BUILTIN: buf_printf(b, "builtin %s", builtin_name((int)v->i)); break;
  case V_LIBDEVICE: buf_printf(b, "libdevice.%s", libdevice_name((int)v->i)); break;
  case V_NAMESPACE: buf_printf(b, "module %s", v->s); break;
  case V_MODULE: buf_printf(b, "module %s", v->s); break;
  case V_CONSTEXPR: buf_puts(b, "tl.constexpr"); break;
  case V_TENSOR: buf_puts(b, "tl.tensor"); break;
  case V_CLASS:
  case V_MISSING_DTYPE: buf_printf(b, "tl.%s", v->s); break;
  case V_BLOCK_TYPE:
    buf_puts(b, "<[");
    for (int i = 0; i < v->items.len; i++) buf_printf(b, "%s%lld", i ? ", " : "", (long long)v->items.data[i]->i);
    buf_printf(b, "], %s%s>", v->dtype_is_ptr ? "*" : "", dtype_name(v->dtype));
    break;
  case V_TYPE_METHOD: buf_printf(b, "method %s of ", v->s); print_value(b, v->items.data[0]); break;
  case V_TUPLE_TYPE: /* Triton's tuple_type name: [int32,int32] */
    buf_puts(b, "[");
    for (int i = 0; i < v->items.len; i++) {
      if (i) buf_puts(b, ",");
      print_value(b, v->items.data[i]);
    }
    buf_puts(b, "]");
    break;
  case V_LAMBDA: buf_puts(b, "lambda"); break;
  case V_LIST:
  case V_CONFIG:
  case V_RECORD:
    buf_puts(b, v->kind == V_CONFIG ? "Config(" : v->kind == V_RECORD ? "object(" : "(");
    for (int i = 0; i < v->items.len; i++) {
      if (i) buf_puts(b, ", ");
      if (v->kind != V_LIST) buf_printf(b, "%s=", v->keys.data[i]);
      print_value(b, v->items.data[i]);
    }
    buf_puts(b, v->kind == V_LIST && v->items.len == 1 ? ",)" : ")");
    break;
  }
}

const char *value_str(Arena *a, const Value *v) {
  Buf b;
  buf_init(&b, a);
  print_value(&b, v);
  return buf_cstr(&b);
}

int value_truth(const Value *v, int *ok) {
  *ok = 1;
  switch (v->kind) {
  case V_INT:
  case V_BOOL: return v->i != 0;
  case V_FLOAT: return v->f != 0;
  case V_STR: return v->slen != 0;
  case V_NONE: return 0;
  case V_LIST: return v->items.len != 0;
  default: return 1;
  }
}

static int is_number(const Value *v) { return v->kind == V_INT || v->kind == V_BOOL || v->kind == V_FLOAT; }

/* Constexpr integers are Python's, within [-2^63, 2^64): an is_u64 value is
 * Triton's uint64 literal.  They are computed in 128 bits, so every operand
 * and every result in range is exact. */
__extension__ typedef __int128 Wide;
static const Wide WIDE_MIN = -(Wide)INT64_MAX - 1;
static const Wide WIDE_LIMIT = (Wide)UINT64_MAX + 1; /* the first value out of range */

static Wide as_wide(const Value *v) { return v->is_u64 ? (Wide)(uint64_t)v->i : (Wide)v->i; }
static double as_double(const Value *v) { return v->kind == V_FLOAT ? v->f : (double)as_wide(v); }

int value_equal(const Value *x, const Value *y) {
  if (is_number(x) && is_number(y)) {
    if (x->kind == V_FLOAT || y->kind == V_FLOAT) return as_double(x) == as_double(y);
    return as_wide(x) == as_wide(y);
  }
  if (x->kind != y->kind) return 0;
  switch (x->kind) {
  case V_STR: return x->slen == y->slen && !memcmp(x->s, y->s, x->slen);
  case V_NONE: return 1;
  case V_DTYPE: return x->dtype == y->dtype && x->dtype_is_ptr == y->dtype_is_ptr;
  case V_MISSING_DTYPE: return !strcmp(x->s, y->s);
  case V_BLOCK_TYPE:
    if (x->dtype != y->dtype || x->dtype_is_ptr != y->dtype_is_ptr || x->items.len != y->items.len) return 0;
    for (int i = 0; i < x->items.len; i++)
      if (x->items.data[i]->i != y->items.data[i]->i) return 0;
    return 1;
  case V_FUNC: return x->func == y->func;
  case V_BUILTIN: return x->i == y->i && !x->self && !y->self;
  case V_LIBDEVICE: return x->i == y->i;
  case V_NAMESPACE: return !strcmp(x->s, y->s);
  case V_MODULE: return x->module == y->module;
  case V_LIST:
  case V_TUPLE_TYPE:
    if (x->items.len != y->items.len) return 0;
    for (int i = 0; i < x->items.len; i++)
      if (!value_equal(x->items.data[i], y->items.data[i])) return 0;
    return 1;
  default: return x == y;
  }
}

static Value *int_result(Sema *S, Loc loc, Wide r) {
  if (r < WIDE_MIN || r >= WIDE_LIMIT) {
    diag_error(S->diags, loc, "constexpr integer overflow (values are limited to [-2^63, 2^64))");
    return NULL;
  }
  return r > INT64_MAX ? value_uint(S, (uint64_t)r) : value_int(S, (int64_t)r);
}

static Wide floor_div(Wide a, Wide b) {
  Wide q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}

static Wide floor_mod(Wide a, Wide b) {
  Wide r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

/* a * b, or WIDE_LIMIT (out of range) where 128 bits do not hold it. */
static Wide wide_mul(Wide a, Wide b) {
  Wide r;
  return __builtin_mul_overflow(a, b, &r) ? WIDE_LIMIT : r;
}

/* Python's a << b where it stays in range: a negative a shifts as its
 * magnitude does (C's shift of a negative is undefined), and a magnitude
 * below 2^64 shifted by at most 63 stays below 2^127. */
static Value *shift_left(Sema *S, Loc loc, Wide a, Wide b) {
  Wide mag = a < 0 ? -a : a;
  if (a == 0) return value_int(S, 0);
  if (b >= 64) return int_result(S, loc, WIDE_LIMIT);
  return int_result(S, loc, a < 0 ? -(mag << b) : mag << b);
}

static Value *power(Sema *S, Loc loc, Wide a, Wide b) {
  if (b < 0) return value_float(S, pow((double)a, (double)b));
  if (a == 0 || a == 1) return value_int(S, b == 0 ? 1 : (int64_t)a);
  if (a == -1) return value_int(S, b % 2 ? -1 : 1);
  Wide acc = 1; /* |a| >= 2: at most 64 steps before it leaves the range */
  for (Wide i = 0; i < b; i++) {
    acc = wide_mul(acc, a);
    if (acc < WIDE_MIN || acc >= WIDE_LIMIT) return int_result(S, loc, acc);
  }
  return int_result(S, loc, acc);
}

static Value *fold_int(Sema *S, Loc loc, TokenKind op, Wide a, Wide b) {
  switch (op) {
  case TK_PLUS: return int_result(S, loc, a + b);
  case TK_MINUS: return int_result(S, loc, a - b);
  case TK_STAR: return int_result(S, loc, wide_mul(a, b));
  case TK_FLOORDIV:
  case TK_PERCENT:
    if (b == 0) {
      diag_error(S->diags, loc, "integer division by zero in a constexpr");
      return NULL;
    }
    return int_result(S, loc, op == TK_FLOORDIV ? floor_div(a, b) : floor_mod(a, b));
  case TK_AMP: return int_result(S, loc, a & b);
  case TK_PIPE: return int_result(S, loc, a | b);
  case TK_CARET: return int_result(S, loc, a ^ b);
  case TK_SHL:
  case TK_SHR:
    if (b < 0) {
      diag_error(S->diags, loc, "negative shift count in a constexpr");
      return NULL;
    }
    if (op == TK_SHR) return int_result(S, loc, b > 100 ? (a < 0 ? -1 : 0) : a >> b);
    return shift_left(S, loc, a, b);
  case TK_POW: return power(S, loc, a, b);
  default: return NULL;
  }
}

static Value *fold_float(Sema *S, Loc loc, TokenKind op, double a, double b) {
  switch (op) {
  case TK_PLUS: return value_float(S, a + b);
  case TK_MINUS: return value_float(S, a - b);
  case TK_STAR: return value_float(S, a * b);
  case TK_SLASH:
  case TK_FLOORDIV:
  case TK_PERCENT:
    if (b == 0) {
      diag_error(S->diags, loc, "float division by zero in a constexpr");
      return NULL;
    }
    if (op == TK_SLASH) return value_float(S, a / b);
    if (op == TK_FLOORDIV) return value_float(S, floor(a / b));
    return value_float(S, a - b * floor(a / b));
  case TK_POW: return value_float(S, pow(a, b));
  default: return NULL;
  }
}

static Value *compare(Sema *S, TokenKind op, const Value *x, const Value *y) {
  if (op == TK_EQ || op == TK_NE) return value_bool(S, value_equal(x, y) == (op == TK_EQ));
  int c;
  if (is_number(x) && is_number(y)) {
    double a = as_double(x), b = as_double(y);
    if (x->kind != V_FLOAT && y->kind != V_FLOAT) c = (as_wide(x) > as_wide(y)) - (as_wide(x) < as_wide(y));
    else c = (a > b) - (a < b);
  } else if (x->kind == V_STR && y->kind == V_STR) {
    size_t n = x->slen < y->slen ? x->slen : y->slen;
    c = memcmp(x->s, y->s, n);
    if (!c) c = (x->slen > y->slen) - (x->slen < y->slen);
  } else {
    return NULL;
  }
  switch (op) {
  case TK_LT: return value_bool(S, c < 0);
  case TK_LE: return value_bool(S, c <= 0);
  case TK_GT: return value_bool(S, c > 0);
  default: return value_bool(S, c >= 0);
  }
}

static Value *concat(Sema *S, const Value *x, const Value *y) {
  if (x->kind == V_STR) {
    char *s = arena_alloc(S->arena, x->slen + y->slen + 1);
    memcpy(s, x->s, x->slen);
    memcpy(s + x->slen, y->s, y->slen);
    Value *v = value_new(S, V_STR);
    v->s = s;
    v->slen = x->slen + y->slen;
    return v;
  }
  Value *v = value_new(S, V_LIST);
  for (int i = 0; i < x->items.len; i++) vec_push(S->arena, &v->items, x->items.data[i]);
  for (int i = 0; i < y->items.len; i++) vec_push(S->arena, &v->items, y->items.data[i]);
  return v;
}

/* Returns NULL when the operation does not apply to these values (the
 * caller reports it) or after reporting an arithmetic error. */
Value *fold_binary(Sema *S, Loc loc, TokenKind op, const Value *x, const Value *y) {
  if (op == TK_KW_IS) return value_bool(S, value_equal(x, y) && x->kind == y->kind);
  if (op == TK_EQ || op == TK_NE || op == TK_LT || op == TK_LE || op == TK_GT || op == TK_GE)
    return compare(S, op, x, y);
  if (op == TK_PLUS && x->kind == y->kind && (x->kind == V_STR || x->kind == V_LIST))
    return concat(S, x, y);
  if (!is_number(x) || !is_number(y)) return NULL;
  if (op == TK_SLASH) return fold_float(S, loc, op, as_double(x), as_double(y));
  if (x->kind != V_FLOAT && y->kind != V_FLOAT) {
    Value *r = fold_int(S, loc, op, as_wide(x), as_wide(y));
    if (r && x->kind == V_BOOL && y->kind == V_BOOL && (op == TK_AMP || op == TK_PIPE || op == TK_CARET))
      r->kind = V_BOOL;
    return r;
  }
  if (op == TK_AMP || op == TK_PIPE || op == TK_CARET || op == TK_SHL || op == TK_SHR) return NULL;
  return fold_float(S, loc, op, as_double(x), as_double(y));
}

Value *fold_unary(Sema *S, Loc loc, TokenKind op, const Value *x) {
  int ok;
  if (op == TK_KW_NOT) {
    int t = value_truth(x, &ok);
    return value_bool(S, !t);
  }
  if (x->kind == V_FLOAT) {
    if (op == TK_MINUS) return value_float(S, -x->f);
    if (op == TK_PLUS) return value_float(S, x->f);
    return NULL;
  }
  if (x->kind != V_INT && x->kind != V_BOOL) return NULL;
  if (op == TK_MINUS) return fold_int(S, loc, TK_MINUS, 0, as_wide(x));
  if (op == TK_PLUS) return int_result(S, loc, as_wide(x));
  return int_result(S, loc, ~as_wide(x));
}

/* ---- Triton's dtype objects: x.dtype.is_fp16(), x.type.element_ty ------------------------------ */

/* dtype.name in Triton: "int32", "uint8", "fp16", "bf16" (not tl.NAME's "float16"). */
static const char *triton_dtype_name(DType t) {
  return dtype_kind(t) == DK_FLOAT ? dtype_name(t) : dtype_triton_name(t);
}

/* The answer of a predicate method of Triton's dtype, pointer_type or
 * block_type (`is_fp16`, `is_floating`, ...); -1 when there is no such
 * method.  As in Triton, only a plain dtype answers the element-type
 * questions: a pointer type is only is_ptr(), a block type only is_block(). */
int type_predicate(const Value *t, const char *name) {
  int plain = t->kind == V_DTYPE && !t->dtype_is_ptr;
  DKind k = dtype_kind(t->dtype);
  if (!strcmp(name, "is_ptr")) return t->kind == V_DTYPE && t->dtype_is_ptr;
  if (!strcmp(name, "is_void")) return t->kind == V_MISSING_DTYPE && !strcmp(t->s, "void");
  if (!strcmp(name, "is_block")) return t->kind == V_BLOCK_TYPE;
  if (!strcmp(name, "is_const")) return 0;
  if (!strcmp(name, "is_floating")) return plain && k == DK_FLOAT;
  if (!strcmp(name, "is_standard_floating")) return plain && k == DK_FLOAT && !dtype_is_fp8(t->dtype);
  if (!strcmp(name, "is_int_signed")) return plain && k == DK_SINT;
  if (!strcmp(name, "is_int_unsigned")) return plain && (k == DK_UINT || k == DK_BOOL);
  if (!strcmp(name, "is_int")) return plain && k != DK_FLOAT;
  if (!strcmp(name, "is_bool")) return plain && t->dtype == DT_I1;
  if (!strcmp(name, "is_fp8")) return plain && dtype_is_fp8(t->dtype);
  if (strncmp(name, "is_", 3)) return -1;
  for (int d = 0; d < DT_COUNT; d++)
    if (!strcmp(name + 3, triton_dtype_name((DType)d))) return plain && t->dtype == (DType)d;
  if (!strncmp(name, "is_fp8", 6)) return 0; /* the fp8 types tile lacks (is_fp8e4b8): never this one */
  return -1;
}

/* A data attribute of a dtype or block type, or NULL when it has none. */
Value *type_attribute(Sema *S, const Value *t, const char *name) {
  int plain = t->kind == V_DTYPE && !t->dtype_is_ptr;
  if (!strcmp(name, "element_ty") && !plain) return value_dtype(S, t->dtype, t->kind == V_BLOCK_TYPE && t->dtype_is_ptr);
  if (!strcmp(name, "scalar"))
    return t->kind == V_BLOCK_TYPE ? value_dtype(S, t->dtype, t->dtype_is_ptr) : (Value *)t;
  if (!strcmp(name, "primitive_bitwidth") && plain) return value_int(S, dtype_bits(t->dtype));
  if (!strcmp(name, "int_bitwidth") && plain && dtype_kind(t->dtype) != DK_FLOAT) return value_int(S, dtype_bits(t->dtype));
  if (!strcmp(name, "name") && plain) return value_string(S, triton_dtype_name(t->dtype));
  if (t->kind != V_BLOCK_TYPE) return NULL;
  if (!strcmp(name, "shape")) {
    Value *v = value_new(S, V_LIST);
    for (int i = 0; i < t->items.len; i++) vec_push(S->arena, &v->items, t->items.data[i]);
    return v;
  }
  if (!strcmp(name, "numel")) {
    int64_t n = 1;
    for (int i = 0; i < t->items.len; i++) n *= t->items.data[i]->i;
    return value_int(S, n);
  }
  return NULL;
}

/* x.type: the dtype of a scalar, the block type of a tile. */
Value *value_type_of(Sema *S, const Type *t) {
  if (t->rank == 0) return value_dtype(S, t->elem, t->is_ptr);
  Value *v = value_new(S, V_BLOCK_TYPE);
  v->dtype = t->elem;
  v->dtype_is_ptr = t->is_ptr;
  for (int i = 0; i < t->rank; i++) vec_push(S->arena, &v->items, value_int(S, t->shape[i]));
  return v;
}
