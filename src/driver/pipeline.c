/* The pipeline, stage by stage: source -> tokens -> AST -> checked AST.
 * Later stages (tile IR, GPU-layout IR, LLVM IR, PTX, cubin) join here in
 * order as they are built. */
#include "driver.h"
#include "../tir/passes.h"

#include <string.h>

static Module *parse_stdlib(Compilation *c) {
  Source *src = arena_alloc(&c->arena, sizeof *src);
  src->name = "<stdlib>";
  src->text = (const char *)tile_stdlib_source;
  src->len = tile_stdlib_size;
  TokenVec toks = lex(src, &c->diags);
  return parse_module(src, &toks, &c->diags);
}

static void sema_options(const tile_options *o, SemaOptions *s) {
  s->kernel = o->kernel;
  s->signature = o->signature;
  s->defines = (const char **)o->defines;
  s->n_defines = o->num_defines;
  s->config = o->config;
  s->require_types = o->require_types;
}

/* Source to optimised tile IR; NULL after errors (in c->diags). */
static int is_ir_text(const Source *s) {
  size_t n = strlen(s->name);
  return n > 4 && !strcmp(s->name + n - 4, ".tir");
}

TirFunc *pipeline_tir(Compilation *c, const tile_options *opts, Buf *dump) {
  if (is_ir_text(&c->source)) { /* tile IR text: passes can be tested from it */
    TirFunc *f = tir_read(&c->source, &c->arena, &c->diags);
    if (!f || tir_verify(f, &c->diags) || tir_run_passes(f, opts->passes, &c->diags, dump)) return NULL;
    return f;
  }
  TokenVec toks = lex(&c->source, &c->diags);
  Module *m = parse_module(&c->source, &toks, &c->diags);
  if (c->diags.errors) return NULL;
  SemaOptions so = {0};
  sema_options(opts, &so);
  so.require_types = 1;
  CheckedKernel *k = sema_check(m, parse_stdlib(c), &so, &c->diags);
  if (!k) return NULL;
  TirFunc *f = tir_lower(k, &c->arena, &c->diags);
  if (c->diags.errors || tir_verify(f, &c->diags)) return NULL;
  if (tir_run_passes(f, opts->passes, &c->diags, dump)) return NULL;
  return f;
}

tile_status pipeline_run(Compilation *c, const tile_options *opts, tile_stage stage, Buf *out) {
  TokenVec toks = lex(&c->source, &c->diags);
  if (stage == TILE_STAGE_TOKENS) {
    tokens_print(&toks, out);
    return c->diags.errors ? TILE_ERROR_COMPILE : TILE_OK;
  }
  if (stage == TILE_STAGE_AST) {
    Module *m = parse_module(&c->source, &toks, &c->diags);
    if (c->diags.errors) return TILE_ERROR_COMPILE;
    SemaOptions so = {0};
    sema_options(opts, &so);
    CheckedKernel *k = sema_check(m, parse_stdlib(c), &so, &c->diags);
    if (!k) return TILE_ERROR_COMPILE;
    if (k->typed) checked_print(k, out);
    else ast_print(m->root, out);
    return TILE_OK;
  }
  TirFunc *f = pipeline_tir(c, opts, opts->print_after_all ? out : NULL);
  if (!f) return TILE_ERROR_COMPILE;
  if (stage == TILE_STAGE_AXIS_INFO) tir_print_axis_info(f, out);
  else tir_print(f, out);
  return TILE_OK;
}
