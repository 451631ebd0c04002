/* Kernel metadata as JSON (the format is in docs/abi.md), from what the
 * compiler knows: the checked kernel (the launch's arguments, constexpr
 * values, arguments specialised to 1), the tile IR function (the ABI
 * parameters, num_warps, num_stages) and the GPU code (target, shared
 * memory, ptxas's report of registers and spills).  The runtime reads it
 * back with meta_parse, for JIT and AOT kernels alike.
 * Requires: f compiled by c (c->checked set, unless c read tile IR text). */
#include "driver.h"
#include "../backend/ptxas.h"
#include "../runtime/json.h"
#include "../runtime/metadata.h"
#include "../support/sha256.h"
#include "../tir/tir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void put_value(Buf *b, Arena *a, const Value *v) {
  switch (v->kind) {
  case V_INT: buf_printf(b, "%lld", (long long)v->i); return;
  case V_BOOL: buf_puts(b, v->i ? "true" : "false"); return;
  case V_NONE: buf_puts(b, "null"); return;
  case V_FLOAT:
    if (isfinite(v->f)) {
      buf_printf(b, "%.17g", v->f);
      return;
    }
    break;
  case V_STR: json_put_string(b, arena_strndup(a, v->s, v->slen)); return;
  case V_DTYPE: json_put_string(b, arena_printf(a, "%s%s", v->dtype_is_ptr ? "*" : "", dtype_name(v->dtype))); return;
  default: break;
  }
  json_put_string(b, value_str(a, v));
}

static void put_param(Buf *b, Arena *a, int first, const char *name, const Type *t, int divisibility, int position) {
  buf_printf(b, "%s\n    {\"name\": ", first ? "" : ",");
  json_put_string(b, name);
  buf_printf(b, ", \"type\": \"%s\", \"divisibility\": %d, \"position\": %d}", type_str(a, t), divisibility == 16 ? 16 : 1,
             position);
}

static void put_params(Buf *b, Arena *a, const TirFunc *f) {
  buf_puts(b, "  \"params\": [");
  for (int i = 0; i < f->params.len; i++) {
    const TirParam *p = &f->params.data[i];
    put_param(b, a, i == 0, p->name ? p->name : arena_printf(a, "arg%d", i), tir_type(f, p->value), p->divisibility,
              p->arg_index);
  }
  buf_puts(b, f->params.len ? "\n  ],\n" : "],\n");
}

/* The launch's arguments: the kernel's run-time parameters, ':1' ones included. */
static int count_args(const CheckedKernel *k, const TirFunc *f) {
  if (!k) return f->params.len;
  int n = 0;
  for (int i = 0; i < k->params.len; i++) n += !k->params.data[i].is_constexpr || k->params.data[i].specialized;
  return n;
}

static void put_specialized(Buf *b, Arena *a, const CheckedKernel *k) {
  buf_puts(b, "  \"specialized\": [");
  int first = 1;
  for (int i = 0, pos = 0; k && i < k->params.len; i++) {
    const KernelParam *p = &k->params.data[i];
    if (p->specialized) {
      put_param(b, a, first, p->name, p->type, 1, pos);
      first = 0;
    }
    pos += !p->is_constexpr || p->specialized;
  }
  buf_puts(b, first ? "],\n" : "\n  ],\n");
}

static void put_constexprs(Buf *b, Arena *a, const CheckedKernel *k) {
  buf_puts(b, "  \"constexprs\": {");
  int first = 1;
  for (int i = 0; k && i < k->params.len; i++) {
    const KernelParam *p = &k->params.data[i];
    if (!p->is_constexpr || p->specialized || !p->value) continue;
    buf_puts(b, first ? "" : ", ");
    json_put_string(b, p->name);
    buf_puts(b, ": ");
    put_value(b, a, p->value);
    first = 0;
  }
  buf_puts(b, "},\n");
}

/* "*fp32:16,i32:1": the specialisation as the compiler saw it. */
static const char *signature_of(Arena *a, const CheckedKernel *k, const TirFunc *f) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0, n = 0; k && i < k->params.len; i++) {
    const KernelParam *p = &k->params.data[i];
    if (p->is_constexpr && !p->specialized) continue;
    buf_printf(&b, "%s%s%s", n++ ? "," : "", type_str(a, p->type),
               p->specialized ? ":1" : p->divisibility == 16 ? ":16" : "");
  }
  for (int i = 0; !k && i < f->params.len; i++)
    buf_printf(&b, "%s%s%s", i ? "," : "", type_str(a, tir_type(f, f->params.data[i].value)),
               f->params.data[i].divisibility == 16 ? ":16" : "");
  return buf_cstr(&b);
}

static void put_field(Buf *b, const char *key, const char *value) {
  buf_printf(b, "  \"%s\": ", key);
  json_put_string(b, value);
  buf_puts(b, ",\n");
}

/* The compiler-made checks that trap on the GPU, "file:line: message; ...". */
static void collect_checks(const TirBlock *blk, Buf *out) {
  for (int i = 0; i < blk->ops.len; i++) {
    const TirOp *op = blk->ops.data[i];
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) collect_checks(op->regions[r], out);
    if (op->code != TIR_ASSERT || !(op->flags & ASSERT_TRAP)) continue;
    buf_printf(out, "%s%s:%d: %s", out->len ? "; " : "", op->loc.src ? op->loc.src->name : "?", op->loc.line,
               op->str ? op->str : "");
  }
}

/* {"value": 64}, {"arg": 5}, or a product {"args": [2, 3, 20]} ({"args": [5], "value": 2}). */
static void put_map_field(Buf *b, const TirFunc *f, const TirMapField *x) {
  if (!x->n) {
    buf_printf(b, "{\"value\": %lld}", (long long)x->value);
    return;
  }
  if (x->n == 1 && x->value == 1) {
    buf_printf(b, "{\"arg\": %d}", f->params.data[x->params[0]].arg_index);
    return;
  }
  buf_puts(b, "{\"args\": [");
  for (int i = 0; i < x->n; i++) buf_printf(b, "%s%d", i ? ", " : "", f->params.data[x->params[i]].arg_index);
  buf_puts(b, "]");
  if (x->value != 1) buf_printf(b, ", \"value\": %lld", (long long)x->value);
  buf_puts(b, "}");
}

/* "tensor_maps": the CUtensorMaps the launch encodes and passes after the parameters (docs/abi.md). */
static void put_tensor_maps(Buf *b, const TirFunc *f) {
  if (!f->tensor_maps.len) return;
  buf_puts(b, "  \"tensor_maps\": [");
  for (int i = 0; i < f->tensor_maps.len; i++) {
    const TirTensorMap *m = &f->tensor_maps.data[i];
    const TirParam *base = &f->params.data[m->base];
    buf_printf(b, "%s\n    {\"base\": %d, \"dtype\": \"%s\", \"dims\": [", i ? "," : "", base->arg_index,
               dtype_name(tir_type(f, base->value)->elem));
    for (int d = 0; d < 2; d++) {
      if (d) buf_puts(b, ", ");
      put_map_field(b, f, &m->dims[d]);
    }
    buf_puts(b, "], \"strides\": [");
    put_map_field(b, f, &m->stride);
    buf_printf(b, "], \"box\": [%d, %d], \"swizzle\": %d}", m->box[0], m->box[1], m->swizzle);
  }
  buf_puts(b, "\n  ],\n");
}

const char *describe_kernel(Compilation *c, const TirFunc *f, const GpuArtifacts *g, int image_is_ptx) {
  Arena *a = &c->arena;
  const CheckedKernel *k = c->checked;
  const char *log = g ? g->ptxas_log : NULL;
  unsigned char digest[32];
  char hash[65];
  sha256(c->source.text, c->source.len, digest);
  sha256_hex(digest, hash);
  Buf b;
  buf_init(&b, a);
  buf_printf(&b, "{\n  \"format\": %d,\n", META_FORMAT);
  put_field(&b, "name", f->name);
  put_field(&b, "signature", signature_of(a, k, f));
  buf_printf(&b, "  \"num_args\": %d,\n", count_args(k, f));
  put_params(&b, a, f);
  put_specialized(&b, a, k);
  put_constexprs(&b, a, k);
  if (k && c->config >= 0) buf_printf(&b, "  \"config\": %d,\n", c->config);
  buf_printf(&b, "  \"num_warps\": %d,\n  \"num_stages\": %d,\n", f->num_warps, f->num_stages);
  if (g && g->maxnreg) buf_printf(&b, "  \"maxnreg\": %d,\n", g->maxnreg);
  if (f->refills) put_field(&b, "refill", meta_refill_names[f->refills]);
  if (g) put_tensor_maps(&b, f);
  buf_printf(&b, "  \"shared\": %d,\n", g ? g->shared_bytes : 0);
  buf_printf(&b, "  \"registers\": %d,\n  \"spills\": %d,\n", ptxas_registers(log), ptxas_spill_stores(log));
  Buf checks;
  buf_init(&checks, a);
  collect_checks(f->body, &checks);
  if (checks.len) put_field(&b, "checks", buf_cstr(&checks));
  put_field(&b, "arch", g ? g->arch : "cpu");
  put_field(&b, "target", !g ? "cpu" : image_is_ptx ? "ptx" : "cubin");
  put_field(&b, "compiler", arena_printf(a, "tile %s", tile_version()));
  buf_printf(&b, "  \"source_sha256\": \"%s\"\n}\n", hash);
  return buf_cstr(&b);
}
