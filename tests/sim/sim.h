/* The thread simulator's harness API: what a test uses to build code for
 * the "sim" target into a shared object and run it over a grid (sim.c runs
 * it; tile_sim.h is what the generated code calls).
 *
 * A launch runs the programs of the grid one after another in the
 * interpreter's order (axis 0 fastest), each as 32 * num_warps green threads
 * switched round-robin at every synchronising call, so a run is
 * deterministic.  Errors (an access outside the launch's buffers, a failed
 * device assert, a deadlock, shared memory written out of bounds) stop the
 * run and come back as -1 with a message naming the kernel, program and
 * thread; nothing aborts. */
#ifndef TILE_SIM_SIM_H
#define TILE_SIM_SIM_H

#include <stddef.h>

enum {
  SIM_MAX_SHARED = 232448,       /* the largest dynamic shared memory of a program (H100: 227 KiB) */
  SIM_DEFAULT_STACK = 256 << 10, /* bytes of stack per simulated thread */
  SIM_MAX_PRINTED = 64 << 20     /* vprintf output a launch may write */
};

typedef void (*SimEntry)(void **params);

typedef struct SimBuffer {
  const char *name;        /* for messages */
  void *data;
  size_t bytes;
} SimBuffer;

/* Text a launch printed; data is malloc'ed (free with sim_text_free). */
typedef struct SimText {
  char *data;
  size_t len, cap;
} SimText;

typedef struct SimLaunch {
  const char *kernel;        /* name, for messages */
  SimEntry entry;            /* K_sim_entry */
  void **params;             /* params[i] points at parameter i's value */
  unsigned grid[3];
  int num_warps;             /* 1..32 */
  size_t shared_bytes;       /* dynamic shared memory per program, at most SIM_MAX_SHARED */
  const SimBuffer *buffers;  /* the only global memory the kernel may touch */
  int n_buffers;
  SimText *printed;          /* where vprintf writes; NULL: stdout */
  size_t stack_bytes;        /* per thread; 0: SIM_DEFAULT_STACK */
  int warp_first;            /* the schedule: each warp as far as it can, then the next (else thread by thread) */
  char error[1024];          /* set when the run fails */
} SimLaunch;

/* Runs the launch; 0, or -1 with launch->error set. */
int sim_run(SimLaunch *launch);

void sim_text_free(SimText *t);

/* ---- building code for the sim target ------------------------------------- */

typedef struct SimModule SimModule;

/* Compiles `source` (LLVM IR text if `suffix` is ".ll", C if ".c") with
 * clang (TILE_SIM_CLANG, else the clang-19 found at configure time) as
 * `-O1 -fPIC -shared -rtlib=compiler-rt`, plus `flags` (NULL-terminated, may be NULL), into a
 * shared object and loads it.  Its calls to tile_sim_* and __nv_* resolve
 * to this executable's (linked with -rdynamic).  0, or -1 with clang's
 * messages in err. */
int sim_module_build(const char *source, size_t len, const char *suffix, const char *const *flags, SimModule **out,
                     char *err, size_t errsz);
/* sim_module_build over the file at `path` (its suffix: .ll or .c). */
int sim_module_build_file(const char *path, const char *const *flags, SimModule **out, char *err, size_t errsz);
/* A symbol of the module, or NULL. */
void *sim_module_symbol(SimModule *m, const char *name);
void sim_module_close(SimModule *m);  /* NULL is fine */

#endif
