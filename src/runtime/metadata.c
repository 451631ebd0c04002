/* Reading kernel metadata JSON (the format is in docs/abi.md).  Everything a
 * launch relies on is checked here, once, so a launch can trust the tables:
 * argument positions cover 0..num_args-1 exactly once, in order. */
#include "metadata.h"
#include "device.h"
#include "../support/arch.h"
#include "../support/dtypes.h"
#include "tile/tile.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct MetaReader {
  Arena *arena;
  const Json *root;
  char *err;
  size_t errsize;
} MetaReader;

static int bad(MetaReader *r, const char *what, const char *detail) {
  snprintf(r->err, r->errsize, "metadata: %s%s", what, detail ? detail : "");
  return -1;
}

int meta_parse_type(const char *text, int *dtype, int *is_ptr) {
  *is_ptr = text[0] == '*';
  *dtype = dtype_lookup(text + *is_ptr);
  return *dtype >= 0;
}

static int get_string(MetaReader *r, const Json *obj, const char *key, const char **out) {
  const Json *v = json_get(obj, key);
  if (!v || v->kind != JSON_STRING) return bad(r, "missing or non-string field ", key);
  *out = v->s;
  return 0;
}

/* An integer field within [lo, hi]; `fallback` if absent and optional. */
static int get_int(MetaReader *r, const Json *obj, const char *key, long long lo, long long hi, int optional,
                   int fallback, int *out) {
  const Json *v = json_get(obj, key);
  *out = fallback;
  if (!v && optional) return 0;
  if (!v || v->kind != JSON_NUMBER || !v->is_int) return bad(r, "missing or non-integer field ", key);
  if (v->i < lo || v->i > hi) return bad(r, "field out of range: ", key);
  *out = (int)v->i;
  return 0;
}

/* What a launch checks quickly: integer or not, and an integer's range. */
static void classify(MetaParam *p) {
  DType t = (DType)p->dtype;
  int bits = dtype_bits(t);
  p->is_int = !p->is_ptr && dtype_is_int(t);
  if (!p->is_int) return;
  p->min = dtype_kind(t) == DK_SINT && bits < 64 ? -(1LL << (bits - 1)) : dtype_kind(t) == DK_SINT ? INT64_MIN : 0;
  p->max = bits == 1 ? 1 : bits >= 63 ? INT64_MAX : dtype_kind(t) == DK_SINT ? (1LL << (bits - 1)) - 1 : (1LL << bits) - 1;
}

static int read_param(MetaReader *r, const Json *p, MetaParam *out, int num_args) {
  const char *type;
  if (!p || p->kind != JSON_OBJECT) return bad(r, "a parameter is not an object", NULL);
  if (get_string(r, p, "name", &out->name) || get_string(r, p, "type", &type) ||
      get_int(r, p, "position", 0, num_args - 1, 0, 0, &out->position) ||
      get_int(r, p, "divisibility", 1, 16, 1, 1, &out->divisibility))
    return -1;
  if (!meta_parse_type(type, &out->dtype, &out->is_ptr)) return bad(r, "unknown parameter type ", type);
  if (out->divisibility != 1 && out->divisibility != 16) return bad(r, "divisibility must be 1 or 16: ", out->name);
  if (out->divisibility == 16 && !out->is_ptr && !dtype_is_int((DType)out->dtype))
    return bad(r, "divisibility 16 on a float parameter: ", out->name);
  classify(out);
  return 0;
}

static int read_param_list(MetaReader *r, const char *key, int num_args, MetaParam **out, int *n) {
  const Json *list = json_get(r->root, key);
  *out = NULL;
  *n = 0;
  if (!list) return 0;
  if (list->kind != JSON_ARRAY || list->len > num_args) return bad(r, "bad parameter list ", key);
  *out = arena_alloc(r->arena, sizeof **out * (size_t)(list->len + 1));
  for (int i = 0; i < list->len; i++)
    if (read_param(r, list->items[i], &(*out)[i], num_args)) return -1;
  *n = list->len;
  return 0;
}

/* Parameters in increasing position, fixed ones integers; together they
 * cover every argument once. */
static int check_positions(MetaReader *r, const KernelMetadata *m) {
  unsigned char seen[MAX_KERNEL_ARGS] = {0};
  for (int i = 0; i < m->num_params; i++) {
    if (i && m->params[i].position <= m->params[i - 1].position)
      return bad(r, "parameters are not in increasing position at ", m->params[i].name);
    seen[m->params[i].position]++;
  }
  for (int i = 0; i < m->num_fixed; i++) {
    if (m->fixed[i].is_ptr || !dtype_is_int((DType)m->fixed[i].dtype))
      return bad(r, "a specialised argument that is not an integer: ", m->fixed[i].name);
    seen[m->fixed[i].position]++;
  }
  for (int i = 0; i < m->num_args; i++)
    if (seen[i] != 1) return bad(r, "the parameters do not cover each argument position once", NULL);
  return 0;
}

static int read_constexprs(MetaReader *r, KernelMetadata *m) {
  const Json *c = json_get(r->root, "constexprs");
  if (!c) return 0;
  if (c->kind != JSON_OBJECT) return bad(r, "'constexprs' is not an object", NULL);
  m->constexprs = arena_alloc(r->arena, sizeof *m->constexprs * (size_t)(c->len + 1));
  for (int i = 0; i < c->len; i++) {
    JsonKind k = c->items[i]->kind;
    if (k != JSON_NUMBER && k != JSON_BOOL && k != JSON_STRING && k != JSON_NULL) return bad(r, "bad constexpr value: ", c->keys[i]);
    m->constexprs[i] = (MetaConstexpr){c->keys[i], c->items[i]};
  }
  m->num_constexprs = c->len;
  return 0;
}

_Static_assert(TILE_REFILL_EARLY == 1 && TILE_REFILL_LATE == 2, "tile_refill's schedules are the bits of a set of them");
const char *const meta_refill_names[4] = {"", "early", "late", "early,late"};

static int read_fields(MetaReader *r, KernelMetadata *m) {
  int format;
  if (get_int(r, r->root, "format", 1, 1000, 0, 0, &format)) return -1;
  if (format != META_FORMAT) return bad(r, "unsupported format version (this runtime reads format 1)", NULL);
  if (get_string(r, r->root, "name", &m->name) || get_string(r, r->root, "signature", &m->signature) ||
      get_string(r, r->root, "arch", &m->arch) || get_string(r, r->root, "target", &m->target) ||
      get_int(r, r->root, "num_args", 0, MAX_KERNEL_ARGS, 0, 0, &m->num_args) ||
      get_int(r, r->root, "num_warps", 1, 32, 0, 0, &m->num_warps) ||
      get_int(r, r->root, "num_stages", 1, 64, 1, 3, &m->num_stages) ||
      get_int(r, r->root, "maxnreg", 0, ARCH_MOST_MAXNREG, 1, 0, &m->maxnreg) ||
      get_int(r, r->root, "config", -1, 1 << 20, 1, -1, &m->config) ||
      get_int(r, r->root, "shared", 0, 1 << 30, 0, 0, &m->shared) ||
      get_int(r, r->root, "registers", -1, 1 << 16, 1, -1, &m->registers) ||
      get_int(r, r->root, "spills", -1, 1 << 30, 1, -1, &m->spills))
    return -1;
  const Json *refill = json_get(r->root, "refill");
  if (refill && refill->kind != JSON_STRING) return bad(r, "non-string field ", "refill");
  for (int i = 1; refill && i < 4; i++)
    if (!strcmp(refill->s, meta_refill_names[i])) m->refills = i;
  if (refill && !m->refills) return bad(r, "refill must be \"early\", \"late\" or \"early,late\", not ", refill->s);
  const Json *checks = json_get(r->root, "checks");
  if (checks && checks->kind != JSON_STRING) return bad(r, "non-string field ", "checks");
  m->checks = checks ? checks->s : "";
  if (m->num_warps & (m->num_warps - 1)) return bad(r, "num_warps is not a power of two", NULL);
  if (!m->name[0]) return bad(r, "empty kernel name", NULL);
  if (strcmp(m->target, "cubin") && strcmp(m->target, "ptx") && strcmp(m->target, "cpu"))
    return bad(r, "target must be \"cubin\", \"ptx\" or \"cpu\", not ", m->target);
  return 0;
}

/* ---- tensor maps ---------------------------------------------------------------------- */

/* What reading one of "tensor_maps" needs besides the reader. */
typedef struct MapReader {
  MetaReader *r;
  const KernelMetadata *m;
  int index;              /* the map's place in "tensor_maps", for messages */
  size_t elem;            /* bytes of one element */
} MapReader;

static int bad_map(MapReader *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad_map(MapReader *t, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(t->r->err, t->r->errsize, "metadata: tensor map %d: %s", t->index, what);
  return -1;
}

/* The argument at `position`: an ABI parameter or a ':1' one; NULL if none. */
static const MetaParam *param_at(const KernelMetadata *m, int position) {
  for (int i = 0; i < m->num_params; i++)
    if (m->params[i].position == position) return &m->params[i];
  for (int i = 0; i < m->num_fixed; i++)
    if (m->fixed[i].position == position) return &m->fixed[i];
  return NULL;
}

/* The argument a map's field names by position ("base": 0). */
static const MetaParam *map_arg(MapReader *t, const Json *v, const char *field) {
  if (!v || v->kind != JSON_NUMBER || !v->is_int || v->i < 0 || v->i >= t->m->num_args) {
    bad_map(t, "%s is not an argument position (0 to %d)", field, t->m->num_args - 1);
    return NULL;
  }
  return param_at(t->m, (int)v->i);
}

/* The array `key` of `obj`, of `len` items, `rule` saying why. */
static const Json *map_array(MapReader *t, const Json *obj, const char *key, int len, const char *rule) {
  const Json *v = json_get(obj, key);
  if (v && v->kind == JSON_ARRAY && v->len == len) return v;
  bad_map(t, "%s is not an array with %s (%d)", key, rule, len);
  return NULL;
}

/* extent: {"arg": position of an integer argument} | {"value": lo..hi} */
/* One integer argument of an extent, by position. */
static int extent_arg(MapReader *t, const Json *position, const char *field, MetaExtent *out) {
  const MetaParam *p = map_arg(t, position, field);
  if (!p) return -1;
  if (!p->is_int) return bad_map(t, "%s names argument %d ('%s'), which is not an integer", field, p->position, p->name);
  out->args[out->n++] = p;
  return 0;
}

static int read_extent(MapReader *t, const Json *v, const char *field, long long lo, long long hi, MetaExtent *out) {
  const Json *arg = v && v->kind == JSON_OBJECT ? json_get(v, "arg") : NULL;
  const Json *args = v && v->kind == JSON_OBJECT ? json_get(v, "args") : NULL;
  const Json *value = v && v->kind == JSON_OBJECT ? json_get(v, "value") : NULL;
  memset(out, 0, sizeof *out);
  out->value = 1;
  if (arg) return extent_arg(t, arg, field, out);
  if (args && (args->kind != JSON_ARRAY || args->len < 1 || args->len > ARCH_MAX_MAP_FACTORS))
    return bad_map(t, "%s: args is not an array of 1 to %d argument positions", field, ARCH_MAX_MAP_FACTORS);
  for (int i = 0; args && i < args->len; i++)
    if (extent_arg(t, args->items[i], field, out)) return -1;
  if (!value && !args) return bad_map(t, "%s is none of {\"arg\": position}, {\"value\": N}, {\"args\": [...]}", field);
  if (value && (value->kind != JSON_NUMBER || !value->is_int || value->i < (args ? 1 : lo) || value->i > hi))
    return bad_map(t, "%s: value is not an integer from %lld to %lld", field, args ? 1 : lo, hi);
  if (value) out->value = value->i;
  return 0;
}

/* dims: extents of 1 to 2^31-1 elements; strides: of whole 16-byte steps below 2^40 bytes. */
static int read_extents(MapReader *t, const Json *obj, MetaTensorMap *out) {
  const Json *dims = json_get(obj, "dims");
  if (!dims || dims->kind != JSON_ARRAY || dims->len < 1 || dims->len > MAX_TENSOR_MAP_RANK)
    return bad_map(t, "dims is not an array of 1 to %d entries", MAX_TENSOR_MAP_RANK);
  out->rank = dims->len;
  const Json *strides = map_array(t, obj, "strides", out->rank - 1, "one entry fewer than dims");
  if (!strides) return -1;
  char field[32];
  for (int i = 0; i < out->rank; i++) {
    snprintf(field, sizeof field, "dims[%d]", i);
    if (read_extent(t, dims->items[i], field, 1, MAX_TENSOR_MAP_DIM, &out->dims[i])) return -1;
  }
  for (int i = 0; i < out->rank - 1; i++) {
    snprintf(field, sizeof field, "strides[%d]", i);
    if (read_extent(t, strides->items[i], field, 0, MAX_TENSOR_MAP_STRIDE_BYTES / (long long)t->elem, &out->strides[i]))
      return -1;
    if (!out->strides[i].n && out->strides[i].value * (long long)t->elem % 16)
      return bad_map(t, "%s: %lld elements are %lld bytes, not a multiple of 16", field, out->strides[i].value,
                     out->strides[i].value * (long long)t->elem);
  }
  return 0;
}

/* box: rank extents of 1..256 elements, the inner one a whole number of 16-byte steps within the swizzle span. */
static int read_box(MapReader *t, const Json *obj, MetaTensorMap *out) {
  const Json *box = map_array(t, obj, "box", out->rank, "as many entries as dims"), *swizzle = json_get(obj, "swizzle");
  if (!box) return -1;
  if (!swizzle || swizzle->kind != JSON_NUMBER || !swizzle->is_int ||
      (swizzle->i != 0 && swizzle->i != 32 && swizzle->i != 64 && swizzle->i != 128))
    return bad_map(t, "swizzle is not 0, 32, 64 or 128 (bytes)");
  out->swizzle = (int)swizzle->i;
  for (int i = 0; i < out->rank; i++) {
    const Json *v = box->items[i];
    if (v->kind != JSON_NUMBER || !v->is_int || v->i < 1 || v->i > MAX_TENSOR_MAP_BOX)
      return bad_map(t, "box[%d] is not an integer from 1 to %d", i, MAX_TENSOR_MAP_BOX);
    out->box[i] = (int)v->i;
  }
  long long inner = out->box[0] * (long long)t->elem;
  if (inner % 16) return bad_map(t, "box[0] spans %lld bytes, not a multiple of 16", inner);
  if (out->swizzle && inner > out->swizzle)
    return bad_map(t, "box[0] spans %lld bytes, more than the swizzle's %d", inner, out->swizzle);
  return 0;
}

static int read_tensor_map(MapReader *t, const Json *obj, MetaTensorMap *out) {
  if (!obj || obj->kind != JSON_OBJECT) return bad_map(t, "not an object");
  if (!(out->base = map_arg(t, json_get(obj, "base"), "base"))) return -1;
  if (!out->base->is_ptr)
    return bad_map(t, "base names argument %d ('%s'), which is not a pointer", out->base->position, out->base->name);
  const Json *d = json_get(obj, "dtype");
  const char *dtype = d && d->kind == JSON_STRING ? d->s : "";
  out->dtype = dtype_lookup(dtype);
  if (out->dtype < 0 || device_tensor_map_dtype(out->dtype) < 0)
    return bad_map(t, "dtype '%s' is not one a tensor map holds (fp16, bf16, fp32, fp64, i8, u8, i32, u32, i64, u64)",
                   dtype);
  t->elem = (size_t)dtype_bits((DType)out->dtype) / 8;
  return read_extents(t, obj, out) || read_box(t, obj, out);
}

static int read_tensor_maps(MetaReader *r, KernelMetadata *m) {
  const Json *list = json_get(r->root, "tensor_maps");
  if (!list) return 0;
  char most[32];
  snprintf(most, sizeof most, "%d maps", MAX_TENSOR_MAPS);
  if (list->kind != JSON_ARRAY || list->len > MAX_TENSOR_MAPS) return bad(r, "'tensor_maps' is not an array of at most ", most);
  if (m->num_params + list->len > MAX_KERNEL_ARGS) return bad(r, "more parameters and tensor maps than a launch passes", NULL);
  m->tensor_maps = arena_alloc(r->arena, sizeof *m->tensor_maps * (size_t)(list->len + 1));
  for (int i = 0; i < list->len; i++) {
    MapReader t = {r, m, i, 1};
    if (read_tensor_map(&t, list->items[i], &m->tensor_maps[i])) return -1;
  }
  m->num_tensor_maps = list->len;
  return 0;
}

int meta_parse(Arena *a, const char *json, size_t len, KernelMetadata *m, char *err, size_t errsize) {
  memset(m, 0, sizeof *m);
  char why[256];
  MetaReader r = {a, json_parse(a, json, len, why, sizeof why), err, errsize};
  if (!r.root) return bad(&r, "not JSON: ", why);
  if (r.root->kind != JSON_OBJECT) return bad(&r, "not a JSON object", NULL);
  if (read_fields(&r, m) || read_param_list(&r, "params", m->num_args, &m->params, &m->num_params) ||
      read_param_list(&r, "specialized", m->num_args, &m->fixed, &m->num_fixed) || check_positions(&r, m) ||
      read_constexprs(&r, m) || read_tensor_maps(&r, m))
    return -1;
  return 0;
}
