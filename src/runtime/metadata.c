/* Reading kernel metadata JSON (the format is in docs/abi.md).  Everything a
 * launch relies on is checked here, once, so a launch can trust the tables:
 * argument positions cover 0..num_args-1 exactly once, in order. */
#include "metadata.h"
#include "../frontend/types.h"
#include "tile/tile.h"

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

int meta_parse(Arena *a, const char *json, size_t len, KernelMetadata *m, char *err, size_t errsize) {
  memset(m, 0, sizeof *m);
  char why[256];
  MetaReader r = {a, json_parse(a, json, len, why, sizeof why), err, errsize};
  if (!r.root) return bad(&r, "not JSON: ", why);
  if (r.root->kind != JSON_OBJECT) return bad(&r, "not a JSON object", NULL);
  if (read_fields(&r, m) || read_param_list(&r, "params", m->num_args, &m->params, &m->num_params) ||
      read_param_list(&r, "specialized", m->num_args, &m->fixed, &m->num_fixed) || check_positions(&r, m) ||
      read_constexprs(&r, m))
    return -1;
  return 0;
}
