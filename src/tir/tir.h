/* Tile IR: SSA over tiles and scalars with structured control flow, modelled
 * on Triton's TTIR.  A function is a block of operations; values are small
 * integer ids into the function's type table; loops and ifs own blocks
 * (regions) whose arguments are the loop variables, and pass values out
 * through yield.  Every operation keeps the source location it came from. */
#ifndef TILE_TIR_H
#define TILE_TIR_H

#include "../support/arch.h"
#include "../support/dtypes.h"
#include "../support/diag.h"

/* The libdevice functions of lang/libdevice.def; tile IR's libdevice op
 * carries its row as its kind, the frontend's typed calls as their callee
 * (libdevice.c). */
typedef enum {
#define LIBDEVICE(id, name, sig, types, f32, f64, c32, c64) LIBDEVICE_##id,
#include "libdevice.def"
#undef LIBDEVICE
  LIBDEVICE_COUNT
} LibdeviceId;

typedef enum { LD_F, LD_FF, LD_FFF, LD_FFFF, LD_FI, LD_IF, LD_FFU, LD_INT, LD_BOOL, LD_LONG, LD_SINGLE, LD_DOUBLE,
               LD_HILO } LibdeviceSig;

/* The table's types column: x's narrow and wide type (COUNT: none), whose symbols are the f32 and f64 columns. */
#define LIBDEVICE_TYPES(X)                                                                                  \
  X(FP, FP32, FP64) X(FP32, FP32, COUNT) X(FP64, COUNT, FP64) X(INT, I32, I64) X(UINT, U32, U64) X(I32, I32, COUNT) \
  X(U32, U32, COUNT) X(I64, COUNT, I64) X(U64, COUNT, U64)
typedef enum {
#define LD_TYPES_ENUM(types, narrow, wide) LD_TYPES_##types,
  LIBDEVICE_TYPES(LD_TYPES_ENUM)
#undef LD_TYPES_ENUM
} LibdeviceTypes;
enum { LIBDEVICE_MAX_ARGS = 4 };

const char *libdevice_name(int id);              /* the Python name: "tanh" */
const char *libdevice_symbol(int id, int wide);  /* "__nv_tanhf", "__nv_tanh" */
const char *libdevice_kind(int id);              /* the wide symbol without __nv_: tile IR's kind */
int libdevice_arity(int id);
int libdevice_takes(int id, DType x);            /* whether x is one of its types */
DType libdevice_x_type(int id, int wide);        /* its narrow or wide type of x; DT_COUNT: none */
int libdevice_x_arg(int id);                     /* which argument is x, the one that picks the type */
int libdevice_n_arg(int id);                     /* which is the i32 n (jn's order, ldexp's exponent); -1: none */
DType libdevice_arg(int id, int i, DType x);     /* argument i's type where x is x's */
DType libdevice_result(int id, DType x);

/* The attributes an op carries after its operands (attrs.def). */
typedef enum {
#define ATTR_INT(id, spelling, field, always) ATTR_##id,
#define ATTR_FLAG(id, spelling, bit) ATTR_##id,
#define ATTR_NAMED(id, spelling, field, table, what) ATTR_##id,
#define ATTR_WORD(id, spelling) ATTR_##id,
#define ATTR_OWN(id, syntax) ATTR_##id,
#include "attrs.def"
  ATTR_COUNT
} TirAttr;
#define AT(id) (1u << ATTR_##id)

typedef enum {
#define OP(id, name, flags, operands, attributes, summary) TIR_##id,
#include "ops.def"
#undef OP
  TIR_COUNT
} TirCode;

enum { PURE = 1, EW = 2, TERM = 4, GPU = 8 };

/* Sub-kinds, kept in TirOp.kind. */
typedef enum {
#define CMP_KIND(id, name) CMP_##id,
#include "kinds.def"
} CmpKind; /* kinds.def, as the kinds below */
typedef enum {
#define REDUCE_KIND(id, name) RED_##id,
#include "kinds.def"
} ReduceKind;
typedef enum {
#define ATOMIC(id, name, ptx) ATOM_##id,
#include "memory.def"
  ATOM_COUNT
} AtomicKind;                                          /* lang/memory.def */
typedef enum {
#define DOT_KIND(id, name) DOT_##id,
#include "kinds.def"
} DotPrecision;
typedef enum {
#define HINT_KIND(id, name) HINT_##id,
#include "kinds.def"
} HintKind;
typedef enum {
#define RAND_KIND(id, name) RAND_##id,
#include "kinds.def"
} RandKind;
typedef enum {
#define ROUND_KIND(id, name) ROUND_##id,
#include "kinds.def"
} CastRounding; /* CAST: fp_downcast_rounding */
typedef enum {
#define DIV_KIND(id, name) DIV_##id,
#include "kinds.def"
} DivRounding; /* DIV of fp32: div.full.f32 as Triton's `/`, or tl.div_rn's IEEE quotient */
typedef enum {
#define NAN_KIND(id, name) NAN_##id,
#include "kinds.def"
} PropagateNan; /* MAXIMUM, MINIMUM, CLAMP of floats: NaN operands ignored (NONE) or propagated (ALL) */
/* ATOMIC_RMW, ATOMIC_CAS: memory semantics in ival, scope in ival2 (0: Triton's defaults); lang/memory.def */
typedef enum {
#define MEM_SEM(id, name, ptx) SEM_##id,
#include "memory.def"
  SEM_COUNT
} MemSem;
typedef enum {
#define MEM_SCOPE(id, name, ptx) SCOPE_##id,
#include "memory.def"
  SCOPE_COUNT
} MemScope;
/* LOAD, STORE: eviction_policy in ival (0: none) */
typedef enum {
#define EVICTION(id, name, ptx) EVICT_##id,
#include "memory.def"
  EVICT_COUNT
} EvictionPolicy;

/* ASSERT_TRAP: a compiler-made check (src/tir/assume.c); on the GPU a trap
 * instead of __assertfail, whose call would make ptxas serialise every
 * wgmma of the kernel; the runtime names the checks when a launch fails. */
/* FREE_SLOT: a local_store the pipeliner made into a buffer slot no thread
 * reads until the loop's next wait and its barrier (src/tgir/pipeline.c);
 * the lowering checks it against other buffers and scratch, not against
 * the buffer's other slots. */
/* NO_LICM: a loop licm leaves whole (tl.range's and tl.condition's
 * disable_licm), its invariant code computed in each iteration. */
/* NO_WRAP: an integer add, sub or mul whose exact result the widen pass
 * proved within its type (src/tir/widen.c): LLVM's nsw (nuw for unsigned
 * types), which lets it move a sign extension through the index
 * arithmetic and strength-reduce `(i + r) * n` in 64 bits. */
enum { LOAD_MASK = 1, LOAD_OTHER = 2, SCAN_REVERSE = 4, PRINT_HEX = 8, LOAD_VOLATILE = 16, ASSERT_TRAP = 32, FREE_SLOT = 64,
       ASM_PURE = 128 /* INLINE_ASM without side effects (is_pure=True) */, NO_LICM = 256, NO_WRAP = 512 };
enum { MAX_ASM_ARGS = 16 }; /* INLINE_ASM's operands, and its results */

typedef struct TirBlock TirBlock;

typedef struct TirOp {
  TirCode code;
  Loc loc;
  Vec(int) operands;     /* value ids */
  Vec(int) results;      /* value ids */
  int kind;              /* CmpKind, ReduceKind, ... as the op says */
  int axis;
  int flags;             /* LOAD_MASK, SCAN_REVERSE, ... */
  int64_t ival, ival2;   /* CONSTANT (integer), MAKE_RANGE bounds, RAND rounds, atomics' MemSem and MemScope,
                            INLINE_ASM's pack when above 1 (tir_asm_pack),
                            loads' and stores' EvictionPolicy */
  double fval;           /* CONSTANT (float) */
  int64_t ints[MAX_RANK];/* TRANS permutation, HINT values */
  int n_ints;
  const char *str;       /* PRINT prefix, ASSERT message, LOAD/STORE cache modifier, INLINE_ASM's asm */
  const char *str2;      /* INLINE_ASM's constraints */
  TirBlock *regions[2];  /* FOR, IF, WHILE: control flow */
  TirBlock *combine;     /* REDUCE_COMBINE, SCAN_COMBINE: a scalar function, (accumulated..., next...) ->
                            yield combined...; not control flow, so region walks skip it (docs/ir.md) */
} TirOp;

struct TirBlock {
  Vec(int) args;         /* value ids bound on entry */
  Vec(TirOp *) ops;
};

typedef struct TirParam {
  const char *name;
  int value;             /* value id */
  int divisibility;      /* 16 when the launch promises it */
  int arg_index;         /* position among the kernel's run-time parameters (the launch's arguments) */
} TirParam;

/* A tensor map (CUtensorMap) the launch encodes from the kernel's arguments
 * (docs/abi.md, "tensor_maps"): each field a constant times integer
 * params (tutorial 06's extent Z * H * N_CTX). */
typedef struct TirMapField {
  int64_t value;         /* the constant factor */
  int n;                 /* params multiplied in, 0..ARCH_MAX_MAP_FACTORS */
  int params[ARCH_MAX_MAP_FACTORS]; /* indices in TirFunc.params */
} TirMapField;

typedef struct TirTensorMap { /* of a 2-D tensor */
  int base;              /* the pointer param (index in TirFunc.params) */
  TirMapField dims[2];   /* innermost first, elements */
  TirMapField stride;    /* of dimension 1, elements */
  int box[2];            /* innermost first */
  int swizzle;           /* bytes: 128 */
} TirTensorMap;

typedef struct TirFunc {
  Arena *arena;
  const char *name;
  Vec(Type *) types;     /* the type of every value id */
  Vec(const char *) names; /* a source name for a value, or NULL (for printing) */
  Vec(TirParam) params;  /* run-time parameters, in order */
  TirBlock *body;
  int num_warps, num_stages;
  Vec(TirTensorMap) tensor_maps; /* set by the pipeliner: the tensor maps its TMA copies read, passed after params */
  int refills;           /* set by the pipeliner: the set of tile_refill schedules its loops with a dot got,
                            TILE_REFILL_EARLY | TILE_REFILL_LATE (1 and 2 used as bits; runtime/metadata.h) */
  /* GPU-layout IR (src/tgir): set by layout assignment */
  struct LayoutTable *layout_table;
  Vec(const struct Layout *) layouts; /* per value id; NULL for scalars (shorter: not yet assigned) */
} TirFunc;

/* Kind names of ops that have kinds (cmp.lt, reduce.sum): NULL / -1 if none. */
const char *tir_kind_name(TirCode code, int kind);
int tir_kind_lookup(TirCode code, const char *name, size_t len);
int tir_has_kinds(TirCode code);
/* A cast's rounding or a division's (kinds.def), written after the
 * operands: its name for a kind other than the default (NULL otherwise:
 * the default is not written), and the kind of a name (-1: none). */
const char *tir_modifier_name(TirCode code, int kind);
int tir_modifier_lookup(TirCode code, const char *name, size_t len);
/* "\"rtne\" or \"rtz\"": a kind's or modifier's names, for messages. */
const char *tir_kind_choices(TirCode code, int modifiers, Arena *a);
/* Atomics' MemSem and MemScope names ("acq_rel", "cta"): NULL / -1 if none. */
const char *tir_sem_name(int sem);
const char *tir_scope_name(int scope);
int tir_sem_lookup(const char *name, size_t len);
int tir_scope_lookup(const char *name, size_t len);
/* EvictionPolicy names as Triton spells them ("evict_last"); NULL / -1 if none. */
const char *tir_evict_name(int policy);
int tir_evict_lookup(const char *name, size_t len);
/* The same in PTX (".acq_rel", ".cta", ".L1::evict_last", "" for EVICT_NONE; AtomicKind: "add", "exch"). */
const char *tir_sem_ptx(int sem);
const char *tir_scope_ptx(int scope);
const char *tir_evict_ptx(int policy);
const char *tir_atomic_ptx(int kind);

/* The op table as markdown (tilec --list-ops). */
void tir_ops_reference(Buf *out);
const char *tir_op_name(TirCode c);
int tir_op_flags(TirCode c);
/* How many consecutive elements of each operand one run of an INLINE_ASM's asm takes (1, 2, 4, ...). */
static inline int tir_asm_pack(const TirOp *op) { return op->ival > 1 ? (int)op->ival : 1; }
int tir_op_arity(TirCode c);
int tir_op_has(TirCode c, TirAttr a); /* its row in ops.def names the attribute */
const char *tir_attribute_choices(TirCode c, Arena *a); /* "axis=N, reverse" */

/* Building. */
TirFunc *tir_func_new(Arena *a, const char *name);
int tir_value_new(TirFunc *f, Type *t, const char *name);
TirBlock *tir_block_new(TirFunc *f);
TirOp *tir_op_new(TirFunc *f, TirCode code, Loc loc);
void tir_append(TirFunc *f, TirBlock *b, TirOp *op);
/* b's ops (a copy, *n of them), b emptied: for passes that rebuild a block op by op. */
TirOp **tir_take_ops(TirFunc *f, TirBlock *b, int *n);
void tir_add_operand(TirFunc *f, TirOp *op, int value);
/* Walks b and the blocks nested in it: each operand adds one to uses[its
 * value], each result v gets defs[v] = its op.  Either array (indexed by
 * value id, zeroed by the caller) may be NULL. */
void tir_index_values(const TirBlock *b, int *uses, const TirOp **defs);
/* Every use of `from` in b and the blocks nested in it becomes `to`, except in `except`. */
void tir_replace_uses(TirBlock *b, int from, int to, const TirOp *except);
int tir_add_result(TirFunc *f, TirOp *op, Type *t);
Type *tir_type(const TirFunc *f, int value);
/* The layout of a value in GPU-layout IR; NULL for scalars and before layouts are assigned. */
const struct Layout *tir_layout(const TirFunc *f, int value);
void tir_set_layout(TirFunc *f, int value, const struct Layout *l);

/* The textual form (print.c), documented in docs/ir.md. */
void tir_print(const TirFunc *f, Buf *out);
/* Reads the textual form back (read.c): NULL after errors in `d`, placed in
 * the text.  Op locations are the printed loc(line:col) of the source the
 * text came from. */
TirFunc *tir_read(const Source *text, Arena *a, Diags *d);
/* Checks types, shapes and dominance; reports to `d` and returns the number
 * of problems (verify.c). */
int tir_verify(const TirFunc *f, Diags *d);
/* limits.c: every tile within 2^20 elements and the per-thread limit for f->num_warps; 1 after an error */
int tir_check_limits(const TirFunc *f, Diags *d);

/* Integer ops (a TirCode) on canonical values of type t, with the GPU's
 * semantics: C's truncating division, arithmetic right shift for signed
 * types.  The result still needs wrap_int.  Return 0 where the GPU's result
 * is undefined (division by zero, INT_MIN / -1, shifts by the width or more,
 * umulhi on other than 32 bits) or the op is not an integer op (int_ops.c). */
int tir_int_binary(int code, DType t, int64_t a, int64_t b, int64_t *r);
int tir_int_unary(int code, DType t, int64_t a, int64_t *r);

#endif
