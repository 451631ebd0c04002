/* The compilation driver: the context behind the public API and the
 * pipeline that calls the stages in order.  The context's runtime half
 * (context.c: errors, the environment, device memory, kernels) is shared
 * with libtile_rt and needs no compiler; the rest is the compiler's. */
#ifndef TILE_DRIVER_H
#define TILE_DRIVER_H

#include "../frontend/sema.h"
#include "../runtime/context.h"
#include "../tgir/tgir.h"

/* The stages whose time a compilation measures (tile_options.time_stages,
 * tilec --time), in pipeline order: id, the name in the report. */
#define STAGE_TIMES(X)                      \
  X(FRONTEND, "frontend")                   \
  X(TIR, "tile IR")                         \
  X(TGIR, "GPU-layout IR")                  \
  X(LOWER, "LLVM lowering")                 \
  X(OPTIMIZE, "LLVM optimisation")          \
  X(NVPTX, "NVPTX")                         \
  X(PTXAS, "ptxas")

typedef enum {
#define STAGE_TIME_ID(id, name) TIME_##id,
  STAGE_TIMES(STAGE_TIME_ID)
#undef STAGE_TIME_ID
  TIME_COUNT
} StageTime;

/* What a compilation's input is, by its name: the one place that decides. */
typedef enum {
  INPUT_TILE, /* the tile language (.tl, or any other name) */
  INPUT_TIR,  /* tile IR text (.tir), as --emit=tir prints it */
  INPUT_TGIR, /* GPU-layout IR text (.tgir), as --emit=tgir prints it */
} InputKind;

/* Everything one compilation owns; released whole when it ends. */
typedef struct Compilation {
  tile_context *ctx;
  Arena arena;
  Guard guard;
  Diags diags;
  Source source;
  InputKind input;          /* from the source's name */
  const CheckedKernel *checked; /* the specialised kernel, once pipeline_tir has checked it */
  int config;               /* the @autotune config the constexprs came from; -1: none */
  int configs_as_listed;    /* options' config indexes the decorator's list, every config kept: the
                               JIT's (early_config_prune runs at a launch: pipeline_prune) and
                               tile_pack's compiles (it pruned when it declared the kernel) */
  double ms[TIME_COUNT];    /* milliseconds spent in each stage (0: not run) */
} Compilation;

tile_status pipeline_run(Compilation *c, const tile_options *opts, tile_stage stage, Buf *out);

/* What the GPU half of the pipeline made; text and bytes live in the
 * compilation's arena.  Later stages are NULL when not reached. */
typedef struct GpuArtifacts {
  struct TirFunc *f;         /* GPU-layout IR */
  const char *arch;          /* the target it was made for: "sm_90a", "sim" */
  const char *tir;           /* tile IR as text, after the passes */
  const char *tgir;          /* GPU-layout IR as text */
  const char *llir;          /* LLVM IR as lowered */
  const char *ptx;
  size_t ptx_len;
  const unsigned char *cubin;
  size_t cubin_size;
  const char *ptxas_log;     /* ptxas -v: registers, shared memory, spills */
  int shared_bytes;          /* dynamic shared memory per program */
  int maxnreg;               /* the register cap the PTX carries (.maxnreg); 0: none */
  const char *dump;          /* with opts->print_after_all: the IR after each pass and step */
} GpuArtifacts;

/* Source to GPU code, up to stage `last`: TILE_STAGE_TGIR, TILE_STAGE_LLIR,
 * TILE_STAGE_PTX, or TILE_STAGE_METADATA for the cubin as well (ptxas at
 * `ptxas`, a path ptxas_locate found).  opts->arch NULL means sm_90; the
 * API resolves "the GPU present" before calling. */
tile_status pipeline_gpu(Compilation *c, const tile_options *opts, tile_stage last, const char *ptxas,
                         GpuArtifacts *out);
/* Source to optimised tile IR (the IR after each pass into dump, if any);
 * NULL after errors.  Sets c->checked, and the function's num_warps and
 * num_stages from the options, else the chosen @autotune config. */
struct TirFunc *pipeline_tir(Compilation *c, const tile_options *opts, Buf *dump);
/* The kernel's declaration and decorators (sema_declare), without checking
 * its body; NULL after errors or for IR text. */
const CheckedKernel *pipeline_declare(Compilation *c, const tile_options *opts);
/* Its two halves: the source parsed (NULL after syntax errors, or for IR
 * text), and the declaration of the parsed module. */
Module *pipeline_parse(Compilation *c);
const CheckedKernel *pipeline_declare_module(Compilation *c, const Module *m, const tile_options *opts);
/* The declaration with autotune's early_config_prune run on a launch's
 * arguments (the JIT's, where the kernel tunes): the configs it keeps, each
 * with its index in the decorator's list; NULL after errors. */
const CheckedKernel *pipeline_prune(Compilation *c, const Module *m, const tile_options *opts, const LaunchArg *launch,
                                    int n_launch);
/* The declaration with config opts->config's values and the
 * @triton.heuristics' values on a launch's arguments (`launch` NULL: on
 * none, to learn whether they read any); errors go to `d`; NULL after them. */
const CheckedKernel *pipeline_heuristics(Compilation *c, const Module *m, const tile_options *opts,
                                         const LaunchArg *launch, int n_launch, Diags *d);
/* lang/stdlib.tl, parsed (for the builtin reference too). */
Module *pipeline_stdlib(Compilation *c);
/* With opts->time_stages, a note of the time each stage that ran took
 * ("time: frontend 0.31 ms, ..."); nothing otherwise. */
void pipeline_note_times(Compilation *c, const tile_options *opts);
/* Milliseconds on a monotonic clock. */
double pipeline_clock_ms(void);
/* ptxas for ctx (TILE_PTXAS_PATH, the toolkit, PATH) into `path`; 0, or -1 with why in err. */
int context_ptxas(tile_context *ctx, char *path, size_t size, char *err, size_t errsize);

/* Starts and ends a compilation owned by ctx (emit.c).  compilation_begin
 * starts an API call's messages afresh (context_begin); compilation_new
 * only reads ctx, so the compilation can run on another thread while ctx's
 * thread waits (jit.c's build_many). */
Compilation *compilation_begin(tile_context *ctx, const char *name, const char *source, size_t len);
Compilation *compilation_new(tile_context *ctx, const char *name, const char *source, size_t len);
void compilation_end(Compilation *c);
/* Runs fn(c, ud) under the compilation's guard, the protected call of the
 * compiler's entry points (support/diag.h, guard_run): fn's status, or when
 * a guard_fail unwound it, TILE_ERROR_COMPILE after errors (too many) and
 * else TILE_ERROR_MEMORY, the reason in c->guard.message.  Touches nothing
 * of the context: builds on worker threads use it. */
typedef tile_status CompileFn(Compilation *c, void *ud);
tile_status compilation_run(Compilation *c, CompileFn *fn, void *ud);
/* keep_diagnostics, and the guard's message as the context's error after TILE_ERROR_MEMORY. */
tile_status compilation_report(Compilation *c, tile_status s);
/* Copies the compilation's diagnostics into ctx (tile_diagnostics, tile_error). */
void keep_diagnostics(tile_context *ctx, Compilation *c, tile_status s);
/* The metadata JSON (docs/abi.md) of the kernel c compiled to f: g is the GPU
 * code (NULL on the CPU interpreter), image_is_ptx says what the image is.
 * In c's arena (describe.c). */
const char *describe_kernel(Compilation *c, const struct TirFunc *f, const GpuArtifacts *g, int image_is_ptx);
/* Runs f on the interpreter over the host buffers of args (bytes[i]: the
 * size of argument i's buffer) for at most time_limit_s seconds (0: no
 * limit), protected by `guard` (that of the arenas of f and `printed`);
 * device_print text goes to `printed`.  `memory` (n_memory blocks, NULL: none): the context's
 * tile_malloc blocks, which an address the kernel reads from memory may point into, as on the GPU.
 * TILE_OK, or TILE_ERROR_ARGUMENT / TILE_ERROR_RUNTIME / TILE_ERROR_MEMORY with err (launch.c). */
typedef struct InterpMemory {
  const tile_arg *args;
  int n;
  const size_t *bytes;
  const Allocation *memory;
  int n_memory;
} InterpMemory;
tile_status launch_interpreted(Guard *guard, const struct TirFunc *f, const unsigned grid[3], const InterpMemory *mem,
                               double time_limit_s, Buf *printed, char *err, size_t errsize);
/* A specialisation compiled for the interpreter (a JIT kernel's, or a
 * bundle's tile IR): its compilation stays alive in Spec.program. */
typedef struct CpuProgram {
  Compilation *c;
  const struct TirFunc *f;
} CpuProgram;
struct tile_kernel;
struct Spec;
struct KernelTuning;
/* jit.c's, shared with bundles' interpreter (pack.c): runs a CpuProgram, frees one. */
tile_status jit_run_cpu(struct tile_kernel *k, struct Spec *s, const unsigned grid[3], const tile_arg *args, int n,
                        const size_t *bytes);
void jit_release_spec(struct tile_kernel *k, struct Spec *s);
/* How a kernel with several @triton.autotune configs is tuned (kernel.h), in one malloc'd block. */
struct KernelTuning *jit_tuning_of(const CheckedKernel *k, int tune_refill, int tune_tma);

/* ---- jit_deps.c: the files a JIT disk cache entry was compiled from beyond its source ---- */
/* The list as an entry keeps it, in `a`; "" (len 0) when there are none. */
const char *jit_deps_format(Arena *a, const ModuleFiles *files, size_t *len);
/* An entry's list into *out (in `a`): 0, or -1 with why when it does not read. */
int jit_deps_parse(Arena *a, const char *deps, size_t len, ModuleFiles *out, char *why, size_t whysize);
/* Whether every file listed reads now as it did then (1), or one changed, went or came (0). */
int jit_deps_hold(const ModuleFiles *files);

/* ---- heuristics.c: @triton.heuristics that read a launch's arguments (the JIT's) ---- */
typedef struct JitHeuristics JitHeuristics;
/* Whether the heuristics of m's kernel read a launch's arguments: some
 * cannot be evaluated without them, for one of `slots` configs (the kernel
 * tunes over them when slots > 1; else opts->config's).  Reports nothing. */
int heuristics_read_launch(Compilation *c, const Module *m, const tile_options *opts, int slots);
/* The cases of a kernel whose heuristics do; NULL when out of memory. */
JitHeuristics *heuristics_new(int slots);
void heuristics_free(JitHeuristics *h);
/* The case of a launch's arguments (kernel.h's compiler->heuristics), found
 * among the values seen lately, else computed by declaring the kernel
 * (source name/text/len, options opts) again; a status and message in ctx. */
tile_status heuristics_case(JitHeuristics *h, tile_context *ctx, const char *name, const char *text, size_t len,
                            const tile_options *opts, const tile_arg *args, int n, int *out);
/* The -D values case `which` compiles config `config` with (-1: the options'). */
const char *const *heuristics_defines(const JitHeuristics *h, int which, int config, int *count);
extern const unsigned char tile_stdlib_source[];
extern const size_t tile_stdlib_size;

/* ---- passes.c: the pass manager of both IR levels (passes.def) ---- */
typedef enum { PASS_TIR, PASS_TGIR } PassLevel;
/* Runs the passes of `level` that `list` names ("fold,cse", "all", "none";
 * NULL: all) in passes.def's order, with the level's verifier after each;
 * with `dump` set, prints the IR after each into it.  `o` is for GPU-layout
 * IR passes; `skip` (NULL: none) is a pass left out whatever the list
 * says.  Returns 0, or the number of problems (an unknown pass name, a
 * verifier failure) reported to `d`. */
int passes_run(PassLevel level, TirFunc *f, const TgirOptions *o, const char *list, const char *skip, Diags *d,
               Buf *dump);
/* Tile IR to GPU-layout IR: layout assignment (tgir_convert), then the
 * GPU-layout IR passes `list` names, each verified; 0 or the number of
 * problems reported to `d`. */
int passes_to_tgir(TirFunc *f, const TgirOptions *o, const char *list, Diags *d, Buf *dump);
/* "fold, combine, ..., pipeline, all, none": the names a list may hold. */
const char *passes_names(Arena *a);

#endif
