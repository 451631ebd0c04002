/* tile: a Triton-style tile language compiler and runtime, in C.
 *
 * The API follows lua.h: one opaque context owns everything made through
 * it; every call that can fail returns a tile_status and leaves a message in
 * the context (clang-style diagnostics for compile errors); nothing is global,
 * so two contexts on two threads are independent; the library never prints
 * (unless asked: TILE_PRINT_AUTOTUNING), exits or aborts.
 *
 * Ownership: what tile_*_create (and tile_malloc, tile_kernel_load) gives
 * you, you release with the matching destroy (tile_free); destroying the
 * context releases whatever is left of it: kernels, device memory, streams
 * and events are all the context's.  Strings and bytes the library returns
 * are borrowed: tile_error, tile_diagnostics and the results of tile_emit
 * and tile_compile stay valid until the next call on the same context;
 * a kernel's metadata, image and texts until the kernel is destroyed.
 *
 * Two libraries: libtile (the compiler and the runtime) and libtile_rt (the
 * runtime alone, without LLVM: contexts, device memory, streams, events,
 * AOT kernels, launches).  In libtile_rt the calls that compile return
 * TILE_ERROR_UNSUPPORTED.
 *
 * What is checked and what is the caller's (as lua.h says of its API):
 * every call checks its pointers for NULL, its options (tile_options_check),
 * enum values, counts, sizes (overflow included) and the handles it is given:
 * a context or kernel that is not one (its first word is a tag; a handle
 * destroyed and not yet reused reads as not one) and a stream or event that
 * the context did not make, or that was destroyed (a search of the
 * context's own list, which never reads through the handle), are refused
 * with TILE_ERROR_ARGUMENT.  The caller's contract: pointers point to what
 * their type says (a buffer's `count` elements readable and writable,
 * strings NUL-terminated); a handle is used only with the context that made
 * it, and not after it is destroyed (the tag catches that only while the
 * memory is not reused); one context is used by one thread at a time. */
#ifndef TILE_TILE_H
#define TILE_TILE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TILE_API __attribute__((visibility("default")))
#else
#define TILE_API
#endif

/* The one place the version is written: CMakeLists.txt reads these three lines
 * (the package's version, libtile.so's file name), tile_version() returns the string. */
#define TILE_VERSION_MAJOR 0
#define TILE_VERSION_MINOR 1
#define TILE_VERSION_PATCH 0
#define TILE_VERSION_TEXT_(a, b, c) #a "." #b "." #c
#define TILE_VERSION_TEXT(a, b, c) TILE_VERSION_TEXT_(a, b, c)
#define TILE_VERSION_STRING TILE_VERSION_TEXT(TILE_VERSION_MAJOR, TILE_VERSION_MINOR, TILE_VERSION_PATCH)

typedef enum tile_status {
  TILE_OK = 0,
  TILE_ERROR_COMPILE,    /* the kernel has errors; tile_error() has the diagnostics */
  TILE_ERROR_ARGUMENT,   /* a bad argument to the API (NULL, out of range) */
  TILE_ERROR_IO,         /* a file could not be read or written */
  TILE_ERROR_MEMORY,     /* out of memory, or a compilation over its memory cap */
  TILE_ERROR_UNSUPPORTED,/* asked for something this build cannot do yet */
  TILE_ERROR_RUNTIME     /* the kernel failed while running: an out-of-bounds access,
                            a failed device_assert; tile_error() says where */
} tile_status;

/* Which stage's text tile_emit produces. */
typedef enum tile_stage {
  TILE_STAGE_TOKENS,     /* the token stream, one token a line */
  TILE_STAGE_AST,        /* the syntax tree; typed and specialised when the kernel's
                            parameters have types (signature or annotations) */
  TILE_STAGE_TIR,        /* tile IR (docs/ir.md), after the optimisation passes */
  TILE_STAGE_AXIS_INFO,  /* the AxisInfo analysis of the optimised tile IR */
  TILE_STAGE_BUILTINS,   /* the builtin reference (markdown), from the builtin table */
  TILE_STAGE_OPS,        /* the tile IR op reference (markdown), from the op table */
  TILE_STAGE_TGIR,       /* GPU-layout IR (docs/tgir.md): a layout on every tile value */
  TILE_STAGE_LLIR,       /* LLVM IR, as lowered (before LLVM's optimiser) */
  TILE_STAGE_PTX,        /* PTX for opts->arch, from LLVM's optimiser (O1) and NVPTX backend */
  TILE_STAGE_METADATA    /* the kernel's metadata JSON (docs/abi.md); runs ptxas for registers and spills
                            (without ptxas: of the PTX, registers and spills -1, and a warning) */
} tile_stage;

typedef enum tile_refill { TILE_REFILL_AUTO, TILE_REFILL_EARLY, TILE_REFILL_LATE } tile_refill;
typedef enum tile_tma { TILE_TMA_AUTO, TILE_TMA_OFF } tile_tma;
typedef enum tile_fp_fusion { TILE_FP_FUSION_ON, TILE_FP_FUSION_OFF } tile_fp_fusion;

/* How a kernel is specialised.  Initialise with tile_options_init (which
 * sets struct_size: the struct may grow, docs/abi.md section 10); the
 * strings are borrowed for the duration of the call. */
typedef struct tile_options {
  size_t struct_size;        /* sizeof(tile_options) as the caller was compiled: set by tile_options_init */
  const char *kernel;        /* function to compile; NULL: the one no other function calls */
  const char *signature;     /* Triton AOT signature, "*fp32:16,*fp32,i32"; NULL: annotations */
  const char *const *defines;/* constexpr values, "NAME=VALUE" */
  int num_defines;
  int config;                /* index of an @autotune config to take constexprs from; -1: none (a JIT
                                kernel with several configs is then tuned at launch, see below) */
  int require_types;         /* nonzero: untyped parameters are an error (always check) */
  const char *passes;        /* passes to run: "fold,combine,cse,widen,licm,dce,remove-converts", "none"; NULL: all */
  int print_after_all;       /* nonzero: the IR after each pass precedes the output */
  int num_warps;             /* warps per program, a power of two 1..32; 0: the @autotune config's, else 4 */
  int num_stages;            /* software-pipelining depth; 0: the @autotune config's, else 3 */
  const char *arch;          /* "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"; NULL: the GPU present, else sm_90.
                                A launch of an older major version than the GPU's loads the PTX (the
                                driver compiles it); a newer target, or another GPU's 'a', is an error */
  const char *libdevice;     /* libdevice.10.bc, linked when a kernel calls math the GPU has no instruction
                                for (logf, sinf, fp64 exp); NULL: the context's (TILE_LIBDEVICE_PATH, else
                                $CUDA_HOME/nvvm/libdevice/libdevice.10.bc, else under /usr/local/cuda) */
  tile_refill refill;        /* when a pipelined loop with a dot refills its shared-memory buffers:
                                TILE_REFILL_AUTO (0: the compiler's choice, and a JIT kernel's autotuner
                                times the other schedule too), _EARLY (at the top of an iteration, with
                                one buffer more where it fits), _LATE (after the iteration's reads and a
                                barrier, one buffer fewer: Triton's schedule); docs/tgir.md */
  int time_stages;           /* nonzero: each compilation adds a note to tile_diagnostics with the
                                milliseconds of each stage that ran ("time: frontend 0.42 ms, tile IR ...,
                                ptxas 21.3 ms; total 35.1 ms"); a disk-cache hit compiles nothing */
  tile_tma tma;              /* TILE_TMA_AUTO (0): on sm_90a a pipelined loop's wgmma operands come by the
                                tensor memory accelerator where their pointers and masks describe a 2-D box
                                of a parameter's tensor (the launch encodes its tensor map; docs/tgir.md);
                                TILE_TMA_OFF: always cp.async */
  int maxnreg;               /* registers a thread may use, 24..255 (PTX's .maxnreg, as triton.Config's
                                maxnreg=); 0: the @autotune config's, else no cap.  The CPU interpreter
                                and the simulator ignore it */
  tile_fp_fusion fp_fusion;  /* TILE_FP_FUSION_ON (0): fp32 and fp64 x * y + z and x * y - z are one fma,
                                rounded once, as Triton's default enable_fp_fusion=True (the interpreter
                                fuses the same sums); TILE_FP_FUSION_OFF: every product rounded, as
                                enable_fp_fusion=False */
} tile_options;

typedef struct tile_context tile_context;

TILE_API const char *tile_version(void);               /* TILE_VERSION_STRING, e.g. "0.1.0" */
TILE_API const char *tile_build_info(void);            /* versions of LLVM and targets linked in */
TILE_API const char *tile_status_string(tile_status s);

/* TILE_ERROR_MEMORY with *out NULL; TILE_ERROR_ARGUMENT when a TILE_*
 * variable has a value the library cannot use (TILE_INTERPRET=maybe): *out
 * is then a context whose tile_error names the variable, with that variable
 * at its default; destroy it as any other. */
TILE_API tile_status tile_context_create(tile_context **out);
TILE_API void tile_context_destroy(tile_context *ctx); /* NULL is fine */

/* The message of the last failed call, "" if none; for TILE_ERROR_COMPILE,
 * every diagnostic in clang's form (file:line:col: error: ..., source line,
 * caret). */
TILE_API const char *tile_error(const tile_context *ctx);
/* Warnings and notes of the last call, also when it succeeded. */
TILE_API const char *tile_diagnostics(const tile_context *ctx);

/* tile_options_init(&opts): the defaults, struct_size the caller's
 * sizeof(tile_options).  The library writes no byte past the size it is
 * given (a program built against an older tile.h passes its smaller
 * struct's size), which is why this is a macro over tile_options_init_size
 * and the symbol tile_options_init of tile.h before struct_size is gone: a
 * program built against that header fails to load, naming it, rather than
 * having the larger struct written over its memory. */
#define tile_options_init(opts) tile_options_init_size((opts), sizeof *(opts))
TILE_API void tile_options_init_size(tile_options *opts, size_t struct_size);
/* The check every call that takes options makes first (tilec makes it too):
 * struct_size one this library knows (tile_options_init's; docs/abi.md
 * section 10: an older program's smaller struct is read only up to its
 * size, a struct without the field or from a newer tile.h is refused),
 * num_warps 0 or a power of two to 32, num_stages 0..16, config -1..2^20-1,
 * refill and tma one of their values, maxnreg 0 or 24..255, num_defines >= 0 with that many
 * non-NULL defines.  TILE_OK, or TILE_ERROR_ARGUMENT with tile_error naming
 * the field ("tile_emit: options: num_stages must be from 0 (the default)
 * to 16, not -3").  NULL opts: the defaults, which pass.  What it cannot
 * check is the caller's: strings NUL-terminated, defines[] readable for
 * num_defines entries; arch, passes and signature are checked as the
 * compilation reads them (errors then are TILE_ERROR_COMPILE). */
TILE_API tile_status tile_options_check(tile_context *ctx, const tile_options *opts);

/* Runs the pipeline on `source` (`len` bytes, NULs allowed; `name` is used
 * in diagnostics) up to `stage` and returns that stage's text in *text. */
TILE_API tile_status tile_emit(tile_context *ctx, const char *name, const char *source, size_t len,
                               const tile_options *opts, tile_stage stage, const char **text);
/* The same, reading the source from a file. */
TILE_API tile_status tile_emit_file(tile_context *ctx, const char *path, const tile_options *opts,
                                    tile_stage stage, const char **text);
/* Compiles ahead of time for opts->arch (NULL: sm_90; no GPU is asked): a
 * cubin (with ptxas), or PTX when `ptx` is nonzero, in *image and *size,
 * and its metadata JSON (docs/abi.md) in *metadata, for tile_kernel_load.
 * opts->signature (or annotations) gives the types.  Nothing is cached. */
TILE_API tile_status tile_compile(tile_context *ctx, const char *name, const char *source, size_t len,
                                  const tile_options *opts, int ptx, const void **image, size_t *size,
                                  const char **metadata);

/* ---- running kernels ------------------------------------------------------ */

typedef enum tile_arg_kind { TILE_ARG_BUFFER, TILE_ARG_INT, TILE_ARG_FLOAT } tile_arg_kind;

/* One argument of a launch, for a non-constexpr parameter.  Make them with
 * tile_buffer, tile_int and tile_float (which set struct_size: the struct
 * may grow, docs/abi.md section 10). */
typedef struct tile_arg {
  size_t struct_size;  /* sizeof(tile_arg) as the caller was compiled: set by tile_buffer, tile_int, tile_float */
  tile_arg_kind kind;
  const char *dtype;   /* element type of a buffer, or the scalar's type: "fp32", "i64", ...
                          (Triton's short names); NULL for a scalar: Triton's rule */
  void *data;          /* a buffer's memory: host memory for tile_run_cpu, tile_malloc's
                          (or another device pointer) for launches */
  size_t count;        /* a buffer's length in elements (tile_run_cpu's bound; a launch on the
                          CPU interpreter checks it fits the block; the GPU ignores it) */
  long long i;         /* TILE_ARG_INT */
  double f;            /* TILE_ARG_FLOAT */
} tile_arg;

/* Inline, so that struct_size is the caller's sizeof(tile_arg) and the
 * struct is built in the caller's memory: a tile_arg returned by value from
 * the library would be written at the library's size (the symbols
 * tile_buffer, tile_int and tile_float of tile.h before struct_size are gone,
 * for the reason given at tile_options_init). */
static inline tile_arg tile_buffer(void *data, const char *dtype, size_t count) {
  tile_arg a = {sizeof(tile_arg), TILE_ARG_BUFFER, dtype, data, count, 0, 0};
  return a;
}
static inline tile_arg tile_int(long long value) { /* i32 if it fits, else i64, as Triton */
  tile_arg a = {sizeof(tile_arg), TILE_ARG_INT, NULL, NULL, 0, value, 0};
  return a;
}
static inline tile_arg tile_float(double value) { /* fp32 */
  tile_arg a = {sizeof(tile_arg), TILE_ARG_FLOAT, NULL, NULL, 0, 0, value};
  return a;
}
/* A tensor descriptor (Triton's TensorDescriptor.from_tensor) for a
 * parameter whose signature entry is "tensordesc<fp16[64, 64]>" (the block
 * shape is compile-time, in the signature): it is passed as 1 + 2 * rank
 * arguments, as Triton's launcher expands it: the base buffer, the shape
 * (i32) and the strides in elements (i64, the last one 1).  Writes them to
 * out[0 .. 1 + 2 * rank) and returns their count; returns -1 and writes
 * nothing where Triton's TensorDescriptor refuses the tensor: a rank not 1
 * to 5, a base not 16-byte aligned, an unknown dtype, a dimension not in
 * 1 .. 2^31 - 1, a stride (but the last) not a positive multiple of 16
 * bytes, a last stride not 1.  A kernel with descriptor parameters needs a
 * signature (tile_options.signature): the arguments cannot say the block
 * shape.  docs/abi.md, "Tensor descriptors".  A macro over
 * tile_tensordesc_size, which is given the caller's sizeof(tile_arg) (for
 * the reason given at tile_options_init; -1 for a size it does not know). */
#define tile_tensordesc(out, base, dtype, count, rank, shape, strides) \
  tile_tensordesc_size((out), sizeof *(out), (base), (dtype), (count), (rank), (shape), (strides))
TILE_API int tile_tensordesc_size(tile_arg *out, size_t arg_size, void *base, const char *dtype, size_t count,
                                  int rank, const long long *shape, const long long *strides);

/* Compiles `source` specialised for `args` (their types, alignment and
 * values equal to 1, as Triton specialises) and runs it on the CPU
 * interpreter over grid[0] x grid[1] x grid[2] programs, reading and
 * writing the buffers in place.  An explicit opts->signature overrides the
 * types taken from the arguments.  Text from device_print goes to *printed
 * (may be NULL).  The arguments are checked as tile_launch checks them
 * (count, kinds, dtypes, NULL buffers, ':16' and ':1' promises, integers
 * that fit their type; a buffer's count * element size must fit the
 * interpreter's 2^43-byte address space) before anything runs.  A run that
 * fails returns TILE_ERROR_RUNTIME; the buffers may then be partly written.
 * A run stops with TILE_ERROR_RUNTIME, naming the loop it was in, after the
 * interpreter's time limit (TILE_INTERPRET_TIMEOUT, below). */
TILE_API tile_status tile_run_cpu(tile_context *ctx, const char *name, const char *source, size_t len,
                                  const tile_options *opts, const unsigned grid[3], const tile_arg *args,
                                  int num_args, const char **printed);

/* ---- the GPU ----------------------------------------------------------------
 *
 * The CUDA driver (libcuda.so.1) is loaded with dlopen on the first call
 * that needs it; compiling never does (the GPU present, if any, only picks
 * the default target).  Without a GPU these calls return
 * TILE_ERROR_UNSUPPORTED with tile_error() saying why ("no CUDA driver:
 * ..."), unless the context runs kernels on the CPU interpreter
 * (TILE_INTERPRET=1 when the context is created, or tile_context_use_cpu):
 * then device memory is host memory the context tracks, copies are memcpy,
 * streams do nothing, events read the host clock, and launches run on the
 * interpreter over the tracked blocks (an access outside a block stops the
 * launch with the kernel's source line), with device_print text written to
 * stdout as the GPU's printf does; so the same host program runs anywhere.
 *
 * Environment, read once by tile_context_create (docs/abi.md, section 7):
 * TILE_INTERPRET (1, true, yes, on: the CPU interpreter; 0, false, no, off:
 * the GPU; any case), TILE_INTERPRET_TIMEOUT (seconds an interpreted launch
 * or tile_run_cpu may run before it stops with an error naming the loop it
 * is in; default 60, 0: no limit), TILE_CACHE_DIR (default ~/.cache/tile),
 * TILE_PTXAS_PATH, TILE_PTXAS_TIMEOUT (seconds, default 300),
 * TILE_PTXAS_MEMORY (MiB, default 8192), TILE_COMPILE_THREADS,
 * TILE_PRINT_AUTOTUNING (the autotuner's times and choice on stderr),
 * TILE_CUDA_LIBRARY (default libcuda.so.1), TILE_LIBDEVICE_PATH (default
 * $CUDA_HOME/nvvm/libdevice/libdevice.10.bc, CUDA_HOME default
 * /usr/local/cuda).  A value the library cannot use fails
 * tile_context_create (below). */

typedef struct tile_kernel tile_kernel;

/* From now on the context runs kernels on the CPU interpreter, as
 * TILE_INTERPRET=1 does; an error once the context holds GPU memory,
 * streams or events. */
TILE_API tile_status tile_context_use_cpu(tile_context *ctx);
/* Nonzero if the context runs kernels on the CPU interpreter. */
TILE_API int tile_context_on_cpu(const tile_context *ctx);

/* Streams and events come from tile_stream_create and tile_event_create of
 * the same context (on the GPU they are its CUstream and CUevent); any
 * other handle, or a destroyed one, is refused with TILE_ERROR_ARGUMENT
 * (destroying one is then a no-op). */
typedef struct tile_stream_s *tile_stream;   /* a CUstream; NULL is the default stream */
typedef struct tile_event_s *tile_event;     /* a CUevent */

/* Device memory, on the context's device (device 0 unless tile_device_open
 * chose another, before any other GPU call: for several GPUs, a context per
 * device, on threads at once if need be; docs/abi.md, section 7).  Device
 * pointers are passed to kernels with tile_buffer.  Blocks are tracked:
 * tile_free rejects a pointer tile_malloc did not give, and copies into a
 * block are bounds-checked. */
TILE_API tile_status tile_device_open(tile_context *ctx, int ordinal);
TILE_API const char *tile_device_name(tile_context *ctx);        /* "NVIDIA H100 80GB HBM3"; "" on the CPU or without a GPU */
TILE_API tile_status tile_malloc(tile_context *ctx, void **device_ptr, size_t bytes);
TILE_API tile_status tile_free(tile_context *ctx, void *device_ptr);  /* NULL is fine */
TILE_API tile_status tile_memcpy_to_device(tile_context *ctx, void *device_dst, const void *host_src, size_t bytes);
TILE_API tile_status tile_memcpy_to_host(tile_context *ctx, void *host_dst, const void *device_src, size_t bytes);
TILE_API tile_status tile_memset(tile_context *ctx, void *device_ptr, int byte, size_t bytes);
TILE_API tile_status tile_synchronize(tile_context *ctx);
TILE_API tile_status tile_stream_create(tile_context *ctx, tile_stream *out);
TILE_API tile_status tile_stream_synchronize(tile_context *ctx, tile_stream s);
TILE_API void tile_stream_destroy(tile_context *ctx, tile_stream s);
TILE_API tile_status tile_event_create(tile_context *ctx, tile_event *out);
TILE_API tile_status tile_event_record(tile_context *ctx, tile_event e, tile_stream s);
TILE_API tile_status tile_event_elapsed(tile_context *ctx, tile_event start, tile_event end, float *ms);
TILE_API void tile_event_destroy(tile_context *ctx, tile_event e);

/* A kernel compiled just in time.  Each launch specialises it on its
 * arguments as Triton does (pointer and integer types, pointers and
 * integers divisible by 16, integers equal to 1) and compiles each
 * specialisation once: cached in memory, and on disk under TILE_CACHE_DIR
 * keyed by source, specialisation, options, target and compiler version
 * (a cache that cannot be written is noted in tile_diagnostics, not an
 * error).  Without ptxas the image is PTX, which the driver compiles.
 * The options (kernel, defines, config, num_warps, arch...) are copied and
 * fixed here; a given opts->signature fixes the types instead of the
 * arguments.  The source is parsed and the kernel declared here: syntax
 * errors, a define the kernel does not take, an unknown arch, an autotune
 * decorator in error come back now; the body is checked per
 * specialisation.  A launch must pass one argument per run-time (not
 * constexpr) parameter; another count is TILE_ERROR_ARGUMENT naming them.
 * The kernel belongs to ctx and dies with it at the latest.
 *
 * Autotuning.  When the source has @triton.autotune(configs=[...], key=[...])
 * with several configs and opts->config is -1, the kernel is tuned at launch,
 * as Triton's autotuner does: the first launch for each tuning key (the
 * arguments' specialisation and the values of the `key` arguments; a `key`
 * naming a constexpr is fixed by the options and adds nothing) compiles every
 * config (its constexprs, num_warps, num_stages; opts->num_warps or
 * num_stages, when given, override every config's) for that
 * specialisation, launches each on `stream` -- the grid function sees the
 * config being run, through tile_kernel_constexpr -- and times it with
 * events: `warmup` ms of warm-up runs, then the median of runs filling `rep`
 * ms (the decorator's warmup= and rep=; 25 and 100 by default, as Triton's
 * do_bench), 3 to 200 of them.  Unless opts->refill fixes it, each config
 * whose pipelined loop has a dot is then also compiled and timed with the
 * other refill schedule (which wins depends on the grid; the choice is the
 * pair, the metadata's "refill" says which).  A config that does not
 * compile, load (more shared memory than the GPU allows) or launch (too
 * many registers or threads) is skipped, as Triton skips OutOfResources;
 * when none can run the launch fails with each one's reason.  The fastest is kept for that key, in
 * memory and in the disk cache (keyed like the kernels, plus the GPU's name;
 * so another process skips the tuning), and launched: every tuning run
 * writes the launch's buffers, so the decorator's reset_to_zero=['c_ptr']
 * buffers are zeroed, and restore_value=[...] buffers put back as they were,
 * before each run and before that launch (each a buffer argument: its
 * `count` elements, else the rest of its tile_malloc block).  Other keywords
 * (prune_configs_by, pre_hook, post_hook, do_bench) are ignored with a
 * warning: every config is timed.  tile_diagnostics after a launch that tuned
 * lists each config's time and the choice; tile_kernel_config (or the
 * metadata's "config") says which config a specialisation was compiled with.
 * On the CPU interpreter nothing is timed: the first config that compiles
 * is kept.  tile_kernel_compile of a tuned kernel compiles the config chosen
 * for these arguments if there is one (in memory or on disk), else every
 * config (with the compiler's refill schedule: the other is compiled when
 * a launch tunes), and describes the first that compiles.  A source with
 * one config uses it without tuning. */
TILE_API tile_status tile_kernel_create(tile_context *ctx, const char *name, const char *source, size_t len,
                                        const tile_options *opts, tile_kernel **out);
TILE_API tile_status tile_kernel_create_file(tile_context *ctx, const char *path, const tile_options *opts,
                                             tile_kernel **out);
/* A kernel compiled ahead of time: a cubin (or PTX) written by tilec with
 * the metadata JSON tilec --metadata wrote beside it (docs/abi.md).  Its
 * one specialisation is the metadata's: launches are checked against its
 * parameters and promises (a ':16' pointer must be 16-byte aligned).
 * tile_kernel_load_file with a NULL metadata_path reads the image's path
 * with the extension replaced by .json.  AOT kernels cannot run on the CPU
 * interpreter.  libtile_rt, the runtime without the compiler, has these. */
TILE_API tile_status tile_kernel_load(tile_context *ctx, const void *image, size_t size, const char *metadata,
                                      tile_kernel **out);
TILE_API tile_status tile_kernel_load_file(tile_context *ctx, const char *image_path, const char *metadata_path,
                                           tile_kernel **out);
/* Kernel bundles (.tlk, docs/abi.md section 12): one file holding a
 * kernel's specialisations, each for several architectures (a cubin, its
 * PTX and their metadata) and for the CPU interpreter (its tile IR), for
 * every bundled @triton.autotune config.  tile_pack (libtile) compiles one:
 * `signatures` (1 to 64, Triton's AOT form) times `archs` (1 to 16,
 * "sm_80", "sm_90a", ...) times the configs -- opts->config's alone when
 * it is >= 0, else every config of the source's @triton.autotune (none if
 * it has none); *bundle and *size are borrowed like tile_compile's.
 * tile_kernel_load_bundle reads one (`name` is for messages), checking
 * every field (a corrupt file is TILE_ERROR_ARGUMENT naming the file and
 * the field).  A launch picks the most specialised bundled signature its
 * arguments satisfy (':16' and ':1' as a JIT kernel derives them; none is
 * an error listing what is bundled) and the image for the GPU present (a
 * cubin it runs, the newest; else PTX, which the driver compiles); with
 * several configs the first launch of each case tunes among them, as a JIT
 * kernel's autotuner does, and keeps the choice in the disk cache (keyed
 * by the bundle's checksum, the GPU and the case), so another process does
 * not tune again.  On the CPU interpreter the bundled tile IR runs (libtile
 * only: libtile_rt loads bundles and runs them on the GPU, and says so). */
TILE_API tile_status tile_pack(tile_context *ctx, const char *name, const char *source, size_t len,
                               const tile_options *opts, const char *const *signatures, int num_signatures,
                               const char *const *archs, int num_archs, const void **bundle, size_t *size);
TILE_API tile_status tile_kernel_load_bundle(tile_context *ctx, const char *name, const void *bundle, size_t size,
                                             tile_kernel **out);
TILE_API tile_status tile_kernel_load_bundle_file(tile_context *ctx, const char *path, tile_kernel **out);
TILE_API void tile_kernel_destroy(tile_kernel *k);   /* NULL is fine */

/* Compiles the specialisation for `args` without launching it (warms the
 * caches; loads it when there is a GPU, but needs none); the accessors
 * below then describe it.  args may be NULL when the kernel has a fixed
 * signature or annotated parameter types. */
TILE_API tile_status tile_kernel_compile(tile_kernel *k, const tile_arg *args, int num_args);
/* Of the specialisation compiled or launched last (borrowed: valid while
 * the kernel lives): */
TILE_API const char *tile_kernel_metadata(tile_kernel *k);  /* JSON (docs/abi.md); NULL before any */
/* The @triton.autotune config its constexprs came from (the tuner's choice,
 * or opts->config); -1 if none, or before any specialisation. */
TILE_API int tile_kernel_config(const tile_kernel *k);
TILE_API tile_status tile_kernel_image(tile_kernel *k, const void **data, size_t *size); /* the cubin, or PTX */
/* TILE_STAGE_TIR, _TGIR, _LLIR, _PTX, _METADATA: kept when compiled in
 * this process (a disk-cache hit keeps none but the PTX image); NULL if not. */
TILE_API const char *tile_kernel_text(tile_kernel *k, tile_stage stage);
/* A constexpr's value in that specialisation (also "num_warps",
 * "num_stages", and 1 for an argument specialised to 1), for grid
 * functions: Triton's meta['BLOCK_SIZE'].  Integers and bools only. */
TILE_API tile_status tile_kernel_constexpr(const tile_kernel *k, const char *name, long long *value);

/* Computes the grid from the specialisation's meta-parameters, as
 * Triton's grid = lambda meta: (triton.cdiv(n, meta['BLOCK_SIZE']),). */
typedef void (*tile_grid_fn)(const tile_kernel *k, const tile_arg *args, int num_args, unsigned grid[3], void *user);

/* Launches over grid[0] x grid[1] x grid[2] programs on `stream`.  The
 * arguments are checked against the kernel's parameters (count, kinds,
 * buffer dtypes, NULL buffers, ':16' and ':1' promises, integers that fit
 * their type) before anything runs, with a message naming the argument; an
 * empty grid launches nothing (after the checks).  A launch of a cached
 * specialisation allocates nothing.  On the GPU the launch is asynchronous:
 * a fault inside the kernel shows at the next synchronising call. */
TILE_API tile_status tile_launch(tile_kernel *k, const unsigned grid[3], tile_stream stream, const tile_arg *args,
                                 int num_args);
TILE_API tile_status tile_launch_grid(tile_kernel *k, tile_grid_fn grid, void *user, tile_stream stream,
                                      const tile_arg *args, int num_args);

#ifdef __cplusplus
}
#endif

#endif
