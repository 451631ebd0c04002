/* A stand-in for libcuda.so.1, for testing the runtime's GPU paths on a
 * machine without a GPU (TILE_CUDA_LIBRARY points at it).  "Device" memory
 * is host memory, modules are accepted if they name the function asked for,
 * and launches are recorded, not run.  The test reaches the recording
 * through fake_cuda_state().
 * Like the real driver it has a primary context per device and a current
 * context per thread: a call that needs one with none current fails
 * (CUDA_ERROR_INVALID_CONTEXT), and so does one given a module, function,
 * stream, event or allocation of another device than the current
 * context's (CUDA_ERROR_INVALID_HANDLE; the real driver fails or runs on
 * the wrong GPU).  Each such refusal is counted in wrong_context.  Calls may
 * come from several threads: the recording is kept under a lock. */
#ifndef TILE_TEST_FAKE_CUDA_H
#define TILE_TEST_FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* The arguments of one cuTensorMapEncodeTiled call. */
typedef struct FakeEncode {
  void *map;
  int data_type, rank;
  uint64_t address;
  uint64_t dims[5], strides[4];
  uint32_t box[5], element_strides[5];
  int interleave, swizzle, l2_promotion, oob_fill;
} FakeEncode;

/* What the fake's cuTensorMapEncodeTiled writes into a CUtensorMap (the
 * real one is opaque), so a test can tell which map a launch passed. */
typedef struct FakeTensorMap {
  uint64_t magic;               /* FAKE_TENSOR_MAP_MAGIC */
  uint64_t address;
  uint64_t dims[5], strides[4];
  uint32_t box[5];
  uint32_t call;                /* which encode call wrote it (FakeCuda.encodes then, from 1) */
} FakeTensorMap;

#define FAKE_TENSOR_MAP_MAGIC 0x50414d524f534e54ull /* "TNSORMAP" */

enum { FAKE_MAX_DEVICES = 8 };

typedef struct FakeCuda {
  int cc_major, cc_minor;       /* what the device reports (set before the runtime opens it) */
  int max_shared_optin;
  int l2_bytes;                 /* the L2's size (0: the autotuner does not flush it) */
  int sm_count;                 /* multiprocessors (0: unknown, as a launch of one wave then is) */
  int live_allocations, live_modules, live_streams, live_events;
  int launches, set_current_calls, shared_attribute;
  int devices;                  /* how many devices the driver reports (0: $FAKE_CUDA_DEVICES, else 1; at most FAKE_MAX_DEVICES) */
  int launches_on[FAKE_MAX_DEVICES]; /* launches per device */
  int wrong_context;            /* calls refused for the context current on their thread (see above) */
  char wrong_call[64];          /* the first of them */
  int launch_device;            /* the device of the launch being recorded (for on_launch) */
  /* this thread's current context, as another library would see and set it with cuCtxGetCurrent /
   * cuCtxSetCurrent (but not counted in set_current_calls) */
  void *(*current)(void);
  void (*make_current)(void *context);
  int (*device_of)(const void *p); /* the device of the allocation that holds p; -1 if none */
  int fail_next_load;           /* the next cuModuleLoadDataEx fails with a JIT log */
  unsigned max_block;           /* nonzero: launches of larger blocks fail (out of resources) */
  /* the last launch */
  char function[64];
  unsigned grid[3], block[3], shared;
  void *stream;
  int params_to_copy;           /* how many kernelParams to record (the fake cannot know) */
  uint64_t params[16];          /* the first 8 bytes behind each */
  int memsets, copies;          /* cuMemsetD8 and cuMemcpyDtoD calls so far */
  size_t memset_bytes;          /* bytes cuMemsetD8 wrote so far */
  /* Set by a test: each launch "runs" this (after the launch above is
   * recorded): it may touch device memory (host memory here) through the
   * kernel's parameters, and returns the launch's duration in ms.  While it
   * is set, events read a virtual clock that launches advance by that much,
   * so elapsed times are the test's choice. */
  double (*on_launch)(struct FakeCuda *state, void **params);
  double clock_ms;              /* the virtual clock */
  /* tensor maps (a fake built with FAKE_CUDA_NO_TENSOR_MAP has no cuTensorMapEncodeTiled, as drivers before 12.0) */
  int encodes;                  /* cuTensorMapEncodeTiled calls so far */
  int fail_next_encode;         /* the next one fails with CUDA_ERROR_INVALID_VALUE */
  FakeEncode encoded[8];        /* the arguments of call i (from 1) in encoded[(i - 1) % 8] */
  int maps_to_copy;             /* the last launch's kernelParams[params_to_copy + i], i < this (at most 8), are maps: */
  FakeTensorMap maps[8];        /* the first bytes behind each */
  uintptr_t map_addresses[8];   /* and where they were */
} FakeCuda;

typedef FakeCuda *(*FakeCudaStateFn)(void);

#include <dlfcn.h>
#include <stdio.h>

/* The recording of the fake driver at `path`, loaded here as the same
 * instance the runtime will open (TILE_CUDA_LIBRARY=path); NULL, said on
 * stderr, if it cannot be loaded.  *library is for dlclose. */
static inline FakeCuda *fake_cuda_open(const char *path, void **library) {
  *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  FakeCudaStateFn state = *library ? (FakeCudaStateFn)dlsym(*library, "fake_cuda_state") : NULL;
  if (!state) fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
  return state ? state() : NULL;
}

#endif
