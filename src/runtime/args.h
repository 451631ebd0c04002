/* A launch's arguments: the specialisation key they give (Triton's rule:
 * types, ':16' for pointers and integers divisible by 16, ':1' for integers
 * equal to 1), the signature string of a key, and the check of arguments
 * against a compiled kernel's parameters, which also packs them as
 * cuLaunchKernel's kernelParams.  No allocation and no formatting unless
 * an argument is bad: this is the launch's hot path. */
#ifndef TILE_ARGS_H
#define TILE_ARGS_H

#include "device.h"
#include "metadata.h"
#include "tile/tile.h"

#include <stdint.h>

/* One argument's part of the key: kind, hint, dtype. */
enum {
  KEY_BUFFER = 1 << 14, KEY_INT = 2 << 14, KEY_FLOAT = 3 << 14, KEY_KIND = 3 << 14,
  KEY_DIV16 = 1 << 12, KEY_ONE = 2 << 12, KEY_HINT = 3 << 12,
  KEY_DTYPE = 0xff
};

/* The key of each argument into key[0..n).  Returns 0, or -1 with a message
 * naming the argument ("argument 2: unknown dtype 'fp31' ..."). */
int args_key(const tile_arg *args, int n, uint16_t *key, char *err, size_t errsize);
/* Every argument's struct_size is a tile_arg layout this library knows, the same for all (args_key checks
 * it first too); -1 with "argument I: struct_size is ..." in err otherwise. */
int args_layout(const tile_arg *args, int n, char *err, size_t errsize);
/* The signature a key stands for: "*fp32:16,*fp32,i32:1".  Returns 0, or -1
 * if it does not fit in `size`. */
int key_signature(const uint16_t *key, int n, char *out, size_t size);

/* Checks the arguments against m's parameters: the count, buffers for
 * pointers and numbers for scalars, buffer dtypes, NULL buffers, the ':16'
 * promises (a pointer 16-byte aligned, an integer divisible by 16), ':1'
 * arguments equal to 1, integers that fit their type.  With `slots`, also
 * packs each ABI parameter at its width into slots[i] (pointers as 64-bit
 * device addresses, i1 as a byte, fp16/bf16 as their bits) and points
 * params[i] at it.  Returns 0, or -1 with a message naming the argument:
 * "argument 3 ('n_elements'): ...". */
int args_check(const KernelMetadata *m, const tile_arg *args, int n, uint64_t *slots, void **params, char *err,
               size_t errsize);

/* The values of tensor map t for arguments that args_check accepted: the
 * base's address, dims and byte strides from the arguments, a dim below 1
 * as 1 (the compiler uses a map only in a loop that does not run then).
 * Returns 0, or -1 with a message naming the argument the tensor memory
 * accelerator cannot take: "argument 0 ('a_ptr'): address 0x... is not
 * 16-byte aligned; ...". */
int args_tensor_map(const MetaTensorMap *t, const tile_arg *args, TensorMapShape *out, char *err, size_t errsize);

/* The size of one element of dtype `dt` in memory (i1: a byte). */
size_t dtype_size(int dt);

#endif
