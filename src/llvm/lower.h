/* The lowering of GPU-layout IR to LLVM IR (internal to src/llvm).
 *
 * Every TIR value becomes, in each thread, one LLVM value per register of
 * its layout (Regs); a scalar has one register, the same in every thread.
 * Register r of thread t holds the element at flat row-major offset
 * ll_offset(ll, r, t % 32, t / 32), the XOR of a compile-time register part
 * and a run-time thread part.  For the layouts codegen meets, every
 * non-zero basis is a distinct single bit, so the two parts never share a
 * bit and XOR is addition: the thread part is computed once per function
 * (lower_thread_sum) and each register adds a constant.
 *
 * Two targets share all of this; only the primitives in `Target` differ:
 * NVPTX (target_nvptx.c: NVVM intrinsics and inline PTX) and "sim"
 * (target_sim.c: host IR calling the thread simulator of tests/sim). */
#ifndef TILE_LLVM_LOWER_H
#define TILE_LLVM_LOWER_H

#include "../tir/layout.h"
#include "../tir/passes.h"
#include "generate.h"

#include <llvm-c/Core.h>
#include <setjmp.h>

typedef struct Lower Lower;

/* A value in one thread: one LLVM value per register of its layout. */
typedef struct Regs {
  int n;
  LLVMValueRef *v;
  int uniform;    /* every element is v[0], in every thread (constants, splats and ops on them) */
} Regs;

enum { TID_BITS = LANE_BITS + MAX_WARP_BITS }; /* lane bits, then warp bits, of %tid.x */

/* A tile's elements as seen by the threads of a program: register and
 * thread (lane, then warp) bases of offsets in some index space (the flat
 * offsets of a tile, or of a scratch buffer).  A zero thread basis is
 * replication; a zero register basis repeats an element in a thread. */
typedef struct Side {
  int n_reg;
  uint32_t reg[MAX_REG_BITS];
  uint32_t thread[TID_BITS];
} Side;

/* One global memory access of 1 to 16 bytes, as words (lower_word_type). */
typedef struct GlobalAccess {
  LLVMValueRef address;   /* global pointer to the first byte */
  LLVMTypeRef type;       /* the word type: i8, i16, i32, i64, <2 x i32>, <4 x i32>, <2 x i64> */
  int bytes;              /* 1, 2, 4, 8 or 16 */
  int word_bits;          /* 8, 16, 32 or 64 */
  int words;              /* 1, 2 or 4 */
  LLVMValueRef predicate; /* i1; NULL: always */
  LLVMValueRef other;     /* load: the value where the predicate is off; NULL: zero */
  LLVMValueRef value;     /* store: the value */
  const char *cache;      /* ".ca", ".cg", ... or NULL */
  int evict;              /* EvictionPolicy: a hint, dropped where a cache modifier is given */
  int is_volatile;
} GlobalAccess;

/* One atomic read-modify-write of one element. */
enum { ATOMIC_CAS = ATOM_COUNT }; /* beside AtomicKind: compare and swap */
typedef struct AtomicAccess {
  int op;                 /* AtomicKind or ATOMIC_CAS */
  DType type;             /* element type */
  LLVMValueRef address;   /* global pointer */
  LLVMValueRef value;     /* integer bits of the element's width */
  LLVMValueRef compare;   /* CAS: integer bits */
  int sem, scope;         /* MemSem, MemScope */
} AtomicAccess;

/* The operand types of mma.sync and wgmma, as tile_sim.h numbers them; the fp8 kinds (wgmma, and
 * mma.sync from sm_89) are MMA_FP8 plus 1 where A is e5m2 and 2 where B is (else e4m3): mma_fp8_kind. */
enum { MMA_F16, MMA_BF16, MMA_TF32, MMA_S8, MMA_FP8, MMA_FP8_LAST = MMA_FP8 + 3 };
int mma_fp8_kind(DType a, DType b);

/* The tensor-core primitives (warp-synchronous: every lane of the warp
 * executes them), ldmatrix and cp.async, as (target, name, parameters):
 * Target has a field of each name, and target_tc.h declares each target's
 * functions (nvptx_NAME, sim_NAME) and its table's entries from this list. */
#define TARGET_TC_PRIMITIVES(X, target)                                                                      \
  /* ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16: `count` i32 words into out */                  \
  X(target, ldmatrix, (Lower *L, int count, int trans, LLVMValueRef shared_address, LLVMValueRef *out))     \
  /* mma.sync.aligned.m16n8k{16,8,32}.row.col: d[4] = a[4] * b[2] + c[4]; a, b i32 words; c, d f32         \
   * (i32 for MMA_S8); k32 for MMA_S8 and the MMA_FP8 kinds */                                               \
  X(target, mma, (Lower *L, int kind, LLVMValueRef *d, LLVMValueRef *a, LLVMValueRef *b, LLVMValueRef *c)) \
  /* cp.async of `bytes` (4, 8 or 16) from global src to shared dst, src_bytes (i32) of them read, the     \
   * rest zero-filled; commit_group; wait_group n */                                                         \
  X(target, cp_async, (Lower *L, LLVMValueRef dst, LLVMValueRef src, int bytes, LLVMValueRef src_bytes))    \
  X(target, cp_async_commit, (Lower *L))                                                                     \
  X(target, cp_async_wait, (Lower *L, int pending))                                                          \
  /* wgmma (sm_90a), by the 128 threads of a warpgroup: wgmma.fence; one m64n{n}k{16,8} (kind MMA_F16,    \
   * MMA_BF16, MMA_TF32; m64n{n}k32 for the MMA_FP8 kinds) on acc[n / 2] (f32, updated in place) from     \
   * shared-memory descriptors (i64), or                                                                    \
   * with a_desc NULL A from a_words[4] (i32: fp16/bf16 pairs, mma.sync's A fragment; no trans_a);        \
   * commit_group; wait_group (acc: the registers that must be ready after it; keep: inputs that must      \
   * stay live until it, a register A's words) */                                                           \
  X(target, wgmma_fence, (Lower *L))                                                                         \
  X(target, wgmma, (Lower *L, int kind, int n, LLVMValueRef *acc, LLVMValueRef a_desc, LLVMValueRef *a_words, \
                    LLVMValueRef b_desc, int trans_a, int trans_b))                                          \
  X(target, wgmma_commit, (Lower *L))                                                                        \
  X(target, wgmma_wait, (Lower *L, int pending, LLVMValueRef *acc, int n_acc, LLVMValueRef *keep, int n_keep)) \
  /* fence.proxy.async.shared::cta: generic-proxy writes to shared memory seen by wgmma */                  \
  X(target, fence_proxy_async, (Lower *L))                                                                   \
  /* TMA store (sm_90a), by one thread: the box of tensor map `map` (its index in the function's) from      \
   * shared src to coordinates c0, c1 (i32, innermost first); then tma_store_wait: commit_group and      \
   * wait_group.read 0, or (writes) wait_group 0 and fence.proxy.async.global: the writes done and seen */  \
  X(target, tma_store_box, (Lower *L, int map, LLVMValueRef src, LLVMValueRef c0, LLVMValueRef c1))          \
  X(target, tma_store_wait, (Lower *L, int writes))
#define TARGET_TC_FIELD(target, name, params) void (*name) params;

/* What differs between targets. */
typedef struct Target {
  int global_space, shared_space; /* LLVM address spaces */
  /* once, at the start of the kernel (L->pro): %tid.x, the warp index and the base of shared memory */
  void (*prologue)(Lower *L);
  LLVMValueRef (*program_id)(Lower *L, int axis);
  LLVMValueRef (*num_programs)(Lower *L, int axis);
  LLVMValueRef (*smid)(Lower *L);        /* the SM's index, i32 */
  LLVMValueRef (*globaltimer)(Lower *L); /* nanoseconds, i64 */
  void (*barrier)(Lower *L);
  /* shfl.sync.bfly of an i32 over the full warp */
  LLVMValueRef (*shuffle_xor)(Lower *L, LLVMValueRef value, int lane_mask);
  /* shfl.sync.idx of an i32 over the full warp: `value` of the lane `lane` (an i32) names */
  LLVMValueRef (*shuffle_idx)(Lower *L, LLVMValueRef value, LLVMValueRef lane);
  LLVMValueRef (*load)(Lower *L, const GlobalAccess *a);
  void (*store)(Lower *L, const GlobalAccess *a);
  /* whether the target does op on type natively (else: a CAS loop) */
  int (*atomic_native)(Lower *L, int op, DType type);
  /* returns the old bits; called under the access's predicate */
  LLVMValueRef (*atomic)(Lower *L, const AtomicAccess *a);
  /* NULL, or the atomic of n consecutive elements (values: bits) at a->address whose old values
     nobody reads, under `predicate` (i1 or NULL); 0 where the target cannot do it so */
  int (*reduce)(Lower *L, const AtomicAccess *a, LLVMValueRef *values, int n, LLVMValueRef predicate);
  LLVMValueRef (*exp2_approx)(Lower *L, LLVMValueRef x, int ftz); /* f32; ftz: results below 2^-126 are 0 */
  LLVMValueRef (*div_full)(Lower *L, LLVMValueRef x, LLVMValueRef y); /* f32 x / y, Triton's div.full.f32 */
  LLVMValueRef (*round_tf32)(Lower *L, LLVMValueRef x);  /* f32, cvt.rna.tf32.f32 */
  /* f32 to the fp8 type t (an i8; to_fp8 1) or back (0), as lower_fp8.c says; NULL, or a function
     that returns NULL: no instruction for it, lower_fp8.c computes the bits */
  LLVMValueRef (*fp8_convert)(Lower *L, LLVMValueRef v, DType t, int to_fp8);
  /* two f32 to the fp8 type t at once, an i16 (lo in its low byte); NULL as fp8_convert */
  LLVMValueRef (*fp8_pair)(Lower *L, LLVMValueRef lo, LLVMValueRef hi, DType t);
  /* the printf format and arguments: generic pointers */
  void (*vprintf)(Lower *L, LLVMValueRef format, LLVMValueRef args);
  void (*assert_fail)(Lower *L, LLVMValueRef message, LLVMValueRef file, int line, LLVMValueRef function);
  void (*trap)(Lower *L); /* NULL: compiler-made checks call assert_fail too */
  /* a pointer to a constant string usable as printf's format */
  LLVMValueRef (*string)(Lower *L, const char *s);
  /* tensor cores, ldmatrix and cp.async: TARGET_TC_PRIMITIVES */
  TARGET_TC_PRIMITIVES(TARGET_TC_FIELD, unused)
} Target;

const Target *target_nvptx(void);
const Target *target_sim(void);

typedef struct ThreadSum {
  int64_t c[TID_BITS];
  LLVMValueRef value;
} ThreadSum;

/* A shared-memory buffer (a local_alloc): live from op `start` to op `end`
 * in lowering order, at `offset` bytes. */
typedef struct BufferPlan {
  int value;          /* the local_alloc's result */
  int start, end;
  int offset, bytes, align;
  const TirOp *alloc; /* the local_alloc, where a buffer that does not fit is reported */
  int made;           /* the local_alloc's place in the order */
  int transient;      /* a tma_store's: live from the local_alloc to the store only, even in a loop */
} BufferPlan;

/* Bytes of shared memory accessed since the last barrier. */
typedef struct Pending {
  int lo, hi;
  int kind;           /* read 1, write 2 */
  int buffer;         /* its buffer (L->buffers), -1: scratch or anything */
} Pending;

/* The XOR of a buffer view's thread offsets with x, in bytes (i64): once per kernel. */
typedef struct ThreadXor {
  uint32_t thread[TID_BITS];
  uint32_t x;
  int elem_bytes;
  LLVMValueRef value;
} ThreadXor;

struct Lower {
  const TirFunc *f;
  const GpuTarget *gpu;
  const Target *target;
  int compute_capability;  /* 80, 86, 89, 90 */
  int wgmma;               /* sm_90a (or sim90): wgmma may be used */
  Arena *arena;
  Diags *diags;
  jmp_buf fail;
  const TirOp *op;         /* being lowered: errors point at it */
  int loop_depth;          /* loops around the op */
  int element_loop_access; /* a loop accesses global memory element by element (codegen.c, lower.c) */
  int ptx_isa;             /* the PTX ISA the code needs beyond 8.0 (84: fp8 mma.sync), as 10 * major + minor;
                              0: 8.0 (codegen.c) */
  /* 32-bit registers loops keep, for lower.c's occupancy hint: the values
   * other than pointers the loops around the op carry, the pointers of the
   * accesses in them so far, and the most any loop kept */
  int carried_words, loop_pointer_words, most_loop_words;
  const AxisInfo *axis;    /* per value id */
  int *uses;               /* per value id: operands that name it */
  const TirOp **defs;      /* per value id: the op that makes it (NULL: an argument) */
  char *deferred;          /* per value id: a convert_layout the dot using it lowers itself */
  char *dot_waited;        /* per value id: a wgmma dot's result that a dot_wait waits for */
  Regs *values;            /* per value id */
  LLVMContextRef ctx;
  LLVMModuleRef module;
  LLVMBuilderRef b;        /* where the current op's code goes */
  LLVMBuilderRef pro;      /* the prologue: values computed once per kernel */
  LLVMValueRef fn;
  LLVMValueRef tid;        /* %tid.x, i32 */
  LLVMValueRef warp;       /* %tid.x / 32, i32, as a value the backend knows is the same across a warp */
  LLVMValueRef shared;     /* the dynamic shared memory */
  int shared_bytes;        /* buffers and the most scratch any op needs */
  int shared_dirty;        /* shared memory may still be read: a barrier before it is written */
  /* shared-memory buffers (lower_buffers.c) */
  LLVMValueRef raw_shared; /* the base of shared memory; L->shared is the scratch above the live buffers */
  int op_counter;          /* ops lowered so far: buffer lifetimes are ranges of it */
  int inlining;            /* lowering a combine region (lower_inline): its ops keep the op's place */
  int scratch_base;        /* bytes below L->shared at the current op */
  int *buffer_of;          /* per value id: the BufferPlan a buffer value lies in, or -1 */
  LLVMValueRef *shared_offset; /* per local_alloc and memdesc_index result: i32 bytes from raw_shared; else NULL */
  Vec(BufferPlan) buffers;
  Vec(Pending) pending;    /* buffer accesses since the last barrier ([0, inf): anything) */
  Vec(ThreadXor) xors;
  int num_threads;
  Vec(ThreadSum) sums;
  LLVMTypeRef i1, i8, i16, i32, i64, f16, bf16, f32, f64, void_t, global_ptr, shared_ptr, generic_ptr;
};

/* ---- lower.c: the context -------------------------------------------------- */

_Noreturn void lower_fail(Lower *L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
Regs lower_regs(Lower *L, int n);
Regs lower_get(Lower *L, int value);
void lower_set(Lower *L, int value, Regs r);
const Type *lower_type(Lower *L, int value);
/* The linear layout of a value (a scalar: no bases). */
void lower_linear(Lower *L, int value, LinearLayout *ll);
/* Operand k of op in layout `want` (converted if it has another); NULL: as it is. */
Regs lower_operand(Lower *L, const TirOp *op, int k, const LinearLayout *want);
void lower_result(Lower *L, const TirOp *op, int k, Regs r);
void lower_block(Lower *L, const TirBlock *b);
/* The ops of a combine region on scalar args, inlined at the builder: its
 * yielded values into results.  They use no shared memory, so they count as
 * the reduction's own op in the buffer plan. */
void lower_inline(Lower *L, const TirBlock *b, LLVMValueRef *args, LLVMValueRef *results);

/* LLVM types of elements: in registers, and in memory (i1 as i8). */
LLVMTypeRef lower_elem_type(Lower *L, const Type *t);
LLVMTypeRef lower_dtype(Lower *L, DType t);
int lower_elem_bytes(const Type *t);
LLVMTypeRef lower_int_type(Lower *L, int bits);
int lower_type_bits(LLVMTypeRef t); /* pointers: 64 */
/* The word type of a `bytes`-long access of elements of `elem_bits`: iN below 4
 * bytes, i32 or i64 words above (lower_pack / lower_unpack convert). */
LLVMTypeRef lower_word_type(Lower *L, int bytes, int elem_bits, int *word_bits, int *words);
LLVMValueRef lower_pack(Lower *L, LLVMValueRef *elems, int n, LLVMTypeRef word_type);
void lower_unpack(Lower *L, LLVMValueRef word, LLVMTypeRef elem_type, int n, LLVMValueRef *out);
/* Register values to their memory form and back (i1 <-> i8, pointers <-> i64). */
LLVMValueRef lower_to_memory(Lower *L, LLVMValueRef v);
LLVMValueRef lower_from_memory(Lower *L, LLVMValueRef v, LLVMTypeRef register_type);

/* ---- lower_fp8.c: fp8 <-> fp32 (src/support/numeric.c's semantics) ---------- */
LLVMValueRef lower_fp8_from_f32(Lower *L, LLVMValueRef f, DType t); /* an i8 */
/* Two f32 to fp8 in one instruction where the target has one: out[0], out[1]; 0 if not. */
int lower_fp8_pair_from_f32(Lower *L, LLVMValueRef lo, LLVMValueRef hi, DType t, LLVMValueRef *out);
LLVMValueRef lower_fp8_to_f32(Lower *L, LLVMValueRef byte, DType t);
LLVMValueRef lower_fp8_constant(Lower *L, double v, DType t); /* the i8 of v rounded to t */

LLVMValueRef lower_i32(Lower *L, int64_t v);
LLVMValueRef lower_int(Lower *L, LLVMTypeRef t, int64_t v);
/* A call to `name` (declared on first use). */
LLVMValueRef lower_call(Lower *L, const char *name, LLVMTypeRef ret, LLVMTypeRef *params, int n, LLVMValueRef *args);
/* A call to an LLVM intrinsic, overloaded on `types`. */
LLVMValueRef lower_intrinsic(Lower *L, const char *name, LLVMTypeRef *types, int n_types, LLVMValueRef *args, int n);
LLVMValueRef lower_inline_asm(Lower *L, LLVMTypeRef ret, const char *text, const char *constraints,
                              LLVMValueRef *args, int n, int side_effects);
LLVMBasicBlockRef lower_new_block(Lower *L, const char *name);

/* Σ over %tid.x bits i of bit_i * c[i], computed once in the prologue. */
LLVMValueRef lower_thread_sum(Lower *L, const int64_t *c);
/* The thread part of a Side's offsets. */
LLVMValueRef lower_thread_offset(Lower *L, const uint32_t *thread);
/* i1: this thread is the one copy of its elements (zero-basis tid bits are 0);
 * NULL when no thread of the layout is replicated. */
LLVMValueRef lower_owner(Lower *L, const uint32_t *thread, int warps_only);
LLVMValueRef lower_shared_address(Lower *L, LLVMValueRef byte_offset);

/* Sides of a linear layout; a map (NULL: identity) re-expresses offsets. */
typedef struct BitMap {
  int n;                   /* bits of the source offsets */
  uint32_t image[32];      /* per destination bit: the source offset */
} BitMap;
uint32_t lower_map(const BitMap *m, uint32_t offset);
void lower_side(const LinearLayout *ll, const BitMap *m, Side *s);

/* ---- lower_shared.c: exchanges through shared memory ------------------------ */

/* Registers of `src` (elements at `from` offsets) written to scratch,
 * read back as the registers of `to`; both sides over offsets below
 * 1 << space_bits.  With owners_only, only the owner of each element
 * writes it (the others hold garbage). */
typedef struct Exchange {
  Side from, to;
  int space_bits;
  LLVMTypeRef elem;        /* register type */
  int owners_only;
} Exchange;
Regs lower_exchange(Lower *L, const Exchange *x, Regs src);

/* ---- lower_quad.c: conversions of 8-bit tiles within quads of lanes ---------- */

/* The registers of `to` from those of `from` by shuffles within each quad
 * of lanes (the two differ in lane bits 0 and 1 only); 0 if the layouts
 * do not allow it (out is then unchanged). */
int lower_quad_shuffle(Lower *L, Regs src, const Side *from, const Side *to, LLVMTypeRef elem, Regs out);

/* The scratch buffer of an exchange at byte `base` of shared memory: element
 * offset o is at byte base + lower_scratch_offset(o), which pads rows to
 * spread accesses over the banks; a tile of more than `budget` bytes goes
 * in rounds (offset bits only registers select).  Every non-zero basis is
 * a distinct single bit, so offsets of disjoint bits add. */
typedef struct Scratch {
  Exchange x;
  int elem_bytes;
  LLVMTypeRef mem_type;    /* the element as stored (i1 as i8, pointers as i64) */
  int vec_bits[2];         /* from, to: low register bits that form one access */
  uint32_t round_mask;     /* offset bits that choose the round */
  int n_round_bits;
  int row_bits, pad;       /* o + (o >> row_bits) * pad, o without the round bits */
  int base, bytes;         /* where it starts; bytes per round */
} Scratch;
void lower_scratch_plan(Lower *L, const Exchange *x, int base, int64_t budget, Scratch *s);
int64_t lower_scratch_offset(const Scratch *s, uint32_t off);
/* i8 pointer to this thread's part of the buffer (base included). */
LLVMValueRef lower_scratch_thread(Lower *L, const Scratch *s, const uint32_t *thread);
/* Bytes (i64) of a run-time i32 offset without round bits. */
LLVMValueRef lower_scratch_runtime(Lower *L, const Scratch *s, LLVMValueRef off);
/* The `from` side's registers of one round to the buffer (no barrier);
 * lower_scratch_write stores from one copy of each element only. */
void lower_scratch_store(Lower *L, const Scratch *s, Regs src, uint32_t round);
void lower_scratch_write(Lower *L, const Scratch *s, Regs src, uint32_t round);
int lower_max_shared(const Lower *L);

/* ---- lower_buffers.c: shared-memory buffers ----------------------------------- */

/* Places every local_alloc (before lowering). */
void lower_plan_buffers(Lower *L);
/* At the start of each op: the scratch space above the buffers live there. */
void lower_enter_op(Lower *L);
/* An op's scratch of `bytes` from L->shared: counted in shared_bytes, checked. */
void lower_note_scratch(Lower *L, int64_t bytes);
/* bar.sync; nothing is pending after it. */
void lower_barrier(Lower *L);
/* Shared memory touched in ways not tracked (scratch, control flow): the
 * next access of any buffer waits at a barrier. */
void lower_shared_unknown(Lower *L);
/* Accesses to buffer value v: a barrier first where another thread's
 * pending access conflicts. */
void lower_buffer_read(Lower *L, int v);
void lower_buffer_async_write(Lower *L, int v);
void lower_buffer_write(Lower *L, int v);
/* A read by wgmma (the async proxy): a conflict is fenced (fence.proxy.async) before its barrier. */
void lower_buffer_read_async_proxy(Lower *L, int v);

/* A tile layout's registers and threads as memory offsets (elements) in a
 * buffer; thread offsets may overlap (swizzles), register offsets too. */
typedef struct BufferView {
  LLVMValueRef base;           /* i8 pointer to the buffer */
  int elem_bytes;
  int n_reg;
  uint32_t reg[MAX_REG_BITS];
  uint32_t thread[TID_BITS];
  uint32_t thread_mask;        /* offset bits some thread part has */
} BufferView;
void lower_buffer_view(Lower *L, int buffer, const LinearLayout *tile, BufferView *out);
uint32_t lower_view_offset(const BufferView *v, uint32_t reg);
/* The address of the element at register part `offset` (from
 * lower_view_offset, or any XOR of register offsets) in this thread. */
LLVMValueRef lower_view_address(Lower *L, const BufferView *v, uint32_t offset);
/* Low register bits one aligned access of at most max_bytes covers. */
int lower_view_vector_bits(const BufferView *v, int max_bytes);

void lower_local_alloc(Lower *L, const TirOp *op);
/* lower_tma.c */
void lower_mbar_alloc(Lower *L, const TirOp *op);
void lower_mbar_wait(Lower *L, const TirOp *op);
void lower_mbar_inval(Lower *L, const TirOp *op);
void lower_tma_copy(Lower *L, const TirOp *op);
void lower_tma_store(Lower *L, const TirOp *op);
void lower_memdesc_index(Lower *L, const TirOp *op);
void lower_memdesc_trans(Lower *L, const TirOp *op);
void lower_local_store(Lower *L, const TirOp *op);
void lower_local_load(Lower *L, const TirOp *op);
/* lower_async.c: cp.async and its groups */
void lower_async_copy(Lower *L, const TirOp *op);
void lower_async_commit(Lower *L, const TirOp *op);
void lower_async_wait(Lower *L, const TirOp *op);
/* lower_ldmatrix.c: local_load into an mma operand layout with ldmatrix;
 * 0 when ldmatrix cannot read this layout (the caller loads otherwise). */
int lower_ldmatrix(Lower *L, const TirOp *op, const LinearLayout *ll);
/* The 32-bit words of an mma operand that a local_load reads, read when
 * first asked for (ldmatrix groups, else ld.shared); word w holds registers
 * w * kWidth .. of the operand layout. */
typedef struct OperandReader OperandReader;
OperandReader *lower_operand_reader(Lower *L, const TirOp *local_load);
LLVMValueRef lower_read_word(Lower *L, OperandReader *r, int w);

/* ---- the op families ------------------------------------------------------- */

void lower_constant(Lower *L, const TirOp *op);
void lower_special(Lower *L, const TirOp *op);       /* program_id, num_programs, smid, globaltimer */
void lower_make_range(Lower *L, const TirOp *op);
void lower_elementwise(Lower *L, const TirOp *op);
void lower_asm_elementwise(Lower *L, const TirOp *op);
/* One element of an op on LLVM values of TIR type t (the operands' type; cmp gives i1). */
LLVMValueRef lower_scalar(Lower *L, TirCode code, int kind, const Type *t, LLVMValueRef *x);
LLVMValueRef lower_cast_value(Lower *L, LLVMValueRef v, const Type *from, const Type *to, int rounding);

void lower_splat(Lower *L, const TirOp *op);
void lower_gather(Lower *L, const TirOp *op);        /* through shared memory */
void lower_shape_op(Lower *L, const TirOp *op);      /* broadcast, expand_dims, reshape, trans, convert, hint */
void lower_join(Lower *L, const TirOp *op);
void lower_split(Lower *L, const TirOp *op);
/* A value moved from layout `from` to layout `to` (same shape unless map says otherwise). */
Regs lower_move(Lower *L, Regs src, const LinearLayout *from, const LinearLayout *to, const BitMap *map,
                LLVMTypeRef elem);

/* lower_memory.c: registers that form one global access.  Element j of a
 * group is register base | deposit(j) over bit[], where bit[i] holds
 * coordinate 2^i of the vector's dimension. */
typedef struct Vector {
  int n_bits;
  int bit[4];
} Vector;
uint32_t lower_vector_register(const Vector *v, uint32_t base, int j);
/* The widest vector (at most 16 bytes) AxisInfo allows for a memory op on
 * pointers `ptr` (mask `mask` or -1) in layout ll. */
Vector lower_choose_vector(Lower *L, int ptr, int mask, const LinearLayout *ll, int elem_bytes);
/* Group bases: every register with no vector bit set. */
int lower_is_group_base(const Vector *v, uint32_t r);
/* Notes an access of n registers in vectors v inside a loop: counts its
 * pointers in L->loop_pointer_words, and element by element sets
 * L->element_loop_access. */
void lower_note_access(Lower *L, const Vector *v, int n);

void lower_addptr(Lower *L, const TirOp *op);
void lower_load(Lower *L, const TirOp *op);
void lower_store(Lower *L, const TirOp *op);
void lower_atomic(Lower *L, const TirOp *op);

void lower_reduce(Lower *L, const TirOp *op);
void lower_scan(Lower *L, const TirOp *op);
void lower_dot(Lower *L, const TirOp *op);
void lower_mma_dot(Lower *L, const TirOp *op);        /* lower_mma.c: mma.sync */
void lower_wgmma_dot(Lower *L, const TirOp *op);      /* lower_wgmma.c: wgmma */
void lower_dot_wait(Lower *L, const TirOp *op);
/* Marks the convert_layout ops whose dots read them from shared memory (L->deferred). */
void lower_plan_dots(Lower *L, const TirBlock *b);
void lower_rand(Lower *L, const TirOp *op);
void lower_print(Lower *L, const TirOp *op);
void lower_assert(Lower *L, const TirOp *op);

void lower_for(Lower *L, const TirOp *op);
void lower_if(Lower *L, const TirOp *op);
void lower_while(Lower *L, const TirOp *op);

/* ---- libdevice.c ----------------------------------------------------------- */

/* Links libdevice into `module` if it calls __nv_* functions. */
int lower_link_libdevice(LLVMModuleRef module, const char *path, char *err, size_t size);

#endif
