/* Two GPUs of one host at once: a context per device (both opened on the
 * main thread), a thread per context JIT-compiling the same vector add into
 * one fresh disk cache and launching it many times, each launch with fresh
 * random inputs of an irregular size and the output poisoned first, checked
 * against C; then the threads swap contexts (each now uses a context another
 * thread opened and used) and go on.  Prints each GPU's name, the launches
 * each thread made on it, and whether its kernel was compiled or read from
 * the cache the other thread filled.
 *   multi_gpu [--rounds R] [--seed S] vector_add.tl
 * Exits 77 with the reason when there are fewer than two GPUs. */
#include "tile/tile.h"

#include <glob.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK = 1024 };

typedef struct Gpu {
  tile_context *ctx;
  tile_kernel *k;
  long long n;               /* elements: irregular, each GPU its own */
  float *x, *y, *out;        /* device */
  float *hx, *hy, *hout;     /* host */
  int from_cache;            /* its kernel was read from the disk cache */
} Gpu;

typedef struct Worker {
  Gpu *gpus;
  int first;                 /* the GPU this thread starts on */
  int rounds;
  unsigned seed;
  pthread_barrier_t *swap;
  long bad;                  /* wrong elements, over all rounds */
  int failed;                /* a call failed (its message printed) */
  int launches[2];           /* per GPU */
} Worker;

static const char *source_path;

static void grid_add(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  long long block = 0;
  tile_kernel_constexpr(k, "BLOCK_SIZE", &block);
  grid[0] = block ? (unsigned)((args[3].i + block - 1) / block) : 0;
  grid[1] = grid[2] = 1;
}

static int failed(Gpu *g, const char *what) {
  fprintf(stderr, "multi_gpu: %s on %s: %s\n", what, tile_device_name(g->ctx), tile_error(g->ctx));
  return 1;
}

/* The kernel (compiled here, or read from the cache) and the buffers. */
static int prepare(Gpu *g) {
  const char *defines[] = {"BLOCK_SIZE=1024"};
  tile_options o;
  tile_options_init(&o);
  o.defines = defines;
  o.num_defines = 1;
  size_t bytes = (size_t)g->n * sizeof(float);
  if (tile_kernel_create_file(g->ctx, source_path, &o, &g->k) != TILE_OK) return failed(g, "tile_kernel_create_file");
  if (tile_malloc(g->ctx, (void **)&g->x, bytes) != TILE_OK || tile_malloc(g->ctx, (void **)&g->y, bytes) != TILE_OK ||
      tile_malloc(g->ctx, (void **)&g->out, bytes) != TILE_OK)
    return failed(g, "tile_malloc");
  g->hx = malloc(bytes), g->hy = malloc(bytes), g->hout = malloc(bytes);
  if (!g->hx || !g->hy || !g->hout) return fprintf(stderr, "multi_gpu: out of host memory\n"), 1;
  return 0;
}

/* One round on g: fresh inputs, the output poisoned (0xFF bytes: NaN), a launch, the result checked. */
static int round_on(Gpu *g, Worker *w, long *bad) {
  size_t bytes = (size_t)g->n * sizeof(float);
  for (long long i = 0; i < g->n; i++) {
    g->hx[i] = (float)(rand_r(&w->seed) % 20001 - 10000) / 64;
    g->hy[i] = (float)(rand_r(&w->seed) % 20001 - 10000) / 64;
  }
  tile_arg args[] = {tile_buffer(g->x, "fp32", (size_t)g->n), tile_buffer(g->y, "fp32", (size_t)g->n),
                     tile_buffer(g->out, "fp32", (size_t)g->n), tile_int(g->n)};
  if (tile_memcpy_to_device(g->ctx, g->x, g->hx, bytes) != TILE_OK ||
      tile_memcpy_to_device(g->ctx, g->y, g->hy, bytes) != TILE_OK || tile_memset(g->ctx, g->out, 0xFF, bytes) != TILE_OK)
    return failed(g, "copying the inputs");
  if (tile_launch_grid(g->k, grid_add, NULL, NULL, args, 4) != TILE_OK) return failed(g, "tile_launch_grid");
  if (tile_memcpy_to_host(g->ctx, g->hout, g->out, bytes) != TILE_OK) return failed(g, "tile_memcpy_to_host");
  for (long long i = 0; i < g->n; i++) {
    float want = g->hx[i] + g->hy[i]; /* exact: multiples of 1/64 below 2^9 */
    if (g->hout[i] != want && (*bad)++ < 5)
      fprintf(stderr, "multi_gpu: %s: out[%lld] = %g, want %g\n", tile_device_name(g->ctx), i, g->hout[i], want);
  }
  return 0;
}

static void *work(void *arg) {
  Worker *w = arg;
  Gpu *mine = &w->gpus[w->first];
  w->failed = prepare(mine);
  for (int r = 0; r < w->rounds && !w->failed; r++) {
    w->failed = round_on(mine, w, &w->bad);
    w->launches[w->first]++;
    if (r == 0) mine->from_cache = tile_kernel_text(mine->k, TILE_STAGE_TIR) == NULL; /* compiled at the first launch */
  }
  pthread_barrier_wait(w->swap); /* the other thread is done with its GPU: take its context */
  int other = 1 - w->first;
  for (int r = 0; r < w->rounds && !w->failed && w->gpus[other].k; r++) {
    w->failed = round_on(&w->gpus[other], w, &w->bad);
    w->launches[other]++;
  }
  return NULL;
}

/* How many files in dir match `pattern` ("*.tile"). */
static int count_matches(const char *dir, const char *pattern) {
  char path[256];
  glob_t g;
  snprintf(path, sizeof path, "%s/%s", dir, pattern);
  int n = glob(path, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
  globfree(&g);
  return n;
}

/* Contexts on GPUs 0 and 1; 77 (skip) with the reason if there are not two. */
static int open_gpus(Gpu gpus[2]) {
  for (int d = 0; d < 2; d++) {
    if (tile_context_create(&gpus[d].ctx) != TILE_OK) return fprintf(stderr, "multi_gpu: no context\n"), 1;
    if (tile_context_on_cpu(gpus[d].ctx)) return printf("SKIP: TILE_INTERPRET is set: this test needs two GPUs\n"), 77;
    if (tile_device_open(gpus[d].ctx, d) == TILE_OK) continue;
    const char *why = tile_error(gpus[d].ctx);
    if (strstr(why, "no CUDA")) return printf("SKIP: fewer than 2 GPUs (%s)\n", why), 77; /* no driver, or no device d */
    return fprintf(stderr, "multi_gpu: GPU %d: %s\n", d, why), 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  int rounds = 40;
  unsigned seed = 12345;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) seed = (unsigned)strtoul(argv[++i], NULL, 0);
    else source_path = argv[i];
  }
  if (!source_path) return fprintf(stderr, "usage: multi_gpu [--rounds R] [--seed S] vector_add.tl\n"), 2;
  char cache[] = "/tmp/tile-multi-gpu-XXXXXX"; /* fresh: both threads compile into it at once */
  if (!mkdtemp(cache)) return perror("mkdtemp"), 1;
  setenv("TILE_CACHE_DIR", cache, 1); /* read by tile_context_create, before any thread */
  Gpu gpus[2] = {{0}};
  int status = open_gpus(gpus);
  srand(seed);
  gpus[0].n = (1 << 22) + 1 + rand() % 4099;       /* irregular: a partial last block */
  gpus[1].n = (1 << 22) + 4099 + rand() % 4099;
  pthread_barrier_t swap;
  pthread_barrier_init(&swap, NULL, 2);
  Worker w[2] = {{gpus, 0, rounds, seed, &swap, 0, 0, {0}}, {gpus, 1, rounds, seed + 1, &swap, 0, 0, {0}}};
  pthread_t threads[2];
  for (int t = 0; status == 0 && t < 2; t++) pthread_create(&threads[t], NULL, work, &w[t]);
  for (int t = 0; status == 0 && t < 2; t++) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&swap);
  if (status == 0) {
    for (int d = 0; d < 2; d++)
      printf("GPU %d: %s, %lld elements, %d launches from thread 0 and %d from thread 1, kernel %s\n", d,
             tile_device_name(gpus[d].ctx), gpus[d].n, w[0].launches[d], w[1].launches[d],
             gpus[d].from_cache ? "from the disk cache" : "compiled");
    int entries = count_matches(cache, "*.tile"), temps = count_matches(cache, "*.tmp*");
    printf("disk cache: %d entries, %d temporary files left\n", entries, temps);
    long bad = w[0].bad + w[1].bad;
    int all = w[0].launches[0] + w[0].launches[1] + w[1].launches[0] + w[1].launches[1];
    if (w[0].failed || w[1].failed || bad || all != 4 * rounds || entries < 1 || temps) {
      fprintf(stderr, "multi_gpu: FAILED: %ld wrong elements, %d of %d launches\n", bad, all, 4 * rounds);
      status = 1;
    } else {
      printf("multi_gpu: OK: %d launches on two GPUs from two threads, every element right\n", all);
    }
  }
  for (int d = 0; d < 2; d++) {
    tile_context_destroy(gpus[d].ctx); /* frees the kernels and device memory */
    free(gpus[d].hx), free(gpus[d].hy), free(gpus[d].hout);
  }
  char command[64];
  snprintf(command, sizeof command, "rm -rf '%s'", cache);
  if (system(command)) fprintf(stderr, "multi_gpu: could not remove %s\n", cache);
  return status;
}
