/* The examples' shared host code (see example.h). */
#include "example.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(const char *name) {
  fprintf(stderr,
          "usage: %s [--quick] [--cpu] [--require-gpu] [--seed N] [--config N|all|tune] [KERNEL.tl]\n"
          "  --quick        CI-sized inputs; default: the source documents' sizes\n"
          "  --cpu          run on the CPU interpreter even with a GPU\n"
          "  --require-gpu  without a GPU, skip (exit 77) instead of using the interpreter\n"
          "  --seed N       seed of the random inputs (default: from the clock)\n"
          "  --config N     the @autotune config to compile (matmul); 'all': each in turn;\n"
          "                 'tune' (the default): the autotuner chooses at launch\n",
          name);
  exit(2);
}

static uint64_t clock_seed(void) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return (uint64_t)t.tv_sec * 1000003u ^ (uint64_t)t.tv_nsec;
}

typedef struct Flags {
  int cpu, require_gpu;
  uint64_t seed;
} Flags;

/* Reads --config's value: an index, "all" or "tune". */
static int parse_config(const char *name, const char *v) {
  if (!strcmp(v, "all")) return EXAMPLE_ALL_CONFIGS;
  if (!strcmp(v, "tune")) return EXAMPLE_AUTOTUNE;
  char *end;
  long c = strtol(v, &end, 10);
  if (*end || c < 0 || c > 1000) usage(name);
  return (int)c;
}

static Flags parse_args(Example *ex, int argc, char **argv) {
  Flags fl = {0, 0, clock_seed() & 0xffffffffu};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--quick")) ex->quick = 1;
    else if (!strcmp(a, "--cpu")) fl.cpu = 1;
    else if (!strcmp(a, "--require-gpu")) fl.require_gpu = 1;
    else if (!strcmp(a, "--seed") && i + 1 < argc) fl.seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(a, "--config") && i + 1 < argc) ex->config = parse_config(ex->name, argv[++i]);
    else if (a[0] == '-') usage(ex->name);
    else ex->kernel_path = a;
  }
  return fl;
}

/* The GPU if there is one (and it is wanted), else the interpreter, said aloud. */
static void choose_target(Example *ex, int cpu, int require_gpu) {
  const char *why = NULL;
  char reason[600];
  if (cpu) {
    why = "--cpu";
  } else if (tile_context_on_cpu(ex->ctx)) {
    why = "TILE_INTERPRET=1";
  } else {
    tile_status s = tile_device_open(ex->ctx, 0);
    if (s == TILE_OK) {
      if (!ex->quiet) printf("%s: GPU %s\n", ex->name, tile_device_name(ex->ctx));
      return;
    }
    if (s != TILE_ERROR_UNSUPPORTED) example_check(ex, s, "tile_device_open(ctx, 0)");
    snprintf(reason, sizeof reason, "no GPU (%s)", tile_error(ex->ctx));
    why = reason;
  }
  if (require_gpu) {
    printf("SKIP: %s: %s, and --require-gpu was given\n", ex->name, why);
    tile_context_destroy(ex->ctx);
    exit(EXAMPLE_SKIP);
  }
  if (!ex->quiet) printf("%s: %s: running on the CPU interpreter\n", ex->name, why);
  if (!tile_context_on_cpu(ex->ctx)) EXAMPLE_TRY(ex, tile_context_use_cpu(ex->ctx));
  ex->on_cpu = 1;
}

void example_open(Example *ex, const char *name, int cpu, int require_gpu, uint64_t seed) {
  ex->name = name;
  ex->rng = seed;
  if (tile_context_create(&ex->ctx) != TILE_OK) {
    fprintf(stderr, "%s: tile_context_create failed\n", ex->name);
    exit(1);
  }
  choose_target(ex, cpu, require_gpu);
}

void example_start(Example *ex, int argc, char **argv, const char *default_kernel) {
  memset(ex, 0, sizeof *ex);
  ex->config = EXAMPLE_AUTOTUNE;
  const char *slash = strrchr(argv[0], '/');
  ex->name = slash ? slash + 1 : argv[0];
  ex->kernel_path = default_kernel;
  Flags fl = parse_args(ex, argc, argv);
  example_open(ex, ex->name, fl.cpu, fl.require_gpu, fl.seed);
  printf("%s: kernel %s, %s sizes, seed %llu\n", ex->name, ex->kernel_path, ex->quick ? "CI (--quick)" : "full",
         (unsigned long long)fl.seed);
}

int example_finish(Example *ex) {
  tile_context_destroy(ex->ctx);
  if (ex->failures) {
    printf("%s: FAILED (%d mismatching results)\n", ex->name, ex->failures);
    return 1;
  }
  printf("%s: all results match\n", ex->name);
  return 0;
}

void example_check(Example *ex, tile_status s, const char *call) {
  if (s == TILE_OK) return;
  fprintf(stderr, "%s: %s: %s\n%s\n", ex->name, call, tile_status_string(s), tile_error(ex->ctx));
  tile_context_destroy(ex->ctx);
  exit(1);
}

void *example_alloc(Example *ex, size_t bytes) {
  void *p = NULL;
  EXAMPLE_TRY(ex, tile_malloc(ex->ctx, &p, bytes));
  return p;
}

void example_upload(Example *ex, void *device, const void *host, size_t bytes) {
  EXAMPLE_TRY(ex, tile_memcpy_to_device(ex->ctx, device, host, bytes));
}

void example_download(Example *ex, void *host, const void *device, size_t bytes) {
  EXAMPLE_TRY(ex, tile_synchronize(ex->ctx));
  EXAMPLE_TRY(ex, tile_memcpy_to_host(ex->ctx, host, device, bytes));
}

void example_poison(Example *ex, void *device, size_t bytes) {
  EXAMPLE_TRY(ex, tile_memset(ex->ctx, device, 0xFF, bytes));
}

tile_kernel *example_kernel(Example *ex, const tile_options *opts) {
  tile_kernel *k = NULL;
  EXAMPLE_TRY(ex, tile_kernel_create_file(ex->ctx, ex->kernel_path, opts, &k));
  return k;
}

long long example_constexpr(const tile_kernel *k, const char *name) {
  long long v = 0;
  if (tile_kernel_constexpr(k, name, &v) != TILE_OK || v <= 0) {
    fprintf(stderr, "the kernel has no positive constexpr '%s'\n", name);
    exit(1);
  }
  return v;
}

void example_refill(tile_kernel *k, char *out, size_t size) {
  const char *meta = tile_kernel_metadata(k), *key = "\"refill\": \"", *at = meta ? strstr(meta, key) : NULL;
  if (at) at += strlen(key);
  snprintf(out, size, "%.*s", at ? (int)strcspn(at, "\"") : 1, at ? at : "-");
}

const char *example_tma(tile_kernel *k) {
  const char *meta = tile_kernel_metadata(k);
  return meta && strstr(meta, "\"tensor_maps\"") ? ", TMA" : "";
}

long long example_cdiv(long long a, long long b) { return (a + b - 1) / b; }

double example_time(Example *ex, void (*launch)(Example *, void *), void *user, int reps) {
  if (ex->on_cpu) reps = 1;
  tile_event start, end;
  EXAMPLE_TRY(ex, tile_event_create(ex->ctx, &start));
  EXAMPLE_TRY(ex, tile_event_create(ex->ctx, &end));
  EXAMPLE_TRY(ex, tile_event_record(ex->ctx, start, NULL));
  for (int r = 0; r < reps; r++) launch(ex, user);
  EXAMPLE_TRY(ex, tile_event_record(ex->ctx, end, NULL));
  EXAMPLE_TRY(ex, tile_synchronize(ex->ctx));
  float ms = 0;
  EXAMPLE_TRY(ex, tile_event_elapsed(ex->ctx, start, end, &ms));
  tile_event_destroy(ex->ctx, start);
  tile_event_destroy(ex->ctx, end);
  return ms / reps;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double example_uniform(Example *ex) { return (double)(splitmix64(&ex->rng) >> 11) * 0x1p-53; }

double example_normal(Example *ex) {
  double u = 1.0 - example_uniform(ex), v = example_uniform(ex); /* u in (0, 1] */
  const double two_pi = 6.283185307179586;
  return sqrt(-2.0 * log(u)) * cos(two_pi * v);
}

uint16_t example_random_half(Example *ex) {
  uint64_t r = splitmix64(&ex->rng);
  uint16_t sign = (uint16_t)((r & 1) << 15), exponent = (uint16_t)(10 + (r >> 1) % 6), mantissa = (uint16_t)(r >> 8 & 0x3ff);
  return (uint16_t)(sign | exponent << 10 | mantissa);
}

double example_half_value(uint16_t h) {
  int exponent = h >> 10 & 0x1f, mantissa = h & 0x3ff;
  double v = exponent ? ldexp(1.0 + mantissa / 1024.0, exponent - 15) : ldexp(mantissa / 1024.0, -14);
  if (exponent == 31) v = mantissa ? NAN : INFINITY;
  return h & 0x8000 ? -v : v;
}

double example_worse(double error, double diff) { return isnan(error) || diff <= error ? error : diff; }

void example_result(Example *ex, const char *what, double max_error, long mismatches, double ms) {
  if (mismatches) ex->failures++;
  printf("  %-50s max error %-9.3g %10.4f ms%s  %s\n", what, max_error, ms, ex->on_cpu ? " (interpreter)" : "",
         mismatches ? "MISMATCH" : "ok");
  if (mismatches) printf("    %ld elements differ from the reference beyond the tolerance\n", mismatches);
}
