/* Types of the tile language: element types (from lang/dtypes.def),
 * pointers to them, and tiles of static power-of-two shapes.  A scalar is a
 * tile of rank 0.  Promotion and broadcasting follow Triton's rules. */
#ifndef TILE_TYPES_H
#define TILE_TYPES_H

#include "arena.h"

#include <stdint.h>

typedef enum {
#define DTYPE(id, short_name, triton_name, bits, kind) DT_##id,
#include "dtypes.def"
#undef DTYPE
  DT_COUNT
} DType;

typedef enum { DK_BOOL, DK_UINT, DK_SINT, DK_FLOAT } DKind;

enum { MAX_RANK = 8, MAX_TILE_ELEMENTS = 1 << 20 };

typedef struct Type {
  DType elem;                /* element type; for a pointer, what it points to */
  int is_ptr;                /* elements are pointers to `elem` in global memory */
  int rank;                  /* 0 for a scalar */
  int64_t shape[MAX_RANK];
  int is_const;              /* pointers to constant data (a tl.const parameter's): the checker refuses stores
                                through them; not part of type_equal, the IR ignores it */
} Type;

const char *dtype_name(DType t);          /* "fp32" */
const char *dtype_triton_name(DType t);   /* "float32" */
int dtype_bits(DType t);
DKind dtype_kind(DType t);
/* Looks a name up in either spelling ("fp16", "float16"); -1 if unknown. */
int dtype_lookup(const char *name);
int dtype_is_float(DType t);
int dtype_is_int(DType t);                /* bool counts as an integer */
int dtype_is_signed(DType t);
/* float8e4nv, float8e5 or float8e4b15: stored as a byte, converted before any arithmetic */
int dtype_is_fp8(DType t);
/* float8e4nv or float8e5: the fp8 types tensor cores (wgmma) and sm_90's cvt take */
int dtype_is_mma_fp8(DType t);

Type *type_scalar(Arena *a, DType elem);
Type *type_pointer(Arena *a, DType elem);
Type *type_tile(Arena *a, const Type *elem_of, int rank, const int64_t *shape);
Type *type_with_elem(Arena *a, const Type *t, DType elem, int is_ptr);
int type_equal(const Type *x, const Type *y);
int type_same_shape(const Type *x, const Type *y);
int64_t type_numel(const Type *t);
/* "i32", "*fp32", "fp16[64,32]", "*fp32[1024]" */
const char *type_str(Arena *a, const Type *t);
const char *shape_str(Arena *a, const Type *t);   /* "(64, 32)" */

/* Elements in a shape; INT64_MAX when the product overflows. */
int64_t shape_numel(int rank, const int64_t *shape);
/* numpy-style broadcast of two shapes; 0 if they do not broadcast. */
int broadcast_shapes(const Type *x, const Type *y, int *rank, int64_t *shape);
/* Triton's computation type for an arithmetic op.  `x_weak`/`y_weak` mark a
 * Python literal, which does not take part unless it is of a higher kind. */
DType promote(DType x, int x_weak, DType y, int y_weak, int div_or_mod);
/* The type a Python int literal takes when it becomes a tensor. */
DType literal_int_type(int64_t v);

#endif
