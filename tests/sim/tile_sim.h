/* The thread simulator's ABI: what LLVM IR generated for the "sim" target
 * (tilec --arch sim --emit=llir) calls instead of GPU instructions.  The
 * module is compiled for the host with clang and run by the simulator
 * (tests/sim), which runs every thread of a program as a green thread, so
 * that the layouts, shuffles, barriers and shared memory of the generated
 * code are tested without a GPU, against the CPU interpreter.
 *
 * The generated module follows the CUDA kernel ABI except:
 *   - all pointers are plain host pointers (address space 0), shared memory
 *     included (tile_sim_shared);
 *   - beside the kernel `K`, it defines `void K_sim_entry(void **params)`,
 *     which reads each kernel parameter through params[i] (a pointer to the
 *     value, as cuLaunchKernel's kernelParams) and calls the kernel;
 *   - every GPU-specific operation is one of the calls below.  Math
 *     functions keep libdevice's names (__nv_expf, __nv_sinf, ...), which
 *     the simulator defines with the C library.
 *
 * Everything is called by every thread unless said otherwise; the
 * synchronising calls must be reached by all the threads they name, as on
 * the GPU (the simulator reports a deadlock otherwise). */
#ifndef TILE_SIM_H
#define TILE_SIM_H

#include <stdint.h>

/* geometry: %tid.x, %ctaid.{x,y,z}, %nctaid.{x,y,z} */
int32_t tile_sim_tid(void);
int32_t tile_sim_ctaid(int32_t axis);
int32_t tile_sim_nctaid(int32_t axis);
/* %globaltimer: a count of the reads so far, so it only increases (deterministic, unlike a clock) */
int64_t tile_sim_globaltimer(void);

/* bar.sync 0 over the whole program */
void tile_sim_barrier(void);
/* shfl.sync.{bfly,up,idx}.b32 with a full-warp mask: all 32 lanes of the
 * calling thread's warp must call it.  up: lanes below `delta` get their own
 * value back. */
int32_t tile_sim_shfl_xor(int32_t value, int32_t lane_mask);
int32_t tile_sim_shfl_up(int32_t value, int32_t delta);
int32_t tile_sim_shfl_idx(int32_t value, int32_t src_lane);

/* The program's dynamic shared memory (as many bytes as the launch says),
 * 1024-byte aligned (so that address bits 4-9, which the wgmma swizzles
 * use, are those of a GPU's shared addresses), poisoned with 0xA5 before
 * each program.  The module may
 * define `const int32_t K_sim_shared_bytes` (GpuCode.shared_bytes): the
 * simulator then gives exactly that many bytes, with guard bytes around
 * them checked after each program; without it, the largest a GPU allows. */
void *tile_sim_shared(void);

/* Global memory: `bytes` (1, 2, 4, 8 or 16) at src to dst, for a load whose
 * predicate is on (the generated code branches around masked-off lanes);
 * the address must lie inside one of the launch's buffers, aligned to
 * `bytes`, or the run stops with the kernel's error. */
void tile_sim_load(void *dst, const void *global_src, int32_t bytes);
void tile_sim_store(void *global_dst, const void *src, int32_t bytes);

/* Atomics on global memory: op is one of TILE_SIM_ATOMIC_*, kind one of
 * TILE_SIM_KIND_*, `bytes` 2, 4 or 8; `value` and `compare` hold the
 * operand's bits in their low bytes; returns the old bits.  The ops are
 * the tile IR's AtomicKind (lang/memory.def, in its order), then CAS. */
enum {
#define ATOMIC(id, name, ptx) TILE_SIM_ATOMIC_##id,
#include "../../lang/memory.def"
  TILE_SIM_ATOMIC_CAS
};
enum { TILE_SIM_KIND_SIGNED, TILE_SIM_KIND_UNSIGNED, TILE_SIM_KIND_FLOAT, /* fp16 when bytes == 2 */
       TILE_SIM_KIND_BF16 /* bf16 (bytes == 2) */ };
uint64_t tile_sim_atomic(int32_t op, int32_t kind, int32_t bytes, void *global_ptr, uint64_t value, uint64_t compare);

/* Approximate instructions the GPU code uses (ex2.approx.f32 and friends),
 * computed exactly here. */
float tile_sim_ex2_approx(float x);
float tile_sim_ex2_approx_ftz(float x);
float tile_sim_lg2_approx(float x);
float tile_sim_rsqrt_approx(float x);

/* CUDA's device printf: `args` packed as the PTX vprintf ABI (each argument
 * aligned to its size; floats promoted to double). */
int32_t tile_sim_vprintf(const char *format, const void *args);
/* CUDA's __assertfail: stops the program, reporting it as a failed
 * device_assert with the thread, program, file and line. */
void tile_sim_assertfail(const char *message, const char *file, int32_t line, const char *function,
                         uint64_t char_size);

/* ---- tensor cores and asynchronous copies (sm_80 and sm_90a paths) ----
 * Warp-synchronous like the shuffles: all 32 lanes of the calling thread's
 * warp call the mma and ldmatrix functions together, each passing its own
 * registers laid out exactly as the PTX ISA defines the instruction's
 * fragments for that lane; the simulator gathers the warp's fragments,
 * computes, and hands each lane its part of the result.  Register arrays
 * are passed through memory (the generated code spills them to allocas).
 * Lanes calling different instructions (or qualifiers), or a lane that has
 * returned, stop the run with an error naming both; a lane that returns
 * while others wait is one too.  Implementation and tests: sim_tensor.c,
 * test_sim_tensor.c (README.md, "Tensor cores and asynchronous copies"). */

/* wgmma's fp8 kinds: TILE_SIM_MMA_FP8, plus 1 where A is e5m2 and 2 where B is (else e4m3). */
enum { TILE_SIM_MMA_F16, TILE_SIM_MMA_BF16, TILE_SIM_MMA_TF32, TILE_SIM_MMA_S8, TILE_SIM_MMA_FP8 };

/* mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32 (kind F16
 * or BF16): a = 4 b32 (two 16-bit values each), b = 2 b32, c and d = 4 f32.
 * mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (kind TF32): a = 4 b32,
 * b = 2 b32 (tf32 values in fp32 bit patterns), c and d = 4 f32.
 * mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 (kind S8): a = 4 b32 (four
 * s8 each), b = 2 b32, c and d = 4 s32 (passed as the float arrays' bits).
 * mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 (sm_89
 * and later; the fp8 kinds, as wgmma's): a and b as S8's, four fp8 each,
 * c and d = 4 f32.
 * d may alias c.  The products are exact in fp32; the simulator sums them
 * in order of k with fmaf from +0 and then adds c (the hardware's order is
 * unspecified); tf32 operands lose their low 13 bits first, as on the
 * hardware; s8 sums are exact and wrap. */
void tile_sim_mma(int32_t kind, float *d, const uint32_t *a, const uint32_t *b, const float *c);

/* ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16 (count 1, 2, 4):
 * lane i gives the shared-memory address of row i % 8 of matrix i / 8
 * (lanes from 8 * count on give any address, not checked); each lane
 * receives `count` b32 registers in out.  A row address must be 16-byte
 * aligned with its 16 bytes inside the program's shared memory. */
void tile_sim_ldmatrix(uint32_t *out, int32_t count, int32_t trans, const void *shared_row);

/* cp.async.{ca,cg}.shared.global [dst], [src], bytes, src_bytes (bytes 4, 8
 * or 16; src_bytes 0..bytes, the rest zero-filled; when src_bytes > 0, src
 * is checked like a load of src_bytes aligned to `bytes`; dst must lie in
 * shared memory, aligned to `bytes`).  The copy is asynchronous: the
 * simulator performs it only when a tile_sim_cp_async_wait of the issuing
 * thread retires its group, and poisons dst (0xA5) from the issue until
 * then, so code that reads a buffer before waiting for it reads poison.
 * Copies not yet committed belong to no group (a wait does not retire
 * them); an empty group counts as a group.  A destination written by
 * anything but the same data while its copy is in flight, and a thread that
 * returns with copies not complete, are errors. */
void tile_sim_cp_async(void *shared_dst, const void *global_src, int32_t bytes, int32_t src_bytes);
void tile_sim_cp_async_commit(void);          /* cp.async.commit_group */
void tile_sim_cp_async_wait(int32_t pending); /* cp.async.wait_group n: all but the n newest groups done */

/* wgmma (sm_90a), by a warpgroup: the 128 threads of 4 consecutive warps
 * starting at a warp index divisible by 4 call together.
 * wgmma.mma_async.sync.aligned.m64n{n}k{16|8|32}.f32.{f16,bf16,tf32,e4m3,e5m2}: kind F16,
 * BF16, TF32 or one of the FP8 kinds (k 16, 16, 8, 32; A and B by descriptor, K-major); acc = n/2 f32 per thread in the PTX ISA's
 * accumulator fragment order (updated in place); a_desc and b_desc are
 * shared-memory matrix descriptors (PTX ISA "Matrix Descriptor Format":
 * start address, leading and stride byte offsets, swizzle mode none, 32B,
 * 64B or 128B); a_regs, when not NULL, holds A instead (4 b32 per thread, the
 * register-A fragment) and a_desc is ignored; scale_d 0 means D = A*B;
 * trans_a, trans_b are the instruction's imm-trans-a/b (transposed, i.e.
 * MN-major, operands; f16/bf16 only; the register-A form has no trans_a).
 * fp8 elements are e4m3fn (no infinities, NaN S.1111.111) or e5m2.
 * Descriptors: the start address field is bits 4-17 of the operand's
 * address as ptrtoint gives it ((addr & 0x3FFFF) >> 4, the same code as for
 * a GPU's shared address); the simulator takes the byte of the program's
 * shared memory with those address bits.  The reserved bits (14-15, 30-31,
 * 46-48, 52-61) must be 0; the swizzles XOR address bits 4.. with bits 7..
 * as the hardware does, so an operand's swizzle pattern (8 rows of 128, 64
 * or 32 bytes) must start on a 1024-, 512- or 256-byte boundary (the start
 * address may move inside it, e.g. 32 bytes per K step) or the base offset
 * must say where it starts.  All 128 threads must pass the same
 * descriptors and scale_d.
 * The simulator computes at the call (so reading acc before the wait is not
 * caught) and checks every shared byte it reads; numerics as tile_sim_mma.
 * A wgmma needs a tile_sim_wgmma_fence earlier in the program; a thread
 * that returns with wgmma not committed or groups not waited for is an
 * error; fence, commit and wait are warpgroup-synchronous (wait's n
 * included). */
void tile_sim_wgmma(int32_t kind, int32_t n, float *acc, uint64_t a_desc, const uint32_t *a_regs, uint64_t b_desc,
                    int32_t scale_d, int32_t trans_a, int32_t trans_b);
void tile_sim_wgmma_fence(void);              /* wgmma.fence.sync.aligned */
void tile_sim_wgmma_commit(void);             /* wgmma.commit_group.sync.aligned */
void tile_sim_wgmma_wait(int32_t pending);    /* wgmma.wait_group.sync.aligned n */
void tile_sim_fence_proxy_async(void);        /* fence.proxy.async.shared::cta (nothing to do here) */

/* cp.async.bulk.tensor.2d.global.shared::cta.bulk_group (sm_90a), by one
 * thread: the box [box1 rows][box0 elements of elem_bytes] at shared_src,
 * laid out as the tensor map's swizzle (32, 64 or 128 bytes; 0: none)
 * says -- address bits 4.. XORed with bits 7.., as the hardware does, so
 * shared_src must be aligned to 8 rows of the swizzle -- to the 2-D tensor
 * [dim1][dim0] at global_base (row stride `stride` elements) at
 * coordinates (c0, c1), innermost first; an element outside [0, dim) on
 * either dimension is not written, as TMA skips it.  The map's fields come
 * as arguments (the sim target computes them from the kernel's parameters
 * as the launch encodes them).  The copy is done at the call, every shared
 * byte and global element checked: cp.async.bulk.commit_group and
 * wait_group.read (tile_sim_tma_store_wait) have nothing left to do. */
void tile_sim_tma_store(const void *shared_src, void *global_base, int64_t dim0, int64_t dim1, int64_t stride,
                        int32_t c0, int32_t c1, int32_t box0, int32_t box1, int32_t swizzle, int32_t elem_bytes);
void tile_sim_tma_store_wait(void);

#endif
