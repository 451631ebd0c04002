/* Kernels as the runtime holds them: a tile_kernel owns its
 * specialisations (Spec), each with its metadata, its image (cubin or PTX)
 * and, once loaded, its CUDA module and function.  A JIT kernel has a
 * compiler (a table of functions the compiler half of libtile provides:
 * libtile_rt, which has no compiler, only makes AOT kernels); the runtime
 * never calls the compiler but through it.  No cuda.h here. */
#ifndef TILE_KERNEL_H
#define TILE_KERNEL_H

#include "../driver/context.h"
#include "metadata.h"

#include <stdint.h>

typedef struct Spec Spec;

typedef struct KernelCompiler {
  /* Compiles specialisation s (s->signature; NULL: the source's annotations)
   * for s->on_cpu or the GPU: sets s->metadata and, for the GPU, s->image,
   * s->image_size, s->image_is_ptx and the stages' text; for the CPU,
   * s->program.  Allocates in s->arena.  A status and message in ctx. */
  tile_status (*build)(tile_kernel *k, Spec *s);
  /* Runs s->program on the interpreter; bytes[i]: argument i's buffer size. */
  tile_status (*run_cpu)(tile_kernel *k, Spec *s, const unsigned grid[3], const tile_arg *args, int n,
                         const size_t *bytes);
  void (*release_spec)(Spec *s);   /* frees s->program */
  void (*release)(tile_kernel *k); /* frees k->source */
} KernelCompiler;

struct Spec {
  Spec *next;                 /* the kernel's list, most recently used first */
  int on_cpu;                 /* compiled for the interpreter */
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
  tile_context *ctx;
  tile_kernel *prev, *next;   /* the context's kernels */
  const KernelCompiler *compiler; /* NULL: loaded ahead of time */
  void *source;               /* the compiler's: the source and options */
  int fixed_signature;        /* one specialisation whatever the arguments' types */
  Spec *specs;                /* most recently used first */
  Spec *current;              /* compiled or launched last: what the accessors describe */
};

/* A new kernel owned by ctx; NULL when out of memory. */
tile_kernel *kernel_new(tile_context *ctx, const KernelCompiler *compiler, void *source);
/* Destroys every kernel of ctx (tile_context_destroy). */
void kernel_destroy_all(tile_context *ctx);

#endif
