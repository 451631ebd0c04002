/* Kernel metadata: what a launch needs to know about a compiled kernel (its
 * parameters as the cubin sees them, the specialisation, the launch shape),
 * read from the JSON that the compiler writes (docs/abi.md).  JIT and AOT
 * kernels both go through this one reader. */
#ifndef TILE_METADATA_H
#define TILE_METADATA_H

#include "json.h"
#include "../support/arch.h"

enum { META_FORMAT = 1, MAX_KERNEL_ARGS = 256, MAX_SIGNATURE = MAX_KERNEL_ARGS * 10 };
/* Tensor maps: how many a kernel takes, their rank and box extents (the
 * driver's limits), the largest extent (the driver takes 2^32, but a
 * box's coordinates are 32-bit signed: arch.h) and
 * stride in bytes (the driver's). */
enum { MAX_TENSOR_MAPS = ARCH_MAX_TENSOR_MAPS, MAX_TENSOR_MAP_RANK = 5, MAX_TENSOR_MAP_BOX = 256 };
#define MAX_TENSOR_MAP_DIM ARCH_MAX_TENSOR_MAP_DIM
#define MAX_TENSOR_MAP_STRIDE_BYTES ((1LL << 40) - 1)

typedef struct MetaParam {
  const char *name;
  int dtype;              /* DType of the value, or of what a pointer points to */
  int is_ptr;
  int divisibility;       /* 16: the launch promises the value is divisible by 16; else 1 */
  int position;           /* index among the launch's arguments */
  int is_int;             /* a scalar integer (bool included) */
  long long min, max;     /* the values an integer parameter holds */
} MetaParam;

/* A tensor map's extent or stride: a constant times the values of integer
 * launch arguments (a ':1' one's is 1): {"value": N}, {"arg": P}, or
 * {"args": [P, ...], "value": N}. */
typedef struct MetaExtent {
  const MetaParam *args[ARCH_MAX_MAP_FACTORS]; /* in the metadata's params or specialized */
  int n;
  long long value;
} MetaExtent;

/* A CUtensorMap the kernel takes as a hidden parameter after its ABI ones,
 * encoded at each launch from the arguments (docs/abi.md, section 2). */
typedef struct MetaTensorMap {
  const MetaParam *base;  /* the pointer argument: the tensor's address */
  int dtype;              /* the elements' DType (one device_tensor_map_dtype takes) */
  int rank;               /* 1..MAX_TENSOR_MAP_RANK */
  MetaExtent dims[MAX_TENSOR_MAP_RANK];        /* elements, innermost (contiguous) first */
  MetaExtent strides[MAX_TENSOR_MAP_RANK - 1]; /* elements, of dims 1..rank-1 */
  int box[MAX_TENSOR_MAP_RANK];                /* the block one copy moves, elements, innermost first */
  int swizzle;            /* the shared-memory swizzle span: 0, 32, 64 or 128 bytes */
} MetaTensorMap;

typedef struct MetaConstexpr {
  const char *name;
  const Json *value;      /* a number, bool, string or null */
} MetaConstexpr;

/* The metadata's "refill" ("early", "late" or "early,late"): the set of
 * schedules (tile_options.refill) a kernel's pipelined loops got, with
 * TILE_REFILL_EARLY (1) and TILE_REFILL_LATE (2) as its bits, and
 * meta_refill_names[set] its name; a single schedule indexes it too. */
extern const char *const meta_refill_names[4];

typedef struct KernelMetadata {
  const char *name;       /* the kernel's entry point in the image */
  const char *signature;  /* "*fp32:16,i32" */
  const char *arch;       /* "sm_90a"; "cpu" for the interpreter */
  const char *target;     /* "cubin", "ptx" or "cpu": what the image is */
  int num_args;           /* arguments a launch passes */
  MetaParam *params;      /* the ABI parameters, in order */
  int num_params;
  MetaParam *fixed;       /* arguments specialised to the value 1 (':1'), not passed to the kernel */
  int num_fixed;
  MetaConstexpr *constexprs;
  int num_constexprs;
  int config;             /* the @triton.autotune config the constexprs came from; -1: none */
  int num_warps, num_stages;
  int maxnreg;            /* the register cap the image was compiled with; 0: none */
  int refills;            /* the schedules its pipelined loops with a dot got (above); 0: none */
  int shared;             /* dynamic shared memory, bytes */
  int registers, spills;  /* from ptxas; -1 when unknown */
  const char *checks;     /* compiler-made checks that trap on the GPU ("file:line: message; ..."); "" if none */
  MetaTensorMap *tensor_maps; /* hidden parameters after params, in order */
  int num_tensor_maps;
} KernelMetadata;

/* Reads and checks metadata JSON; strings and tables live in `a`.  Returns
 * 0, or -1 with a message ("metadata: ...") in err. */
int meta_parse(Arena *a, const char *json, size_t len, KernelMetadata *m, char *err, size_t errsize);

/* "*fp32" / "i32" into dtype and is_ptr; 0 if it is not a type. */
int meta_parse_type(const char *text, int *dtype, int *is_ptr);

#endif
