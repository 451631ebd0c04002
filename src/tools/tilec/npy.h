/* Reading and writing NumPy .npy files: how `tilec run` and the tests hand
 * arrays to the CPU interpreter and take its results back.  Self-contained
 * (C11 and stdio only), no global state, never prints or aborts: every
 * failure returns -1 with a one-line message naming the file and the problem.
 *
 * What is read: format versions 1.0, 2.0 and 3.0; C-order arrays of the
 * dtypes below with '<', '|', '=' or no byte order ('>' is accepted only for
 * one-byte types, where order means nothing); rank 0 to 8; at most 2^40
 * elements.  Bytes after the data are ignored, as numpy does.  A Fortran-order
 * array is refused unless its bytes are the same as in C order (at most one
 * dimension above 1).
 *
 * What is written: exactly the bytes numpy.save writes (version 1.0, keys
 * sorted, room for the leading dimension to grow to 21 digits, data at a
 * multiple of 64 bytes), '|' byte order for one-byte types and '<' otherwise.
 *
 * bf16: numpy has no bfloat16 type code (ml_dtypes' bfloat16 saves as the
 * void type '<V2', which this reader refuses).  So an NPY_BF16 array is
 * written as '<u2', its raw bits, and such a file reads back as NPY_U16:
 * npy_read never returns NPY_BF16.  A caller that expects bf16 takes a u16
 * array as its bits; from Python, `np.save(f, x.view(np.uint16))` writes one
 * and `np.load(f).view(ml_dtypes.bfloat16)` reads ours.
 *
 * Hosts are little-endian (checked when npy.c compiles): data is kept in
 * file order, without swapping. */
#ifndef TILE_NPY_H
#define TILE_NPY_H

#include <stddef.h>
#include <stdint.h>

/* NPY_DTYPE(id, Triton short name, bytes, numpy kind letter), in the order of
 * lang/dtypes.def.  bf16's kind is 'u': it travels as uint16 bits; the fp8
 * types as uint8 bits (numpy has neither), so a file reads back as u16 / u8. */
#define NPY_DTYPES(X)           \
  X(NPY_BOOL, "i1", 1, 'b')     \
  X(NPY_I8, "i8", 1, 'i')       \
  X(NPY_I16, "i16", 2, 'i')     \
  X(NPY_I32, "i32", 4, 'i')     \
  X(NPY_I64, "i64", 8, 'i')     \
  X(NPY_U8, "u8", 1, 'u')       \
  X(NPY_U16, "u16", 2, 'u')     \
  X(NPY_U32, "u32", 4, 'u')     \
  X(NPY_U64, "u64", 8, 'u')     \
  X(NPY_F16, "fp16", 2, 'f')    \
  X(NPY_BF16, "bf16", 2, 'u')   \
  X(NPY_F32, "fp32", 4, 'f')    \
  X(NPY_F64, "fp64", 8, 'f')     \
  X(NPY_FP8E4NV, "fp8e4nv", 1, 'u') \
  X(NPY_FP8E5, "fp8e5", 1, 'u')       \
  X(NPY_FP8E4B15, "fp8e4b15", 1, 'u')

typedef enum {
#define NPY_ENUM(id, name, size, kind) id,
  NPY_DTYPES(NPY_ENUM)
#undef NPY_ENUM
  NPY_DTYPE_COUNT
} NpyDtype;

enum { NPY_MAX_RANK = 8 };
#define NPY_MAX_ELEMENTS ((int64_t)1 << 40)

typedef struct NpyArray {
  NpyDtype dtype;
  int rank;                     /* 0 for a scalar */
  int64_t shape[NPY_MAX_RANK];  /* first `rank` entries used */
  size_t elem_size;             /* bytes per element, npy_dtype_size(dtype) */
  size_t count;                 /* elements: the product of the shape, 1 for a scalar */
  void *data;                   /* malloc'd, C order, little-endian; owned, see npy_free */
} NpyArray;

/* Reads `path` into *out.  Returns 0, or -1 with *out zeroed and a message
 * ("x.npy: fortran_order arrays are not supported") in err (if errsz > 0). */
int npy_read(const char *path, NpyArray *out, char *err, size_t errsz);
/* The same from bytes in memory; `name` (may be NULL) prefixes messages.
 * The data is copied: `bytes` may be freed afterwards. */
int npy_read_memory(const void *bytes, size_t len, const char *name, NpyArray *out, char *err,
                    size_t errsz);
/* Writes `a` to `path` as numpy.save would.  On failure nothing is left at
 * `path` (a partly written file is removed). */
int npy_write(const char *path, const NpyArray *a, char *err, size_t errsz);
/* Makes *a a zero-filled array of that dtype and shape (NULL for rank 0). */
int npy_alloc(NpyArray *a, NpyDtype t, int rank, const int64_t *shape, char *err, size_t errsz);
/* Frees the data and zeroes *a; safe on a zeroed or already freed array. */
void npy_free(NpyArray *a);

const char *npy_dtype_name(NpyDtype t);                    /* "fp32"; "?" if out of range */
size_t npy_dtype_size(NpyDtype t);                         /* bytes; 0 if out of range */
int npy_dtype_from_name(const char *name, NpyDtype *out);  /* "fp32" -> 0; unknown -> -1 */

#endif
