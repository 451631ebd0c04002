/* For the tests of the simulator itself (test_sim.c, test_sim_tensor.c):
 * the module of kernels written by hand against tile_sim.h, built as the
 * harness builds generated code, and launches of its kernels. */
#ifndef TILE_SIM_HAND_KERNELS_H
#define TILE_SIM_HAND_KERNELS_H

#include "sim.h"

#include <stdio.h>

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

static SimModule *module;

/* Builds tests/sim/c/FILE into `module`; -1 with clang's messages on stderr. */
static int load_kernels(const char *file) {
  char path[512], include[600], err[8192];
  snprintf(path, sizeof path, "%s/tests/sim/c/%s", TILE_SOURCE_DIR, file);
  snprintf(include, sizeof include, "-I%s/tests/sim", TILE_SOURCE_DIR);
  const char *flags[] = {include, "-Wall", "-Werror", NULL};
  if (sim_module_build_file(path, flags, &module, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return -1;
  }
  return 0;
}

/* A launch of kernel `name` from the module, over grid x 1 x 1. */
static SimLaunch hand_launch(const char *name, unsigned grid, int num_warps, void **params, const SimBuffer *buffers,
                             int n_buffers, size_t shared_bytes) {
  char symbol[128];
  snprintf(symbol, sizeof symbol, "%s_sim_entry", name);
  SimLaunch L = {0};
  L.kernel = name;
  L.entry = (SimEntry)sim_module_symbol(module, symbol);
  L.params = params;
  L.grid[0] = grid, L.grid[1] = 1, L.grid[2] = 1;
  L.num_warps = num_warps;
  L.shared_bytes = shared_bytes;
  L.buffers = buffers;
  L.n_buffers = n_buffers;
  if (!L.entry) fprintf(stderr, "no symbol %s\n", symbol);
  return L;
}

#endif
