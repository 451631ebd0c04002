/* The CPU interpreter (see interp.h).  Every value lives in a slot of 8-byte
 * words, one per element: integers and pointers as int64 (wrapped to their
 * width after each op), floats as double rounded to their type after each
 * op.  Slots are reused across ops, iterations and programs, so a run
 * allocates once per value. */
#include "interp.h"
#include "../support/numeric.h"
#include "../support/special_math.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ADDRESS_SHIFT = 44 };  /* a pointer is (buffer + 1) << 44, plus a signed byte offset */
_Static_assert(INTERP_MAX_BUFFER_BYTES == (size_t)1 << (ADDRESS_SHIFT - 1), "a buffer's offsets fit below the shift");
/* Loop iterations and programs between two looks at the clock: a look costs
 * about a fifth of a trivial iteration; 64 heavy ones (a 128^3 dot each) take
 * well under a second. */
enum { TICKS_PER_CLOCK = 64 };

typedef struct Slot {
  int64_t n, cap;
  union {
    int64_t *i;
    double *f;
  };
} Slot;

typedef struct Interp {
  InterpLaunch *launch;
  const TirFunc *f;
  Slot *slots;
  Slot *views;    /* per buffer value (GPU-layout IR's shared memory): its elements, inside a local_alloc's slot */
  int pid[3];
  double deadline;  /* CLOCK_MONOTONIC seconds when the run must stop; 0: never */
  unsigned ticks;   /* iterations and programs since the run began */
  int64_t timer_reads; /* globaltimer's value: its reads so far (deterministic, unlike a clock) */
  jmp_buf fail;
} Interp;

/* ---- failure ------------------------------------------------------------- */

_Noreturn static void fail(Interp *I, const TirOp *op, const char *fmt, ...) {
  char msg[360];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char place[300] = "";
  if (op && op->loc.src) snprintf(place, sizeof place, "%s:%d ", op->loc.src->name, op->loc.line);
  snprintf(I->launch->error, sizeof I->launch->error, "kernel '%s', %s(program %d, %d, %d): %s", I->f->name, place,
           I->pid[0], I->pid[1], I->pid[2], msg);
  longjmp(I->fail, 1);
}

/* ---- slots --------------------------------------------------------------- */

static Type *type_of_value(Interp *I, int v) { return tir_type(I->f, v); }

static Slot *slot_for(Interp *I, const TirOp *op, int v) {
  Slot *s = &I->slots[v];
  int64_t n = type_numel(type_of_value(I, v));
  if (n < 0 || n > MAX_TILE_ELEMENTS) fail(I, op, "a tile of %lld elements", (long long)n);
  if (n > s->cap) {
    void *p = realloc(s->i, (size_t)n * sizeof(int64_t));
    if (!p) fail(I, op, "out of memory for a tile of %lld elements", (long long)n);
    s->i = p;
    s->cap = n;
  }
  s->n = n;
  return s;
}

static Slot *in(Interp *I, const TirOp *op, int k) {
  int v = op->operands.data[k];
  return I->views[v].i ? &I->views[v] : &I->slots[v];
}
static Type *in_type(Interp *I, const TirOp *op, int k) { return type_of_value(I, op->operands.data[k]); }
static Slot *out(Interp *I, const TirOp *op) { return slot_for(I, op, op->results.data[0]); }
static Type *out_type(Interp *I, const TirOp *op) { return type_of_value(I, op->results.data[0]); }

static void copy_slot(Interp *I, const TirOp *op, int to, int from) {
  if (to == from) return;
  Slot *d = slot_for(I, op, to), *s = &I->slots[from];
  memcpy(d->i, s->i, (size_t)s->n * sizeof(int64_t));
}

/* ---- numbers ------------------------------------------------------------- */

static int is_float(const Type *t) { return !t->is_ptr && dtype_is_float(t->elem); }
static int is_unsigned(const Type *t) { return !t->is_ptr && dtype_kind(t->elem) == DK_UINT; }

static double round_float(double v, DType t) { return round_to_dtype(v, t); }

static int64_t wrap(int64_t v, const Type *t) { return t->is_ptr ? v : wrap_int(v, t->elem); }

/* Value conversion of one element, as the GPU's cvt: float to integer
 * truncates and saturates, NaN gives 0; to i1 is != 0. */
/* An fp8 value widened: sm_90's cvt gives the positive quiet NaN, whatever the code's sign. */
static double out_of_fp8(double v) { return isnan(v) ? NAN : v; }

static void convert(const Type *from, const Type *to, const Slot *s, int64_t k, Slot *d) {
  if (is_float(to)) {
    d->f[k] = is_float(from) ? round_float(s->f[k], to->elem) : int_to_float(s->i[k], from->elem, to->elem);
    if (dtype_is_fp8(from->elem) && !dtype_is_fp8(to->elem)) d->f[k] = out_of_fp8(d->f[k]);
    return;
  }
  if (to->elem == DT_I1 && !to->is_ptr) {
    d->i[k] = is_float(from) ? s->f[k] != 0 : s->i[k] != 0;
    return;
  }
  if (!is_float(from)) {
    d->i[k] = wrap(s->i[k], to);
    return;
  }
  double v = s->f[k];
  int bits = dtype_bits(to->elem);
  double lo = is_unsigned(to) ? 0 : -ldexp(1, bits - 1), hi = is_unsigned(to) ? ldexp(1, bits) - 1 : ldexp(1, bits - 1) - 1;
  if (isnan(v)) d->i[k] = 0;
  else if (v <= lo) d->i[k] = is_unsigned(to) ? 0 : (bits == 64 ? INT64_MIN : (int64_t)lo);
  else if (v >= hi) d->i[k] = bits == 64 ? (is_unsigned(to) ? -1 : INT64_MAX) : wrap((int64_t)hi, to);
  else d->i[k] = wrap(is_unsigned(to) ? (int64_t)(uint64_t)v : (int64_t)v, to);
}

/* The bits of an element as stored in memory, and back (for bitcast). */
static uint64_t bits_of(const Type *t, const Slot *s, int64_t k) {
  if (is_float(t)) return float_to_bits(s->f[k], t->elem);
  return (uint64_t)s->i[k] & (dtype_bits(t->elem) >= 64 || t->is_ptr ? ~0ull : ((1ull << dtype_bits(t->elem)) - 1));
}

static void from_bits(const Type *t, uint64_t b, Slot *d, int64_t k) {
  if (is_float(t)) d->f[k] = float_from_bits(b, t->elem);
  else d->i[k] = t->is_ptr ? (int64_t)b : wrap((int64_t)b, t);
}

/* ---- memory -------------------------------------------------------------- */

static int64_t buffer_base(int buffer) { return (int64_t)(buffer + 1) << ADDRESS_SHIFT; }

/* Resolves an address to host memory, or fails naming the buffer and index. */
static int buffer_of(int64_t addr);

static void *resolve(Interp *I, const TirOp *op, int64_t addr, int64_t lane, size_t size, const char *what) {
  int buffer = buffer_of(addr);
  InterpLaunch *L = I->launch;
  if (buffer < 0 || buffer >= L->n_buffers)
    fail(I, op, "out-of-bounds %s through a pointer outside every buffer (lane %lld)", what, (long long)lane);
  int64_t offset = addr - buffer_base(buffer);
  InterpBuffer *b = &L->buffers[buffer];
  if (offset < 0 || (uint64_t)offset + size > b->bytes || offset % (int64_t)size)
    fail(I, op, "out-of-bounds %s: element %lld of '%s', which has %lld element%s (lane %lld)", what,
         (long long)(offset >= 0 ? offset / (int64_t)size : -((-offset + (int64_t)size - 1) / (int64_t)size)), b->name,
         (long long)(b->bytes / size), b->bytes / size == 1 ? "" : "s", (long long)lane);
  return (char *)b->data + offset;
}

static size_t elem_bytes(DType t) { return t == DT_I1 ? 1 : (size_t)dtype_bits(t) / 8; }

static void read_elem(DType t, const void *p, Slot *d, int64_t k) {
  Type ty = {t, 0, 0, {0}, 0};
  uint64_t b = 0;
  memcpy(&b, p, elem_bytes(t));
  if (t == DT_I1) b = b != 0;
  from_bits(&ty, b, d, k);
}

static void write_elem(DType t, void *p, const Slot *s, int64_t k) {
  Type ty = {t, 0, 0, {0}, 0};
  uint64_t b = bits_of(&ty, s, k);
  memcpy(p, &b, elem_bytes(t));
}

static int lane_on(const Slot *mask, int64_t k) { return !mask || mask->i[k]; }

static void exec_load(Interp *I, const TirOp *op) {
  Slot *ptr = in(I, op, 0), *mask = op->flags & LOAD_MASK ? in(I, op, 1) : NULL;
  Slot *other = op->flags & LOAD_OTHER ? in(I, op, 2) : NULL;
  DType t = in_type(I, op, 0)->elem;
  Slot *d = out(I, op);
  for (int64_t k = 0; k < d->n; k++) {
    if (lane_on(mask, k)) read_elem(t, resolve(I, op, ptr->i[k], k, elem_bytes(t), "load"), d, k);
    else if (other) d->i[k] = other->i[k];
    else d->i[k] = 0; /* undefined on the GPU; 0 here */
  }
}

static void exec_store(Interp *I, const TirOp *op) {
  Slot *ptr = in(I, op, 0), *v = in(I, op, 1), *mask = op->flags & LOAD_MASK ? in(I, op, 2) : NULL;
  DType t = in_type(I, op, 0)->elem;
  for (int64_t k = 0; k < ptr->n; k++)
    if (lane_on(mask, k)) write_elem(t, resolve(I, op, ptr->i[k], k, elem_bytes(t), "store"), v, k);
}

static double combine_float(int kind, double a, double b) {
  switch (kind) {
  case ATOM_ADD: return a + b;
  case ATOM_MAX: return fmax(a, b);
  case ATOM_MIN: return fmin(a, b);
  default: return b;
  }
}

static int64_t combine_int(int kind, const Type *t, int64_t a, int64_t b) {
  int u = is_unsigned(t);
  switch (kind) {
  case ATOM_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
  case ATOM_MAX: return u ? ((uint64_t)a > (uint64_t)b ? a : b) : (a > b ? a : b);
  case ATOM_MIN: return u ? ((uint64_t)a < (uint64_t)b ? a : b) : (a < b ? a : b);
  case ATOM_AND: return a & b;
  case ATOM_OR: return a | b;
  case ATOM_XOR: return a ^ b;
  default: return b;
  }
}

/* ---- shared memory (GPU-layout IR) ---------------------------------------
 * A buffer is a view of a local_alloc's slot: memdesc_index views one
 * buffer of a multi-buffer; async copies complete at once. */

static void exec_local_alloc(Interp *I, const TirOp *op) {
  Slot *d = out(I, op);
  if (op->operands.len) memcpy(d->i, in(I, op, 0)->i, (size_t)d->n * sizeof(int64_t));
  else memset(d->i, 0, (size_t)d->n * sizeof(int64_t));
  I->views[op->results.data[0]] = *d;
}

static void exec_memdesc_index(Interp *I, const TirOp *op) {
  Slot *buffers = in(I, op, 0);
  int64_t index = in(I, op, 1)->i[0], n = type_numel(out_type(I, op)), count = in_type(I, op, 0)->shape[0];
  if (index < 0 || index >= count) fail(I, op, "buffer %lld of %lld", (long long)index, (long long)count);
  Slot view = {n, n, {.i = buffers->i + index * n}};
  I->views[op->results.data[0]] = view;
}

/* A transposed view: a copy, as the view is read before its buffer is
 * written again (the pipeline makes a new one each iteration). */
static void exec_memdesc_trans(Interp *I, const TirOp *op) {
  Slot *src = in(I, op, 0), *dst = out(I, op);
  const Type *t = in_type(I, op, 0);
  for (int64_t r = 0; r < t->shape[0]; r++)
    for (int64_t c = 0; c < t->shape[1]; c++) dst->i[c * t->shape[0] + r] = src->i[r * t->shape[1] + c];
}

static void exec_async_copy(Interp *I, const TirOp *op) {
  Slot *ptr = in(I, op, 0), *buf = in(I, op, 1), *mask = op->operands.len > 2 ? in(I, op, 2) : NULL;
  DType t = in_type(I, op, 0)->elem;
  if (op->operands.len > 3 && !in(I, op, 3)->i[0]) return; /* not issued: the buffer keeps what it had */
  for (int64_t k = 0; k < ptr->n; k++) {
    if (lane_on(mask, k)) read_elem(t, resolve(I, op, ptr->i[k], k, elem_bytes(t), "load"), buf, k);
    else buf->i[k] = 0; /* cp.async fills with zeros */
  }
}

static void exec_buffer_op(Interp *I, const TirOp *op) {
  switch (op->code) {
  case TIR_LOCAL_ALLOC: exec_local_alloc(I, op); break;
  case TIR_MEMDESC_INDEX: exec_memdesc_index(I, op); break;
  case TIR_MEMDESC_TRANS: exec_memdesc_trans(I, op); break;
  case TIR_LOCAL_LOAD: memcpy(out(I, op)->i, in(I, op, 0)->i, (size_t)in(I, op, 0)->n * sizeof(int64_t)); break;
  case TIR_LOCAL_STORE: memcpy(in(I, op, 1)->i, in(I, op, 0)->i, (size_t)in(I, op, 0)->n * sizeof(int64_t)); break;
  case TIR_ASYNC_COPY: exec_async_copy(I, op); break;
  case TIR_DOT_WAIT:
    for (int k = 0; k < op->operands.len; k++) copy_slot(I, op, op->results.data[k], op->operands.data[k]);
    break;
  default: break; /* async_commit, async_wait: the copies are done */
  }
}

/* Atomics run lane by lane in order: one program runs at a time here. */
static void exec_atomic(Interp *I, const TirOp *op) {
  Slot *ptr = in(I, op, 0), *d = out(I, op);
  Type *t = out_type(I, op);
  int cas = op->code == TIR_ATOMIC_CAS;
  Slot *cmp = cas ? in(I, op, 1) : NULL, *v = in(I, op, cas ? 2 : 1);
  Slot *mask = !cas && (op->flags & LOAD_MASK) ? in(I, op, 2) : NULL;
  Slot old = {1, 1, {.i = NULL}}, nv = old;
  int64_t old_word, new_word;
  old.i = &old_word;
  nv.i = &new_word;
  for (int64_t k = 0; k < ptr->n; k++) {
    if (!lane_on(mask, k)) {
      d->i[k] = 0;
      continue;
    }
    void *p = resolve(I, op, ptr->i[k], k, elem_bytes(t->elem), "atomic");
    read_elem(t->elem, p, &old, 0);
    if (cas) new_word = bits_of(t, &old, 0) == bits_of(t, cmp, k) ? v->i[k] : old_word; /* the GPU compares bits */
    else if (is_float(t)) nv.f[0] = round_float(combine_float(op->kind, old.f[0], v->f[k]), t->elem);
    else new_word = wrap(combine_int(op->kind, t, old_word, v->i[k]), t);
    write_elem(t->elem, p, &nv, 0);
    d->i[k] = old_word;
  }
}

/* ---- elementwise --------------------------------------------------------- */

/* maximum or minimum with tl.PropagateNan.ALL: llvm.maximum's rules (PTX max.NaN). */
static double nan_extremum(TirCode code, double a, double b) {
  if (isnan(a) || isnan(b)) return NAN;
  if (a == 0 && b == 0 && signbit(a) != signbit(b)) return code == TIR_MAXIMUM ? 0.0 : -0.0;
  return code == TIR_MAXIMUM ? fmax(a, b) : fmin(a, b);
}

static double float_binary(TirCode code, int kind, double a, double b) {
  if (kind == NAN_ALL && (code == TIR_MAXIMUM || code == TIR_MINIMUM)) return nan_extremum(code, a, b);
  switch (code) {
  case TIR_ADD: return a + b;
  case TIR_SUB: return a - b;
  case TIR_MUL: return a * b;
  case TIR_DIV: return a / b;
  case TIR_REM: return fmod(a, b);
  case TIR_MAXIMUM: return fmax(a, b);
  default: return fmin(a, b);
  }
}

/* Integer ops: the shared definitions (numeric.c), and where those leave the
 * result undefined, what NVIDIA GPUs give: x / 0 = -1, x % 0 = x, shifts past
 * the width give 0 (or -1 for a negative signed value shifted right). */
static int64_t integer_op(TirCode code, const Type *t, int64_t a, int64_t b) {
  int64_t r;
  if (tir_int_binary(code, t->elem, a, b, &r)) return r;
  switch (code) {
  case TIR_DIV: return b == 0 ? -1 : a; /* INT_MIN / -1 stays INT_MIN */
  case TIR_REM: return b == 0 ? a : 0;
  case TIR_SHR: return !is_unsigned(t) && a < 0 ? -1 : 0;
  default: return 0;
  }
}

static int compare(int kind, int c) {
  switch (kind) {
  case CMP_LT: return c < 0;
  case CMP_LE: return c <= 0;
  case CMP_GT: return c > 0;
  case CMP_GE: return c >= 0;
  case CMP_EQ: return c == 0;
  default: return c != 0;
  }
}

static void exec_cmp(Interp *I, const TirOp *op) {
  Slot *a = in(I, op, 0), *b = in(I, op, 1), *d = out(I, op);
  Type *t = in_type(I, op, 0);
  for (int64_t k = 0; k < d->n; k++) {
    if (is_float(t)) {
      double x = a->f[k], y = b->f[k];
      d->i[k] = isnan(x) || isnan(y) ? op->kind == CMP_NE : compare(op->kind, (x > y) - (x < y));
    } else if (is_unsigned(t) || t->is_ptr) {
      uint64_t x = (uint64_t)a->i[k], y = (uint64_t)b->i[k];
      d->i[k] = compare(op->kind, (x > y) - (x < y));
    } else {
      d->i[k] = compare(op->kind, (a->i[k] > b->i[k]) - (a->i[k] < b->i[k]));
    }
  }
}

static void exec_binary(Interp *I, const TirOp *op) {
  Slot *a = in(I, op, 0), *b = in(I, op, 1), *d = out(I, op);
  Type *t = out_type(I, op);
  if (is_float(t)) {
    if (op->code == TIR_UMULHI || op->code == TIR_AND || op->code == TIR_OR || op->code == TIR_XOR ||
        op->code == TIR_SHL || op->code == TIR_SHR)
      fail(I, op, "integer operation on floats");
    for (int64_t k = 0; k < d->n; k++) d->f[k] = round_float(float_binary(op->code, op->kind, a->f[k], b->f[k]), t->elem);
  } else {
    for (int64_t k = 0; k < d->n; k++) d->i[k] = wrap(integer_op(op->code, t, a->i[k], b->i[k]), t);
  }
}

static double math1(TirCode code, double x, int single) {
  switch (code) {
  case TIR_EXP: return single ? expf((float)x) : exp(x);
  case TIR_EXP2: return single ? exp2f((float)x) : exp2(x);
  case TIR_LOG: return single ? logf((float)x) : log(x);
  case TIR_LOG2: return single ? log2f((float)x) : log2(x);
  case TIR_SQRT: return single ? sqrtf((float)x) : sqrt(x);
  case TIR_RSQRT: return single ? 1.0f / sqrtf((float)x) : 1.0 / sqrt(x);
  case TIR_SIN: return single ? sinf((float)x) : sin(x);
  case TIR_COS: return single ? cosf((float)x) : cos(x);
  case TIR_ERF: return single ? erff((float)x) : erf(x);
  case TIR_FLOOR: return floor(x);
  case TIR_CEIL: return ceil(x);
  case TIR_ABS: return fabs(x);
  default: return -x;
  }
}

static void exec_unary(Interp *I, const TirOp *op) {
  Slot *a = in(I, op, 0), *d = out(I, op);
  Type *t = out_type(I, op);
  for (int64_t k = 0; k < d->n; k++) {
    if (is_float(t)) {
      d->f[k] = round_float(math1(op->code, a->f[k], t->elem != DT_FP64), t->elem);
    } else if (tir_int_unary(op->code, t->elem, a->i[k], &d->i[k])) {
      d->i[k] = wrap(d->i[k], t);
    } else {
      fail(I, op, "'%s' needs floating-point operands", tir_op_name(op->code));
    }
  }
}

static void exec_ternary(Interp *I, const TirOp *op) {
  Slot *a = in(I, op, 0), *b = in(I, op, 1), *c = in(I, op, 2), *d = out(I, op);
  Type *t = out_type(I, op);
  for (int64_t k = 0; k < d->n; k++) {
    if (op->code == TIR_SELECT) d->i[k] = a->i[k] ? b->i[k] : c->i[k]; /* words copy floats too */
    else if (op->code == TIR_FMA) d->f[k] = round_float(t->elem == DT_FP64 ? fma(a->f[k], b->f[k], c->f[k])
                                                                          : fmaf((float)a->f[k], (float)b->f[k], (float)c->f[k]),
                                                       t->elem);
    else d->f[k] = float_binary(TIR_MINIMUM, op->kind, float_binary(TIR_MAXIMUM, op->kind, a->f[k], b->f[k]), c->f[k]);
  }
}

/* A libdevice result into d's element k: floats rounded to the result type, the integer results (ilogb's
 * int, llrint's long long) kept whole, which a double would not be (INT64_MAX). */
static void store_float(Slot *d, int64_t k, DType t, double v) { d->f[k] = round_float(v, t); }
static void store_int(Slot *d, int64_t k, DType t, long long v) { d->i[k] = v; }
#define STORE(e) _Generic((e), float: store_float, double: store_float, default: store_int)(d, k, t, (e))

/* lang/libdevice.def's C expressions, with x, y, z, w of the row's C type (special_math.h's LD_C_*) from
 * the float values f or the integer values v. */
#define LD_SOURCE(T) _Generic((T)0, float: f, double: f, default: v)
#define LD_VARS(T)                                                                                     \
  T x = (T)LD_SOURCE(T)[0], y = (T)LD_SOURCE(T)[1], z = (T)LD_SOURCE(T)[2], w = (T)LD_SOURCE(T)[3]; \
  (void)x, (void)y, (void)z, (void)w;

static void libdevice_narrow(int fn, const double *f, const int64_t *v, int n, Slot *d, int64_t k, DType t) {
  switch (fn) {
#define LIBDEVICE(id, name, sig, types, f32, f64, c32, c64) \
  case LIBDEVICE_##id: { LD_VARS(LD_C_NARROW_##types) STORE(c32); break; }
#include "libdevice.def"
#undef LIBDEVICE
  default: break;
  }
}

static void libdevice_wide(int fn, const double *f, const int64_t *v, int n, Slot *d, int64_t k, DType t) {
  switch (fn) {
#define LIBDEVICE(id, name, sig, types, f32, f64, c32, c64) \
  case LIBDEVICE_##id: { LD_VARS(LD_C_WIDE_##types) STORE(c64); break; }
#include "libdevice.def"
#undef LIBDEVICE
  default: break;
  }
}
#undef STORE
#undef LD_VARS
#undef LD_SOURCE

/* The operands other than n are x, y, z, w in order (src/tir/libdevice.c's signatures). */
static void exec_libdevice(Interp *I, const TirOp *op) {
  Slot *a[LIBDEVICE_MAX_ARGS], *d = out(I, op);
  int count = op->operands.len, fn = op->kind, n_arg = libdevice_n_arg(fn);
  DType x = in_type(I, op, libdevice_x_arg(fn))->elem, t = out_type(I, op)->elem;
  int wide = x == libdevice_x_type(fn, 1);
  for (int j = 0; j < count; j++) a[j] = in(I, op, j);
  for (int64_t k = 0; k < d->n; k++) {
    double f[LIBDEVICE_MAX_ARGS] = {0, 0, 0, 0};
    int64_t v[LIBDEVICE_MAX_ARGS] = {0, 0, 0, 0};
    int n = n_arg >= 0 ? (int)a[n_arg]->i[k] : 0;
    for (int j = 0, m = 0; j < count; j++)
      if (j != n_arg) f[m] = a[j]->f[k], v[m++] = a[j]->i[k]; /* one union: the one x's type reads is right */
    if (wide) libdevice_wide(fn, f, v, n, d, k, t);
    else libdevice_narrow(fn, f, v, n, d, k, t);
  }
}

/* A pointer as an integer is the host address it stands for, as on the GPU it is the device's: a
 * kernel may keep addresses in memory (tutorial 08's table of matrices, filled by the host). Outside
 * every buffer, 0. */
static int64_t host_address(Interp *I, int64_t addr) {
  int b = buffer_of(addr);
  if (b < 0 || b >= I->launch->n_buffers) return 0;
  return (int64_t)((uintptr_t)I->launch->buffers[b].data + (uint64_t)(addr - buffer_base(b)));
}

/* The pointer an integer holding a host address is: into the buffer it falls in (its end included),
 * else the invalid address 0, which no access gets past. */
static int64_t pointer_of_address(Interp *I, int64_t host) {
  for (int b = 0; b < I->launch->n_buffers; b++) {
    uint64_t lo = (uintptr_t)I->launch->buffers[b].data;
    if (lo && (uint64_t)host >= lo && (uint64_t)host - lo <= I->launch->buffers[b].bytes)
      return buffer_base(b) + (int64_t)((uint64_t)host - lo);
  }
  return 0;
}

static void exec_cast(Interp *I, const TirOp *op) {
  Slot *s = in(I, op, 0), *d = out(I, op);
  Type *from = in_type(I, op, 0), *to = out_type(I, op);
  int toward_zero = op->kind == ROUND_RTZ && is_float(from) && is_float(to);
  for (int64_t k = 0; k < d->n; k++) {
    if (from->is_ptr && to->is_ptr) d->i[k] = s->i[k];
    else if (from->is_ptr) from_bits(to, (uint64_t)host_address(I, s->i[k]), d, k);
    else if (to->is_ptr) d->i[k] = pointer_of_address(I, (int64_t)bits_of(from, s, k));
    else if (op->code == TIR_BITCAST) from_bits(to, bits_of(from, s, k), d, k);
    else if (toward_zero) d->f[k] = round_toward_zero(s->f[k], to->elem);
    else convert(from, to, s, k, d);
  }
}

/* Buffer of an address, or -1 for none. */
static int buffer_of(int64_t addr) {
  uint64_t half = (uint64_t)1 << (ADDRESS_SHIFT - 1);
  return (int)(((uint64_t)addr + half) >> ADDRESS_SHIFT) - 1;
}

/* A pointer moved so far that it would name another buffer becomes the
 * invalid address 0: dereferencing it fails, computing it does not. */
static void exec_addptr(Interp *I, const TirOp *op) {
  Slot *p = in(I, op, 0), *o = in(I, op, 1), *d = out(I, op);
  int64_t size = (int64_t)elem_bytes(out_type(I, op)->elem);
  Type *ot = in_type(I, op, 1);
  for (int64_t k = 0; k < d->n; k++) {
    int64_t off = o->i[k], bytes, addr;
    int bad = (is_unsigned(ot) && off < 0) || __builtin_mul_overflow(off, size, &bytes) ||
              __builtin_add_overflow(p->i[k], bytes, &addr) || buffer_of(addr) != buffer_of(p->i[k]);
    d->i[k] = bad ? 0 : addr;
  }
}

/* ---- shapes -------------------------------------------------------------- */

static void unravel(int64_t k, const Type *t, int64_t *idx) {
  for (int d = t->rank - 1; d >= 0; d--) {
    idx[d] = k % t->shape[d];
    k /= t->shape[d];
  }
}

static int64_t ravel(const int64_t *idx, const Type *t) {
  int64_t k = 0;
  for (int d = 0; d < t->rank; d++) k = k * t->shape[d] + idx[d];
  return k;
}

static void exec_broadcast(Interp *I, const TirOp *op) {
  Slot *s = in(I, op, 0), *d = out(I, op);
  Type *from = in_type(I, op, 0), *to = out_type(I, op);
  int64_t idx[MAX_RANK];
  for (int64_t k = 0; k < d->n; k++) {
    if (op->code == TIR_SPLAT) {
      d->i[k] = s->i[0];
      continue;
    }
    unravel(k, to, idx);
    for (int i = 0; i < from->rank; i++)
      if (from->shape[i] == 1) idx[i] = 0;
    d->i[k] = s->i[ravel(idx, from)];
  }
}

static void exec_trans(Interp *I, const TirOp *op) {
  Slot *s = in(I, op, 0), *d = out(I, op);
  Type *from = in_type(I, op, 0), *to = out_type(I, op);
  int64_t idx[MAX_RANK], src[MAX_RANK];
  for (int64_t k = 0; k < d->n; k++) {
    unravel(k, to, idx);
    for (int i = 0; i < to->rank; i++) src[op->ints[i]] = idx[i];
    d->i[k] = s->i[ravel(src, from)];
  }
}

/* The pair dimension of join and split is the last, so element k of a
 * half is element 2k + h of the pair. */
static void exec_join(Interp *I, const TirOp *op) {
  Slot *a = in(I, op, 0), *b = in(I, op, 1), *d = out(I, op);
  for (int64_t k = 0; k < a->n; k++) {
    d->i[2 * k] = a->i[k];
    d->i[2 * k + 1] = b->i[k];
  }
}

static void exec_split(Interp *I, const TirOp *op) {
  Slot *s = in(I, op, 0), *d = out(I, op);
  for (int64_t k = 0; k < d->n; k++) d->i[k] = s->i[2 * k + op->ival];
}

/* Expand_dims, reshape and hints keep row-major order: the words copy. */
static void exec_copy(Interp *I, const TirOp *op) {
  Slot *s = in(I, op, 0), *d = out(I, op);
  memcpy(d->i, s->i, (size_t)d->n * sizeof(int64_t));
}

/* ---- reductions, scans, dot ---------------------------------------------- */

typedef struct Axis {
  int64_t outer, len, inner;
} Axis;

static Axis split_axis(const Type *t, int axis) {
  Axis a = {1, t->shape[axis], 1};
  for (int i = 0; i < axis; i++) a.outer *= t->shape[i];
  for (int i = axis + 1; i < t->rank; i++) a.inner *= t->shape[i];
  return a;
}

static int64_t index_value(const Type *t, const Slot *s, int64_t k) {
  return is_unsigned(t) && dtype_bits(t->elem) == 64 && s->i[k] < 0 ? INT64_MAX : s->i[k];
}

/* An index outside the source is the kernel's mistake (Triton leaves it
 * undefined): reported with the element, not read. */
static void exec_gather(Interp *I, const TirOp *op) {
  Slot *s = in(I, op, 0), *x = in(I, op, 1), *d = out(I, op);
  const Type *st = in_type(I, op, 0), *xt = in_type(I, op, 1);
  Axis a = split_axis(xt, op->axis);
  int64_t len = st->shape[op->axis];
  for (int64_t k = 0; k < d->n; k++) {
    int64_t at = index_value(xt, x, k);
    if (at < 0 || at >= len)
      fail(I, op, "gather: index %lld at element %lld is outside the source's %lld along axis %d", (long long)at,
           (long long)k, (long long)len, op->axis);
    int64_t outer = k / (a.len * a.inner), inner = k % a.inner;
    d->i[k] = s->i[(outer * len + at) * a.inner + inner];
  }
}

/* Whether x beats best for max (sign 1) or min (sign -1); ties keep the first. */
static int better(const Type *t, const Slot *s, int64_t x, int64_t best, int sign) {
  if (is_float(t)) return sign > 0 ? s->f[x] > s->f[best] : s->f[x] < s->f[best];
  if (is_unsigned(t)) return sign > 0 ? (uint64_t)s->i[x] > (uint64_t)s->i[best] : (uint64_t)s->i[x] < (uint64_t)s->i[best];
  return sign > 0 ? s->i[x] > s->i[best] : s->i[x] < s->i[best];
}

static void exec_reduce(Interp *I, const TirOp *op) {
  Slot *s = in(I, op, 0), *d = out(I, op);
  Type *t = in_type(I, op, 0), *rt = out_type(I, op);
  Axis a = split_axis(t, op->axis);
  if (op->kind == RED_PROD) fail(I, op, "reduce.prod is not interpreted");
  int sign = op->kind == RED_MAX || op->kind == RED_ARGMAX ? 1 : -1;
  for (int64_t o = 0; o < a.outer; o++)
    for (int64_t i = 0; i < a.inner; i++) {
      int64_t first = o * a.len * a.inner + i, best = first, r = o * a.inner + i;
      double fsum = 0;
      int64_t isum = 0;
      for (int64_t j = 0; j < a.len; j++) {
        int64_t x = first + j * a.inner;
        if (op->kind == RED_SUM) {
          if (is_float(t)) fsum = round_float(fsum + s->f[x], t->elem);
          else isum = wrap((int64_t)((uint64_t)isum + (uint64_t)s->i[x]), t);
        } else if (better(t, s, x, best, sign) || (is_float(t) && isnan(s->f[best]) && !isnan(s->f[x]))) {
          best = x;
        }
      }
      if (op->kind == RED_SUM) {
        if (is_float(rt)) d->f[r] = fsum;
        else d->i[r] = isum;
      } else if (op->kind == RED_ARGMAX || op->kind == RED_ARGMIN) {
        d->i[r] = (best - first) / a.inner;
      } else {
        d->i[r] = s->i[best];
      }
    }
}

static void exec_scan(Interp *I, const TirOp *op) {
  Slot *s = in(I, op, 0), *d = out(I, op);
  Type *t = in_type(I, op, 0);
  Axis a = split_axis(t, op->axis);
  int reverse = op->flags & SCAN_REVERSE, prod = op->kind == RED_PROD;
  for (int64_t o = 0; o < a.outer; o++)
    for (int64_t i = 0; i < a.inner; i++) {
      double facc = prod;
      int64_t iacc = prod;
      for (int64_t jj = 0; jj < a.len; jj++) {
        int64_t j = reverse ? a.len - 1 - jj : jj, x = (o * a.len + j) * a.inner + i;
        if (is_float(t)) {
          facc = round_float(prod ? facc * s->f[x] : facc + s->f[x], t->elem);
          d->f[x] = facc;
        } else {
          iacc = wrap(prod ? (int64_t)((uint64_t)iacc * (uint64_t)s->i[x]) : (int64_t)((uint64_t)iacc + (uint64_t)s->i[x]), t);
          d->i[x] = iacc;
        }
      }
    }
}

/* ---- custom combines: reduce_combine, scan_combine ------------------------ */

enum { MAX_COMBINED = 64 };

static const TirOp *run_block(Interp *I, const TirBlock *b);

/* acc = combine(acc, element x of the operands), through the combine region. */
static void combine_step(Interp *I, const TirOp *op, int64_t *acc, int64_t x) {
  const TirBlock *c = op->combine;
  int n = op->operands.len;
  for (int k = 0; k < n; k++) {
    slot_for(I, op, c->args.data[k])->i[0] = acc[k];
    slot_for(I, op, c->args.data[n + k])->i[0] = in(I, op, k)->i[x];
  }
  const TirOp *y = run_block(I, c);
  for (int k = 0; k < n; k++) acc[k] = I->slots[y->operands.data[k]].i[0];
}

/* Left to right along the axis (right to left for a reverse scan, the
 * later elements' combination then the left argument, as Triton's flip,
 * scan, flip); a scan writes every prefix. */
static void exec_combine(Interp *I, const TirOp *op) {
  int n = op->operands.len, scan = op->code == TIR_SCAN_COMBINE, reverse = op->flags & SCAN_REVERSE;
  if (n > MAX_COMBINED) fail(I, op, "more than %d combined tiles", MAX_COMBINED);
  Slot *d[MAX_COMBINED];
  for (int k = 0; k < n; k++) d[k] = slot_for(I, op, op->results.data[k]);
  Axis a = split_axis(in_type(I, op, 0), op->axis);
  int64_t acc[MAX_COMBINED];
  for (int64_t o = 0; o < a.outer; o++)
    for (int64_t i = 0; i < a.inner; i++) {
      for (int64_t jj = 0; jj < a.len; jj++) {
        int64_t j = reverse ? a.len - 1 - jj : jj, x = (o * a.len + j) * a.inner + i;
        if (jj == 0)
          for (int k = 0; k < n; k++) acc[k] = in(I, op, k)->i[x];
        else combine_step(I, op, acc, x);
        for (int k = 0; scan && k < n; k++) d[k]->i[x] = acc[k];
      }
      for (int k = 0; !scan && k < n; k++) d[k]->i[o * a.inner + i] = acc[k];
    }
}

/* Matrix product with the accumulation the tensor cores do: products of the
 * operands (tf32-rounded for DOT_TF32) summed in fp32 over k in order
 * (i32 for i8, fp64 for fp64), starting from acc.  fp32 operands are
 * copied to float rows first so the inner loop runs over contiguous floats. */
static void dot_float(const Slot *a, const Slot *b, const Slot *c, Slot *d, int64_t z, int64_t M, int64_t N, int64_t K,
                      int tf32, DType out, float *fa, float *fb, float *row) {
  for (int64_t i = 0; i < M * K; i++) fa[i] = tf32 ? round_to_tf32((float)a->f[z * M * K + i]) : (float)a->f[z * M * K + i];
  for (int64_t i = 0; i < K * N; i++) fb[i] = tf32 ? round_to_tf32((float)b->f[z * K * N + i]) : (float)b->f[z * K * N + i];
  for (int64_t m = 0; m < M; m++) {
    const double *acc = c->f + (z * M + m) * N;
    for (int64_t n = 0; n < N; n++) row[n] = (float)acc[n];
    for (int64_t k = 0; k < K; k++) {
      float x = fa[m * K + k];
      const float *brow = fb + k * N;
      for (int64_t n = 0; n < N; n++) row[n] = fmaf(x, brow[n], row[n]);
    }
    for (int64_t n = 0; n < N; n++) d->f[(z * M + m) * N + n] = round_float(row[n], out);
  }
}

static void dot_exact(const Slot *a, const Slot *b, const Slot *c, Slot *d, int64_t z, int64_t M, int64_t N, int64_t K,
                      const Type *rt) {
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      int64_t o = (z * M + m) * N + n;
      if (!is_float(rt)) {
        int64_t acc = c->i[o];
        for (int64_t k = 0; k < K; k++) acc += a->i[(z * M + m) * K + k] * b->i[(z * K + k) * N + n];
        d->i[o] = wrap(acc, rt);
      } else {
        double acc = c->f[o];
        for (int64_t k = 0; k < K; k++) acc = fma(a->f[(z * M + m) * K + k], b->f[(z * K + k) * N + n], acc);
        d->f[o] = acc;
      }
    }
}

static void exec_dot(Interp *I, const TirOp *op) {
  Slot *a = in(I, op, 0), *b = in(I, op, 1), *c = in(I, op, 2), *d = out(I, op);
  Type *ta = in_type(I, op, 0), *tb = in_type(I, op, 1), *rt = out_type(I, op);
  int r = ta->rank;
  int64_t batch = r == 3 ? ta->shape[0] : 1, M = ta->shape[r - 2], K = ta->shape[r - 1], N = tb->shape[r - 1];
  if (!is_float(rt) || rt->elem == DT_FP64) {
    for (int64_t z = 0; z < batch; z++) dot_exact(a, b, c, d, z, M, N, K, rt);
    return;
  }
  float *scratch = malloc(sizeof(float) * (size_t)(M * K + K * N + N));
  if (!scratch) fail(I, op, "out of memory for a dot of %lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
  for (int64_t z = 0; z < batch; z++) /* tf32x3 recovers fp32 accuracy on the GPU: computed as ieee here */
    dot_float(a, b, c, d, z, M, N, K, op->kind == DOT_TF32 && ta->elem == DT_FP32, rt->elem, scratch, scratch + M * K,
              scratch + M * K + K * N);
  free(scratch);
}

/* ---- random numbers: Philox 4x32, as Triton's tl.rand ---------------------- */

static void philox(uint64_t seed, uint32_t c[4], int rounds) {
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int r = 0; r < rounds; r++) {
    uint32_t c0 = c[0], c2 = c[2];
    uint64_t pa = (uint64_t)0xD2511F53u * c0, pb = (uint64_t)0xCD9E8D57u * c2;
    c[0] = (uint32_t)(pb >> 32) ^ c[1] ^ k0;
    c[2] = (uint32_t)(pa >> 32) ^ c[3] ^ k1;
    c[1] = (uint32_t)pb;
    c[3] = (uint32_t)pa;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
}

static float uniform_of(uint32_t x) {
  int32_t v = (int32_t)x;
  if (v < 0) v = -v - 1;
  return (float)v * 4.6566127342e-10f;
}

static void exec_rand(Interp *I, const TirOp *op) {
  Slot *seed = in(I, op, 0), *off = in(I, op, 1), *d = out(I, op);
  int wide = dtype_bits(in_type(I, op, 1)->elem) == 64;
  for (int64_t k = 0; k < d->n; k++) {
    uint32_t c[4] = {(uint32_t)off->i[k], wide ? (uint32_t)((uint64_t)off->i[k] >> 32) : 0, 0, 0};
    philox((uint64_t)seed->i[0], c, (int)op->ival);
    if (op->kind == RAND_INT) {
      d->i[k] = c[0];
    } else if (op->kind == RAND_UNIFORM) {
      d->f[k] = uniform_of(c[0]);
    } else {
      float u1 = fmaxf(1.0e-7f, uniform_of(c[0])), th = 6.283185307179586f * uniform_of(c[1]);
      d->f[k] = sqrtf(-2.0f * logf(u1)) * cosf(th);
    }
  }
}

/* ---- debugging ----------------------------------------------------------- */

static void print_element(Buf *b, const Type *t, const Slot *s, int64_t k, int hex) {
  if (hex) buf_printf(b, "0x%llx", (unsigned long long)bits_of(t, s, k));
  else if (is_float(t)) buf_printf(b, "%.9g", dtype_is_fp8(t->elem) ? out_of_fp8(s->f[k]) : s->f[k]); /* printed as widened */
  else if (is_unsigned(t)) buf_printf(b, "%llu", (unsigned long long)s->i[k]);
  else buf_printf(b, "%lld", (long long)s->i[k]);
}

enum { MAX_PRINTED = 16 << 20 };

static void exec_print(Interp *I, const TirOp *op) {
  Buf *b = I->launch->output;
  if (!b) return;
  if (b->len > MAX_PRINTED) fail(I, op, "device_print wrote more than 16 MiB");
  for (int v = 0; v < op->operands.len; v++) {
    Slot *s = in(I, op, v);
    Type *t = in_type(I, op, v);
    int64_t idx[MAX_RANK];
    for (int64_t k = 0; k < s->n; k++) {
      buf_printf(b, "pid (%d, %d, %d) idx (", I->pid[0], I->pid[1], I->pid[2]);
      unravel(k, t, idx);
      for (int i = 0; i < t->rank; i++) buf_printf(b, "%s%lld", i ? ", " : "", (long long)idx[i]);
      buf_printf(b, ")%s%s", op->str && *op->str ? " " : "", op->str ? op->str : "");
      if (op->operands.len > 1) buf_printf(b, " (operand %d)", v);
      buf_puts(b, " ");
      print_element(b, t, s, k, op->flags & PRINT_HEX);
      buf_puts(b, "\n");
    }
  }
}

static void exec_assert(Interp *I, const TirOp *op) {
  Slot *c = in(I, op, 0), *mask = op->flags & LOAD_MASK ? in(I, op, 1) : NULL;
  for (int64_t k = 0; k < c->n; k++)
    if (lane_on(mask, k) && !c->i[k]) fail(I, op, "device_assert failed: %s (lane %lld)", op->str ? op->str : "", (long long)k);
}

/* ---- values and control flow ---------------------------------------------- */

static void exec_constant(Interp *I, const TirOp *op) {
  Slot *d = out(I, op);
  Type *t = out_type(I, op);
  for (int64_t k = 0; k < d->n; k++) {
    if (is_float(t)) d->f[k] = round_float(op->fval, t->elem);
    else d->i[k] = wrap(op->ival, t);
  }
}

static void exec_range(Interp *I, const TirOp *op) {
  Slot *d = out(I, op);
  for (int64_t k = 0; k < d->n; k++) d->i[k] = op->ival + k;
}

enum { MAX_ITERATIONS = 1 << 30 };

static int64_t iteration_limit(Interp *I) { return I->launch->max_iterations ? I->launch->max_iterations : MAX_ITERATIONS; }

static double clock_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One more iteration of `op`'s loop (NULL: one more program); fails once
 * the run is past its time limit.  A wall-clock limit, not a count: what an
 * iteration costs ranges over six orders of magnitude. */
static void tick(Interp *I, const TirOp *op, const char *what) {
  if (++I->ticks % TICKS_PER_CLOCK || !I->deadline || clock_s() < I->deadline) return;
  fail(I, op, "%s ran past the interpreter's time limit of %g s (TILE_INTERPRET_TIMEOUT)", what,
       I->launch->time_limit_s);
}

static const TirOp *run_block(Interp *I, const TirBlock *b);

static void set_results(Interp *I, const TirOp *op, const TirOp *term, int skip) {
  for (int i = 0; i < op->results.len; i++) copy_slot(I, op, op->results.data[i], term->operands.data[i + skip]);
}

/* Carried values move result slot -> block argument -> (body) -> yield ->
 * result slot, so a yield that swaps arguments stays correct. */
static void exec_for(Interp *I, const TirOp *op) {
  const TirBlock *body = op->regions[0];
  int64_t lb = in(I, op, 0)->i[0], ub = in(I, op, 1)->i[0], step = in(I, op, 2)->i[0];
  if (step == 0) fail(I, op, "the loop's step is zero");
  for (int i = 0; i < op->results.len; i++) copy_slot(I, op, op->results.data[i], op->operands.data[3 + i]);
  int64_t n = 0;
  for (int64_t iv = lb; step > 0 ? iv < ub : iv > ub;) {
    if (++n > iteration_limit(I)) fail(I, op, "the loop ran more than %lld iterations", (long long)iteration_limit(I));
    tick(I, op, "the loop");
    slot_for(I, op, body->args.data[0])->i[0] = iv;
    for (int i = 0; i < op->results.len; i++) copy_slot(I, op, body->args.data[1 + i], op->results.data[i]);
    set_results(I, op, run_block(I, body), 0);
    if (__builtin_add_overflow(iv, step, &iv)) break; /* the next value is past any bound */
  }
}

static void exec_if(Interp *I, const TirOp *op) {
  const TirBlock *b = op->regions[in(I, op, 0)->i[0] ? 0 : 1];
  set_results(I, op, run_block(I, b), 0);
}

static void exec_while(Interp *I, const TirOp *op) {
  const TirBlock *before = op->regions[0], *after = op->regions[1];
  for (int i = 0; i < op->operands.len; i++) copy_slot(I, op, before->args.data[i], op->operands.data[i]);
  for (int64_t n = 0;; n++) {
    if (n > iteration_limit(I)) fail(I, op, "the while loop ran more than %lld iterations", (long long)iteration_limit(I));
    tick(I, op, "the while loop");
    const TirOp *cond = run_block(I, before);
    if (!I->slots[cond->operands.data[0]].i[0]) {
      set_results(I, op, cond, 1);
      return;
    }
    for (int i = 0; i < after->args.len; i++) copy_slot(I, op, after->args.data[i], cond->operands.data[i + 1]);
    const TirOp *y = run_block(I, after);
    for (int i = 0; i < op->results.len; i++) copy_slot(I, op, op->results.data[i], y->operands.data[i]);
    for (int i = 0; i < op->results.len; i++) copy_slot(I, op, before->args.data[i], op->results.data[i]);
  }
}

static void exec_op(Interp *I, const TirOp *op) {
  switch (op->code) {
  case TIR_CONSTANT: exec_constant(I, op); break;
  case TIR_PROGRAM_ID: out(I, op)->i[0] = I->pid[op->axis]; break;
  case TIR_NUM_PROGRAMS: out(I, op)->i[0] = I->launch->grid[op->axis]; break;
  case TIR_SMID: out(I, op)->i[0] = 0; break; /* one SM runs every program (docs/language.md) */
  case TIR_GLOBALTIMER: out(I, op)->i[0] = ++I->timer_reads; break; /* increasing, the same on every run */
  case TIR_MAKE_RANGE: exec_range(I, op); break;
  case TIR_SPLAT: case TIR_BROADCAST: exec_broadcast(I, op); break;
  case TIR_EXPAND_DIMS: case TIR_RESHAPE: case TIR_HINT: case TIR_CONVERT_LAYOUT: exec_copy(I, op); break;
  case TIR_TRANS: exec_trans(I, op); break;
  case TIR_JOIN: exec_join(I, op); break;
  case TIR_SPLIT: exec_split(I, op); break;
  case TIR_GATHER: exec_gather(I, op); break;
  case TIR_ADDPTR: exec_addptr(I, op); break;
  case TIR_LOAD: exec_load(I, op); break;
  case TIR_STORE: exec_store(I, op); break;
  case TIR_ATOMIC_RMW: case TIR_ATOMIC_CAS: exec_atomic(I, op); break;
  case TIR_DOT: exec_dot(I, op); break;
  case TIR_REDUCE: exec_reduce(I, op); break;
  case TIR_SCAN: exec_scan(I, op); break;
  case TIR_REDUCE_COMBINE: case TIR_SCAN_COMBINE: exec_combine(I, op); break;
  case TIR_ADD: case TIR_SUB: case TIR_MUL: case TIR_DIV: case TIR_REM: case TIR_AND: case TIR_OR: case TIR_XOR:
  case TIR_SHL: case TIR_SHR: case TIR_MAXIMUM: case TIR_MINIMUM: case TIR_UMULHI: exec_binary(I, op); break;
  case TIR_CMP: exec_cmp(I, op); break;
  case TIR_NEG: case TIR_NOT: case TIR_ABS: case TIR_EXP: case TIR_EXP2: case TIR_LOG: case TIR_LOG2: case TIR_SQRT:
  case TIR_RSQRT: case TIR_SIN: case TIR_COS: case TIR_ERF: case TIR_FLOOR: case TIR_CEIL: exec_unary(I, op); break;
  case TIR_FMA: case TIR_CLAMP: case TIR_SELECT: exec_ternary(I, op); break;
  case TIR_LIBDEVICE: exec_libdevice(I, op); break;
  case TIR_CAST: case TIR_BITCAST: exec_cast(I, op); break;
  case TIR_RAND: exec_rand(I, op); break;
  case TIR_INLINE_ASM: fail(I, op, "inline_asm_elementwise runs on the GPU only (its PTX cannot run here)"); break;
  case TIR_PRINT: exec_print(I, op); break;
  case TIR_ASSERT: exec_assert(I, op); break;
  case TIR_BARRIER: break;
  case TIR_FOR: exec_for(I, op); break;
  case TIR_IF: exec_if(I, op); break;
  case TIR_WHILE: exec_while(I, op); break;
  case TIR_LOCAL_ALLOC: case TIR_MEMDESC_INDEX: case TIR_MEMDESC_TRANS: case TIR_LOCAL_LOAD: case TIR_LOCAL_STORE:
  case TIR_ASYNC_COPY: case TIR_ASYNC_COMMIT: case TIR_ASYNC_WAIT: case TIR_DOT_WAIT: exec_buffer_op(I, op); break;
  default: fail(I, op, "cannot interpret '%s'", tir_op_name(op->code));
  }
}

/* Runs a block up to its terminator, which it returns. */
static const TirOp *run_block(Interp *I, const TirBlock *b) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    if (tir_op_flags(op->code) & TERM) return op;
    exec_op(I, op);
  }
  return NULL;
}

static void bind_params(Interp *I) {
  for (int i = 0; i < I->f->params.len; i++) {
    const TirParam *p = &I->f->params.data[i];
    const InterpArg *a = &I->launch->args[i];
    Type *t = type_of_value(I, p->value);
    Slot *s = slot_for(I, NULL, p->value);
    if (t->is_ptr) s->i[0] = buffer_base(a->buffer);
    else if (is_float(t)) s->f[0] = round_float(a->f, t->elem);
    else s->i[0] = wrap(a->i, t);
  }
}

/* A buffer larger than a pointer can span; 0 if none. */
static int check_buffers(InterpLaunch *L) {
  for (int i = 0; i < L->n_buffers; i++)
    if (L->buffers[i].bytes > INTERP_MAX_BUFFER_BYTES) {
      snprintf(L->error, sizeof L->error, "buffer '%s' has %zu bytes, more than the interpreter can address (2^43)",
               L->buffers[i].name, L->buffers[i].bytes);
      return -1;
    }
  return 0;
}

int interp_run(InterpLaunch *launch) {
  Interp I = {0};
  I.launch = launch;
  I.f = launch->f;
  launch->error[0] = 0;
  if (check_buffers(launch)) return -1;
  if (launch->time_limit_s > 0) I.deadline = clock_s() + launch->time_limit_s;
  I.slots = calloc((size_t)I.f->types.len + 1, sizeof(Slot));
  I.views = calloc((size_t)I.f->types.len + 1, sizeof(Slot));
  if (!I.slots || !I.views) {
    free(I.slots);
    free(I.views);
    snprintf(launch->error, sizeof launch->error, "out of memory");
    return -1;
  }
  int status = 0;
  if (setjmp(I.fail) == 0) {
    bind_params(&I);
    for (I.pid[2] = 0; I.pid[2] < launch->grid[2]; I.pid[2]++)
      for (I.pid[1] = 0; I.pid[1] < launch->grid[1]; I.pid[1]++)
        for (I.pid[0] = 0; I.pid[0] < launch->grid[0]; I.pid[0]++) {
          tick(&I, NULL, "the launch");
          run_block(&I, I.f->body);
        }
  } else {
    status = -1;
  }
  for (int i = 0; i < I.f->types.len; i++) free(I.slots[i].i);
  free(I.slots);
  free(I.views);
  return status;
}
