/* Is there a GPU the GPU tests can use?  Prints its name and compute
 * capability and exits 0, or prints "SKIP: no GPU (why)" and exits 77, the
 * skip code of every test labelled `gpu`.  With `-- COMMAND ARGS...` it runs
 * the command in its place when there is a GPU, so a test that would pass
 * without one (checking the no-GPU message) is skipped, never passed silently.
 *   gpu_probe [-- COMMAND ARGS...] */
#include "../../src/runtime/cuda_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SKIP = 77 };

int main(int argc, char **argv) {
  CudaDriver d;
  if (cuda_open(&d, getenv("TILE_CUDA_LIBRARY"), 0)) {
    printf("SKIP: no GPU (%s)\n", d.error);
    return SKIP;
  }
  char name[256] = "";
  int major = 0, minor = 0;
  d.cuDeviceGetName_fn(name, sizeof name, d.device);
  d.cuDeviceGetAttribute_fn(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d.device);
  d.cuDeviceGetAttribute_fn(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d.device);
  printf("GPU: %s (compute capability %d.%d)\n", name, major, minor);
  cuda_close(&d);
  if (argc < 2) return 0;
  if (strcmp(argv[1], "--") || argc < 3) {
    fprintf(stderr, "usage: gpu_probe [-- COMMAND ARGS...]\n");
    return 2;
  }
  fflush(stdout);
  execvp(argv[2], argv + 2);
  perror(argv[2]);
  return 1;
}
