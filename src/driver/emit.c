/* The compiler's entry points: a compilation runs under a guard, so an
 * internal limit anywhere in the pipeline (memory, error count) comes back
 * as a status, never a crash.  tile_emit gives a stage's text; tile_compile
 * gives a GPU image and its metadata ahead of time. */
#include "driver.h"
#include "../backend/ptxas.h"
#include "../tir/tir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SOURCE_BYTES = 64u << 20 };

/* Renders the compilation's diagnostics into the context, whose arena
 * outlives the compilation's.  That arena has no guard, so this never
 * unwinds (it may run after the compilation's guard is gone). */
void keep_diagnostics(tile_context *ctx, Compilation *c, tile_status s) {
  Buf diag;
  buf_init(&diag, &ctx->results);
  diag_render(&c->diags, &diag);
  if (diag.failed) { /* out of memory: as much as the context's fixed buffer holds */
    buf_init_fixed(&diag, ctx->diagnostics_fallback, sizeof ctx->diagnostics_fallback);
    diag_render(&c->diags, &diag);
  }
  ctx->diagnostics = buf_cstr(&diag);
  if (s == TILE_ERROR_COMPILE) ctx->error = ctx->diagnostics;
}

static tile_status keep_results(tile_context *ctx, Compilation *c, tile_status s, Buf *out, const char **text) {
  keep_diagnostics(ctx, c, s);
  if (!text || s != TILE_OK) return s;
  *text = arena_strndup(&ctx->results, buf_cstr(out), out->len);
  return *text ? s : context_failf(ctx, TILE_ERROR_MEMORY, "out of memory for the %zu bytes of output", out->len);
}

static int has_suffix(const char *name, const char *suffix) {
  size_t n = strlen(name), k = strlen(suffix);
  return n > k && !strcmp(name + n - k, suffix);
}

static InputKind input_kind(const char *name) {
  return has_suffix(name, ".tir") ? INPUT_TIR : has_suffix(name, ".tgir") ? INPUT_TGIR : INPUT_TILE;
}

Compilation *compilation_begin(tile_context *ctx, const char *name, const char *source, size_t len) {
  context_begin(ctx);
  return compilation_new(ctx, name, source, len);
}

Compilation *compilation_new(tile_context *ctx, const char *name, const char *source, size_t len) {
  Compilation *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->ctx = ctx;
  c->config = -1;
  arena_init(&c->arena, ctx->memory_cap);
  c->arena.guard = &c->guard;
  c->arena.stage = "frontend"; /* then each stage's, as the pipeline reaches it (lap) */
  diags_init(&c->diags, &c->arena, &c->guard);
  c->source = (Source){name ? name : "<input>", source ? source : "", len};
  c->diags.origin = c->source.name;
  c->input = input_kind(c->source.name);
  return c;
}

void compilation_end(Compilation *c) {
  if (!c) return;
  arena_free(&c->arena);
  free(c);
}

int context_ptxas(tile_context *ctx, char *path, size_t size, char *err, size_t errsize) {
  return ptxas_locate(ctx->ptxas_path, ctx->search_path, path, size, err, errsize);
}

typedef struct Protected {
  Compilation *c;
  CompileFn *fn;
  void *ud;
  tile_status status;
} Protected;

static void run_compile_fn(void *ud) {
  Protected *p = ud;
  p->status = p->fn(p->c, p->ud);
}

tile_status compilation_run(Compilation *c, CompileFn *fn, void *ud) {
  Protected p = {c, fn, ud, TILE_ERROR_MEMORY};
  snprintf(c->guard.message, sizeof c->guard.message, "out of memory");
  if (guard_run(&c->guard, run_compile_fn, &p)) return c->diags.errors ? TILE_ERROR_COMPILE : TILE_ERROR_MEMORY;
  return p.status;
}

tile_status compilation_report(Compilation *c, tile_status s) {
  keep_diagnostics(c->ctx, c, s);
  return s == TILE_ERROR_MEMORY ? context_fail(c->ctx, s, c->guard.message) : s;
}

typedef struct Emit {
  const tile_options *opts;
  tile_stage stage;
  Buf out;
} Emit;

static tile_status emit_stage(Compilation *c, void *ud) {
  Emit *e = ud;
  if (e->stage == TILE_STAGE_BUILTINS) builtins_reference(pipeline_stdlib(c), &e->out);
  else if (e->stage == TILE_STAGE_OPS) tir_ops_reference(&e->out);
  else return pipeline_run(c, e->opts, e->stage, &e->out);
  return TILE_OK;
}

/* One compilation to a stage's text; after too many errors, the ones collected. */
static tile_status run_protected(Compilation *c, const tile_options *opts, tile_stage stage, const char **text) {
  Emit e = {.opts = opts, .stage = stage};
  buf_init(&e.out, &c->arena);
  tile_status s = compilation_run(c, emit_stage, &e);
  if (s == TILE_ERROR_MEMORY) return compilation_report(c, s);
  return keep_results(c->ctx, c, s, &e.out, text);
}

tile_status tile_emit(tile_context *ctx, const char *name, const char *source, size_t len,
                      const tile_options *opts, tile_stage stage, const char **text) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  if (text) *text = NULL;
  context_begin(ctx);
  if (!text || (!source && len)) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_emit: NULL source or text");
  if ((unsigned)stage > TILE_STAGE_METADATA)
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_emit: stage %d is not a tile_stage", (int)stage);
  tile_options o;
  tile_status s = context_read_options(ctx, opts, "tile_emit", &o);
  if (s != TILE_OK) return s;
  Compilation *c = compilation_begin(ctx, name, source, len);
  if (!c) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  s = run_protected(c, &o, stage, text);
  compilation_end(c);
  return s;
}

tile_status tile_emit_file(tile_context *ctx, const char *path, const tile_options *opts, tile_stage stage,
                           const char **text) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  if (text) *text = NULL;
  context_begin(ctx);
  if (!path) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_emit_file: NULL path");
  char *source;
  size_t len;
  tile_status s = context_read_file(ctx, path, MAX_SOURCE_BYTES, &source, &len);
  if (s != TILE_OK) return s;
  s = tile_emit(ctx, path, source, len, opts, stage, text);
  free(source);
  return s;
}

/* ---- ahead-of-time compilation ------------------------------------------------------ */

typedef struct Image {
  const tile_options *opts;
  int want_ptx;
  const void *bytes;
  size_t size;
  const char *metadata;
} Image;

/* The GPU pipeline to a cubin (or PTX), then the metadata. */
static tile_status compile_image(Compilation *c, void *ud) {
  Image *im = ud;
  char ptxas[4096], why[512];
  if (!im->want_ptx && context_ptxas(c->ctx, ptxas, sizeof ptxas, why, sizeof why)) {
    diag_error(&c->diags, (Loc){0}, "%s", why);
    return TILE_ERROR_COMPILE;
  }
  GpuArtifacts g;
  tile_status s = pipeline_gpu(c, im->opts, im->want_ptx ? TILE_STAGE_PTX : TILE_STAGE_METADATA, ptxas, &g);
  if (s != TILE_OK) return s;
  if (!g.ptx) {
    diag_error(&c->diags, (Loc){0}, "no PTX for target '%s'", g.arch);
    return TILE_ERROR_COMPILE;
  }
  im->bytes = im->want_ptx ? (const void *)g.ptx : (const void *)g.cubin;
  im->size = im->want_ptx ? g.ptx_len : g.cubin_size;
  im->metadata = describe_kernel(c, g.f, &g, im->want_ptx);
  return TILE_OK;
}

tile_status tile_compile(tile_context *ctx, const char *name, const char *source, size_t len,
                         const tile_options *opts, int ptx, const void **image, size_t *size, const char **metadata) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!source || !image || !size || !metadata)
    return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_compile: NULL source, image, size or metadata");
  *image = NULL;
  *size = 0;
  *metadata = NULL;
  tile_options o;
  tile_status s = context_read_options(ctx, opts, "tile_compile", &o);
  if (s != TILE_OK) return s;
  Compilation *c = compilation_begin(ctx, name, source, len);
  if (!c) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  Image im = {.opts = &o, .want_ptx = ptx};
  s = compilation_report(c, compilation_run(c, compile_image, &im));
  if (s == TILE_OK) {
    void *copy = arena_alloc(&ctx->results, im.size + 1);
    if (copy) memcpy(copy, im.bytes, im.size);
    *image = copy;
    *size = im.size;
    *metadata = arena_strdup(&ctx->results, im.metadata);
    if (!copy || !*metadata) {
      s = context_failf(ctx, TILE_ERROR_MEMORY, "out of memory for the %zu-byte image and its metadata", im.size);
      *image = NULL, *size = 0, *metadata = NULL;
    }
  }
  compilation_end(c);
  return s;
}
