/* PTX to cubin with NVIDIA's ptxas (the CUDA toolkit's assembler). */
#ifndef TILE_PTXAS_H
#define TILE_PTXAS_H

#include <stddef.h>

/* Finds ptxas: `override` (TILE_PTXAS_PATH, mapped by the caller) if given,
 * else the CUDA toolkit's (/usr/local/cuda/bin), else in `search_path` (the
 * caller's PATH; may be NULL).  Returns 0 with the path in `path`, or -1
 * with a message. */
int ptxas_locate(const char *override, const char *search_path, char *path, size_t size, char *err, size_t errsize);

/* Assembles `ptx` for `arch` ("sm_90a") into a malloc'd cubin; ptxas's
 * report (-v: registers, shared memory, spills) goes to a malloc'd *log.
 * The callee frees nothing of the caller's; the caller frees *cubin and
 * *log.  Returns 0, or -1 with a message (ptxas's own errors included). */
int ptxas_assemble(const char *ptxas, const char *ptx, size_t len, const char *arch, char **cubin, size_t *cubin_len,
                   char **log, char *err, size_t errsize);

#endif
