/* Several GPUs on the fake driver (fake_cuda.c with two devices, a current
 * context per thread, calls with the wrong one current refused): one
 * context per device, the same JIT kernel on both, launched in turns from
 * one thread and at once from two threads that then swap contexts (so no
 * thread relies on the context it opened being current); each launch's
 * buffers and module on its own device, its result (the fake runs the
 * vector add on the host) checked against C.  Contexts destroyed on a
 * device another context still uses leave none of their streams or events
 * behind.  The disk cache shared by threads and a forked process compiling
 * the same kernels at once: a reader never sees a partial entry, and no
 * temporary file is left. */
#include "check.h"
#include "fake_cuda.h"
#include "../../src/runtime/cache.h"
#include "tile/tile.h"

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { N = 3001, ROUNDS = 60, WORKERS = 4, VARIANTS = 3 };

static FakeCuda *fake;
static atomic_int foreign_buffers; /* launches given a buffer of another device than the kernel's */
static atomic_int cache_notes;     /* launches whose diagnostics say the disk cache failed them */

/* The vector add, "run" by the fake at each launch: out = x + y, if every buffer is on the launch's device. */
static double run_add(FakeCuda *state, void **params) {
  float *x = *(float **)params[0], *y = *(float **)params[1], *out = *(float **)params[2];
  int n = *(int *)params[3];
  int here = state->launch_device;
  if (state->device_of(x) != here || state->device_of(y) != here || state->device_of(out) != here) {
    foreign_buffers++;
    return 0;
  }
  for (int i = 0; i < n; i++) out[i] = x[i] + y[i];
  return 0;
}

/* A context on the fake driver with its disk cache in `cache`, on device `ordinal` (-1: none opened yet).
 * On the main thread only: setenv races other threads' getenv. */
static tile_context *context_on(const char *cache, int ordinal) {
  setenv("TILE_CUDA_LIBRARY", FAKE_CUDA_PATH, 1);
  setenv("TILE_CACHE_DIR", cache, 1);
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  unsetenv("TILE_CUDA_LIBRARY"), unsetenv("TILE_CACHE_DIR");
  if (ctx && ordinal >= 0 && tile_device_open(ctx, ordinal) != TILE_OK) fprintf(stderr, "open: %s\n", tile_error(ctx));
  return ctx;
}

static tile_kernel *vector_add(tile_context *ctx, int block) {
  char define[32];
  snprintf(define, sizeof define, "BLOCK_SIZE=%d", block);
  const char *defines[] = {define};
  tile_options o;
  tile_options_init(&o);
  o.defines = defines;
  o.num_defines = 1;
  tile_kernel *k = NULL;
  if (tile_kernel_create_file(ctx, TILE_SOURCE_DIR "/tests/seeds/vector_add.tl", &o, &k) != TILE_OK)
    fprintf(stderr, "create: %s\n", tile_error(ctx));
  return k;
}

static void grid_add(const tile_kernel *k, const tile_arg *args, int n, unsigned grid[3], void *user) {
  long long block = 0;
  tile_kernel_constexpr(k, "BLOCK_SIZE", &block);
  grid[0] = block ? (unsigned)((args[3].i + block - 1) / block) : 0;
}

/* One context's buffers, and its kernel. */
typedef struct Add {
  tile_context *ctx;
  tile_kernel *k;
  float *x, *y, *out; /* device */
} Add;

static int add_alloc(Add *a) {
  return tile_malloc(a->ctx, (void **)&a->x, 4 * N) == TILE_OK && tile_malloc(a->ctx, (void **)&a->y, 4 * N) == TILE_OK &&
         tile_malloc(a->ctx, (void **)&a->out, 4 * N) == TILE_OK;
}

/* Fresh inputs, the output poisoned, one launch, the result checked: 1 if all is right. */
static int add_once(Add *a, unsigned *seed) {
  float x[N], y[N], out[N];
  for (int i = 0; i < N; i++) x[i] = (float)(rand_r(seed) % 2001 - 1000), y[i] = (float)(rand_r(seed) % 2001 - 1000);
  tile_arg args[] = {tile_buffer(a->x, "fp32", N), tile_buffer(a->y, "fp32", N), tile_buffer(a->out, "fp32", N),
                     tile_int(N)};
  int ok = tile_memcpy_to_device(a->ctx, a->x, x, sizeof x) == TILE_OK &&
           tile_memcpy_to_device(a->ctx, a->y, y, sizeof y) == TILE_OK &&
           tile_memset(a->ctx, a->out, 0xFF, sizeof out) == TILE_OK &&
           tile_launch_grid(a->k, grid_add, NULL, NULL, args, 4) == TILE_OK;
  if (ok && strstr(tile_diagnostics(a->ctx), "cache:")) { /* an entry that did not read, or could not be written */
    fprintf(stderr, "%s\n", tile_diagnostics(a->ctx));
    cache_notes++;
  }
  ok = ok && tile_synchronize(a->ctx) == TILE_OK && tile_memcpy_to_host(a->ctx, out, a->out, sizeof out) == TILE_OK;
  if (!ok) fprintf(stderr, "%s: %s\n", tile_device_name(a->ctx), tile_error(a->ctx));
  for (int i = 0; ok && i < N; i++) ok = out[i] == x[i] + y[i];
  return ok;
}

static void remove_dir(const char *dir) {
  char command[200];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  if (system(command)) fprintf(stderr, "could not remove %s\n", dir);
}

/* ---- one thread, two devices in turns ------------------------------------------------------- */

static void test_in_turns(void) {
  char dir[] = "/tmp/tile-multi-XXXXXX";
  if (!mkdtemp(dir)) return;
  Add a[2];
  for (int d = 0; d < 2; d++) {
    a[d] = (Add){.ctx = context_on(dir, d)};
    a[d].k = vector_add(a[d].ctx, 512);
    CHECK(a[d].k && add_alloc(&a[d]));
  }
  CHECK(!strcmp(tile_device_name(a[0].ctx), "Fake GPU 0") && !strcmp(tile_device_name(a[1].ctx), "Fake GPU 1"));
  tile_context *none = context_on(dir, -1);
  CHECK(tile_device_open(none, 2) == TILE_ERROR_UNSUPPORTED && !strcmp(tile_error(none), "no CUDA device 2 (the driver sees 2)"));
  tile_context_destroy(none);
  int before[2] = {fake->launches_on[0], fake->launches_on[1]}, wrong = fake->wrong_context, good = 0;
  unsigned seed = 1;
  for (int r = 0; r < ROUNDS; r++) good += add_once(&a[r % 2], &seed);
  CHECK(good == ROUNDS);
  CHECK(fake->launches_on[0] == before[0] + ROUNDS / 2 && fake->launches_on[1] == before[1] + ROUNDS / 2);
  CHECK(fake->wrong_context == wrong && foreign_buffers == 0 && cache_notes == 0);
  /* the second kernel came from the first's cache entry (one target, one key) */
  CHECK(check_count_files(dir, ".tile") == 1 && tile_kernel_text(a[1].k, TILE_STAGE_TIR) == NULL);
  /* another library made its own context current between our calls */
  static int other;
  fake->make_current(&other);
  CHECK(add_once(&a[0], &seed) && fake->current() != &other);
  int live = fake->live_allocations;
  tile_context_destroy(a[0].ctx);
  tile_context_destroy(a[1].ctx);
  CHECK(fake->live_allocations == live - 6 && fake->wrong_context == wrong);
  remove_dir(dir);
}

/* ---- two threads at once, then swapping contexts -------------------------------------------- */

typedef struct Worker {
  Add *adds;              /* both devices' */
  int first;              /* the one this thread starts with */
  pthread_barrier_t *swap;
  int good;
} Worker;

static void *work(void *arg) {
  Worker *w = arg;
  unsigned seed = (unsigned)w->first + 7;
  Add *mine = &w->adds[w->first], *theirs = &w->adds[1 - w->first];
  mine->k = vector_add(mine->ctx, 256); /* both compile at once, into one cache */
  if (mine->k && add_alloc(mine))
    for (int r = 0; r < ROUNDS; r++) w->good += add_once(mine, &seed);
  pthread_barrier_wait(w->swap); /* the other thread is done with its context: take it */
  for (int r = 0; r < ROUNDS && theirs->k; r++) w->good += add_once(theirs, &seed);
  return NULL;
}

static void test_threads(void) {
  char dir[] = "/tmp/tile-multi-XXXXXX";
  if (!mkdtemp(dir)) return;
  Add adds[2] = {{.ctx = context_on(dir, 0)}, {.ctx = context_on(dir, 1)}}; /* opened here: this thread's current context is 1's */
  pthread_barrier_t swap;
  pthread_barrier_init(&swap, NULL, 2);
  Worker w[2] = {{adds, 0, &swap, 0}, {adds, 1, &swap, 0}};
  int before[2] = {fake->launches_on[0], fake->launches_on[1]}, wrong = fake->wrong_context;
  pthread_t threads[2];
  for (int t = 0; t < 2; t++) pthread_create(&threads[t], NULL, work, &w[t]);
  for (int t = 0; t < 2; t++) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&swap);
  CHECK(w[0].good == 2 * ROUNDS && w[1].good == 2 * ROUNDS);
  CHECK(fake->launches_on[0] == before[0] + 2 * ROUNDS && fake->launches_on[1] == before[1] + 2 * ROUNDS);
  if (fake->wrong_context != wrong) fprintf(stderr, "refused by the driver: %s\n", fake->wrong_call);
  CHECK(fake->wrong_context == wrong && foreign_buffers == 0 && cache_notes == 0);
  CHECK(check_count_files(dir, ".tile") == 1 && check_count_files(dir, ".tmp") == 0);
  tile_context_destroy(adds[0].ctx);
  tile_context_destroy(adds[1].ctx);
  remove_dir(dir);
}

/* ---- contexts sharing a device -------------------------------------------------------------- */

/* Two contexts on device 1 share its primary context: destroying one releases its streams and
 * events, which would otherwise live on in the other's. */
static void test_shared_device(void) {
  char dir[] = "/tmp/tile-multi-XXXXXX";
  if (!mkdtemp(dir)) return;
  tile_context *keep = context_on(dir, 1), *gone = context_on(dir, 1);
  int streams = fake->live_streams, events = fake->live_events;
  tile_stream s[2];
  tile_event e;
  CHECK(tile_stream_create(gone, &s[0]) == TILE_OK && tile_stream_create(keep, &s[1]) == TILE_OK);
  CHECK(tile_event_create(gone, &e) == TILE_OK && tile_event_record(gone, e, s[0]) == TILE_OK);
  CHECK(fake->live_streams == streams + 2 && fake->live_events == events + 1);
  tile_context_destroy(gone);
  CHECK(fake->live_streams == streams + 1 && fake->live_events == events);
  CHECK(tile_stream_synchronize(keep, s[1]) == TILE_OK);
  tile_context_destroy(keep);
  CHECK(fake->live_streams == streams);
  remove_dir(dir);
}

/* ---- the disk cache under contention -------------------------------------------------------- */

static char stress_dir[64];
static atomic_int writers_left, partial_reads, whole_reads;
static tile_context *writer_contexts[WORKERS];
static pthread_barrier_t variant_start;

/* Compiles (or finds) every variant in ctx on device `ordinal`, checking each result; destroys ctx.
 * The threads start each variant together (`together`; NULL in the process), so they write it at once.
 * (Contexts are made on the main thread: setenv races the other threads' getenv.) */
static int fill_cache(tile_context *ctx, int ordinal, pthread_barrier_t *together) {
  unsigned seed = (unsigned)ordinal;
  int good = 0;
  if (tile_device_open(ctx, ordinal) != TILE_OK) fprintf(stderr, "open: %s\n", tile_error(ctx));
  for (int v = 0; v < VARIANTS; v++) {
    Add a = {.ctx = ctx};
    if (together) pthread_barrier_wait(together);
    a.k = vector_add(ctx, 128 << v);
    good += a.k && add_alloc(&a) && add_once(&a, &seed);
  }
  tile_context_destroy(ctx);
  return good;
}

static void *fill_thread(void *arg) {
  tile_context **ctx = arg;
  int t = (int)(ctx - writer_contexts);
  intptr_t good = fill_cache(*ctx, t % 2, &variant_start);
  writers_left--;
  return (void *)good;
}

/* Reads every entry while the writers run: each must be whole (or absent), never partial. */
static void *read_entries(void *unused) {
  while (writers_left > 0) {
    DIR *d = opendir(stress_dir);
    for (struct dirent *e; d && (e = readdir(d));) {
      char *dot = strstr(e->d_name, ".tile"), key[128], why[256];
      if (!dot || dot[5] || (size_t)(dot - e->d_name) >= sizeof key) continue;
      snprintf(key, sizeof key, "%.*s", (int)(dot - e->d_name), e->d_name);
      CacheEntry entry;
      int found = cache_read(stress_dir, key, &entry, why, sizeof why);
      if (found < 0) fprintf(stderr, "partial entry %s: %s\n", e->d_name, why);
      partial_reads += found < 0;
      whole_reads += found > 0;
      if (found > 0) cache_entry_free(&entry);
    }
    if (d) closedir(d);
  }
  return NULL;
}

static void test_cache_contention(void) {
  snprintf(stress_dir, sizeof stress_dir, "/tmp/tile-multi-XXXXXX");
  if (!mkdtemp(stress_dir)) return;
  int start[2];
  CHECK(pipe(start) == 0);
  pid_t child = fork(); /* before any thread: it waits for the writers to start, then writes too */
  if (child == 0) {
    char go;
    close(start[1]);
    tile_context *ctx = context_on(stress_dir, -1);
    _exit(ctx && read(start[0], &go, 1) == 1 && fill_cache(ctx, 1, NULL) == VARIANTS ? 0 : 1);
  }
  close(start[0]);
  for (int t = 0; t < WORKERS; t++) writer_contexts[t] = context_on(stress_dir, -1);
  writers_left = WORKERS;
  pthread_barrier_init(&variant_start, NULL, WORKERS);
  pthread_t writers[WORKERS], reader;
  pthread_create(&reader, NULL, read_entries, NULL);
  for (int t = 0; t < WORKERS; t++) pthread_create(&writers[t], NULL, fill_thread, &writer_contexts[t]);
  CHECK(write(start[1], "x", 1) == 1);
  close(start[1]);
  int good = 0, status = 1;
  for (int t = 0; t < WORKERS; t++) {
    void *r;
    pthread_join(writers[t], &r);
    good += (int)(intptr_t)r;
  }
  pthread_join(reader, NULL);
  pthread_barrier_destroy(&variant_start);
  waitpid(child, &status, 0);
  CHECK(good == WORKERS * VARIANTS && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(partial_reads == 0 && cache_notes == 0);
  printf("cache contention: %d whole reads of entries while %d threads and a process wrote them\n", (int)whole_reads,
         WORKERS);
  CHECK(check_count_files(stress_dir, ".tile") == VARIANTS && check_count_files(stress_dir, ".tmp") == 0);
  remove_dir(stress_dir);
}

/* cache.c alone, from threads of one process: each writes the same entry many times (a temporary
 * name per process would be shared by them) while others read it. */
static char big_image[300000]; /* more than one write() */
static atomic_int entry_writes_failed;

static void *write_entry(void *unused) {
  char why[512];
  CacheEntry e = {(unsigned char *)big_image, sizeof big_image, 0, "{\"same\": true}", 15, NULL, 0};
  for (int r = 0; r < 100; r++)
    if (cache_write(stress_dir, "5a3e", &e, why, sizeof why)) {
      if (!entry_writes_failed++) fprintf(stderr, "cache_write: %s\n", why);
    }
  writers_left--;
  return NULL;
}

static void *read_entry(void *unused) {
  char why[256];
  while (writers_left > 0) {
    CacheEntry e;
    int found = cache_read(stress_dir, "5a3e", &e, why, sizeof why);
    partial_reads += found < 0 || (found > 0 && (e.image_size != sizeof big_image || memcmp(e.image, big_image, sizeof big_image)));
    whole_reads += found > 0;
    if (found > 0) cache_entry_free(&e);
  }
  return NULL;
}

static void test_cache_threads(void) {
  snprintf(stress_dir, sizeof stress_dir, "/tmp/tile-multi-XXXXXX");
  if (!mkdtemp(stress_dir)) return;
  for (size_t i = 0; i < sizeof big_image; i++) big_image[i] = (char)(i * 131 >> 3);
  partial_reads = whole_reads = 0;
  writers_left = WORKERS;
  pthread_t threads[WORKERS + 2];
  for (int t = 0; t < WORKERS + 2; t++) pthread_create(&threads[t], NULL, t < WORKERS ? write_entry : read_entry, NULL);
  for (int t = 0; t < WORKERS + 2; t++) pthread_join(threads[t], NULL);
  CHECK(entry_writes_failed == 0 && partial_reads == 0 && whole_reads > 0);
  CHECK(check_count_files(stress_dir, ".tile") == 1 && check_count_files(stress_dir, ".tmp") == 0);
  remove_dir(stress_dir);
}

int main(void) {
  void *library;
  fake = fake_cuda_open(FAKE_CUDA_PATH, &library);
  if (!fake) return 1;
  fake->devices = 2;
  fake->on_launch = run_add;
  fake->params_to_copy = 4;
  test_in_turns();
  test_threads();
  test_shared_device();
  test_cache_contention();
  test_cache_threads();
  dlclose(library);
  return check_report();
}
