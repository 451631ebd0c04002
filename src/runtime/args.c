/* Launch arguments: keys, signatures, checks and packing (see args.h). */
#include "args.h"
#include "../support/dtypes.h"
#include "../support/numeric.h"

#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <string.h>

/* Triton's TensorDescriptor checks (python/triton/tools/tensor_descriptor.py). */
static int tensordesc_ok(void *base, int dt, int rank, const long long *shape, const long long *strides) {
  if (dt < 0 || rank < 1 || rank > 5 || !base || (uintptr_t)base % 16 || !shape || !strides) return 0;
  long long elem = (long long)dtype_size(dt);
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 1 || shape[i] > INT32_MAX) return 0;
    if (i < rank - 1 && (strides[i] < 1 || strides[i] > INT64_MAX / elem || strides[i] * elem % 16)) return 0;
  }
  return strides[rank - 1] == 1;
}

int tile_tensordesc_size(tile_arg *out, size_t arg_size, void *base, const char *dtype, size_t count, int rank,
                         const long long *shape, const long long *strides) {
  if (!out || arg_size != sizeof(tile_arg) || !dtype || !tensordesc_ok(base, dtype_lookup(dtype), rank, shape, strides))
    return -1;
  out[0] = tile_buffer(base, dtype, count);
  for (int i = 0; i < rank; i++) {
    out[1 + i] = tile_int(shape[i]);
    out[1 + i].dtype = "i32";
    out[1 + rank + i] = tile_int(strides[i]);
    out[1 + rank + i].dtype = "i64";
  }
  return 1 + 2 * rank;
}

size_t dtype_size(int dt) { return dt == DT_I1 ? 1 : (size_t)dtype_bits((DType)dt) / 8; }

static int bad_arg(char *err, size_t errsize, int i, const char *what, const char *dtype) {
  snprintf(err, errsize, "argument %d: ", i);
  size_t used = strlen(err);
  snprintf(err + used, errsize - used, what, dtype);
  return -1;
}

/* One argument's key; -1 with a message if it is malformed. */
static int arg_key(const tile_arg *a, int i, uint16_t *key, char *err, size_t errsize) {
  int dt = a->dtype ? dtype_lookup(a->dtype) : -1;
  if (a->dtype && dt < 0) return bad_arg(err, errsize, i, "unknown dtype '%s' (expected e.g. fp32, fp16, i32)", a->dtype);
  switch (a->kind) {
  case TILE_ARG_BUFFER:
    if (dt < 0 || (!a->data && a->count)) return bad_arg(err, errsize, i, "a buffer needs a dtype and memory%s", "");
    *key = (uint16_t)(KEY_BUFFER | dt | ((uintptr_t)a->data % 16 == 0 ? KEY_DIV16 : 0));
    return 0;
  case TILE_ARG_INT:
    if (dt >= 0 && !dtype_is_int((DType)dt))
      return bad_arg(err, errsize, i, "an integer argument cannot have dtype '%s'", a->dtype);
    if (dt < 0) dt = a->i >= INT32_MIN && a->i <= INT32_MAX ? DT_I32 : DT_I64;
    *key = (uint16_t)(KEY_INT | dt | (a->i == 1 ? KEY_ONE : a->i % 16 == 0 ? KEY_DIV16 : 0));
    return 0;
  case TILE_ARG_FLOAT:
    if (dt >= 0 && !dtype_is_float((DType)dt))
      return bad_arg(err, errsize, i, "a float argument cannot have dtype '%s'", a->dtype);
    *key = (uint16_t)(KEY_FLOAT | (dt < 0 ? DT_FP32 : dt));
    return 0;
  }
  snprintf(err, errsize, "argument %d: unknown kind %d", i, (int)a->kind);
  return -1;
}

/* The tile_arg layouts this library reads, by struct_size, oldest first (docs/abi.md, section 10): a
 * field added to tile_arg adds the new size here, and the readers take the fields an older size lacks
 * as their defaults.  Only args[0]'s first word is read before its size is known to be one of these, so
 * an array of another layout (a program built before struct_size: its first word is the kind) is refused,
 * never misread at the wrong stride. */
static const size_t ARG_SIZES[] = {sizeof(tile_arg)};

int args_layout(const tile_arg *args, int n, char *err, size_t errsize) {
  for (int i = 0; i < n; i++) {
    size_t size = args[i].struct_size;
    int known = 0;
    for (size_t j = 0; j < sizeof ARG_SIZES / sizeof ARG_SIZES[0]; j++) known |= size == ARG_SIZES[j];
    if (known && size == args[0].struct_size) continue;
    if (size > sizeof(tile_arg) && size <= STRUCT_SIZE_PLAUSIBLE)
      snprintf(err, errsize, "argument %d: struct_size is %zu, larger than the tile_arg of this library (%zu bytes, "
               "tile %s): the program was built against a newer tile.h", i, size, sizeof(tile_arg), TILE_VERSION_STRING);
    else
      snprintf(err, errsize, "argument %d: struct_size is %zu, not the size of a tile_arg (%zu bytes): make arguments "
               "with tile_buffer, tile_int and tile_float (a program built against a tile.h older than struct_size "
               "must be rebuilt)", i, size, sizeof(tile_arg));
    return -1;
  }
  return 0;
}

int args_key(const tile_arg *args, int n, uint16_t *key, char *err, size_t errsize) {
  if (args_layout(args, n, err, errsize)) return -1;
  for (int i = 0; i < n; i++)
    if (arg_key(&args[i], i, &key[i], err, errsize)) return -1;
  return 0;
}

int key_signature(const uint16_t *key, int n, char *out, size_t size) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < n; i++) {
    int kind = key[i] & KEY_KIND, hint = key[i] & KEY_HINT;
    int w = snprintf(out + used, size - used, "%s%s%s%s", i ? "," : "", kind == KEY_BUFFER ? "*" : "",
                     dtype_name((DType)(key[i] & KEY_DTYPE)), hint == KEY_DIV16 ? ":16" : hint == KEY_ONE ? ":1" : "");
    if (w < 0 || (size_t)w >= size - used) return -1;
    used += (size_t)w;
  }
  return 0;
}

/* ---- checking against a compiled kernel ------------------------------------------ */

static int bad_param(char *err, size_t errsize, const MetaParam *p, const char *fmt, const char *detail) {
  snprintf(err, errsize, "argument %d ('%s'): ", p->position, p->name);
  size_t used = strlen(err);
  snprintf(err + used, errsize - used, fmt, detail);
  return -1;
}

static const char *param_type(const MetaParam *p, char *buf, size_t size) {
  snprintf(buf, size, "%s%s", p->is_ptr ? "*" : "", dtype_name((DType)p->dtype));
  return buf;
}

static int check_buffer(const MetaParam *p, const tile_arg *a, char *err, size_t errsize) {
  char type[16];
  if (a->kind != TILE_ARG_BUFFER)
    return bad_param(err, errsize, p, "a number for a parameter of type %s", param_type(p, type, sizeof type));
  const char *want = dtype_name((DType)p->dtype);
  if (!a->dtype || (strcmp(a->dtype, want) && dtype_lookup(a->dtype) != p->dtype)) {
    char what[96];
    snprintf(what, sizeof what, "a buffer of %.20s for a parameter of type *%s", a->dtype ? a->dtype : "(no dtype)", want);
    return bad_param(err, errsize, p, "%s", what);
  }
  if (!a->data) return bad_param(err, errsize, p, "a NULL buffer%s", "");
  if (p->divisibility == 16 && (uintptr_t)a->data % 16) {
    char what[160];
    snprintf(what, sizeof what, "address %p is not 16-byte aligned, as the kernel's ':16' specialisation promises",
             a->data);
    return bad_param(err, errsize, p, "%s", what);
  }
  return 0;
}

static int check_int(const MetaParam *p, const tile_arg *a, char *err, size_t errsize) {
  char type[16], what[160];
  if (a->kind != TILE_ARG_INT)
    return bad_param(err, errsize, p, a->kind == TILE_ARG_BUFFER ? "a buffer for a parameter of type %s"
                                                                 : "a float for a parameter of type %s",
                     param_type(p, type, sizeof type));
  if (a->i < p->min || a->i > p->max) {
    snprintf(what, sizeof what, "%lld does not fit the parameter's type %s", a->i, param_type(p, type, sizeof type));
    return bad_param(err, errsize, p, "%s", what);
  }
  if (p->divisibility == 16 && a->i % 16) {
    snprintf(what, sizeof what, "%lld is not divisible by 16, as the kernel's ':16' specialisation promises", a->i);
    return bad_param(err, errsize, p, "%s", what);
  }
  return 0;
}

/* Whether a finite v becomes inf at the parameter's width (rounding to
 * nearest: fp32 from FLT_MAX + half its last place up); also what keeps
 * pack()'s conversion to float defined. */
static int float_overflows(const MetaParam *p, double v) {
  static const double fp32_inf_from = 0x1.ffffffp127;
  if (!isfinite(v) || p->dtype == DT_FP64) return 0;
  if (p->dtype == DT_FP32) return fabs(v) >= fp32_inf_from;
  uint16_t bits = p->dtype == DT_FP16 ? fp16_from_double(v) : bf16_from_double(v);
  return (bits & 0x7fff) == (p->dtype == DT_FP16 ? 0x7c00 : 0x7f80);
}

static int check_float(const MetaParam *p, const tile_arg *a, char *err, size_t errsize) {
  char type[16], what[160];
  if (a->kind == TILE_ARG_BUFFER)
    return bad_param(err, errsize, p, "a buffer for a parameter of type %s", param_type(p, type, sizeof type));
  double v = a->kind == TILE_ARG_INT ? (double)a->i : a->f;
  if (float_overflows(p, v)) {
    snprintf(what, sizeof what, "%g does not fit the parameter's type %s (it would be inf)", v,
             param_type(p, type, sizeof type));
    return bad_param(err, errsize, p, "%s", what);
  }
  return 0;
}

/* The value of a checked argument at the parameter's width, little-endian in a 64-bit slot. */
static uint64_t pack(const MetaParam *p, const tile_arg *a) {
  if (p->is_ptr) return (uint64_t)(uintptr_t)a->data;
  if (p->is_int) return (uint64_t)a->i;
  double v = a->kind == TILE_ARG_INT ? (double)a->i : a->f;
  uint64_t slot = 0;
  if (p->dtype == DT_FP32) {
    float f = (float)v;
    memcpy(&slot, &f, sizeof f);
  } else if (p->dtype == DT_FP64) {
    memcpy(&slot, &v, sizeof v);
  } else {
    slot = p->dtype == DT_FP16 ? fp16_from_double(v) : bf16_from_double(v);
  }
  return slot;
}

static int check_param(const MetaParam *p, const tile_arg *a, char *err, size_t errsize) {
  if (p->is_ptr) return check_buffer(p, a, err, errsize);
  if (p->is_int) return check_int(p, a, err, errsize);
  return check_float(p, a, err, errsize);
}

static int check_fixed(const MetaParam *p, const tile_arg *a, char *err, size_t errsize) {
  if (a->kind == TILE_ARG_INT && a->i == 1) return 0;
  char what[128];
  if (a->kind == TILE_ARG_INT) snprintf(what, sizeof what, "%lld", a->i);
  else snprintf(what, sizeof what, "a %s", a->kind == TILE_ARG_BUFFER ? "buffer" : "float");
  return bad_param(err, errsize, p, "the kernel was specialised for the integer 1 (':1'), not %s", what);
}

int args_check(const KernelMetadata *m, const tile_arg *args, int n, uint64_t *slots, void **params, char *err,
               size_t errsize) {
  if (n != m->num_args) {
    snprintf(err, errsize, "kernel '%s' takes %d arguments (its non-constexpr parameters), not %d", m->name,
             m->num_args, n);
    return -1;
  }
  for (int i = 0; i < m->num_params; i++) {
    const MetaParam *p = &m->params[i];
    if (check_param(p, &args[p->position], err, errsize)) return -1;
    if (slots) {
      slots[i] = pack(p, &args[p->position]);
      params[i] = &slots[i];
    }
  }
  for (int i = 0; i < m->num_fixed; i++)
    if (check_fixed(&m->fixed[i], &args[m->fixed[i].position], err, errsize)) return -1;
  return 0;
}

/* ---- tensor maps ------------------------------------------------------------------------- */

/* The extent's value at this launch; 0 if the product overflows (then *wide is set). */
static long long extent_value(const MetaExtent *e, const tile_arg *args, int *wide) {
  long long v = e->value;
  *wide = 0;
  for (int i = 0; i < e->n; i++) *wide |= __builtin_mul_overflow(v, (long long)args[e->args[i]->position].i, &v);
  return v;
}

static int map_base(const MetaParam *p, const tile_arg *a, void **out, char *err, size_t errsize) {
  *out = a->data;
  if ((uintptr_t)a->data % 16 == 0) return 0;
  char what[200];
  snprintf(what, sizeof what, "address %p is not 16-byte aligned; the kernel loads this tensor through the tensor "
           "memory accelerator, which needs 16-byte aligned addresses", a->data);
  return bad_param(err, errsize, p, "%s", what);
}

/* "1000" or, for a product of arguments, "4 * 32 * 1000 = 128000" ("... overflows" past 64 bits). */
static void extent_text(const MetaExtent *e, const tile_arg *args, long long v, int wide, char *buf, size_t size) {
  size_t n = 0;
  buf[0] = 0;
  if (e->n > 1 || e->value != 1) {
    if (e->value != 1) n += (size_t)snprintf(buf, size, "%lld * ", e->value);
    for (int i = 0; i < e->n && n < size; i++)
      n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? " * " : "", (long long)args[e->args[i]->position].i);
    if (n < size) n += (size_t)snprintf(buf + n, size - n, wide ? " (overflows)" : " = ");
  }
  if (!wide && n < size) snprintf(buf + n, size - n, "%lld", v);
}

/* Constant extents were checked with the metadata: only arguments can be out of range here. */
static int map_dim(const MetaExtent *e, const tile_arg *args, uint64_t *out, char *err, size_t errsize) {
  int wide;
  long long v = extent_value(e, args, &wide);
  *out = v < 1 ? 1 : (uint64_t)v;
  if (!wide && v <= MAX_TENSOR_MAP_DIM) return 0;
  char text[160], what[320];
  extent_text(e, args, v, wide, text, sizeof text);
  snprintf(what, sizeof what, "%s, an extent of a tensor the kernel reads or writes through the tensor memory "
           "accelerator, whose coordinates are 32-bit: at most 2^31-257 elements along a dimension", text);
  return bad_param(err, errsize, e->args[0], "%s", what);
}

static int map_stride(const MetaExtent *e, int dtype, const tile_arg *args, uint64_t *out, char *err, size_t errsize) {
  int wide;
  long long v = extent_value(e, args, &wide), elem = (long long)dtype_size(dtype);
  if (wide) v = -1;
  char what[240];
  int in_range = v >= 0 && v <= MAX_TENSOR_MAP_STRIDE_BYTES / elem;
  *out = in_range ? (uint64_t)(v * elem) : 0;
  if (in_range && v * elem % 16 == 0) return 0;
  if (!in_range)
    snprintf(what, sizeof what, "a stride of %lld %s elements; the kernel loads this tensor through the tensor memory "
             "accelerator, which needs strides from 0 to 2^40-1 bytes", v, dtype_name((DType)dtype));
  else
    snprintf(what, sizeof what, "a stride of %lld %s elements, %lld bytes; the kernel loads this tensor through the "
             "tensor memory accelerator, which needs strides that are multiples of 16 bytes", v,
             dtype_name((DType)dtype), v * elem);
  return bad_param(err, errsize, e->args[0], "%s", what);
}

int args_tensor_map(const MetaTensorMap *t, const tile_arg *args, TensorMapShape *out, char *err, size_t errsize) {
  memset(out, 0, sizeof *out);
  out->dtype = t->dtype;
  out->rank = t->rank;
  out->swizzle = t->swizzle;
  if (map_base(t->base, &args[t->base->position], &out->address, err, errsize)) return -1;
  for (int i = 0; i < t->rank; i++) {
    out->box[i] = (uint32_t)t->box[i];
    if (map_dim(&t->dims[i], args, &out->dims[i], err, errsize)) return -1;
  }
  for (int i = 0; i < t->rank - 1; i++)
    if (map_stride(&t->strides[i], t->dtype, args, &out->strides[i], err, errsize)) return -1;
  return 0;
}
