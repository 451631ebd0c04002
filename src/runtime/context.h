/* The API's context (struct tile_context) and the calls every part of the
 * library makes on it: messages, notes.  Shared by the compiler and the
 * runtime (libtile_rt has this half of the driver and no compiler). */
#ifndef TILE_CONTEXT_H
#define TILE_CONTEXT_H

#include "../support/arch.h"
#include "../support/arena.h"
#include "tile/tile.h"

#include <stdint.h>

/* A block of device memory (host memory on the CPU interpreter). */
typedef struct Allocation {
  uintptr_t base;
  size_t bytes;
} Allocation;

/* The first word of every context and kernel while it lives: a pointer that
 * is not one (a foreign handle, or one destroyed and not yet reused) is
 * refused where the check is a load (docs/abi.md: the caller's contract). */
enum { CONTEXT_MAGIC = 0x54494c43, KERNEL_MAGIC = 0x54494c4b };

struct tile_context {
  unsigned magic;         /* CONTEXT_MAGIC; 0 once destroyed */
  Arena results;          /* text handed to the caller; reset at each call; no guard: NULL when out of memory */
  const char *error;      /* borrowed by tile_error() */
  const char *diagnostics;
  char error_fallback[512];       /* the error, cut short, when the results arena is out of memory */
  char diagnostics_fallback[512]; /* the same for the diagnostics */
  size_t memory_cap;      /* bytes one compilation may use */
  /* the environment, read once by tile_context_create (malloc'd; NULL when unset) */
  int on_cpu;             /* kernels run on the CPU interpreter (TILE_INTERPRET=1/true/yes/on, tile_context_use_cpu) */
  char *cache_dir;        /* TILE_CACHE_DIR, else $HOME/.cache/tile; NULL: no disk cache */
  char *ptxas_path;       /* TILE_PTXAS_PATH */
  int ptxas_timeout_s;      /* TILE_PTXAS_TIMEOUT: wall-clock seconds a ptxas run may take (0: no limit) */
  size_t ptxas_memory_mib;  /* TILE_PTXAS_MEMORY: its address space in MiB (0: no limit) */
  char *cuda_library;     /* TILE_CUDA_LIBRARY */
  char *search_path;      /* PATH, the last place ptxas is looked for */
  char *libdevice_path;   /* TILE_LIBDEVICE_PATH, else $CUDA_HOME (else /usr/local/cuda)/nvvm/libdevice/libdevice.10.bc */
  int compile_threads;    /* TILE_COMPILE_THREADS: 1 to PARALLEL_MAX_THREADS; 0: one per core (kernel.c) */
  double interp_time_limit; /* TILE_INTERPRET_TIMEOUT: seconds an interpreted launch may run; 0: no limit */
  int print_autotuning;   /* TILE_PRINT_AUTOTUNING: the autotuner writes each config's time and its choice to stderr */
  char environment_error[256]; /* the first variable with a value it cannot use ("": none); fails tile_context_create */
  /* the GPU side (src/runtime) */
  struct Device *device;  /* opened on the first call that needs it; NULL before */
  char device_error[600]; /* why opening failed ("": not tried since the last tile_device_open) */
  char trapping_checks[600]; /* the last launched kernel with compiler-made checks: "'name': file:line: ..." */
  int device_ordinal;
  Allocation *allocations;/* live tile_malloc blocks, by address */
  int num_allocations, cap_allocations;
  int live_streams, live_events;
  struct HostToken *host_tokens; /* the streams and events it made (memory.c), forgotten with the context */
  struct tile_kernel *kernels; /* owned: destroyed with the context */
};

static inline int context_valid(const tile_context *ctx) { return ctx && ctx->magic == CONTEXT_MAGIC; }

/* The largest struct_size of tile_options or tile_arg taken for a newer tile.h's (docs/abi.md, section
 * 10); a larger one is no layout at all (garbage, or a struct from before struct_size). */
enum { STRUCT_SIZE_PLAUSIBLE = 4096 };

/* tile_options.refill's values, for messages. */
#define REFILL_VALUES "0 (TILE_REFILL_AUTO), 1 (TILE_REFILL_EARLY) or 2 (TILE_REFILL_LATE)"
/* tile_options.tma's. */
#define TMA_VALUES "TILE_TMA_AUTO (0) or TILE_TMA_OFF (1)"
/* tile_options.fp_fusion's. */
#define FP_FUSION_VALUES "TILE_FP_FUSION_ON (0) or TILE_FP_FUSION_OFF (1)"

/* tile_options' integer fields that have a range: field, lowest, highest,
 * what a value other than 0 must also be (a predicate of support/arch.h, or
 * option_any), and the rule as messages say it. */
static inline int option_any(long long n) { return (void)n, 1; }
#define OPTION_RANGES(X)                                                                                   \
  X(num_warps, 0, ARCH_MAX_WARPS, arch_valid_warps, "0 (the default) or a power of two from 1 to 32")     \
  X(num_stages, 0, ARCH_MAX_STAGES, option_any, "from 0 (the default) to 16")                                          \
  X(config, -1, (1 << 20) - 1, option_any, "-1 (none) or an index from 0 to 1048575")                     \
  X(refill, TILE_REFILL_AUTO, TILE_REFILL_LATE, option_any, REFILL_VALUES)                                \
  X(tma, TILE_TMA_AUTO, TILE_TMA_OFF, option_any, TMA_VALUES)                                             \
  X(maxnreg, 0, ARCH_MOST_MAXNREG, arch_valid_maxnreg, "0 (no cap, or the config's) or from 24 to 255")     \
  X(fp_fusion, TILE_FP_FUSION_ON, TILE_FP_FUSION_OFF, option_any, FP_FUSION_VALUES)

/* The one check of tile_options (NULL: the defaults) that every call taking
 * them makes first, and tile_options_check: the ranges above, num_defines
 * and the defines.  TILE_OK, or TILE_ERROR_ARGUMENT with "CALL: options:
 * num_stages must be ..." (call "": no prefix). */
tile_status context_check_options(tile_context *ctx, const tile_options *o, const char *call);
/* What every call taking options does first: *full is `o` (NULL: the defaults) in this library's layout,
 * read up to o->struct_size (a size it does not know is TILE_ERROR_ARGUMENT, "CALL: options: struct_size
 * is ..."), the fields after it at their defaults; then context_check_options on it.  The call uses *full
 * from then on, never `o`. */
tile_status context_read_options(tile_context *ctx, const tile_options *o, const char *call, tile_options *full);

/* Starts an API call: clears the last call's message (cheap when there is none). */
void context_begin(tile_context *ctx);
tile_status context_fail(tile_context *ctx, tile_status s, const char *message);
/* A call that succeeded after a step of it failed (an autotune config): tile_error says "" again. */
void context_clear_error(tile_context *ctx);
tile_status context_failf(tile_context *ctx, tile_status s, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends a line to tile_diagnostics (cache notes, ptxas warnings); dropped when out of memory. */
void context_note(tile_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Reads a whole file (at most max_bytes, a power of two) into a malloc'd,
 * NUL-terminated buffer; a status and message in ctx on failure. */
tile_status context_read_file(tile_context *ctx, const char *path, size_t max_bytes, char **text, size_t *len);

#endif
