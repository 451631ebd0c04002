/* The pipeline, stage by stage: source -> tokens -> AST -> checked AST ->
 * tile IR (optimised) -> GPU-layout IR -> LLVM IR -> PTX -> cubin. */
#include "driver.h"
#include "../backend/ptxas.h"
#include "../llvm/generate.h"
#include "../tgir/tgir.h"
#include "../tir/passes.h"

#include <stdlib.h>
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

/* "sm_90a" -> 90 */
static int compute_capability(const char *arch) {
  if (!strcmp(arch, "sim")) return 80;
  return strncmp(arch, "sm_", 3) ? 0 : atoi(arch + 3);
}

static int known_arch(const char *arch) {
  static const char *const known[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sim"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(arch, known[i])) return 1;
  return 0;
}

/* PTX to cubin with ptxas; its failure is a compile error. */
static tile_status assemble(Compilation *c, const char *ptxas_path, GpuArtifacts *out) {
  char path[4096], err[2048];
  char *cubin = NULL, *log = NULL;
  size_t size = 0;
  if (ptxas_locate(ptxas_path, path, sizeof path, err, sizeof err) ||
      ptxas_assemble(path, out->ptx, out->ptx_len, out->arch, &cubin, &size, &log, err, sizeof err)) {
    diag_error(&c->diags, (Loc){0}, "%s", err);
    free(log);
    return TILE_ERROR_COMPILE;
  }
  unsigned char *copy = arena_alloc(&c->arena, size ? size : 1);
  memcpy(copy, cubin, size);
  out->cubin = copy;
  out->cubin_size = size;
  out->ptxas_log = arena_strdup(&c->arena, log ? log : "");
  free(cubin);
  free(log);
  return TILE_OK;
}

tile_status pipeline_gpu(Compilation *c, const tile_options *opts, tile_stage last, const char *ptxas_path,
                         GpuArtifacts *out) {
  memset(out, 0, sizeof *out);
  out->arch = opts->arch ? opts->arch : "sm_90";
  if (!known_arch(out->arch)) {
    diag_error(&c->diags, (Loc){0}, "unknown --arch '%s' (known: sm_80, sm_86, sm_89, sm_90, sm_90a, sim)", out->arch);
    return TILE_ERROR_COMPILE;
  }
  TirFunc *f = pipeline_tir(c, opts, NULL);
  if (!f) return TILE_ERROR_COMPILE;
  if (opts->num_stages) f->num_stages = opts->num_stages;
  TgirOptions to = {opts->num_warps, compute_capability(out->arch)};
  if (tgir_convert(f, &to, &c->diags, NULL)) return TILE_ERROR_COMPILE;
  out->f = f;
  Buf text;
  buf_init(&text, &c->arena);
  tgir_print(f, &text);
  out->tgir = buf_cstr(&text);
  if (last == TILE_STAGE_TGIR) return TILE_OK;
  GpuTarget target = {out->arch, NULL}; /* libdevice: the default place */
  int want_ptx = last != TILE_STAGE_LLIR && strcmp(out->arch, "sim");
  GpuCode code = {0};
  if (llvm_generate(f, &target, 1, want_ptx, &c->arena, &code, &c->diags)) return TILE_ERROR_COMPILE;
  out->llir = code.llir;
  out->ptx = code.ptx;
  out->ptx_len = code.ptx_len;
  out->shared_bytes = code.shared_bytes;
  if (last != TILE_STAGE_METADATA || !out->ptx) return TILE_OK;
  return assemble(c, ptxas_path, out);
}

static tile_status emit_gpu_stage(Compilation *c, const tile_options *opts, tile_stage stage, Buf *out) {
  GpuArtifacts g;
  tile_status s = pipeline_gpu(c, opts, stage, NULL, &g);
  if (s != TILE_OK) return s;
  const char *text = stage == TILE_STAGE_TGIR ? g.tgir : stage == TILE_STAGE_LLIR ? g.llir : g.ptx;
  if (!text) {
    diag_error(&c->diags, (Loc){0}, "no %s for target '%s'", stage == TILE_STAGE_PTX ? "PTX" : "output", g.arch);
    return TILE_ERROR_COMPILE;
  }
  buf_puts(out, text);
  return TILE_OK;
}

tile_status pipeline_run(Compilation *c, const tile_options *opts, tile_stage stage, Buf *out) {
  if (stage == TILE_STAGE_TGIR || stage == TILE_STAGE_LLIR || stage == TILE_STAGE_PTX)
    return emit_gpu_stage(c, opts, stage, out);
  if (stage == TILE_STAGE_METADATA) {
    diag_error(&c->diags, (Loc){0}, "kernel metadata is not available yet");
    return TILE_ERROR_COMPILE;
  }
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
