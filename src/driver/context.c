/* The public API's context, options and protected entry points: a
 * compilation runs under a guard, so an internal limit anywhere in the
 * pipeline (memory, error count) comes back as a status, never a crash. */
#include "driver.h"
#include "../tir/tir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_MEMORY_CAP = 1u << 30, MAX_SOURCE_BYTES = 64u << 20 };

const char *tile_version(void) { return "0.1.0"; }

const char *tile_status_string(tile_status s) {
  switch (s) {
  case TILE_OK: return "ok";
  case TILE_ERROR_COMPILE: return "compile error";
  case TILE_ERROR_ARGUMENT: return "bad argument";
  case TILE_ERROR_IO: return "i/o error";
  case TILE_ERROR_MEMORY: return "out of memory";
  case TILE_ERROR_UNSUPPORTED: return "unsupported";
  case TILE_ERROR_RUNTIME: return "kernel failed while running";
  }
  return "unknown status";
}

tile_status tile_context_create(tile_context **out) {
  if (!out) return TILE_ERROR_ARGUMENT;
  tile_context *ctx = calloc(1, sizeof *ctx);
  *out = ctx;
  if (!ctx) return TILE_ERROR_MEMORY;
  arena_init(&ctx->results, 0);
  ctx->error = ctx->diagnostics = "";
  ctx->memory_cap = DEFAULT_MEMORY_CAP;
  return TILE_OK;
}

void tile_context_destroy(tile_context *ctx) {
  if (!ctx) return;
  arena_free(&ctx->results);
  free(ctx);
}

const char *tile_error(const tile_context *ctx) { return ctx ? ctx->error : "no context"; }
const char *tile_diagnostics(const tile_context *ctx) { return ctx ? ctx->diagnostics : ""; }

void tile_options_init(tile_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->config = -1;
}

tile_status context_fail(tile_context *ctx, tile_status s, const char *message) {
  ctx->error = arena_strdup(&ctx->results, message);
  return s;
}

static tile_status fail(tile_context *ctx, tile_status s, const char *fmt, const char *detail) {
  char msg[1024];
  snprintf(msg, sizeof msg, fmt, detail);
  return context_fail(ctx, s, msg);
}

/* Copies the compilation's diagnostics into the context, whose arena
 * outlives the compilation's. */
void keep_diagnostics(tile_context *ctx, Compilation *c, tile_status s) {
  Buf diag;
  buf_init(&diag, &c->arena);
  diag_render(&c->diags, &diag);
  ctx->diagnostics = arena_strdup(&ctx->results, buf_cstr(&diag));
  if (s == TILE_ERROR_COMPILE) ctx->error = ctx->diagnostics;
}

static void keep_results(tile_context *ctx, Compilation *c, tile_status s, Buf *out, const char **text) {
  keep_diagnostics(ctx, c, s);
  if (text) *text = s == TILE_OK ? arena_strndup(&ctx->results, buf_cstr(out), out->len) : NULL;
}

Compilation *compilation_begin(tile_context *ctx, const char *name, const char *source, size_t len) {
  arena_free(&ctx->results);
  ctx->error = ctx->diagnostics = "";
  Compilation *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->ctx = ctx;
  arena_init(&c->arena, ctx->memory_cap);
  c->arena.guard = &c->guard;
  diags_init(&c->diags, &c->arena, &c->guard);
  c->source = (Source){name ? name : "<input>", source ? source : "", len};
  return c;
}

void compilation_end(Compilation *c) {
  arena_free(&c->arena);
  free(c);
}

/* Runs one compilation under its guard: a longjmp from anywhere inside
 * lands here and becomes a status. */
static tile_status run_protected(Compilation *c, const tile_options *opts, tile_stage stage, const char **text) {
  tile_context *ctx = c->ctx;
  Buf out;
  buf_init(&out, &c->arena);
  if (setjmp(c->guard.jump) == 0) {
    tile_status s = TILE_OK;
    if (stage == TILE_STAGE_BUILTINS) builtins_reference(&out);
    else if (stage == TILE_STAGE_OPS) tir_ops_reference(&out);
    else s = pipeline_run(c, opts, stage, &out);
    keep_results(ctx, c, s, &out, text);
    return s;
  }
  if (c->diags.errors) { /* too many errors: report the ones collected */
    keep_results(ctx, c, TILE_ERROR_COMPILE, &out, text);
    return TILE_ERROR_COMPILE;
  }
  return fail(ctx, TILE_ERROR_MEMORY, "%s", c->guard.message);
}

tile_status tile_emit(tile_context *ctx, const char *name, const char *source, size_t len,
                      const tile_options *opts, tile_stage stage, const char **text) {
  if (!ctx) return TILE_ERROR_ARGUMENT;
  if (text) *text = NULL;
  arena_free(&ctx->results);
  ctx->error = ctx->diagnostics = "";
  if (!text || (!source && len)) return fail(ctx, TILE_ERROR_ARGUMENT, "%s", "tile_emit: NULL source or text");
  tile_options defaults;
  tile_options_init(&defaults);
  Compilation *c = compilation_begin(ctx, name, source, len);
  if (!c) return fail(ctx, TILE_ERROR_MEMORY, "%s", "out of memory");
  tile_status s = run_protected(c, opts ? opts : &defaults, stage, text);
  compilation_end(c);
  return s;
}

tile_status tile_emit_file(tile_context *ctx, const char *path, const tile_options *opts, tile_stage stage,
                           const char **text) {
  if (!ctx) return TILE_ERROR_ARGUMENT;
  if (text) *text = NULL;
  if (!path) return fail(ctx, TILE_ERROR_ARGUMENT, "%s", "tile_emit_file: NULL path");
  FILE *f = fopen(path, "rb");
  if (!f) {
    char msg[512];
    snprintf(msg, sizeof msg, "cannot open '%s': %s", path, strerror(errno));
    return fail(ctx, TILE_ERROR_IO, "%s", msg);
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (len == cap) {
      if (cap >= MAX_SOURCE_BYTES) break;
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) break;
  }
  int read_error = ferror(f);
  fclose(f);
  if (!buf) return fail(ctx, TILE_ERROR_MEMORY, "%s", "out of memory reading the source");
  if (len == cap) {
    free(buf);
    return fail(ctx, TILE_ERROR_IO, "'%s' is larger than the 64 MiB a source file may have", path);
  }
  if (read_error) {
    free(buf);
    return fail(ctx, TILE_ERROR_IO, "error reading '%s'", path);
  }
  tile_status s = tile_emit(ctx, path, buf, len, opts, stage, text);
  free(buf);
  return s;
}
