/* PTX to cubin with NVIDIA's ptxas (the CUDA toolkit's assembler). */
#ifndef TILE_PTXAS_H
#define TILE_PTXAS_H

#include <stddef.h>

/* What one ptxas run may take (docs/abi.md, section 7): past the time it is
 * killed with its process group; past the memory its allocations fail.
 * The caller maps TILE_PTXAS_TIMEOUT and TILE_PTXAS_MEMORY onto it. */
typedef struct PtxasLimits {
  int timeout_s;     /* wall-clock seconds; 0: no limit */
  size_t memory_mib; /* address space (RLIMIT_AS) in MiB; 0: no limit */
} PtxasLimits;

/* Finds ptxas: `override` (TILE_PTXAS_PATH, mapped by the caller) if given,
 * else the CUDA toolkit's (/usr/local/cuda/bin), else in `search_path` (the
 * caller's PATH; may be NULL).  Returns 0 with the path in `path`, or -1
 * with a message. */
int ptxas_locate(const char *override, const char *search_path, char *path, size_t size, char *err, size_t errsize);

/* Assembles `ptx` for `arch` ("sm_90a") into a malloc'd cubin under
 * `limits`; ptxas's report (-v: registers, shared memory, spills) goes to a
 * malloc'd *log.  The callee frees nothing of the caller's; the caller
 * frees *cubin and *log.  Returns 0, or -1 with a message (ptxas's own
 * errors included). */
int ptxas_assemble(const char *ptxas, const PtxasLimits *limits, const char *ptx, size_t len, const char *arch,
                   char **cubin, size_t *cubin_len, char **log, char *err, size_t errsize);

/* From a ptxas -v report: the registers a thread uses ("Used 16 registers")
 * and the bytes of spill stores ("12 bytes spill stores"); -1 where the
 * report does not say. */
int ptxas_registers(const char *log);
int ptxas_spill_stores(const char *log);

#endif
