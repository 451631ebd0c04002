/* The pipeline, stage by stage: source -> tokens -> AST -> checked AST ->
 * tile IR (optimised) -> GPU-layout IR -> LLVM IR -> PTX -> cubin. */
#include "driver.h"
#include "../backend/ptxas.h"
#include "../llvm/generate.h"
#include "../tgir/tgir.h"
#include "../tir/passes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double pipeline_clock_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static const char *const stage_names[] = {
#define STAGE_TIME_NAME(id, name) name,
    STAGE_TIMES(STAGE_TIME_NAME)
#undef STAGE_TIME_NAME
};

/* Adds the time since *since to stage `stage` and restarts the clock; the
 * next stage is the one a memory cap message names. */
static void lap(Compilation *c, StageTime stage, double *since) {
  double t = pipeline_clock_ms();
  c->ms[stage] += t - *since;
  *since = t;
  if (stage + 1 < TIME_COUNT) c->arena.stage = stage_names[stage + 1];
}

void pipeline_note_times(Compilation *c, const tile_options *opts) {
  if (!opts->time_stages) return;
  Buf b;
  buf_init(&b, &c->arena);
  double total = 0;
  for (int i = 0; i < TIME_COUNT; i++) {
    if (c->ms[i] <= 0) continue;
    buf_printf(&b, "%s%s %.2f ms", b.len ? ", " : "", stage_names[i], c->ms[i]);
    total += c->ms[i];
  }
  diag_note(&c->diags, (Loc){0}, "time: %s; total %.2f ms", b.len ? buf_cstr(&b) : "nothing compiled", total);
}

Module *pipeline_stdlib(Compilation *c) {
  Source *src = arena_alloc(&c->arena, sizeof *src);
  src->name = "<stdlib>";
  src->text = (const char *)tile_stdlib_source;
  src->len = tile_stdlib_size;
  TokenVec toks = lex(src, &c->diags);
  return parse_module(src, &toks, &c->diags);
}

static void sema_options(const Compilation *c, const tile_options *o, SemaOptions *s) {
  s->prune_configs = !c->configs_as_listed;
  s->kernel = o->kernel;
  s->signature = o->signature;
  s->defines = (const char **)o->defines;
  s->n_defines = o->num_defines;
  s->config = o->config;
  s->require_types = o->require_types;
  s->arch = o->arch;
  s->num_warps = o->num_warps;
}

/* num_warps and num_stages: the options', else the chosen config's, else the defaults. */
static void launch_shape(TirFunc *f, const CheckedKernel *k, const tile_options *o) {
  sema_launch_shape(k, o->config, o->num_warps, o->num_stages, &f->num_warps, &f->num_stages);
}

Module *pipeline_parse(Compilation *c) {
  if (c->input != INPUT_TILE) return NULL;
  TokenVec toks = lex(&c->source, &c->diags);
  Module *m = parse_module(&c->source, &toks, &c->diags);
  return c->diags.errors ? NULL : m;
}

const CheckedKernel *pipeline_declare_module(Compilation *c, const Module *m, const tile_options *opts) {
  SemaOptions so = {0};
  sema_options(c, opts, &so);
  return sema_declare(m, pipeline_stdlib(c), &so, &c->diags);
}

const CheckedKernel *pipeline_prune(Compilation *c, const Module *m, const tile_options *opts, const LaunchArg *launch,
                                    int n_launch) {
  SemaOptions so = {0};
  sema_options(c, opts, &so);
  so.prune_configs = 1;
  so.launch = launch;
  so.n_launch = n_launch;
  return sema_declare(m, pipeline_stdlib(c), &so, &c->diags);
}

const CheckedKernel *pipeline_heuristics(Compilation *c, const Module *m, const tile_options *opts,
                                         const LaunchArg *launch, int n_launch, Diags *d) {
  SemaOptions so = {0};
  sema_options(c, opts, &so);
  so.launch = launch;
  so.n_launch = n_launch;
  return sema_heuristics(m, pipeline_stdlib(c), &so, d);
}

const CheckedKernel *pipeline_declare(Compilation *c, const tile_options *opts) {
  Module *m = pipeline_parse(c);
  return m ? pipeline_declare_module(c, m, opts) : NULL;
}

/* The tile IR pass the options leave out whatever the list says: contraction, without fp fusion. */
static const char *skipped_pass(const tile_options *opts) {
  return opts->fp_fusion == TILE_FP_FUSION_OFF ? "contract" : NULL;
}

/* Source to optimised tile IR; NULL after errors (in c->diags). */
TirFunc *pipeline_tir(Compilation *c, const tile_options *opts, Buf *dump) {
  if (c->input == INPUT_TGIR) {
    diag_error(&c->diags, (Loc){0}, "%s holds GPU-layout IR: it can be compiled to --emit=tgir, llir or ptx only",
               c->source.name);
    return NULL;
  }
  double clock = pipeline_clock_ms();
  if (c->input == INPUT_TIR) { /* tile IR text: passes can be tested from it */
    TirFunc *f = tir_read(&c->source, &c->arena, &c->diags);
    if (f && f->layout_table) {
      diag_error(&c->diags, (Loc){0}, "%s has layouts: GPU-layout IR is read from a .tgir file", c->source.name);
      return NULL;
    }
    if (!f || tir_verify(f, &c->diags) ||
        passes_run(PASS_TIR, f, NULL, opts->passes, skipped_pass(opts), &c->diags, dump))
      return NULL;
    launch_shape(f, NULL, opts);
    if (tir_check_limits(f, &c->diags)) return NULL;
    lap(c, TIME_TIR, &clock);
    return f;
  }
  TokenVec toks = lex(&c->source, &c->diags);
  Module *m = parse_module(&c->source, &toks, &c->diags);
  if (c->diags.errors) return NULL;
  SemaOptions so = {0};
  sema_options(c, opts, &so);
  so.require_types = 1;
  CheckedKernel *k = sema_check(m, pipeline_stdlib(c), &so, &c->diags);
  if (!k) return NULL;
  c->checked = k;
  c->config = opts->config >= 0 && opts->config < k->meta.configs.len ? opts->config : -1;
  lap(c, TIME_FRONTEND, &clock);
  TirFunc *f = tir_lower(k, &c->arena, &c->diags);
  if (c->diags.errors || tir_verify(f, &c->diags)) return NULL;
  if (passes_run(PASS_TIR, f, NULL, opts->passes, skipped_pass(opts), &c->diags, dump)) return NULL;
  launch_shape(f, k, opts);
  if (tir_check_limits(f, &c->diags)) return NULL; /* here, where num_warps is known */
  lap(c, TIME_TIR, &clock);
  return f;
}


/* One ptxas run's cubin and report, in the compilation's arena; NULL
 * cubin with the reason in err. */
typedef struct Assembled {
  const unsigned char *cubin;
  size_t size;
  const char *log;
} Assembled;

static Assembled run_ptxas(Compilation *c, const char *ptxas, const char *ptx, size_t len, const char *arch, char *err,
                           size_t errsize) {
  Assembled a = {0};
  char *cubin = NULL, *log = NULL;
  double clock = pipeline_clock_ms();
  PtxasLimits limits = {c->ctx->ptxas_timeout_s, c->ctx->ptxas_memory_mib};
  if (!ptxas_assemble(ptxas, &limits, ptx, len, arch, &cubin, &a.size, &log, err, errsize)) {
    unsigned char *copy = arena_alloc(&c->arena, a.size ? a.size : 1);
    memcpy(copy, cubin, a.size);
    a.cubin = copy;
  }
  lap(c, TIME_PTXAS, &clock);
  a.log = arena_strdup(&c->arena, log ? log : "");
  free(cubin);
  free(log);
  return a;
}

/* The PTX with `.maxnreg cap` stated after its entry's .maxntid; NULL if it has none. */
static char *with_register_cap(Compilation *c, const GpuArtifacts *out, int cap, size_t *len) {
  const char *at = strstr(out->ptx, "\n.maxntid ");
  const char *eol = at ? strchr(at + 1, '\n') : NULL;
  if (!eol) return NULL;
  char line[32];
  int n = snprintf(line, sizeof line, "\n.maxnreg %d", cap);
  size_t head = (size_t)(eol - out->ptx);
  char *ptx = arena_alloc(&c->arena, out->ptx_len + (size_t)n + 1);
  memcpy(ptx, out->ptx, head);
  memcpy(ptx + head, line, (size_t)n);
  memcpy(ptx + head + n, eol, out->ptx_len - head + 1);
  *len = out->ptx_len + (size_t)n;
  return ptx;
}

/* Without a register cap ptxas aims at a register count of its own and
 * spills what does not fit, even where the program may have more (large
 * tensor-core tiles on sm_80 and sm_90: a few dozen registers, kilobytes of
 * spills).  A few spilled registers are its trade for occupancy;
 * RETRY_SPILL_BYTES or more is a failed allocation, and then the kernel is
 * assembled again with the most a thread may have stated, and the PTX with
 * fewer bytes of spills is kept. */
enum { RETRY_SPILL_BYTES = 1024 };

static void retry_spilled(Compilation *c, const char *ptxas, GpuArtifacts *out, Assembled *a) {
  int cap = arch_thread_registers(32 * out->f->num_warps), spills = ptxas_spill_stores(a->log);
  if (out->maxnreg || spills < RETRY_SPILL_BYTES || ptxas_registers(a->log) >= cap) return;
  size_t len;
  char *ptx = with_register_cap(c, out, cap, &len), err[2048];
  if (!ptx) return;
  Assembled capped = run_ptxas(c, ptxas, ptx, len, out->arch, err, sizeof err);
  if (!capped.cubin || ptxas_spill_stores(capped.log) >= spills) return;
  *a = capped;
  out->ptx = ptx;
  out->ptx_len = len;
  out->maxnreg = cap;
}

/* PTX to cubin with ptxas; its failure is a compile error. */
static tile_status assemble(Compilation *c, const char *ptxas, GpuArtifacts *out) {
  char err[2048];
  if (!ptxas) {
    diag_error(&c->diags, (Loc){0}, "internal error: no ptxas to make a cubin with");
    return TILE_ERROR_COMPILE;
  }
  Assembled a = run_ptxas(c, ptxas, out->ptx, out->ptx_len, out->arch, err, sizeof err);
  if (!a.cubin) {
    diag_error(&c->diags, (Loc){0}, "%s", err);
    return TILE_ERROR_COMPILE;
  }
  retry_spilled(c, ptxas, out, &a);
  out->cubin = a.cubin;
  out->cubin_size = a.size;
  out->ptxas_log = a.log;
  return TILE_OK;
}

/* Source (or tile IR text) to GPU-layout IR, or GPU-layout IR text read
 * back and optimised again; NULL after errors.  The tile IR as text goes to
 * *tir (not for .tgir input). */
static TirFunc *gpu_layout_ir(Compilation *c, const tile_options *opts, const Arch *arch, Buf *dump,
                              const char **tir) {
  int tma = opts->tma == TILE_TMA_AUTO ? arch->tma : 0;
  TgirOptions to = {arch->cc, arch->wgmma, opts->passes, opts->refill, tma >= 2, tma >= 1};
  if (c->input == INPUT_TGIR) {
    TirFunc *f = tir_read(&c->source, &c->arena, &c->diags);
    if (!f || tir_verify(f, &c->diags) || tgir_check_text(f, &c->diags) ||
        passes_run(PASS_TGIR, f, &to, opts->passes, NULL, &c->diags, dump))
      return NULL;
    return f;
  }
  TirFunc *f = pipeline_tir(c, opts, dump);
  if (!f) return NULL;
  Buf text;
  buf_init(&text, &c->arena);
  tir_print(f, &text);
  *tir = buf_cstr(&text);
  double clock = pipeline_clock_ms();
  int failed = passes_to_tgir(f, &to, opts->passes, &c->diags, dump);
  lap(c, TIME_TGIR, &clock);
  return failed ? NULL : f;
}

/* The option's register cap, else the chosen config's (IR text has no
 * configs); none for the simulator, which has no registers to cap. */
static int register_cap(const Compilation *c, const tile_options *opts, const Arch *arch) {
  return arch->sim ? 0 : sema_register_cap(c->checked, c->config, opts->maxnreg);
}

static tile_status gpu_stages(Compilation *c, const tile_options *opts, tile_stage last, const char *ptxas,
                              GpuArtifacts *out) {
  memset(out, 0, sizeof *out);
  out->arch = opts->arch ? opts->arch : "sm_90";
  const Arch *arch = arch_find(out->arch);
  if (!arch) {
    diag_error(&c->diags, (Loc){0}, "unknown --arch '%s' (known: %s)", out->arch, arch_names(1));
    return TILE_ERROR_COMPILE;
  }
  Buf dump;
  buf_init(&dump, &c->arena);
  TirFunc *f = gpu_layout_ir(c, opts, arch, opts->print_after_all ? &dump : NULL, &out->tir);
  if (opts->print_after_all) out->dump = buf_cstr(&dump);
  if (!f) return TILE_ERROR_COMPILE;
  out->f = f;
  Buf text;
  buf_init(&text, &c->arena);
  tgir_print(f, &text);
  out->tgir = buf_cstr(&text);
  if (last == TILE_STAGE_TGIR) return TILE_OK;
  GpuTimes llvm_ms = {0};
  GpuTarget target = {out->arch, opts->libdevice ? opts->libdevice : c->ctx->libdevice_path, &llvm_ms,
                      register_cap(c, opts, arch)};
  int want_ptx = last != TILE_STAGE_LLIR && !arch->sim;
  GpuCode code = {0};
  double clock = pipeline_clock_ms();
  int failed = llvm_generate(f, &target, 1, want_ptx, &c->arena, &code, &c->diags);
  lap(c, TIME_LOWER, &clock);
  c->ms[TIME_LOWER] -= llvm_ms.optimize + llvm_ms.codegen;
  c->ms[TIME_OPTIMIZE] += llvm_ms.optimize;
  c->ms[TIME_NVPTX] += llvm_ms.codegen;
  if (failed) return TILE_ERROR_COMPILE;
  out->llir = code.llir;
  out->ptx = code.ptx;
  out->ptx_len = code.ptx_len;
  out->shared_bytes = code.shared_bytes;
  out->maxnreg = target.maxnreg;
  if (last != TILE_STAGE_METADATA || !out->ptx) return TILE_OK;
  return assemble(c, ptxas, out);
}

tile_status pipeline_gpu(Compilation *c, const tile_options *opts, tile_stage last, const char *ptxas,
                         GpuArtifacts *out) {
  tile_status s = gpu_stages(c, opts, last, ptxas, out);
  pipeline_note_times(c, opts);
  return s;
}

/* The metadata JSON; without ptxas, of the PTX (no registers or spills). */
static tile_status emit_metadata(Compilation *c, const tile_options *opts, Buf *out) {
  char ptxas[4096], why[512];
  int have_ptxas = context_ptxas(c->ctx, ptxas, sizeof ptxas, why, sizeof why) == 0;
  if (!have_ptxas) diag_warning(&c->diags, (Loc){0}, "%s: the metadata describes the PTX (no registers or spills)", why);
  GpuArtifacts g;
  tile_status s = pipeline_gpu(c, opts, have_ptxas ? TILE_STAGE_METADATA : TILE_STAGE_PTX, ptxas, &g);
  if (s != TILE_OK) return s;
  if (!g.ptx) {
    diag_error(&c->diags, (Loc){0}, "no PTX for target '%s'", g.arch);
    return TILE_ERROR_COMPILE;
  }
  buf_puts(out, describe_kernel(c, g.f, &g, !have_ptxas));
  return TILE_OK;
}

static tile_status emit_gpu_stage(Compilation *c, const tile_options *opts, tile_stage stage, Buf *out) {
  GpuArtifacts g;
  tile_status s = pipeline_gpu(c, opts, stage, NULL, &g);
  if (s != TILE_OK) return s;
  if (g.dump) buf_puts(out, g.dump);
  const char *text = stage == TILE_STAGE_TGIR ? g.tgir : stage == TILE_STAGE_LLIR ? g.llir : g.ptx;
  if (!text) {
    diag_error(&c->diags, (Loc){0}, "no %s for target '%s'", stage == TILE_STAGE_PTX ? "PTX" : "output", g.arch);
    return TILE_ERROR_COMPILE;
  }
  buf_puts(out, text);
  return TILE_OK;
}

/* Tokens and the checked AST, of a kernel's source only. */
static tile_status emit_front_stage(Compilation *c, const tile_options *opts, tile_stage stage, Buf *out) {
  if (c->input != INPUT_TILE) {
    diag_error(&c->diags, (Loc){0}, "%s holds %s: it has no tokens or AST to print", c->source.name,
               c->input == INPUT_TIR ? "tile IR" : "GPU-layout IR");
    return TILE_ERROR_COMPILE;
  }
  TokenVec toks = lex(&c->source, &c->diags);
  if (stage == TILE_STAGE_TOKENS) {
    tokens_print(&toks, out);
    return c->diags.errors ? TILE_ERROR_COMPILE : TILE_OK;
  }
  Module *m = parse_module(&c->source, &toks, &c->diags);
  if (c->diags.errors) return TILE_ERROR_COMPILE;
  SemaOptions so = {0};
  sema_options(c, opts, &so);
  CheckedKernel *k = sema_check(m, pipeline_stdlib(c), &so, &c->diags);
  if (!k) return TILE_ERROR_COMPILE;
  if (k->typed) checked_print(k, out);
  else ast_print(m->root, out);
  return TILE_OK;
}

tile_status pipeline_run(Compilation *c, const tile_options *opts, tile_stage stage, Buf *out) {
  if (stage == TILE_STAGE_TGIR || stage == TILE_STAGE_LLIR || stage == TILE_STAGE_PTX)
    return emit_gpu_stage(c, opts, stage, out);
  if (stage == TILE_STAGE_METADATA) return emit_metadata(c, opts, out);
  if (stage == TILE_STAGE_TOKENS || stage == TILE_STAGE_AST) return emit_front_stage(c, opts, stage, out);
  TirFunc *f = pipeline_tir(c, opts, opts->print_after_all ? out : NULL);
  pipeline_note_times(c, opts);
  if (!f) return TILE_ERROR_COMPILE;
  if (stage == TILE_STAGE_AXIS_INFO) tir_print_axis_info(f, out);
  else tir_print(f, out);
  return TILE_OK;
}
