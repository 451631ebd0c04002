/* What the simulator's files share (sim.c, sim_printf.c, sim_tensor.c): not
 * for tests. */
#ifndef TILE_SIM_INTERNAL_H
#define TILE_SIM_INTERNAL_H

#include "sim.h"

#include <stdint.h>
#include <stdio.h>

/* Appends n bytes to t (growing it); -1 when out of memory or past limit. */
int sim_text_append(SimText *t, const char *s, size_t n, size_t limit);

/* Formats CUDA's printf `format` with `args` packed as the PTX vprintf ABI
 * (each argument aligned to its size; char and short promoted to int,
 * float to double; %s and %p take 8-byte pointers) into out.  Returns the
 * number of arguments read, or -1 with a message in err for a conversion
 * CUDA does not support. */
int sim_format(const char *format, const void *args, SimText *out, char *err, size_t errsz);

/* ---- sim.c, for the instructions of sim_tensor.c ---------------------------- */

typedef struct Sim Sim;
typedef struct SimTensor SimTensor;

/* The simulation running a thread on this OS thread, or NULL (a tile_sim_*
 * call outside sim_run does nothing). */
Sim *sim_active(void);
int sim_thread_id(const Sim *s);  /* the running thread's %tid.x */
SimTensor *sim_tensor_of(Sim *s);
/* The program's shared memory: 1024-byte aligned, *bytes long. */
unsigned char *sim_shared_window(const Sim *s, size_t *bytes);

/* Stops the launch with "kernel 'K' (program ...), thread T (warp W, lane
 * L): MESSAGE" from inside the running thread, which never resumes. */
_Noreturn void sim_fail(Sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Fails unless [p, p + bytes) lies inside one of the launch's buffers and p
 * is a multiple of align: "out-of-bounds WHAT of N bytes at P: ...". */
void sim_check_global_span(Sim *s, const char *what, const void *p, size_t bytes, size_t align);

/* Waits until all `width` threads (32: the running thread's warp; 128: its
 * warpgroup, warps 4w..4w+3) have called it with the same instruction `op`
 * (which must stay alive until the call returns).  Returns 1 in the thread
 * whose arrival completed the meeting: it runs on before any of the others
 * resumes, so it can compute for all of them.  Fails on divergent
 * instructions, on threads of the group that exited, and on a warpgroup the
 * program does not have. */
int sim_rendezvous(Sim *s, int width, const char *op);

float sim_half_to_float(uint16_t h);

/* ---- sim_tensor.c, for sim.c ------------------------------------------------ */

SimTensor *sim_tensor_new(int num_warps);  /* NULL when out of memory */
void sim_tensor_start(SimTensor *t);       /* before each program */
/* Thread tid returns: fails the launch if it leaves asynchronous copies or
 * wgmma groups behind. */
void sim_tensor_thread_exit(Sim *s, SimTensor *t, int tid);
void sim_tensor_free(SimTensor *t);        /* NULL is fine */

#endif
