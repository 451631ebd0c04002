/* The targets (arch.def) and what each offers. */
#ifndef TILE_ARCH_H
#define TILE_ARCH_H

#include <stdint.h>

typedef struct Arch {
  const char *name;        /* "sm_90a" */
  int cc;                  /* 90 */
  int wgmma, tma, sim;     /* arch.def's feature columns */
  int64_t smem;            /* shared memory of an SM, in bytes */
  int64_t smem_reserved;   /* what the system keeps of it per resident program */
  int64_t registers;       /* 32-bit registers of an SM */
  int64_t threads;         /* resident threads an SM holds */
  int64_t programs;        /* resident programs an SM holds */
  int sms;                 /* SMs of the reference GPU */
} Arch;

/* A program's warps: a power of two up to 32 (1024 threads, every target's
 * most), 4 and 3 pipelining stages unless an option or config says
 * otherwise.  Each place a count enters (options, a config, IR text)
 * checks it with arch_valid_warps. */
enum { ARCH_MAX_WARPS = 32, ARCH_DEFAULT_WARPS = 4, ARCH_DEFAULT_STAGES = 3, ARCH_MAX_STAGES = 16 };
/* The hidden CUtensorMap parameters a kernel takes at most (docs/abi.md,
 * section 2): the compiler makes no more, the runtime reads no more. */
enum { ARCH_MAX_TENSOR_MAPS = 8 };
/* The largest extent of a tensor map's dimension, and the largest box side (the hardware's 256).
 * TMA's coordinates are 32-bit signed; the extent stays a box below 2^31-1 so that a box starting at
 * the extent (the compiler's clamp of an out-of-range origin, tgir/tma_origin.c) ends without
 * overflowing. */
#define ARCH_MAX_TENSOR_MAP_BOX 256
#define ARCH_MAX_TENSOR_MAP_DIM ((1LL << 31) - 1 - ARCH_MAX_TENSOR_MAP_BOX)
/* A map's extent or stride multiplies at most this many integer
 * parameters (tutorial 06's Z * H * N_CTX): the compiler's field and the
 * runtime's reader both hold that many. */
enum { ARCH_MAX_MAP_FACTORS = 3 };
static inline int arch_valid_warps(int n) { return n >= 1 && n <= ARCH_MAX_WARPS && (n & (n - 1)) == 0; }

/* A register cap (triton.Config's maxnreg, tile_options.maxnreg: PTX's
 * .maxnreg) that ptxas honours as given on every target: below 24 it raises
 * the cap to 24 with a warning, above 255 (a thread's most) it ignores it. */
enum { ARCH_FEWEST_MAXNREG = 24, ARCH_MOST_MAXNREG = 255 };
static inline int arch_valid_maxnreg(long long n) { return n >= ARCH_FEWEST_MAXNREG && n <= ARCH_MOST_MAXNREG; }
/* The most registers a thread of a program of `threads` threads may have: 255, or a multiprocessor's
 * 65536 shared among them (a multiple of 8, the allocation's unit). */
static inline int arch_thread_registers(int threads) {
  int n = 65536 / (threads > 0 ? threads : 1);
  return n > ARCH_MOST_MAXNREG ? ARCH_MOST_MAXNREG : n - n % 8;
}

/* The target named `name`; NULL for an unknown one. */
const Arch *arch_find(const char *name);
/* The first target of compute capability cc (sm_90 for 90); NULL if none. */
const Arch *arch_of_cc(int cc);
/* "sm_80, sm_86, ..., sim90": every name (with `sims`, the simulator's
 * too), for messages. */
const char *arch_names(int sims);

/* The most shared memory one program may take on `a`. */
int64_t arch_smem_per_program(const Arch *a);
/* Programs an SM of `a` holds when each takes `smem` bytes of shared memory
 * and `regs` registers a thread (allocated 8 at a time), with `threads` threads. */
int64_t arch_programs_per_sm(const Arch *a, int64_t smem, int64_t regs, int64_t threads);

/* The target whose cubin a GPU of compute capability major.minor runs best:
 * the newest row of its major version not above it (the architecture-
 * specific one, sm_90a, only for its exact GPU).  A GPU newer than every
 * row gets the newest portable target with *prefer_ptx set (the driver
 * compiles its PTX forward).  NULL before the oldest row. */
const char *arch_for_gpu(int major, int minor, int *prefer_ptx);

#endif
