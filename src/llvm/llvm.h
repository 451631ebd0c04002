/* LLVM lowering and code generation (internal). */
#ifndef TILE_LLVM_H
#define TILE_LLVM_H

#include <llvm-c/Types.h>
#include <stddef.h>
#include <stdlib.h>

#define LLVM_NVPTX_TRIPLE "nvptx64-nvidia-cuda"

/* 1 if LLVM's NVPTX backend is linked in and registers; its description
 * (or LLVM's error) goes to `message`. */
int llvm_nvptx_available(char *message, size_t size);

struct GpuTarget;

/* Verifies `module`, optimises it (LLVM's O1 pipeline, then with
 * strength_reduce loop strength reduction) and emits PTX for t->arch ("sm_90")
 * into a malloc'd, NUL-terminated *ptx (the caller frees it); the time of
 * each half is added to t->times when it is set.  Returns 0, or -1 with a
 * message in err. */
int llvm_emit_ptx(LLVMModuleRef module, const struct GpuTarget *t, int strength_reduce, int ptx_isa, char **ptx,
                  size_t *len, char *err, size_t size);

#endif
