/* Kernel bundles, the compiler's half (docs/abi.md section 12): tile_pack
 * compiles a kernel for every signature, config and architecture asked
 * for -- a cubin and its PTX with their metadata, and the tile IR the CPU
 * interpreter runs -- and writes them as one bundle (src/runtime/bundle.c);
 * bundle_interpreter reads a bundle's tile IR back for the interpreter,
 * which libtile_rt does not have. */
#include "driver.h"
#include "../runtime/bundle.h"
#include "../runtime/json.h"
#include "../tir/tir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PACK_SIGNATURES = 64, MAX_PACK_ARCHS = 16 };

/* One tile_pack call: what it compiles and the blobs made so far (copies in `arena`). */
typedef struct Packer {
  tile_context *ctx;
  const char *name, *source;
  size_t len;
  tile_options opts;
  Arena arena;               /* guarded by tile_pack */
  BundleBlob *blobs;
  int count, cap;
} Packer;

static void add_blob(Packer *p, int kind, int spec, int config, const char *arch, const void *data, size_t size,
                     const char *metadata) {
  if (p->count == p->cap) {
    int cap = p->cap ? 2 * p->cap : 16;
    p->blobs = arena_grow(&p->arena, p->blobs, sizeof *p->blobs * (size_t)p->cap, sizeof *p->blobs * (size_t)cap);
    p->cap = cap;
  }
  void *copy = arena_alloc(&p->arena, size + 1);
  memcpy(copy, data, size);
  p->blobs[p->count++] = (BundleBlob){kind, spec, config, arch ? arena_strdup(&p->arena, arch) : NULL, copy, size,
                                      metadata ? arena_strdup(&p->arena, metadata) : NULL};
}

/* {"name": N, "position": P} for each run-time argument among a tuning list. */
static void put_args(Buf *b, const char *field, int count, const char *const *names, const int *positions) {
  buf_printf(b, ", \"%s\": [", field);
  for (int i = 0; i < count; i++) {
    buf_puts(b, i ? ", {\"name\": " : "{\"name\": ");
    json_put_string(b, names[i]);
    buf_printf(b, ", \"position\": %d}", positions[i]);
  }
  buf_puts(b, "]");
}

/* The manifest: the kernel, its signatures, the configs bundled, and how to tune among them. */
static const char *manifest(Packer *p, const CheckedKernel *k, const char *const *signatures, int num_signatures,
                            const int *configs, int num_configs) {
  Buf b;
  buf_init(&b, &p->arena);
  buf_printf(&b, "{\"format\": %d, \"kernel\": ", BUNDLE_FORMAT);
  json_put_string(&b, k->def->name);
  buf_puts(&b, ", \"source\": ");
  json_put_string(&b, p->name);
  buf_printf(&b, ", \"compiler\": \"tile %s\", \"signatures\": [", tile_version());
  for (int i = 0; i < num_signatures; i++) {
    if (i) buf_puts(&b, ", ");
    json_put_string(&b, signatures[i]);
  }
  buf_puts(&b, "], \"configs\": [");
  for (int i = 0; i < num_configs; i++) buf_printf(&b, "%s%d", i ? ", " : "", configs[i]);
  buf_puts(&b, "]");
  if (num_configs > 1) {
    struct KernelTuning *t = jit_tuning_of(k, 0, 0);
    if (!t) guard_fail(p->arena.guard, "out of memory");
    buf_printf(&b, ", \"tuning\": {\"warmup_ms\": %g, \"rep_ms\": %g", t->warmup_ms, t->rep_ms);
    put_args(&b, "key", t->num_keys, t->key_names, t->key_args);
    put_args(&b, "reset_to_zero", t->num_resets, t->reset_names, t->reset_args);
    put_args(&b, "restore_value", t->num_restores, t->restore_names, t->restore_args);
    buf_puts(&b, "}");
    free(t);
  }
  buf_puts(&b, "}\n");
  return buf_cstr(&b);
}

typedef struct Unit {
  Packer *p;
  const tile_options *o;
  int spec, config;
} Unit;

/* The tile IR for the interpreter (spec, config), or for each arch a cubin and its PTX; under c's guard. */
static tile_status compile_unit(Compilation *c, void *ud) {
  const Unit *u = ud;
  Packer *p = u->p;
  const tile_options *o = u->o;
  int spec = u->spec, config = u->config;
  if (!o->arch) {
    TirFunc *f = pipeline_tir(c, o, NULL);
    if (!f) return TILE_ERROR_COMPILE;
    Buf tir;
    buf_init(&tir, &c->arena);
    tir_print(f, &tir);
    add_blob(p, BUNDLE_TIR, spec, config, NULL, buf_cstr(&tir), tir.len, describe_kernel(c, f, NULL, 0));
    return TILE_OK;
  }
  char ptxas[4096], why[512];
  if (context_ptxas(c->ctx, ptxas, sizeof ptxas, why, sizeof why)) {
    diag_error(&c->diags, (Loc){0}, "%s (a bundle holds cubins)", why);
    return TILE_ERROR_COMPILE;
  }
  GpuArtifacts g;
  tile_status s = pipeline_gpu(c, o, TILE_STAGE_METADATA, ptxas, &g);
  if (s != TILE_OK) return s;
  if (!g.ptx || !g.cubin) {
    diag_error(&c->diags, (Loc){0}, "no cubin for target '%s'", g.arch);
    return TILE_ERROR_COMPILE;
  }
  add_blob(p, BUNDLE_CUBIN, spec, config, o->arch, g.cubin, g.cubin_size, describe_kernel(c, g.f, &g, 0));
  add_blob(p, BUNDLE_PTX, spec, config, o->arch, g.ptx, g.ptx_len, describe_kernel(c, g.f, &g, 1));
  return TILE_OK;
}

/* One compilation of the source with options o; its errors become the call's, said of what was compiled. */
static tile_status compile_one(Packer *p, const tile_options *o, int spec, int config) {
  Compilation *c = compilation_new(p->ctx, p->name, p->source, p->len);
  if (!c) return context_fail(p->ctx, TILE_ERROR_MEMORY, "out of memory");
  c->configs_as_listed = 1;
  Unit u = {p, o, spec, config};
  tile_status s = compilation_report(c, compilation_run(c, compile_unit, &u));
  compilation_end(c);
  if (s == TILE_OK) return s;
  char what[64] = "";
  if (config >= 0) snprintf(what, sizeof what, ", config %d", config);
  context_note(p->ctx, "tile_pack: the errors above are of signature %s%s, for %s", o->signature, what,
               o->arch ? o->arch : "the CPU interpreter");
  return s == TILE_ERROR_COMPILE ? s : context_failf(p->ctx, s, "tile_pack: signature %s%s, %s: %s", o->signature, what,
                                                     o->arch ? o->arch : "the CPU interpreter", tile_error(p->ctx));
}

typedef struct Declaring {
  const tile_options *o;
  const CheckedKernel **k;
} Declaring;

static tile_status declare_kernel(Compilation *c, void *ud) {
  Declaring *d = ud;
  *d->k = pipeline_declare(c, d->o);
  return *d->k ? TILE_OK : TILE_ERROR_COMPILE;
}

/* The kernel's declaration: its name and the configs to bundle (opts->config's alone, else every one). */
static tile_status declare(Packer *p, const char *signature, const CheckedKernel **k, Compilation **c) {
  tile_options o = p->opts;
  o.signature = signature;
  if (!(*c = compilation_new(p->ctx, p->name, p->source, p->len))) return context_fail(p->ctx, TILE_ERROR_MEMORY, "out of memory");
  Declaring d = {&o, k};
  return compilation_report(*c, compilation_run(*c, declare_kernel, &d));
}

static tile_status check_lists(tile_context *ctx, const char *const *signatures, int num_signatures,
                               const char *const *archs, int num_archs) {
  if (!signatures || num_signatures < 1 || num_signatures > MAX_PACK_SIGNATURES)
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_pack: give 1 to %d signatures, not %d", MAX_PACK_SIGNATURES,
                         num_signatures);
  if (!archs || num_archs < 1 || num_archs > MAX_PACK_ARCHS)
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_pack: give 1 to %d architectures, not %d", MAX_PACK_ARCHS, num_archs);
  for (int i = 0; i < num_signatures; i++)
    if (!signatures[i]) return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_pack: signatures[%d] is NULL", i);
  for (int i = 0; i < num_archs; i++) {
    const Arch *arch = arch_find(archs[i]);
    if (!arch || arch->sim || strlen(archs[i]) > BUNDLE_ARCH_BYTES)
      return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_pack: archs[%d] is %s%s%s, not a GPU target (%s)", i,
                           archs[i] ? "'" : "", archs[i] ? archs[i] : "NULL", archs[i] ? "'" : "", arch_names(0));
    for (int j = 0; j < i; j++)
      if (!strcmp(archs[i], archs[j])) return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_pack: %s is given twice", archs[i]);
  }
  return TILE_OK;
}

/* Every unit compiled, then the bundle's bytes into the context's results. */
static tile_status pack(Packer *p, const char *const *signatures, int num_signatures, const char *const *archs,
                        int num_archs, const void **bundle, size_t *size) {
  const CheckedKernel *k = NULL;
  Compilation *declared;
  tile_status s = declare(p, signatures[0], &k, &declared);
  int num_configs = s == TILE_OK ? (p->opts.config >= 0 ? 1 : k->meta.configs.len) : 0;
  if (s == TILE_OK && p->opts.config >= k->meta.configs.len)
    s = context_failf(p->ctx, TILE_ERROR_COMPILE, "config %d: kernel '%s' has %d autotune configs", p->opts.config,
                      k->def->name, k->meta.configs.len);
  int *configs = arena_alloc(&p->arena, sizeof *configs * (size_t)(num_configs + 1));
  for (int i = 0; s == TILE_OK && i < num_configs; i++) /* each by its place in the decorator's list */
    configs[i] = k->meta.configs.data[p->opts.config >= 0 ? p->opts.config : i].index;
  if (s == TILE_OK) add_blob(p, BUNDLE_MANIFEST, BUNDLE_NONE, BUNDLE_NONE, NULL, "", 0, NULL);
  if (s == TILE_OK) p->blobs[0].data = manifest(p, k, signatures, num_signatures, configs, num_configs);
  if (s == TILE_OK) p->blobs[0].size = strlen(p->blobs[0].data);
  compilation_end(declared);
  for (int i = 0; s == TILE_OK && i < num_signatures; i++)
    for (int c = 0; s == TILE_OK && c < (num_configs ? num_configs : 1); c++)
      for (int a = -1; s == TILE_OK && a < num_archs; a++) {
        tile_options o = p->opts;
        o.signature = signatures[i];
        o.config = num_configs ? configs[c] : -1;
        o.arch = a < 0 ? NULL : archs[a];
        s = compile_one(p, &o, i, num_configs ? configs[c] : BUNDLE_NONE);
      }
  if (s != TILE_OK) return s;
  unsigned char *bytes;
  if (bundle_encode(p->blobs, p->count, &bytes, size)) return context_fail(p->ctx, TILE_ERROR_MEMORY, "out of memory");
  void *copy = arena_alloc(&p->ctx->results, *size);
  if (copy) memcpy(copy, bytes, *size);
  free(bytes);
  *bundle = copy;
  return copy ? TILE_OK : context_failf(p->ctx, TILE_ERROR_MEMORY, "out of memory for the %zu-byte bundle", *size);
}

typedef struct Packing {
  Packer *p;
  const char *const *signatures;
  int num_signatures;
  const char *const *archs;
  int num_archs;
  const void **bundle;
  size_t *size;
  tile_status status;
} Packing;

static void run_pack(void *ud) {
  Packing *k = ud;
  k->status = pack(k->p, k->signatures, k->num_signatures, k->archs, k->num_archs, k->bundle, k->size);
}

tile_status tile_pack(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                      const char *const *signatures, int num_signatures, const char *const *archs, int num_archs,
                      const void **bundle, size_t *size) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!source || !bundle || !size) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_pack: NULL source, bundle or size");
  *bundle = NULL;
  *size = 0;
  tile_options o;
  tile_status s = context_read_options(ctx, opts, "tile_pack", &o);
  if (s == TILE_OK) s = check_lists(ctx, signatures, num_signatures, archs, num_archs);
  if (s != TILE_OK) return s;
  Packer *p = calloc(1, sizeof *p);
  if (!p) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  p->ctx = ctx, p->name = name ? name : "<input>", p->source = source, p->len = len;
  p->opts = o;
  arena_init(&p->arena, 0);
  Packing k = {p, signatures, num_signatures, archs, num_archs, bundle, size, TILE_ERROR_MEMORY};
  if (arena_run(&p->arena, run_pack, &k)) s = context_fail(ctx, TILE_ERROR_MEMORY, "out of memory packing a bundle");
  else s = k.status;
  if (s != TILE_OK) *bundle = NULL, *size = 0;
  arena_free(&p->arena);
  free(p);
  return s;
}

/* ---- the interpreter for bundled tile IR ------------------------------------------------------ */

/* f's parameters against the entry's metadata: as many, the same names and
 * kinds; each takes the launch position the metadata gives. */
static int bind_positions(TirFunc *f, const KernelMetadata *m, Diags *d) {
  if (f->params.len != m->num_params) {
    diag_error(d, (Loc){0}, "the tile IR has %d parameters, its metadata %d", f->params.len, m->num_params);
    return -1;
  }
  for (int i = 0; i < m->num_params; i++) {
    TirParam *tp = &f->params.data[i];
    if (strcmp(tp->name, m->params[i].name) || tir_type(f, tp->value)->is_ptr != m->params[i].is_ptr) {
      diag_error(d, (Loc){0}, "parameter %d of the tile IR ('%s') is not the metadata's ('%s')", i, tp->name,
                 m->params[i].name);
      return -1;
    }
    tp->arg_index = m->params[i].position;
  }
  return 0;
}

typedef struct TirEntry {
  Spec *s;
  const BundleEntry *e;
} TirEntry;

static tile_status read_entry(Compilation *c, void *ud) {
  TirEntry *t = ud;
  TirFunc *f = tir_read(&c->source, &c->arena, &c->diags);
  if (!f || f->layout_table || tir_verify(f, &c->diags) || bind_positions(f, &t->e->meta, &c->diags) ||
      tir_check_limits(f, &c->diags))
    return TILE_ERROR_ARGUMENT;
  CpuProgram *program = arena_alloc(&c->arena, sizeof *program);
  *program = (CpuProgram){c, f};
  t->s->program = program;
  return TILE_OK;
}

static tile_status read_tir(tile_kernel *k, Spec *s, const BundleEntry *e) {
  const Bundle *b = k->source;
  Compilation *c = compilation_new(k->ctx, b->name, (const char *)e->data, e->size);
  if (!c) return context_fail(k->ctx, TILE_ERROR_MEMORY, "out of memory");
  TirEntry t = {s, e};
  tile_status st = compilation_run(c, read_entry, &t);
  if (st == TILE_OK) return st; /* the compilation lives on in s->program */
  if (st == TILE_ERROR_COMPILE) st = TILE_ERROR_ARGUMENT; /* too many errors */
  keep_diagnostics(k->ctx, c, TILE_ERROR_COMPILE);
  st = context_failf(k->ctx, st, "kernel '%s' (bundle '%s'): its tile IR for %s does not read back: %s", b->kernel,
                     b->name, b->signatures[e->spec], st == TILE_ERROR_MEMORY ? c->guard.message : tile_error(k->ctx));
  compilation_end(c);
  return st;
}

static const BundleInterpreter interpreter = {.read = read_tir, .run = jit_run_cpu, .release = jit_release_spec};

tile_status tile_kernel_load_bundle(tile_context *ctx, const char *name, const void *bundle, size_t size, tile_kernel **out) {
  return bundle_load(ctx, name, bundle, size, &interpreter, out);
}

tile_status tile_kernel_load_bundle_file(tile_context *ctx, const char *path, tile_kernel **out) {
  return bundle_load_file(ctx, path, &interpreter, out);
}
