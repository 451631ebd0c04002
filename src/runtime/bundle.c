/* The bundle file format (bundle.h, docs/abi.md section 12): writing one,
 * and reading one as hostile input.  Every field is range-checked before it
 * is used, offsets and lengths without overflow, the checksum before
 * anything else past the header; an error names the file and the field. */
#include "bundle.h"
#include "args.h"
#include "../support/dtypes.h"
#include "../support/diag.h"
#include "../support/endian.h"
#include "../support/sha256.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char magic[8] = {'T', 'I', 'L', 'E', 'B', 'N', 'D', 'L'};
static const char *const kind_names[] = {
#define BUNDLE_KIND_NAME(id, value, name) name,
    BUNDLE_KINDS(BUNDLE_KIND_NAME)
#undef BUNDLE_KIND_NAME
};

/* Of the whole file but the digest itself: bytes 0..31, then 64 to the end. */
static void file_digest(const unsigned char *data, size_t size, unsigned char digest[32]) {
  Sha256 h;
  sha256_init(&h);
  sha256_update(&h, data, BUNDLE_DIGEST_AT);
  sha256_update(&h, data + BUNDLE_HEADER_SIZE, size - BUNDLE_HEADER_SIZE);
  sha256_final(&h, digest);
}

/* ---- writing ------------------------------------------------------------------------- */

int bundle_encode(const BundleBlob *blobs, int count, unsigned char **out, size_t *size) {
  *out = NULL;
  size_t total = BUNDLE_HEADER_SIZE + (size_t)count * BUNDLE_ENTRY_SIZE;
  for (int i = 0; i < count; i++) total += blobs[i].size + (blobs[i].metadata ? strlen(blobs[i].metadata) : 0);
  if (count < 1 || count > BUNDLE_MAX_ENTRIES || total > (size_t)1 << 40) return -1;
  unsigned char *p = calloc(1, total);
  if (!p) return -1;
  memcpy(p, magic, sizeof magic);
  le_put(p + 8, BUNDLE_FORMAT, 4);
  le_put(p + 12, (uint64_t)count, 4);
  le_put(p + 16, total, 8);
  size_t at = BUNDLE_HEADER_SIZE + (size_t)count * BUNDLE_ENTRY_SIZE;
  for (int i = 0; i < count; i++) {
    const BundleBlob *b = &blobs[i];
    unsigned char *e = p + BUNDLE_HEADER_SIZE + (size_t)i * BUNDLE_ENTRY_SIZE;
    size_t meta_len = b->metadata ? strlen(b->metadata) : 0;
    le_put(e, (uint64_t)b->kind, 4);
    le_put(e + 4, (uint32_t)b->spec, 4);
    le_put(e + 8, (uint32_t)b->config, 4);
    if (b->arch) memcpy(e + 16, b->arch, strnlen(b->arch, BUNDLE_ARCH_BYTES));
    le_put(e + 24, at, 8);
    le_put(e + 32, b->size, 8);
    if (b->size) memcpy(p + at, b->data, b->size);
    at += b->size;
    le_put(e + 40, meta_len ? at : 0, 8);
    le_put(e + 48, meta_len, 8);
    if (meta_len) memcpy(p + at, b->metadata, meta_len);
    at += meta_len;
  }
  file_digest(p, total, p + BUNDLE_DIGEST_AT);
  *out = p;
  *size = total;
  return 0;
}

/* ---- reading ------------------------------------------------------------------------- */

typedef struct Reader {
  Bundle *b;
  char *err;
  size_t errsize;
  size_t data_start;     /* where the entry table ends */
} Reader;

static int fail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(Reader *r, const char *fmt, ...) {
  int n = snprintf(r->err, r->errsize, "bundle '%s': ", r->b->name);
  va_list ap;
  va_start(ap, fmt);
  if (n >= 0 && (size_t)n < r->errsize) vsnprintf(r->err + n, r->errsize - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

/* A byte range [offset, offset + length) of the file, past the entry table. */
static int check_range(Reader *r, int i, const char *field, uint64_t offset, uint64_t length, size_t start) {
  size_t size = r->b->size;
  if (offset == 0 && length == 0) return 0; /* none */
  if (offset < start || offset > size || length > size - offset)
    return fail(r, "entry %d: %s at offset %llu, %llu bytes, lies outside the file's data (bytes %zu to %zu)", i, field,
                (unsigned long long)offset, (unsigned long long)length, start, size);
  return 0;
}

/* "*fp32:16,i32:1,fp16" as a launch key (args.h); -1 if it is not one. */
static int signature_key(Arena *a, const char *signature, uint16_t **key, int *n) {
  uint16_t k[MAX_KERNEL_ARGS];
  int count = 0;
  for (const char *p = signature; *p;) {
    size_t len = strcspn(p, ","), type_len = strcspn(p, ":,");
    char type[32], hint[8] = "";
    if (count == MAX_KERNEL_ARGS || type_len >= sizeof type || len - type_len >= sizeof hint) return -1;
    snprintf(type, sizeof type, "%.*s", (int)type_len, p);
    if (len > type_len) snprintf(hint, sizeof hint, "%.*s", (int)(len - type_len - 1), p + type_len + 1);
    int dtype, is_ptr;
    if (!meta_parse_type(type, &dtype, &is_ptr)) return -1;
    int kind = is_ptr ? KEY_BUFFER : dtype_is_float((DType)dtype) ? KEY_FLOAT : KEY_INT;
    int bits = !strcmp(hint, "16") ? KEY_DIV16 : !strcmp(hint, "1") ? KEY_ONE : 0;
    if ((len > type_len && !bits) || (bits && kind == KEY_FLOAT) || (bits == KEY_ONE && kind != KEY_INT)) return -1;
    k[count++] = (uint16_t)(kind | bits | dtype);
    p += len + (p[len] == ',');
    if (p[-1] == ',' && !*p) return -1;
  }
  *key = arena_alloc(a, sizeof *k * (size_t)(count ? count : 1));
  memcpy(*key, k, sizeof *k * (size_t)count);
  *n = count;
  return 0;
}

/* An array of at most `max` items; -1 (with the message) otherwise. */
static int array_of(Reader *r, const Json *v, const char *field, int max) {
  if (!v || v->kind != JSON_ARRAY || v->len > max)
    return fail(r, "manifest: \"%s\" must be an array of at most %d entries", field, max);
  return v->len;
}

/* A list of {"name": N, "position": P}, positions below num_args, into names/positions. */
static int read_args(Reader *r, const Json *v, const char *field, int num_args, int *count, const char *const **names,
                     const int **positions) {
  Arena *a = &r->b->arena;
  int n = v ? array_of(r, v, field, MAX_KERNEL_ARGS) : 0;
  if (n < 0) return -1;
  const char **nm = arena_alloc(a, sizeof *nm * (size_t)(n + 1));
  int *pos = arena_alloc(a, sizeof *pos * (size_t)(n + 1));
  for (int i = 0; i < n; i++) {
    const Json *name = json_get(v->items[i], "name"), *p = json_get(v->items[i], "position");
    if (!name || name->kind != JSON_STRING || !p || p->kind != JSON_NUMBER || !p->is_int || p->i < 0 || p->i >= num_args)
      return fail(r, "manifest: \"%s\"[%d] must be {\"name\": ..., \"position\": 0..%d}", field, i, num_args - 1);
    nm[i] = name->s;
    pos[i] = (int)p->i;
  }
  *count = n, *names = nm, *positions = pos;
  return 0;
}

static double read_ms(const Json *tuning, const char *field) {
  const Json *v = json_get(tuning, field);
  return v && v->kind == JSON_NUMBER && v->f > 0 && v->f <= 60000 ? v->f : 0;
}

static int read_tuning(Reader *r, const Json *tuning) {
  Bundle *b = r->b;
  KernelTuning *t = &b->tuning;
  int num_args = b->num_args[0];
  if (b->num_configs < 2) return 0;
  if (!tuning || tuning->kind != JSON_OBJECT) return fail(r, "manifest: several configs but no \"tuning\" object");
  t->kernel = b->kernel;
  t->num_configs = b->num_configs;
  if (read_args(r, json_get(tuning, "key"), "key", num_args, &t->num_keys, &t->key_names, &t->key_args) ||
      read_args(r, json_get(tuning, "reset_to_zero"), "reset_to_zero", num_args, &t->num_resets, &t->reset_names,
                &t->reset_args) ||
      read_args(r, json_get(tuning, "restore_value"), "restore_value", num_args, &t->num_restores, &t->restore_names,
                &t->restore_args))
    return -1;
  t->warmup_ms = read_ms(tuning, "warmup_ms");
  t->rep_ms = read_ms(tuning, "rep_ms");
  return 0;
}

static int read_manifest(Reader *r, const BundleEntry *e) {
  Bundle *b = r->b;
  Arena *a = &b->arena;
  char why[256];
  const Json *m = json_parse(a, (const char *)e->data, e->size, why, sizeof why);
  if (!m || m->kind != JSON_OBJECT) return fail(r, "manifest: %s", m ? "not a JSON object" : why);
  const Json *format = json_get(m, "format"), *kernel = json_get(m, "kernel");
  if (!format || format->kind != JSON_NUMBER || format->i != BUNDLE_FORMAT)
    return fail(r, "manifest: \"format\" must be %d", BUNDLE_FORMAT);
  if (!kernel || kernel->kind != JSON_STRING || !kernel->s[0]) return fail(r, "manifest: no \"kernel\" name");
  b->kernel = kernel->s;
  const Json *sigs = json_get(m, "signatures"), *configs = json_get(m, "configs");
  int n = array_of(r, sigs, "signatures", BUNDLE_MAX_SIGNATURES);
  if (n < 0) return -1;
  if (n == 0) return fail(r, "manifest: no signatures");
  b->num_specs = n;
  b->signatures = arena_alloc(a, sizeof *b->signatures * (size_t)n);
  b->keys = arena_alloc(a, sizeof *b->keys * (size_t)n);
  b->num_args = arena_alloc(a, sizeof *b->num_args * (size_t)n);
  for (int i = 0; i < n; i++) {
    const Json *s = sigs->items[i];
    if (s->kind != JSON_STRING || signature_key(a, s->s, &b->keys[i], &b->num_args[i]))
      return fail(r, "manifest: signatures[%d] is not a signature (\"*fp32:16,i32\")", i);
    if (b->num_args[i] != b->num_args[0])
      return fail(r, "manifest: signatures[%d] has %d arguments, signatures[0] %d", i, b->num_args[i], b->num_args[0]);
    b->signatures[i] = s->s;
  }
  int c = array_of(r, configs, "configs", BUNDLE_MAX_CONFIGS);
  if (c < 0) return -1;
  b->num_configs = c;
  b->configs = arena_alloc(a, sizeof *b->configs * (size_t)(c + 1));
  for (int i = 0; i < c; i++) {
    const Json *v = configs->items[i];
    if (v->kind != JSON_NUMBER || !v->is_int || v->i < 0 || v->i >= 1 << 20)
      return fail(r, "manifest: configs[%d] must be a config index from 0 to 1048575", i);
    b->configs[i] = (int)v->i;
    if (bundle_config_slot(b, b->configs[i]) < i) return fail(r, "manifest: config %d is listed twice", b->configs[i]);
  }
  return read_tuning(r, json_get(m, "tuning"));
}

/* The i-th entry of the table into e: fields and ranges. */
static int read_entry(Reader *r, int i, size_t data_start, BundleEntry *e) {
  Bundle *b = r->b;
  const unsigned char *p = b->bytes + BUNDLE_HEADER_SIZE + (size_t)i * BUNDLE_ENTRY_SIZE;
  uint64_t kind = le_get(p, 4), spec = le_get(p + 4, 4), config = le_get(p + 8, 4), reserved = le_get(p + 12, 4);
  uint64_t data_at = le_get(p + 24, 8), data_len = le_get(p + 32, 8), meta_at = le_get(p + 40, 8),
           meta_len = le_get(p + 48, 8);
  if (kind >= BUNDLE_KIND_COUNT) return fail(r, "entry %d: kind %llu is not one of 0..%d", i, (unsigned long long)kind, BUNDLE_KIND_COUNT - 1);
  if ((i == 0) != (kind == BUNDLE_MANIFEST)) return fail(r, "entry %d: the manifest must be entry 0, and only it", i);
  if (reserved) return fail(r, "entry %d: reserved field is %llu, not 0", i, (unsigned long long)reserved);
  e->kind = (int)kind;
  e->spec = spec == 0xffffffffu ? BUNDLE_NONE : (int)spec;
  e->config = config == 0xffffffffu ? BUNDLE_NONE : (int)config;
  memcpy(e->arch, p + 16, BUNDLE_ARCH_BYTES);
  for (int c = 0; c < BUNDLE_ARCH_BYTES && e->arch[c]; c++)
    if (!(e->arch[c] == '_' || (e->arch[c] >= 'a' && e->arch[c] <= 'z') || (e->arch[c] >= '0' && e->arch[c] <= '9')))
      return fail(r, "entry %d: the architecture field is not text like \"sm_90a\"", i);
  if (check_range(r, i, "data", data_at, data_len, data_start) ||
      check_range(r, i, "metadata", meta_at, meta_len, data_start))
    return -1;
  if (!data_len) return fail(r, "entry %d (%s): no data", i, kind_names[kind]);
  e->data = b->bytes + data_at;
  e->size = (size_t)data_len;
  e->metadata = meta_len ? arena_strndup(&b->arena, (const char *)b->bytes + meta_at, (size_t)meta_len) : NULL;
  e->metadata_len = (size_t)meta_len;
  return 0;
}

int bundle_config_slot(const Bundle *b, int config) {
  if (!b->num_configs) return config == BUNDLE_NONE ? 0 : -1;
  for (int c = 0; c < b->num_configs; c++)
    if (b->configs[c] == config) return c;
  return -1;
}

/* An image or tile IR entry against the manifest and its own metadata. */
static int check_entry(Reader *r, int i, BundleEntry *e) {
  Bundle *b = r->b;
  char why[512];
  const char *kind = kind_names[e->kind];
  if (e->spec < 0 || e->spec >= b->num_specs)
    return fail(r, "entry %d (%s): specialisation %d, but the manifest lists %d", i, kind, e->spec, b->num_specs);
  if (bundle_config_slot(b, e->config) < 0) return fail(r, "entry %d (%s): config %d is not one the manifest lists", i, kind, e->config);
  int is_image = e->kind == BUNDLE_CUBIN || e->kind == BUNDLE_PTX;
  if (is_image != (e->arch[0] != 0)) return fail(r, "entry %d (%s): %s", i, kind, is_image ? "no architecture" : "an architecture, for no image");
  if (!e->metadata) return fail(r, "entry %d (%s): no metadata", i, kind);
  if (e->kind == BUNDLE_CUBIN && (e->size < 4 || memcmp(e->data, "\x7f" "ELF", 4)))
    return fail(r, "entry %d (cubin): the data is not an ELF file", i);
  if (e->kind != BUNDLE_CUBIN && memchr(e->data, 0, e->size)) return fail(r, "entry %d (%s): the data is not text", i, kind);
  if (meta_parse(&b->arena, e->metadata, e->metadata_len, &e->meta, why, sizeof why))
    return fail(r, "entry %d (%s): %s", i, kind, why);
  const KernelMetadata *m = &e->meta;
  const char *target = e->kind == BUNDLE_CUBIN ? "cubin" : e->kind == BUNDLE_PTX ? "ptx" : "cpu";
  if (strcmp(m->name, b->kernel) || strcmp(m->signature, b->signatures[e->spec]) || strcmp(m->target, target) ||
      (is_image && strcmp(m->arch, e->arch)) || m->config != e->config || m->num_args != b->num_args[0])
    return fail(r, "entry %d (%s): its metadata (kernel '%s', signature %s, %s %s, config %d) is not what the table and "
                   "manifest say (kernel '%s', signature %s, %s %s, config %d)",
                i, kind, m->name, m->signature, m->target, m->arch, m->config, b->kernel, b->signatures[e->spec], target,
                is_image ? e->arch : "cpu", e->config);
  for (int j = 1; j < i; j++) {
    const BundleEntry *o = &b->entries[j];
    if (o->kind == e->kind && o->spec == e->spec && o->config == e->config && !strcmp(o->arch, e->arch))
      return fail(r, "entry %d (%s): the same as entry %d", i, kind, j);
  }
  return 0;
}

static int read_header(Reader *r, size_t *data_start) {
  Bundle *b = r->b;
  const unsigned char *p = b->bytes;
  if (b->size < BUNDLE_HEADER_SIZE || memcmp(p, magic, sizeof magic))
    return fail(r, "not a kernel bundle (no TILEBNDL magic; %zu bytes)", b->size);
  uint64_t format = le_get(p + 8, 4), count = le_get(p + 12, 4), length = le_get(p + 16, 8), reserved = le_get(p + 24, 8);
  if (format != BUNDLE_FORMAT)
    return fail(r, "format version %llu; this runtime reads version %d", (unsigned long long)format, BUNDLE_FORMAT);
  if (length != b->size)
    return fail(r, "the header says %llu bytes but the file has %zu (truncated or extended?)", (unsigned long long)length,
                b->size);
  if (reserved) return fail(r, "header: reserved bytes 24..31 are not 0");
  if (count < 1 || count > BUNDLE_MAX_ENTRIES) return fail(r, "header: %llu entries (1 to %d)", (unsigned long long)count, BUNDLE_MAX_ENTRIES);
  *data_start = BUNDLE_HEADER_SIZE + (size_t)count * BUNDLE_ENTRY_SIZE;
  if (*data_start > b->size) return fail(r, "header: the table of %llu entries passes the end of the file", (unsigned long long)count);
  file_digest(b->bytes, b->size, b->digest);
  if (memcmp(b->digest, p + BUNDLE_DIGEST_AT, 32)) return fail(r, "checksum mismatch (the file is corrupt)");
  b->num_entries = (int)count;
  return 0;
}

static int decode(Reader *r) {
  Bundle *b = r->b;
  if (read_header(r, &r->data_start)) return -1;
  b->entries = arena_alloc(&b->arena, sizeof *b->entries * (size_t)b->num_entries);
  for (int i = 0; i < b->num_entries; i++)
    if (read_entry(r, i, r->data_start, &b->entries[i])) return -1;
  if (read_manifest(r, &b->entries[0])) return -1;
  for (int i = 1; i < b->num_entries; i++)
    if (check_entry(r, i, &b->entries[i])) return -1;
  return 0;
}

typedef struct Decoding {
  Reader r;
  const char *name;
  const void *data;
  size_t size;
  int status;
} Decoding;

static void copy_and_decode(void *ud) {
  Decoding *d = ud;
  Bundle *b = d->r.b;
  b->name = arena_strdup(&b->arena, d->name);
  unsigned char *copy = arena_alloc(&b->arena, d->size + 1);
  memcpy(copy, d->data, d->size);
  b->bytes = copy;
  b->size = d->size;
  d->status = decode(&d->r);
}

int bundle_decode(Bundle *b, const char *name, const void *data, size_t size, char *err, size_t errsize) {
  memset(b, 0, sizeof *b);
  arena_init(&b->arena, 0);
  Decoding d = {{b, err, errsize, 0}, name ? name : "<memory>", data, size, -1};
  if (arena_run(&b->arena, copy_and_decode, &d)) snprintf(err, errsize, "bundle '%s': out of memory reading it", d.name);
  return d.status;
}

void bundle_free(Bundle *b) { arena_free(&b->arena); }
