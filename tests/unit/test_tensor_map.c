/* Tensor maps (docs/abi.md, sections 2 and 5) on the fake driver: a kernel
 * whose metadata lists "tensor_maps" gets one CUtensorMap per entry,
 * encoded at each launch from the launch's arguments and passed after its
 * ABI parameters.  Checks every argument of each cuTensorMapEncodeTiled call
 * (dims from the right arguments, innermost first; strides in bytes; the
 * fixed fields), that the maps the launch passes are those encoded, in
 * order and 64-byte aligned; a dim below 1 encoded as 1; the errors of the
 * arguments the tensor memory accelerator cannot take, of a failing encode
 * and of a driver without cuTensorMapEncodeTiled (which still loads and
 * launches other kernels); and the metadata checks of malformed maps. */
#include "check.h"
#include "fake_cuda.h"
#include "tile/tile.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef FAKE_CUDA_PATH
#error "FAKE_CUDA_PATH: the fake driver's path"
#endif
#ifndef FAKE_CUDA_NO_TMA_PATH
#error "FAKE_CUDA_NO_TMA_PATH: the path of the fake driver without cuTensorMapEncodeTiled"
#endif

static FakeCuda *fake;

static tile_context *context_on(const char *driver) {
  setenv("TILE_CUDA_LIBRARY", driver, 1);
  tile_context *ctx = NULL;
  CHECK(tile_context_create(&ctx) == TILE_OK);
  unsetenv("TILE_CUDA_LIBRARY");
  return ctx;
}

/* mm(a_ptr: *fp16:16, b_ptr: *fp16, M: i32, N: i64, K: i32, stride_am: i32:16, stride_bk: i32, stride_bn: ':1')
 * with the tensor maps `maps` (a JSON array's items). */
static const char metadata_format[] =
    "{\"format\": 1, \"name\": \"mm\", \"signature\": \"\", \"num_args\": 8,\n"
    " \"params\": [{\"name\": \"a_ptr\", \"type\": \"*fp16\", \"divisibility\": 16, \"position\": 0},\n"
    "            {\"name\": \"b_ptr\", \"type\": \"*fp16\", \"position\": 1},\n"
    "            {\"name\": \"M\", \"type\": \"i32\", \"position\": 2},\n"
    "            {\"name\": \"N\", \"type\": \"i64\", \"position\": 3},\n"
    "            {\"name\": \"K\", \"type\": \"i32\", \"position\": 4},\n"
    "            {\"name\": \"stride_am\", \"type\": \"i32\", \"divisibility\": 16, \"position\": 5},\n"
    "            {\"name\": \"stride_bk\", \"type\": \"i32\", \"position\": 6}],\n"
    " \"specialized\": [{\"name\": \"stride_bn\", \"type\": \"i32\", \"position\": 7}],\n"
    " \"num_warps\": 4, \"shared\": 0, \"arch\": \"sm_90a\", \"target\": \"cubin\",\n"
    " \"tensor_maps\": [%s]}\n";
enum { NUM_PARAMS = 7, NUM_ARGS = 8 };

/* A: M x K, row stride stride_am; B: K x N, row stride stride_bk; a map of
 * rank 3 with a constant extent, a constant stride and a ':1' argument's. */
static const char three_maps[] =
    "{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 5}],"
    " \"box\": [64, 128], \"swizzle\": 128},\n"
    "{\"base\": 1, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 3}, {\"arg\": 4}], \"strides\": [{\"arg\": 6}],"
    " \"box\": [64, 32], \"swizzle\": 128, \"note\": \"unknown keys are ignored\"},\n"
    "{\"base\": 1, \"dtype\": \"bf16\", \"dims\": [{\"arg\": 3}, {\"value\": 7}, {\"arg\": 7}],"
    " \"strides\": [{\"arg\": 6}, {\"value\": 4096}], \"box\": [8, 7, 1], \"swizzle\": 0}";

static const char cubin[] = "\x7f" "ELF fake image with the symbol mm in it";

static tile_status load(tile_context *ctx, const char *maps, tile_kernel **k) {
  char metadata[4096];
  snprintf(metadata, sizeof metadata, metadata_format, maps);
  *k = NULL;
  return tile_kernel_load(ctx, cubin, sizeof cubin - 1, metadata, k);
}

static tile_kernel *load_ok(tile_context *ctx, const char *maps) {
  tile_kernel *k = NULL;
  tile_status s = load(ctx, maps, &k);
  if (s != TILE_OK) fprintf(stderr, "load: %s\n", tile_error(ctx));
  CHECK(s == TILE_OK && k);
  return k;
}

typedef struct Args {
  void *a, *b;
  long long m, n, k, stride_am, stride_bk, stride_bn;
} Args;

static tile_status launch(tile_kernel *k, const Args *v) {
  tile_arg args[NUM_ARGS] = {tile_buffer(v->a, "fp16", 0), tile_buffer(v->b, "fp16", 0), tile_int(v->m),
                             tile_int(v->n), tile_int(v->k), tile_int(v->stride_am), tile_int(v->stride_bk),
                             tile_int(v->stride_bn)};
  unsigned grid[3] = {3, 2, 1};
  return tile_launch(k, grid, NULL, args, NUM_ARGS);
}

/* Encode call `call` (from 1) took these arguments. */
static void check_encoded(int call, int data_type, const void *address, int rank, const uint64_t *dims,
                          const uint64_t *strides, const uint32_t *box, int swizzle) {
  const FakeEncode *e = &fake->encoded[(call - 1) % 8];
  CHECK(e->data_type == data_type && e->rank == rank && e->address == (uint64_t)(uintptr_t)address);
  for (int i = 0; i < rank; i++) {
    if (e->dims[i] != dims[i] || e->box[i] != box[i] || e->element_strides[i] != 1)
      fprintf(stderr, "encode %d, dim %d: %llu box %u, expected %llu box %u\n", call, i,
              (unsigned long long)e->dims[i], e->box[i], (unsigned long long)dims[i], box[i]);
    CHECK(e->dims[i] == dims[i] && e->box[i] == box[i] && e->element_strides[i] == 1);
  }
  for (int i = 0; i < rank - 1; i++) CHECK(e->strides[i] == strides[i]);
  CHECK(e->interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && e->swizzle == swizzle);
  CHECK(e->l2_promotion == CU_TENSOR_MAP_L2_PROMOTION_L2_128B && e->oob_fill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/* The launch passed, after its NUM_PARAMS parameters, the maps of encode calls first..first+n-1, in order. */
static void check_passed(int first, int n) {
  for (int i = 0; i < n; i++) {
    const FakeTensorMap *m = &fake->maps[i];
    const FakeEncode *e = &fake->encoded[(first + i - 1) % 8];
    CHECK(m->magic == FAKE_TENSOR_MAP_MAGIC && m->call == (uint32_t)(first + i));
    CHECK(m->address == e->address && !memcmp(m->dims, e->dims, sizeof m->dims));
    CHECK(fake->map_addresses[i] % 64 == 0 && fake->map_addresses[i] == (uintptr_t)e->map);
  }
}

static void test_encode_and_pass(void) {
  tile_context *ctx = context_on(FAKE_CUDA_PATH);
  tile_kernel *k = load_ok(ctx, three_maps);
  void *a = NULL, *b = NULL;
  CHECK(tile_malloc(ctx, &a, 1 << 20) == TILE_OK && tile_malloc(ctx, &b, 1 << 20) == TILE_OK);
  Args v = {a, (char *)b + 16, 300, 200, 96, 96, 200, 1};
  fake->encodes = 0, fake->params_to_copy = NUM_PARAMS, fake->maps_to_copy = 3;
  int before = fake->launches;
  CHECK(k && launch(k, &v) == TILE_OK && fake->launches == before + 1 && fake->encodes == 3);
  check_encoded(1, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, a, 2, (uint64_t[]){96, 300}, (uint64_t[]){192},
                (uint32_t[]){64, 128}, CU_TENSOR_MAP_SWIZZLE_128B);
  check_encoded(2, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, v.b, 2, (uint64_t[]){200, 96}, (uint64_t[]){400},
                (uint32_t[]){64, 32}, CU_TENSOR_MAP_SWIZZLE_128B);
  check_encoded(3, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, v.b, 3, (uint64_t[]){200, 7, 1}, (uint64_t[]){400, 8192},
                (uint32_t[]){8, 7, 1}, CU_TENSOR_MAP_SWIZZLE_NONE);
  /* the ABI parameters as before, the maps after them */
  CHECK(fake->params[0] == (uint64_t)(uintptr_t)a && fake->params[1] == (uint64_t)(uintptr_t)v.b);
  CHECK((int32_t)fake->params[2] == 300 && (int64_t)fake->params[3] == 200 && (int32_t)fake->params[4] == 96);
  CHECK((int32_t)fake->params[5] == 96 && (int32_t)fake->params[6] == 200);
  check_passed(1, 3);
  /* encoded again at each launch, from that launch's arguments */
  v.m = 1000, v.n = (1LL << 31) - 257; /* the largest extent a map takes (its coordinates are 32-bit signed, arch.h) */
  CHECK(k && launch(k, &v) == TILE_OK && fake->encodes == 6);
  check_encoded(4, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, a, 2, (uint64_t[]){96, 1000}, (uint64_t[]){192},
                (uint32_t[]){64, 128}, CU_TENSOR_MAP_SWIZZLE_128B);
  CHECK(fake->encoded[4].dims[0] == (1ULL << 31) - 257);
  check_passed(4, 3);
  /* a dim below 1 is encoded as 1: the kernel only reads through the map in a loop that does not run then */
  v.n = 200, v.k = 0, v.stride_am = 0;
  CHECK(k && launch(k, &v) == TILE_OK && fake->encodes == 9);
  check_encoded(7, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, a, 2, (uint64_t[]){1, 1000}, (uint64_t[]){0},
                (uint32_t[]){64, 128}, CU_TENSOR_MAP_SWIZZLE_128B);
  check_encoded(8, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, v.b, 2, (uint64_t[]){200, 1}, (uint64_t[]){400},
                (uint32_t[]){64, 32}, CU_TENSOR_MAP_SWIZZLE_128B);
  v.k = -5;
  CHECK(k && launch(k, &v) == TILE_OK && fake->encodes == 12 && fake->encoded[(10 - 1) % 8].dims[0] == 1);
  /* an empty grid launches nothing and encodes nothing */
  int encodes = fake->encodes;
  tile_arg args[NUM_ARGS] = {tile_buffer(a, "fp16", 0), tile_buffer(b, "fp16", 0), tile_int(1), tile_int(1),
                             tile_int(1), tile_int(16), tile_int(16), tile_int(1)};
  unsigned empty[3] = {0, 1, 1};
  CHECK(k && tile_launch(k, empty, NULL, args, NUM_ARGS) == TILE_OK && fake->encodes == encodes);
  fake->maps_to_copy = 0;
  tile_context_destroy(ctx);
}

/* An extent or stride that is a product of arguments (tutorial 06's Z * H * N_CTX rows), times a constant. */
static const char product_map[] =
    "{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"value\": 64}, {\"args\": [3, 4, 7]}],"
    " \"strides\": [{\"args\": [5], \"value\": 2}], \"box\": [64, 128], \"swizzle\": 128},\n"
    "{\"base\": 1, \"dtype\": \"fp16\", \"dims\": [{\"args\": [2, 3]}, {\"value\": 8}],"
    " \"strides\": [{\"value\": 64}], \"box\": [64, 8], \"swizzle\": 128}";

static void test_products(void) {
  tile_context *ctx = context_on(FAKE_CUDA_PATH);
  tile_kernel *k = load_ok(ctx, product_map);
  void *a = NULL, *b = NULL;
  CHECK(tile_malloc(ctx, &a, 1 << 20) == TILE_OK && tile_malloc(ctx, &b, 1 << 20) == TILE_OK);
  Args v = {a, b, 3, 5, 7, 48, 16, 1};
  fake->encodes = 0, fake->params_to_copy = NUM_PARAMS, fake->maps_to_copy = 2;
  CHECK(k && launch(k, &v) == TILE_OK && fake->encodes == 2);
  check_encoded(1, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, a, 2, (uint64_t[]){64, 5 * 7 * 1}, (uint64_t[]){2 * 48 * 2},
                (uint32_t[]){64, 128}, CU_TENSOR_MAP_SWIZZLE_128B);
  check_encoded(2, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, b, 2, (uint64_t[]){3 * 5, 8}, (uint64_t[]){128},
                (uint32_t[]){64, 8}, CU_TENSOR_MAP_SWIZZLE_128B);
  check_passed(1, 2);
  fake->maps_to_copy = 0;
  /* a product past a map's 2^31-257, and one past 64 bits, each named by its first argument with its factors */
  v.m = 1 << 20, v.n = 1 << 13;
  int before = fake->launches;
  CHECK(k && launch(k, &v) == TILE_ERROR_ARGUMENT && fake->launches == before);
  CHECK_CONTAINS(tile_error(ctx), "argument 2 ('M'): 1048576 * 8192 = 8589934592, an extent of a tensor the kernel "
                                  "reads or writes through the tensor memory accelerator, whose coordinates are "
                                  "32-bit: at most 2^31-257 elements");
  v.m = 1, v.n = 1LL << 40;
  CHECK(k && launch(k, &v) == TILE_ERROR_ARGUMENT && fake->launches == before);
  CHECK_CONTAINS(tile_error(ctx), "argument 3 ('N'): 1099511627776 * 7 * 1 = 7696581394432, an extent");
  v.k = 1 << 30;
  CHECK(k && launch(k, &v) == TILE_ERROR_ARGUMENT && fake->launches == before);
  CHECK_CONTAINS(tile_error(ctx), "argument 3 ('N'): 1099511627776 * 1073741824 * 1 (overflows), an extent");
  tile_context_destroy(ctx);
}

/* A launch fails with `message` (a printf format taking `address`), and nothing is launched. */
static void check_refused(tile_context *ctx, tile_kernel *k, const Args *v, tile_status status, const char *format,
                          const void *address) {
  char message[512];
  snprintf(message, sizeof message, format, address);
  int before = fake->launches;
  tile_status s = launch(k, v);
  if (strcmp(tile_error(ctx), message)) fprintf(stderr, "got:      %s\nexpected: %s\n", tile_error(ctx), message);
  CHECK(s == status && !strcmp(tile_error(ctx), message) && fake->launches == before);
}

static void test_argument_errors(void) {
  tile_context *ctx = context_on(FAKE_CUDA_PATH);
  tile_kernel *k = load_ok(ctx, three_maps);
  void *a = NULL, *b = NULL;
  CHECK(tile_malloc(ctx, &a, 1 << 20) == TILE_OK && tile_malloc(ctx, &b, 1 << 20) == TILE_OK);
  if (!k) return;
  /* b_ptr promises no alignment, so the arguments' check lets an address 8 bytes off through */
  Args v = {a, (char *)b + 8, 300, 200, 96, 96, 200, 1};
  check_refused(ctx, k, &v, TILE_ERROR_ARGUMENT,
                "argument 1 ('b_ptr'): address %p is not 16-byte aligned; the kernel loads this tensor through the "
                "tensor memory accelerator, which needs 16-byte aligned addresses", v.b);
  v.b = b, v.stride_bk = 100;
  check_refused(ctx, k, &v, TILE_ERROR_ARGUMENT,
                "argument 6 ('stride_bk'): a stride of 100 fp16 elements, 200 bytes; the kernel loads this tensor "
                "through the tensor memory accelerator, which needs strides that are multiples of 16 bytes", NULL);
  v.stride_bk = -8;
  check_refused(ctx, k, &v, TILE_ERROR_ARGUMENT,
                "argument 6 ('stride_bk'): a stride of -8 fp16 elements; the kernel loads this tensor through the "
                "tensor memory accelerator, which needs strides from 0 to 2^40-1 bytes", NULL);
  v.stride_bk = 200, v.n = (1LL << 31) - 256; /* the driver would take it; a box at that extent would overflow the 32-bit coordinates */
  check_refused(ctx, k, &v, TILE_ERROR_ARGUMENT,
                "argument 3 ('N'): 2147483392, an extent of a tensor the kernel reads or writes through the tensor "
                "memory accelerator, whose coordinates are 32-bit: at most 2^31-257 elements along a dimension", NULL);
  v.n = 200;
  fake->fail_next_encode = 1;
  check_refused(ctx, k, &v, TILE_ERROR_ARGUMENT,
                "kernel 'mm', the tensor map of argument 0 ('a_ptr'): cuTensorMapEncodeTiled failed: "
                "CUDA_ERROR_INVALID_VALUE: fake driver error", NULL);
  CHECK(launch(k, &v) == TILE_OK && !strcmp(tile_error(ctx), ""));
  tile_context_destroy(ctx);
}

/* A driver before CUDA 12.0 has no cuTensorMapEncodeTiled: it loads and
 * launches kernels without maps; one with maps is refused at launch. */
static void test_driver_without_encode(void) {
  void *library;
  FakeCuda *old = fake_cuda_open(FAKE_CUDA_NO_TMA_PATH, &library);
  CHECK(old != NULL);
  if (!old) return;
  tile_context *ctx = context_on(FAKE_CUDA_NO_TMA_PATH);
  tile_kernel *plain = load_ok(ctx, ""), *k = load_ok(ctx, three_maps);
  void *a = NULL;
  CHECK(tile_malloc(ctx, &a, 1 << 20) == TILE_OK);
  Args v = {a, a, 300, 200, 96, 96, 200, 1};
  CHECK(plain && launch(plain, &v) == TILE_OK && old->launches == 1);
  CHECK(k && launch(k, &v) == TILE_ERROR_UNSUPPORTED && old->launches == 1);
  CHECK(!strcmp(tile_error(ctx), "kernel 'mm', the tensor map of argument 0 ('a_ptr'): the CUDA driver has no "
                                 "cuTensorMapEncodeTiled (it is older than CUDA 12.0), which a kernel that loads "
                                 "through the tensor memory accelerator needs"));
  tile_context_destroy(ctx);
  dlclose(library);
}

/* Malformed "tensor_maps": each refused at load with its message. */
static void test_metadata_errors(void) {
  static const struct {
    const char *maps, *message;
  } cases[] = {
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [], \"box\": [64, 1], \"swizzle\": 0}",
       "tensor map 0: strides is not an array with one entry fewer than dims (1)"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [64, 1], \"swizzle\": 0}",
       "tensor map 0: box is not an array with as many entries as dims (1)"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [], \"strides\": [], \"box\": [], \"swizzle\": 0}",
       "tensor map 0: dims is not an array of 1 to 5 entries"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"value\": 1}, {\"value\": 1}, {\"value\": 1}, {\"value\": 1}, "
       "{\"value\": 1}, {\"value\": 1}], \"strides\": [], \"box\": [], \"swizzle\": 0}",
       "tensor map 0: dims is not an array of 1 to 5 entries"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 5}], \"box\": [64, 0], \"swizzle\": 128}",
       "tensor map 0: box[1] is not an integer from 1 to 256"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 5}], \"box\": [64, 257], \"swizzle\": 128}",
       "tensor map 0: box[1] is not an integer from 1 to 256"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 5}], \"box\": [128, 64], \"swizzle\": 128}",
       "tensor map 0: box[0] spans 256 bytes, more than the swizzle's 128"},
      {"{\"base\": 0, \"dtype\": \"fp32\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 5}], \"box\": [16, 64], \"swizzle\": 32}",
       "tensor map 0: box[0] spans 64 bytes, more than the swizzle's 32"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 5}], \"box\": [4, 64], \"swizzle\": 0}",
       "tensor map 0: box[0] spans 8 bytes, not a multiple of 16"},
      {"{\"base\": 2, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: base names argument 2 ('M'), which is not a pointer"},
      {"{\"base\": 7, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: base names argument 7 ('stride_bn'), which is not a pointer"},
      {"{\"base\": 8, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: base is not an argument position (0 to 7)"},
      {"{\"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: base is not an argument position (0 to 7)"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 1}], \"strides\": [{\"arg\": 5}], \"box\": [64, 64], \"swizzle\": 128}",
       "tensor map 0: dims[1] names argument 1 ('b_ptr'), which is not an integer"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 0}], \"box\": [64, 64], \"swizzle\": 128}",
       "tensor map 0: strides[0] names argument 0 ('a_ptr'), which is not an integer"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 5}], \"box\": [64, 64], \"swizzle\": 96}",
       "tensor map 0: swizzle is not 0, 32, 64 or 128 (bytes)"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"arg\": 5}], \"box\": [64, 64]}",
       "tensor map 0: swizzle is not 0, 32, 64 or 128 (bytes)"},
      {"{\"base\": 0, \"dtype\": \"i16\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: dtype 'i16' is not one a tensor map holds (fp16, bf16, fp32, fp64, i8, u8, i32, u32, i64, u64)"},
      {"{\"base\": 0, \"dtype\": \"fp8\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: dtype 'fp8' is not one a tensor map holds (fp16, bf16, fp32, fp64, i8, u8, i32, u32, i64, u64)"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"value\": 0}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: dims[0]: value is not an integer from 1 to 2147483391"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], \"strides\": [{\"value\": 12}], \"box\": [64, 64], \"swizzle\": 128}",
       "tensor map 0: strides[0]: 12 elements are 24 bytes, not a multiple of 16"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"size\": 4}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: dims[0] is none of {\"arg\": position}, {\"value\": N}, {\"args\": [...]}"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"args\": []}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: dims[0]: args is not an array of 1 to 3 argument positions"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"args\": [2, 3, 4, 5]}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: dims[0]: args is not an array of 1 to 3 argument positions"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"args\": [2, 1]}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: dims[0] names argument 1 ('b_ptr'), which is not an integer"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"args\": [2], \"value\": 0}], \"strides\": [], \"box\": [64], \"swizzle\": 0}",
       "tensor map 0: dims[0]: value is not an integer from 1 to 2147483391"},
      {"{\"base\": 0, \"dtype\": \"fp16\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [64], \"swizzle\": 0}, 3",
       "tensor map 1: not an object"},
      {"{}, {}, {}, {}, {}, {}, {}, {}, {}", "'tensor_maps' is not an array of at most 8 maps"},
  };
  tile_context *ctx = context_on(FAKE_CUDA_PATH);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    tile_kernel *k;
    char message[512];
    snprintf(message, sizeof message, "metadata: %s", cases[i].message);
    tile_status s = load(ctx, cases[i].maps, &k);
    if (strcmp(tile_error(ctx), message)) fprintf(stderr, "case %zu: got      %s\n        expected %s\n", i, tile_error(ctx), message);
    CHECK(s == TILE_ERROR_ARGUMENT && !k && !strcmp(tile_error(ctx), message));
  }
  /* the dtypes a map holds, and a 1-d map with a 16-byte box */
  static const char *dtypes[] = {"fp16", "bf16", "fp32", "fp64", "i8", "u8", "i32", "u32", "i64", "u64"};
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
    char map[256];
    snprintf(map, sizeof map, "{\"base\": 0, \"dtype\": \"%s\", \"dims\": [{\"arg\": 4}], \"strides\": [], \"box\": [16], \"swizzle\": 0}",
             dtypes[i]);
    tile_kernel_destroy(load_ok(ctx, map));
  }
  tile_context_destroy(ctx);
}

/* Each dtype becomes its CUtensorMapDataType. */
static void test_data_types(void) {
  static const struct {
    const char *dtype;
    int type;
  } types[] = {{"fp16", CU_TENSOR_MAP_DATA_TYPE_FLOAT16}, {"bf16", CU_TENSOR_MAP_DATA_TYPE_BFLOAT16},
               {"fp32", CU_TENSOR_MAP_DATA_TYPE_FLOAT32}, {"fp64", CU_TENSOR_MAP_DATA_TYPE_FLOAT64},
               {"i8", CU_TENSOR_MAP_DATA_TYPE_UINT8},     {"u8", CU_TENSOR_MAP_DATA_TYPE_UINT8},
               {"i32", CU_TENSOR_MAP_DATA_TYPE_INT32},    {"u32", CU_TENSOR_MAP_DATA_TYPE_UINT32},
               {"i64", CU_TENSOR_MAP_DATA_TYPE_INT64},    {"u64", CU_TENSOR_MAP_DATA_TYPE_UINT64}};
  tile_context *ctx = context_on(FAKE_CUDA_PATH);
  void *a = NULL;
  CHECK(tile_malloc(ctx, &a, 1 << 20) == TILE_OK);
  Args v = {a, a, 300, 200, 96, 96, 200, 1};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    char map[256];
    snprintf(map, sizeof map, "{\"base\": 0, \"dtype\": \"%s\", \"dims\": [{\"arg\": 4}, {\"arg\": 2}], "
             "\"strides\": [{\"arg\": 5}], \"box\": [16, 8], \"swizzle\": 0}", types[i].dtype);
    tile_kernel *k = load_ok(ctx, map);
    fake->encodes = 0;
    CHECK(k && launch(k, &v) == TILE_OK && fake->encodes == 1);
    int size = strstr(types[i].dtype, "8") ? 1 : strstr(types[i].dtype, "16") ? 2 : strstr(types[i].dtype, "32") ? 4 : 8;
    CHECK(fake->encoded[0].data_type == types[i].type && fake->encoded[0].strides[0] == (uint64_t)(96 * size));
    tile_kernel_destroy(k);
  }
  tile_context_destroy(ctx);
}

int main(void) {
  void *library;
  fake = fake_cuda_open(FAKE_CUDA_PATH, &library);
  if (!fake) return 1;
  test_encode_and_pass();
  test_argument_errors();
  test_products();
  test_driver_without_encode();
  test_metadata_errors();
  test_data_types();
  dlclose(library);
  return check_report();
}
