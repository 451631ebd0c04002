/* Element types, tile types, promotion and broadcasting. */
#include "dtypes.h"

#include <string.h>

static const struct {
  const char *short_name, *triton_name;
  int bits;
  DKind kind;
} dtypes[] = {
#define DTYPE(id, short_name, triton_name, bits, kind) {short_name, triton_name, bits, DK_##kind},
#include "dtypes.def"
#undef DTYPE
};

const char *dtype_name(DType t) { return dtypes[t].short_name; }
const char *dtype_triton_name(DType t) { return dtypes[t].triton_name; }
int dtype_bits(DType t) { return dtypes[t].bits; }
DKind dtype_kind(DType t) { return dtypes[t].kind; }
int dtype_is_float(DType t) { return dtypes[t].kind == DK_FLOAT; }
int dtype_is_int(DType t) { return dtypes[t].kind != DK_FLOAT; }
int dtype_is_signed(DType t) { return dtypes[t].kind == DK_SINT || dtypes[t].kind == DK_FLOAT; }
int dtype_is_fp8(DType t) { return t == DT_FP8E4NV || t == DT_FP8E5 || t == DT_FP8E4B15; }
int dtype_is_mma_fp8(DType t) { return t == DT_FP8E4NV || t == DT_FP8E5; }

/* The first characters are compared inline: launches look dtypes up on their hot path. */
int dtype_lookup(const char *name) {
  for (int i = 0; i < DT_COUNT; i++) {
    const char *s = dtypes[i].short_name, *t = dtypes[i].triton_name;
    if ((name[0] == s[0] && name[1] == s[1] && !strcmp(name, s)) || (name[0] == t[0] && !strcmp(name, t))) return i;
  }
  return -1;
}

Type *type_scalar(Arena *a, DType elem) {
  Type *t = arena_alloc(a, sizeof *t);
  t->elem = elem;
  return t;
}

Type *type_pointer(Arena *a, DType elem) {
  Type *t = type_scalar(a, elem);
  t->is_ptr = 1;
  return t;
}

Type *type_tile(Arena *a, const Type *elem_of, int rank, const int64_t *shape) {
  Type *t = arena_alloc(a, sizeof *t);
  t->elem = elem_of->elem;
  t->is_ptr = elem_of->is_ptr;
  t->is_const = elem_of->is_const;
  t->rank = rank;
  for (int i = 0; i < rank; i++) t->shape[i] = shape[i];
  return t;
}

Type *type_with_elem(Arena *a, const Type *t, DType elem, int is_ptr) {
  Type *r = arena_alloc(a, sizeof *r);
  *r = *t;
  r->elem = elem;
  r->is_ptr = is_ptr;
  r->is_const = is_ptr && t->is_const && elem == t->elem;
  return r;
}

int type_same_shape(const Type *x, const Type *y) {
  if (x->rank != y->rank) return 0;
  for (int i = 0; i < x->rank; i++)
    if (x->shape[i] != y->shape[i]) return 0;
  return 1;
}

int type_equal(const Type *x, const Type *y) {
  return x->elem == y->elem && x->is_ptr == y->is_ptr && type_same_shape(x, y);
}

int64_t type_numel(const Type *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    if (__builtin_mul_overflow(n, t->shape[i], &n)) return INT64_MAX;
  return n;
}

const char *shape_str(Arena *a, const Type *t) {
  Buf b;
  buf_init(&b, a);
  buf_puts(&b, "(");
  for (int i = 0; i < t->rank; i++) buf_printf(&b, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
  buf_puts(&b, t->rank == 1 ? ",)" : ")");
  return buf_cstr(&b);
}

const char *type_str(Arena *a, const Type *t) {
  Buf b;
  buf_init(&b, a);
  buf_printf(&b, "%s%s", t->is_ptr ? "*" : "", dtype_name(t->elem));
  if (t->rank) {
    buf_puts(&b, "[");
    for (int i = 0; i < t->rank; i++) buf_printf(&b, "%s%lld", i ? "," : "", (long long)t->shape[i]);
    buf_puts(&b, "]");
  }
  return buf_cstr(&b);
}

int broadcast_shapes(const Type *x, const Type *y, int *rank, int64_t *shape) {
  int r = x->rank > y->rank ? x->rank : y->rank;
  for (int i = 0; i < r; i++) {
    int xi = i - (r - x->rank), yi = i - (r - y->rank);
    int64_t dx = xi >= 0 ? x->shape[xi] : 1, dy = yi >= 0 ? y->shape[yi] : 1;
    if (dx != dy && dx != 1 && dy != 1) return 0;
    shape[i] = dx == 1 ? dy : dx;
  }
  *rank = r;
  return 1;
}

int64_t shape_numel(int rank, const int64_t *shape) {
  Type t = {0};
  t.rank = rank;
  for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
  return type_numel(&t);
}

static DType integer_promote(DType x, DType y) {
  int xb = dtype_bits(x), yb = dtype_bits(y);
  int xs = dtype_kind(x) == DK_SINT, ys = dtype_kind(y) == DK_SINT;
  if (xs != ys && dtype_kind(x) != DK_BOOL && dtype_kind(y) != DK_BOOL) {
    /* mixed signedness: the wider wins; at equal width the unsigned one */
    if (xb == yb) return xs ? y : x;
  }
  return xb >= yb ? x : y;
}

/* Triton's dtype kinds: bool < integral < floating; signedness is not a kind. */
static int kind_class(DType t) { return dtype_kind(t) == DK_BOOL ? 0 : dtype_kind(t) == DK_FLOAT ? 2 : 1; }

DType promote(DType x, int x_weak, DType y, int y_weak, int div_or_mod) {
  if (x_weak != y_weak) {
    DType weak = x_weak ? x : y, strong = x_weak ? y : x;
    if (kind_class(weak) <= kind_class(strong)) {
      if (div_or_mod && (strong == DT_FP16 || strong == DT_BF16)) return DT_FP32;
      return strong;
    }
  }
  if (x == DT_FP64 || y == DT_FP64) return DT_FP64;
  if (x == DT_FP32 || y == DT_FP32) return DT_FP32;
  if (x == DT_FP16 || y == DT_FP16) return div_or_mod ? DT_FP32 : DT_FP16;
  if (x == DT_BF16 || y == DT_BF16) return x == y && !div_or_mod ? DT_BF16 : DT_FP32;
  /* as Triton: two different fp8 types meet in fp16; an fp8 type with itself or an integer stays fp8 (and
     sema refuses to compute in it) */
  if (dtype_is_fp8(x) && dtype_is_fp8(y)) return x == y ? x : DT_FP16;
  if (dtype_is_fp8(x) || dtype_is_fp8(y)) return dtype_is_fp8(x) ? x : y;
  return integer_promote(x, y);
}

/* Triton's to_tensor: int32, else uint32 up to 2^32, else int64 (uint64 literals are is_u64 values). */
DType literal_int_type(int64_t v) {
  if (v >= INT32_MIN && v <= INT32_MAX) return DT_I32;
  return v > INT32_MAX && v <= UINT32_MAX ? DT_U32 : DT_I64;
}
