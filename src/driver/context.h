/* The API's context (struct tile_context) and the calls every part of the
 * library makes on it: messages, notes.  Shared by the compiler and the
 * runtime (libtile_rt has this half of the driver and no compiler). */
#ifndef TILE_CONTEXT_H
#define TILE_CONTEXT_H

#include "../backend/ptxas.h"
#include "../support/arena.h"
#include "tile/tile.h"

#include <stdint.h>

/* A block of device memory (host memory on the CPU interpreter). */
typedef struct Allocation {
  uintptr_t base;
  size_t bytes;
} Allocation;

struct tile_context {
  Arena results;          /* text handed to the caller; reset at each call; no guard: NULL when out of memory */
  const char *error;      /* borrowed by tile_error() */
  const char *diagnostics;
  char error_fallback[512];       /* the error, cut short, when the results arena is out of memory */
  char diagnostics_fallback[512]; /* the same for the diagnostics */
  size_t memory_cap;      /* bytes one compilation may use */
  /* the environment, read once by tile_context_create (malloc'd; NULL when unset) */
  int on_cpu;             /* kernels run on the CPU interpreter (TILE_INTERPRET=1, tile_context_use_cpu) */
  char *cache_dir;        /* TILE_CACHE_DIR, else $HOME/.cache/tile; NULL: no disk cache */
  char *ptxas_path;       /* TILE_PTXAS_PATH */
  PtxasLimits ptxas_limits; /* TILE_PTXAS_TIMEOUT, TILE_PTXAS_MEMORY */
  char ptxas_limits_error[160]; /* why one of them is unusable, reported when ptxas would run ("": none) */
  char *cuda_library;     /* TILE_CUDA_LIBRARY */
  char *search_path;      /* PATH, the last place ptxas is looked for */
  char *libdevice_path;   /* TILE_LIBDEVICE_PATH, else $CUDA_HOME (else /usr/local/cuda)/nvvm/libdevice/libdevice.10.bc */
  int compile_threads;    /* TILE_COMPILE_THREADS: 1 to PARALLEL_MAX_THREADS; 0: one per core (kernel.c) */
  /* the GPU side (src/runtime) */
  struct Device *device;  /* opened on the first call that needs it; NULL before */
  char device_error[600]; /* why opening failed ("": not tried since the last tile_device_open) */
  char trapping_checks[600]; /* the last launched kernel with compiler-made checks: "'name': file:line: ..." */
  int device_ordinal;
  Allocation *allocations;/* live tile_malloc blocks, by address */
  int num_allocations, cap_allocations;
  int live_streams, live_events;
  struct HostToken *host_tokens; /* the interpreter's streams and events (memory.c), freed with the context */
  struct tile_kernel *kernels; /* owned: destroyed with the context */
};

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
