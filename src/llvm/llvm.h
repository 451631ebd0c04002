/* LLVM lowering and code generation (internal). */
#ifndef TILE_LLVM_H
#define TILE_LLVM_H

#include <stddef.h>
#include <stdio.h>

/* 1 if LLVM's NVPTX backend is linked in and registers; its description
 * (or LLVM's error) goes to `message`. */
int llvm_nvptx_available(char *message, size_t size);

#endif
