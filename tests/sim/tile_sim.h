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

/* bar.sync 0 over the whole program */
void tile_sim_barrier(void);
/* shfl.sync.{bfly,up,idx}.b32 with a full-warp mask: all 32 lanes of the
 * calling thread's warp must call it.  up: lanes below `delta` get their own
 * value back. */
int32_t tile_sim_shfl_xor(int32_t value, int32_t lane_mask);
int32_t tile_sim_shfl_up(int32_t value, int32_t delta);
int32_t tile_sim_shfl_idx(int32_t value, int32_t src_lane);

/* The program's dynamic shared memory (as many bytes as the launch says),
 * 16-byte aligned, poisoned with 0xA5 before each program.  The module may
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
 * operand's bits in their low bytes; returns the old bits. */
enum { TILE_SIM_ATOMIC_ADD, TILE_SIM_ATOMIC_MAX, TILE_SIM_ATOMIC_MIN, TILE_SIM_ATOMIC_AND, TILE_SIM_ATOMIC_OR,
       TILE_SIM_ATOMIC_XOR, TILE_SIM_ATOMIC_XCHG, TILE_SIM_ATOMIC_CAS };
enum { TILE_SIM_KIND_SIGNED, TILE_SIM_KIND_UNSIGNED, TILE_SIM_KIND_FLOAT, /* fp16 when bytes == 2 */
       TILE_SIM_KIND_BF16 /* bf16 (bytes == 2) */ };
uint64_t tile_sim_atomic(int32_t op, int32_t kind, int32_t bytes, void *global_ptr, uint64_t value, uint64_t compare);

/* Approximate instructions the GPU code uses (ex2.approx.f32 and friends),
 * computed exactly here. */
float tile_sim_ex2_approx(float x);
float tile_sim_lg2_approx(float x);
float tile_sim_rsqrt_approx(float x);

/* CUDA's device printf: `args` packed as the PTX vprintf ABI (each argument
 * aligned to its size; floats promoted to double). */
int32_t tile_sim_vprintf(const char *format, const void *args);
/* CUDA's __assertfail: stops the program, reporting it as a failed
 * device_assert with the thread, program, file and line. */
void tile_sim_assertfail(const char *message, const char *file, int32_t line, const char *function,
                         uint64_t char_size);

#endif
