/* What the example programs share: the command line, choosing the GPU or
 * the CPU interpreter, device buffers, a seeded random generator, fp16
 * bits, timing with events, and the verdict.  Examples are user programs:
 * they see only include/tile/tile.h.
 *
 * Every example takes:
 *   --quick         CI-sized inputs (the interpreter is slow); default: the documents' sizes
 *   --cpu           run on the CPU interpreter even when there is a GPU
 *   --require-gpu   no GPU is a skip (exit 77), not a fall-back to the interpreter
 *   --seed N        the random generator's seed (default: from the clock; printed)
 *   --config N|all|tune  the @autotune config to compile (matmul), every one,
 *                   or (the default) the one the autotuner chooses at launch
 *   [KERNEL.tl]     the kernel source (default: the one in the source tree)
 * Exit status: 0 all results match, 1 a mismatch or a failed call, 2 bad
 * usage, 77 skipped (--require-gpu without a GPU). */
#ifndef TILE_EXAMPLE_H
#define TILE_EXAMPLE_H

#include "tile/tile.h"

#include <stddef.h>
#include <stdint.h>

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "." /* the source tree, for default kernel paths; the build gives it */
#endif

#define EXAMPLE_SKIP 77
#define EXAMPLE_ALL_CONFIGS (-1)
#define EXAMPLE_AUTOTUNE (-2)

typedef struct Example {
  tile_context *ctx;
  const char *name;        /* the program's name, in messages */
  const char *kernel_path; /* the .tl to compile */
  int quick;               /* CI-sized inputs */
  int config;              /* --config: an index, EXAMPLE_ALL_CONFIGS or EXAMPLE_AUTOTUNE */
  int on_cpu;              /* kernels run on the interpreter */
  uint64_t rng;            /* the generator's state */
  int failures;            /* checks that failed so far */
  int quiet;               /* example_open does not say where kernels run */
} Example;

/* Parses the command line, creates the context and picks the GPU or the
 * interpreter, saying which.  Exits on bad usage (2), a skip (77) or a
 * failed call (1). */
void example_start(Example *ex, int argc, char **argv, const char *default_kernel);
/* Creates ex->ctx and picks the GPU or the interpreter (cpu: always the
 * interpreter; require_gpu: no GPU exits 77), saying which. */
void example_open(Example *ex, const char *name, int cpu, int require_gpu, uint64_t seed);
/* Prints the verdict, destroys the context; the exit status for main. */
int example_finish(Example *ex);

/* A failed call ends the program with the call, the status and tile_error(). */
void example_check(Example *ex, tile_status s, const char *call);
#define EXAMPLE_TRY(ex, call) example_check((ex), (call), #call)

/* Device memory (host memory on the interpreter) holding `bytes`. */
void *example_alloc(Example *ex, size_t bytes);
void example_upload(Example *ex, void *device, const void *host, size_t bytes);
void example_download(Example *ex, void *host, const void *device, size_t bytes);
/* Fills with 0xFF bytes: NaN for floats, so an element never written shows. */
void example_poison(Example *ex, void *device, size_t bytes);

/* Compiles `kernel_path` with these options (borrowed for the call). */
tile_kernel *example_kernel(Example *ex, const tile_options *opts);
/* A constexpr of the kernel's last specialisation; ends the program if absent. */
long long example_constexpr(const tile_kernel *k, const char *name);
/* Its metadata's "refill" (how its pipelined loop refills its buffers: "early", "late"), else "-". */
void example_refill(tile_kernel *k, char *out, size_t size);
/* ", TMA" when its metadata lists tensor maps (its loads come by the tensor memory accelerator), else "". */
const char *example_tma(tile_kernel *k);
long long example_cdiv(long long a, long long b);

/* Mean milliseconds of `reps` runs of `launch(user)`, timed with events
 * (1 run on the interpreter, which is slow). */
double example_time(Example *ex, void (*launch)(Example *, void *), void *user, int reps);

/* Uniform in [0, 1), from splitmix64. */
double example_uniform(Example *ex);
/* Standard normal (Box-Muller), as torch.randn. */
double example_normal(Example *ex);
/* An fp16 bit pattern with magnitude in [2^-5, 2) and random sign. */
uint16_t example_random_half(Example *ex);
/* The value of fp16 bits, decoded independently of the library. */
double example_half_value(uint16_t h);

/* The larger error of the two; NaN (an element never written) is the worst. */
double example_worse(double error, double diff);

/* Records one result line: `what` with its max error, time and verdict. */
void example_result(Example *ex, const char *what, double max_error, long mismatches, double ms);

#endif
