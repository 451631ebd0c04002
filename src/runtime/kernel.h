/* Kernels as the runtime holds them: a tile_kernel owns its
 * specialisations (Spec), each with its metadata, its image (cubin or PTX)
 * and, once loaded, its CUDA module and function.  A JIT kernel has a
 * compiler (a table of functions the compiler half of libtile provides:
 * libtile_rt, which has no compiler, only makes AOT kernels); the runtime
 * never calls the compiler but through it.  No cuda.h here. */
#ifndef TILE_KERNEL_H
#define TILE_KERNEL_H

#include "context.h"
#include "metadata.h"

#include <stdint.h>

typedef struct Spec Spec;

/* What a specialisation is compiled with besides its arguments' types: an
 * @triton.autotune config (-1: the kernel's options), a refill schedule
 * (TILE_REFILL_AUTO: the options') and whether TMA may bring the loads,
 * which the autotuner also varies; and a register cap (0: the options'),
 * which a launch of one wave asks for (kernel.c, one_wave). */
typedef struct Variant {
  int config, refill, tma;   /* tma: tile_options.tma (TILE_TMA_AUTO: the options') */
  int maxnreg;
} Variant;

/* The kernel's options as they are. */
static const Variant AS_GIVEN = {-1, TILE_REFILL_AUTO, TILE_TMA_AUTO, 0};

typedef struct KernelCompiler {
  /* Compiles specialisation s (s->signature; NULL: the source's annotations)
   * for s->on_cpu or the GPU: sets s->metadata and, for the GPU, s->image,
   * s->image_size, s->image_is_ptx and the stages' text; for the CPU,
   * s->program.  Allocates in s->arena.  A status and message in ctx. */
  tile_status (*build)(tile_kernel *k, Spec *s);
  /* Builds specs[0..count) for the GPU as build does each, on up to
   * `threads` threads at once, and puts each one's status in status[i];
   * the context's messages end as if they had been built one by one, in
   * order.  NULL: the compiler builds one at a time only. */
  void (*build_many)(tile_kernel *k, Spec **specs, int count, int threads, tile_status *status);
  /* Runs s->program on the interpreter; bytes[i]: argument i's buffer size. */
  tile_status (*run_cpu)(tile_kernel *k, Spec *s, const unsigned grid[3], const tile_arg *args, int n,
                         const size_t *bytes);
  void (*release_spec)(tile_kernel *k, Spec *s); /* frees s->program */
  void (*release)(tile_kernel *k); /* frees k->source and k->tuning */
  /* The autotuner's choices on disk (the cache directory), keyed by the
   * kernel's source and options and by `what`: the GPU, the signature and
   * the key's values.  load_choice returns the variant recorded (config -1:
   * none), with a note ("": none) when an entry was there but not sound:
   * the caller adds it to ctx's notes once tuning's own calls, which start
   * them afresh, are done; save_choice records one with its timings (JSON
   * text), noting in ctx when the cache cannot be written. */
  Variant (*load_choice)(tile_kernel *k, const char *what, char *note, size_t notesize);
  void (*save_choice)(tile_kernel *k, const char *what, Variant v, const char *timings);
  /* autotune's early_config_prune on a launch's arguments: kept[i] set for
   * each config i (the decorator's order) it keeps.  A status and message in
   * ctx when the function fails (reads a buffer, returns no configs). */
  tile_status (*prune)(tile_kernel *k, const tile_arg *args, int n, unsigned char *kept);
  /* @triton.heuristics that read a launch's arguments (k->heuristics_at_launch):
   * *out is the case of these arguments' values, a number that two launches
   * share when the heuristics give them the same values for every config.
   * A status and message in ctx when a heuristic fails (reads a buffer). */
  tile_status (*heuristics)(tile_kernel *k, const tile_arg *args, int n, int *out);
} KernelCompiler;

/* How a JIT kernel with several @triton.autotune configs is tuned at launch
 * (autotune.c).  The compiler makes it at creation and frees it. */
typedef struct KernelTuning {
  const char *kernel;         /* the kernel's name, for messages */
  int num_configs;            /* > 1 */
  int num_keys;               /* the key's run-time parameters (constexpr ones are fixed per kernel) */
  const int *key_args;        /* their positions among a launch's arguments */
  const char *const *key_names;
  int num_resets;             /* reset_to_zero: buffers zeroed before each timed run, and before the launch */
  const int *reset_args;
  const char *const *reset_names;
  int num_restores;           /* restore_value: buffers put back as they were before each timed run, and after */
  const int *restore_args;
  const char *const *restore_names;
  double warmup_ms, rep_ms;   /* time spent warming up and measuring each config (Triton's do_bench) */
  int tune_refill;            /* the options leave refill to the compiler: each config's other schedule is timed too */
  int tune_tma;               /* the options leave tma to the compiler: each variant with TMA copies is timed without */
  int prunes;                 /* the kernel has an early_config_prune: each tuning asks compiler->prune */
} KernelTuning;

typedef struct TuneChoice TuneChoice;

struct Spec {
  Spec *next;                 /* the kernel's list, most recently used first */
  int on_cpu;                 /* compiled for the interpreter */
  Variant variant;            /* the config and refill it was compiled with */
  int heuristics;             /* the heuristics' case it was compiled for (compiler->heuristics); -1: none */
  int one_wave_failed;        /* its variant for a launch of one wave did not compile: launched as it is */
  int key_len;                /* arguments the key covers */
  uint16_t *key;              /* args_key of the arguments it was made for */
  Arena arena;                /* everything below */
  const char *signature;      /* what it was compiled for; NULL: annotations */
  const char *metadata;       /* JSON (docs/abi.md) */
  KernelMetadata meta;            /* the metadata, read */
  const unsigned char *image; /* cubin, or NUL-terminated PTX */
  size_t image_size;
  int image_is_ptx;
  const char *text[TILE_STAGE_METADATA + 1]; /* tir, tgir, llir, ptx when compiled here */
  void *module, *function;    /* CUmodule, CUfunction once loaded */
  void *program;              /* the compiler's, for the interpreter */
};

struct tile_kernel {
  unsigned magic;             /* KERNEL_MAGIC (context.h); 0 once destroyed */
  tile_context *ctx;
  tile_kernel *prev, *next;   /* the context's kernels */
  const KernelCompiler *compiler; /* NULL: loaded ahead of time */
  void *source;               /* the compiler's: the source and options */
  int fixed_signature;        /* one specialisation whatever the arguments' types */
  const char *declared_name;  /* the compiler's: the kernel as declared, its run-time parameters' names */
  const char *declared_params; /* ("x_ptr, n"), so a launch with another count is an argument error; NULL: unknown */
  int num_declared_params;
  int heuristics_at_launch;   /* its @triton.heuristics read arguments: each call asks compiler->heuristics */
  int heuristics;             /* the case of the call under way; -1: none */
  Spec *specs;                /* most recently used first */
  Spec *current;              /* compiled or launched last: what the accessors describe */
  const KernelTuning *tuning; /* the compiler's; NULL: launches compile the kernel's options as they are */
  TuneChoice *choices;        /* the autotuner's, most recently used first */
};

enum { NO_KEY = -1 };

static inline int kernel_valid(const tile_kernel *k) { return k && k->magic == KERNEL_MAGIC; }

/* A new kernel owned by ctx; NULL when out of memory. */
tile_kernel *kernel_new(tile_context *ctx, const KernelCompiler *compiler, void *source);
/* Destroys every kernel of ctx (tile_context_destroy). */
void kernel_destroy_all(tile_context *ctx);

/* The specialisation key of a launch's arguments into key[0..n) with
 * *key_len = n; NO_KEY for a kernel with a fixed signature (or no args). */
tile_status kernel_key(tile_kernel *k, const tile_arg *args, int n, uint16_t *key, int *key_len);
/* The specialisation for `key` compiled with variant v, moved to the front
 * of the list; compiled, and loaded when a GPU is there, if new.  An AOT
 * kernel's one specialisation whatever the key. */
/* Copies an image (NULL: none; a NUL after it, for PTX) and its metadata
 * into s's arena; -1 when out of memory. */
int spec_copy_in(Spec *s, const void *image, size_t size, int is_ptx, const char *metadata, size_t metadata_len);
tile_status kernel_specialize(tile_kernel *k, const uint16_t *key, int key_len, Variant v, Spec **out);
/* Compiles, several at once, the specialisations for `key` of variants
 * v[0..count) that k lacks, so that kernel_specialize then finds them;
 * only on the GPU, with a compiler that can, and when two or more are
 * missing and there are threads for them (TILE_COMPILE_THREADS).  A variant
 * that fails is left out quietly: kernel_specialize compiles it again and
 * reports why. */
void kernel_prebuild(tile_kernel *k, const uint16_t *key, int key_len, const Variant *v, int count);
/* Launches s (it becomes k->current): checks and packs the arguments,
 * computes the grid (grid_fn's, else `given`), then the GPU or the
 * interpreter.  A user's launch (`users`; not the autotuner's timing) of
 * one wave may take a variant with more registers (kernel.c, one_wave). */
tile_status kernel_launch_spec(tile_kernel *k, Spec *s, const unsigned *given, tile_grid_fn grid_fn, void *user,
                               tile_stream stream, const tile_arg *args, int n, int users);

/* A launch of a kernel with k->tuning: the specialisation of the config
 * chosen for these arguments (their key and the tuning key's values); when
 * none is chosen yet, every config is compiled, launched and timed first
 * (autotune.c). */
tile_status autotune_select(tile_kernel *k, const uint16_t *key, int key_len, const tile_arg *args, int n,
                            const unsigned *given, tile_grid_fn grid_fn, void *user, tile_stream stream, Spec **out);
/* tile_kernel_compile of such a kernel: the chosen config's specialisation;
 * before any choice, every config compiled and the first that compiles. */
tile_status autotune_compile(tile_kernel *k, const uint16_t *key, int key_len, const tile_arg *args, int n,
                             Spec **out);
/* Writes the choice v for case `what` (with each variant's timings, JSON)
 * to the disk cache as entry `key`: {"config", "refill", "tma",
 * "timings_ms", "case"}, with the dependency list of the files the variants
 * were compiled from (the compiler's bytes; len 0: none); a note in k's
 * context if it cannot. */
void autotune_write_choice(tile_kernel *k, const char *key, const char *what, Variant v, const char *timings,
                           const char *deps, size_t deps_len);
/* Whether an entry's dependency list still holds, asked of the compiler
 * that wrote it (the runtime cannot read the list): 1, 0 when a file has
 * changed since, -1 with why when the list does not read. */
typedef int ChoiceDepsCheck(const char *deps, size_t len, char *why, size_t whysize);
/* The choice entry `key` wrote, if it is sound, its config is below
 * num_configs and check finds its dependency list holds (an entry with one
 * and no check does not); else AS_GIVEN (the kernel is tuned again), with
 * a note when its list does not read (load_choice's). */
Variant autotune_read_choice(tile_kernel *k, const char *key, int num_configs, ChoiceDepsCheck *check, char *note,
                             size_t notesize);
/* Frees k->choices. */
void autotune_release(tile_kernel *k);

#endif
