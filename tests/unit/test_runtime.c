/* The runtime's parts, from inside: SHA-256 against the standard's vectors,
 * the JSON reader, kernel metadata (written by the compiler, read back by
 * the runtime: every field survives, bad files are refused with a reason),
 * the launch's argument keys, checks and packing, and the disk cache (hit,
 * miss, corrupt and truncated entries, an unwritable directory, many
 * processes writing one key at once). */
#include "check.h"
#include "../../src/driver/driver.h"
#include "../../src/runtime/args.h"
#include "../../src/runtime/cache.h"
#include "../../src/runtime/json.h"
#include "../../src/runtime/metadata.h"
#include "../../src/support/sha256.h"
#include "../../src/llvm/generate.h"
#include "../../src/tir/tir.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The pipeline's GPU half is not run here; this stands in for src/llvm so
 * the test does not link LLVM. */
int llvm_generate(const TirFunc *f, const GpuTarget *t, int want_llir, int want_ptx, Arena *a, GpuCode *out,
                  Diags *d) {
  diag_error(d, (Loc){0}, "not in this test");
  return -1;
}

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

static const char *hex_of(const void *data, size_t len) {
  static char hex[65];
  unsigned char digest[32];
  sha256(data, len, digest);
  sha256_hex(digest, hex);
  return hex;
}

static void test_sha256(void) {
  CHECK(!strcmp(hex_of("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  CHECK(!strcmp(hex_of("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(!strcmp(hex_of(two_blocks, strlen(two_blocks)),
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
  /* a million 'a', fed in pieces of irregular sizes */
  Sha256 h;
  sha256_init(&h);
  char block[1000];
  memset(block, 'a', sizeof block);
  for (size_t done = 0, step = 1; done < 1000000; done += step, step = step % 997 + 3)
    sha256_update(&h, block, done + step > 1000000 ? 1000000 - done : step);
  unsigned char digest[32];
  char hex[65];
  sha256_final(&h, digest);
  sha256_hex(digest, hex);
  CHECK(!strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

/* ---- JSON ----------------------------------------------------------------------------- */

static const char *json_error(const char *text) {
  static char err[256];
  Arena a;
  arena_init(&a, 0);
  err[0] = 0;
  Json *v = json_parse(&a, text, strlen(text), err, sizeof err);
  if (v) snprintf(err, sizeof err, "(parsed)");
  arena_free(&a);
  return err;
}

static void test_json(void) {
  Arena a;
  arena_init(&a, 0);
  char err[256];
  const char *text = " {\"a\": [1, -2.5e1, true, false, null, \"x\\\"y\\u00e9\\ud83d\\ude00\\n\"], \"b\": {}, \"c\": 9007199254740993}";
  Json *v = json_parse(&a, text, strlen(text), err, sizeof err);
  CHECK(v && v->kind == JSON_OBJECT && v->len == 3);
  const Json *list = json_get(v, "a");
  CHECK(list && list->kind == JSON_ARRAY && list->len == 6);
  if (list && list->len == 6) {
    CHECK(list->items[0]->is_int && list->items[0]->i == 1);
    CHECK(!list->items[1]->is_int && list->items[1]->f == -25.0);
    CHECK(list->items[2]->kind == JSON_BOOL && list->items[2]->i == 1);
    CHECK(list->items[3]->kind == JSON_BOOL && list->items[3]->i == 0);
    CHECK(list->items[4]->kind == JSON_NULL);
    CHECK(!strcmp(list->items[5]->s, "x\"y\xc3\xa9\xf0\x9f\x98\x80\n"));
  }
  CHECK(json_get(v, "c") && json_get(v, "c")->i == 9007199254740993LL); /* exact past 2^53 */
  CHECK(json_get(v, "missing") == NULL);
  CHECK_CONTAINS(json_error("{\"a\": 1,}"), "line 1, column 9: expected a string key");
  CHECK_CONTAINS(json_error("[1, 2"), "expected ',' or ']'");
  CHECK_CONTAINS(json_error("\n\n  \"abc"), "line 3, column 3: unterminated string");
  CHECK_CONTAINS(json_error("\"\\q\""), "bad escape");
  CHECK_CONTAINS(json_error("\"\\ud800x\""), "bad escape"); /* a lone surrogate */
  CHECK_CONTAINS(json_error("{} x"), "unexpected text after the value");
  CHECK_CONTAINS(json_error(""), "unexpected end of input");
  char deep[300];
  memset(deep, '[', sizeof deep - 1);
  deep[sizeof deep - 1] = 0;
  CHECK_CONTAINS(json_error(deep), "nested too deeply");
  /* the writer's escapes read back */
  Buf b;
  buf_init(&b, &a);
  json_put_string(&b, "tab\there \"q\" back\\slash \x01 end");
  Json *s = json_parse(&a, buf_cstr(&b), b.len, err, sizeof err);
  CHECK(s && s->kind == JSON_STRING && !strcmp(s->s, "tab\there \"q\" back\\slash \x01 end"));
  arena_free(&a);
}

/* ---- metadata -------------------------------------------------------------------------- */

static const char good_metadata[] =
    "{\"format\": 1, \"name\": \"k\", \"signature\": \"*fp32:16,i32:1,i64\", \"num_args\": 3,\n"
    " \"params\": [{\"name\": \"x\", \"type\": \"*fp32\", \"divisibility\": 16, \"position\": 0},\n"
    "            {\"name\": \"n\", \"type\": \"i64\", \"divisibility\": 1, \"position\": 2}],\n"
    " \"specialized\": [{\"name\": \"s\", \"type\": \"i32\", \"position\": 1}],\n"
    " \"constexprs\": {\"B\": 128, \"F\": 0.5, \"S\": \"leaky\", \"T\": true},\n"
    " \"num_warps\": 8, \"num_stages\": 4, \"shared\": 65536, \"registers\": 40, \"spills\": 0,\n"
    " \"arch\": \"sm_90a\", \"target\": \"cubin\"}";

/* good_metadata with `from` replaced by `to`, parsed: the error, or "" */
static const char *meta_error(const char *from, const char *to) {
  static char err[512];
  char text[2048];
  const char *at = strstr(good_metadata, from);
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good_metadata), good_metadata, to, at + strlen(from));
  Arena a;
  arena_init(&a, 0);
  KernelMetadata m;
  err[0] = 0;
  meta_parse(&a, text, strlen(text), &m, err, sizeof err);
  arena_free(&a);
  return err;
}

static void test_metadata(void) {
  Arena a;
  arena_init(&a, 0);
  KernelMetadata m;
  char err[512] = "";
  CHECK(meta_parse(&a, good_metadata, strlen(good_metadata), &m, err, sizeof err) == 0);
  CHECK(!strcmp(m.name, "k") && m.num_args == 3 && m.num_params == 2 && m.num_fixed == 1);
  CHECK(m.params[0].is_ptr && m.params[0].dtype == DT_FP32 && m.params[0].divisibility == 16);
  CHECK(m.params[1].position == 2 && m.params[1].dtype == DT_I64 && m.fixed[0].position == 1);
  CHECK(m.num_warps == 8 && m.num_stages == 4 && m.shared == 65536 && m.registers == 40 && m.spills == 0);
  CHECK(m.num_constexprs == 4 && !strcmp(m.constexprs[2].name, "S") && !strcmp(m.constexprs[2].value->s, "leaky"));
  arena_free(&a);
  CHECK(!strcmp(meta_error("\"format\": 1", "\"format\": 2"), "metadata: unsupported format version (this runtime reads format 1)"));
  CHECK(!strcmp(meta_error("\"name\": \"k\", ", ""), "metadata: missing or non-string field name"));
  CHECK(!strcmp(meta_error("\"position\": 2", "\"position\": 1"), "metadata: the parameters do not cover each argument position once"));
  CHECK(!strcmp(meta_error("\"position\": 2", "\"position\": 3"), "metadata: field out of range: position"));
  CHECK(!strcmp(meta_error("\"type\": \"i64\"", "\"type\": \"f64\""), "metadata: unknown parameter type f64"));
  CHECK(!strcmp(meta_error("\"type\": \"i64\", \"divisibility\": 1", "\"type\": \"fp64\", \"divisibility\": 16"),
                "metadata: divisibility 16 on a float parameter: n"));
  CHECK(!strcmp(meta_error("\"num_warps\": 8", "\"num_warps\": 6"), "metadata: num_warps is not a power of two"));
  CHECK(!strcmp(meta_error("\"target\": \"cubin\"", "\"target\": \"elf\""), "metadata: target must be \"cubin\", \"ptx\" or \"cpu\", not elf"));
  CHECK(!strcmp(meta_error("\"type\": \"i32\", \"position\": 1", "\"type\": \"*i32\", \"position\": 1"),
                "metadata: a specialised argument that is not an integer: s"));
  CHECK_CONTAINS(meta_error("\"arch\"", "\"arch"), "metadata: not JSON: line 7, column 10: expected ':' after an object key");
}

/* The metadata JSON of `source` as compiled for `o`, with made-up GPU artifacts. */
static const char *describe(Compilation *c, const tile_options *o) {
  if (setjmp(c->guard.jump)) return NULL;
  TirFunc *f = pipeline_tir(c, o, NULL);
  GpuArtifacts g = {.arch = "sm_90a", .shared_bytes = 12345,
                    .ptxas_log = "ptxas info    : Compiling entry function 'matmul_kernel' for 'sm_90a'\n"
                                 "ptxas info    : Function properties for matmul_kernel\n"
                                 "    0 bytes stack frame, 24 bytes spill stores, 24 bytes spill loads\n"
                                 "ptxas info    : Used 168 registers, used 1 barriers, 452 bytes cmem[0]\n"};
  return f ? describe_kernel(c, f, &g, 0) : NULL;
}

/* The compiler's metadata for a real kernel, read back. */
static void test_describe_round_trip(void) {
  tile_context *ctx;
  tile_context_create(&ctx);
  size_t len;
  char *source;
  CHECK(context_read_file(ctx, TILE_SOURCE_DIR "/tests/seeds/matmul_autotuned.tl", 1 << 20, &source, &len) == TILE_OK);
  Compilation *c = compilation_begin(ctx, "matmul_autotuned.tl", source, len);
  tile_options o;
  tile_options_init(&o);
  const char *defines[] = {"ACTIVATION=\"leaky_relu\""};
  o.defines = defines;
  o.num_defines = 1;
  o.config = 6; /* BLOCK 64 x 32 x 32, num_stages=5, num_warps=2 */
  o.signature = "*fp16:16,*fp16:16,*fp16,i32,i32:16,i32,i32,i32:1,i32,i32:1,i64,i32:1";
  const char *json = describe(c, &o);
  KernelMetadata m;
  char err[512] = "";
  Arena a;
  arena_init(&a, 0);
  CHECK(json && meta_parse(&a, json, strlen(json), &m, err, sizeof err) == 0);
  if (*err) fprintf(stderr, "%s\n%s\n", err, json);
  CHECK(json && !strcmp(m.name, "matmul_kernel") && !strcmp(m.signature, o.signature));
  CHECK(m.num_args == 12 && m.num_params == 9 && m.num_fixed == 3);
  CHECK(m.fixed[0].position == 7 && m.fixed[1].position == 9 && m.fixed[2].position == 11);
  CHECK(!strcmp(m.params[0].name, "a_ptr") && m.params[0].dtype == DT_FP16 && m.params[0].divisibility == 16);
  CHECK(m.params[2].divisibility == 1 && m.params[4].divisibility == 16 && m.params[8].dtype == DT_I64);
  CHECK(m.params[8].position == 10 && !strcmp(m.params[8].name, "stride_cm"));
  CHECK(m.num_warps == 2 && m.num_stages == 5 && m.shared == 12345 && m.registers == 168 && m.spills == 24);
  CHECK(!strcmp(m.arch, "sm_90a") && !strcmp(m.target, "cubin"));
  int found = 0;
  for (int i = 0; i < m.num_constexprs; i++) {
    const Json *v = m.constexprs[i].value;
    if (!strcmp(m.constexprs[i].name, "BLOCK_SIZE_M")) found += v->is_int && v->i == 64;
    if (!strcmp(m.constexprs[i].name, "BLOCK_SIZE_K")) found += v->is_int && v->i == 32;
    if (!strcmp(m.constexprs[i].name, "ACTIVATION")) found += v->kind == JSON_STRING && !strcmp(v->s, "leaky_relu");
  }
  CHECK(found == 3);
  CHECK_CONTAINS(json, hex_of(source, len)); /* the source's hash */
  arena_free(&a);
  compilation_end(c);
  free(source);
  tile_context_destroy(ctx);
}

/* ---- arguments ------------------------------------------------------------------------- */

static void test_keys(void) {
  float buf[8] __attribute__((aligned(16)));
  uint16_t key[8];
  char err[256] = "", sig[256];
  tile_arg args[] = {tile_buffer(buf, "fp32", 8), tile_buffer(buf + 1, "float16", 7), tile_int(1), tile_int(32),
                     tile_int(33), tile_int(1LL << 40), tile_float(0.5), tile_int(-16)};
  args[7].dtype = "i16";
  CHECK(args_key(args, 8, key, err, sizeof err) == 0);
  CHECK(key_signature(key, 8, sig, sizeof sig) == 0);
  CHECK(!strcmp(sig, "*fp32:16,*fp16,i32:1,i32:16,i32,i64:16,fp32,i16:16"));
  if (strcmp(sig, "*fp32:16,*fp16,i32:1,i32:16,i32,i64:16,fp32,i16:16")) fprintf(stderr, "signature %s\n", sig);
  CHECK(key_signature(key, 8, sig, 10) == -1); /* does not fit */
  args[1].dtype = "fp31";
  CHECK(args_key(args, 8, key, err, sizeof err) == -1);
  CHECK(!strcmp(err, "argument 1: unknown dtype 'fp31' (expected e.g. fp32, fp16, i32)"));
  args[1] = tile_float(1);
  args[1].dtype = "i32";
  CHECK(args_key(args, 8, key, err, sizeof err) == -1);
  CHECK(!strcmp(err, "argument 1: a float argument cannot have dtype 'i32'"));
}

/* good_metadata with a float parameter added: x (*fp32:16), s (':1'), n (i64), f (fp16) */
static void read_test_meta(Arena *a, KernelMetadata *m) {
  const char *text =
      "{\"format\": 1, \"name\": \"k\", \"signature\": \"\", \"num_args\": 5, \"num_warps\": 4, \"shared\": 0,\n"
      " \"arch\": \"sm_80\", \"target\": \"ptx\", \"params\": [\n"
      "  {\"name\": \"x\", \"type\": \"*fp32\", \"divisibility\": 16, \"position\": 0},\n"
      "  {\"name\": \"n\", \"type\": \"i64\", \"position\": 2},\n"
      "  {\"name\": \"f\", \"type\": \"fp16\", \"position\": 3},\n"
      "  {\"name\": \"b\", \"type\": \"i1\", \"position\": 4}],\n"
      " \"specialized\": [{\"name\": \"s\", \"type\": \"i32\", \"position\": 1}]}";
  char err[256];
  arena_init(a, 0);
  CHECK(meta_parse(a, text, strlen(text), m, err, sizeof err) == 0);
}

static const char *check_error(const KernelMetadata *m, const tile_arg *args, int n) {
  static char err[512];
  uint64_t slots[8];
  void *params[8];
  err[0] = 0;
  if (args_check(m, args, n, slots, params, err, sizeof err) == 0) snprintf(err, sizeof err, "(ok)");
  return err;
}

static void test_checks_and_packing(void) {
  Arena a;
  KernelMetadata m;
  read_test_meta(&a, &m);
  float buf[8] __attribute__((aligned(16)));
  tile_arg args[] = {tile_buffer(buf, "fp32", 8), tile_int(1), tile_int(-5), tile_float(1.5), tile_int(1)};
  uint64_t slots[8];
  void *params[8];
  char err[256];
  CHECK(args_check(&m, args, 5, slots, params, err, sizeof err) == 0);
  CHECK(slots[0] == (uint64_t)(uintptr_t)buf && params[0] == &slots[0]);
  CHECK((int64_t)slots[1] == -5);
  CHECK(slots[2] == 0x3e00);              /* 1.5 in fp16 */
  CHECK(*(uint8_t *)params[3] == 1);      /* i1 as a byte */
  args[3] = tile_int(2);                  /* an integer for a float parameter */
  CHECK(args_check(&m, args, 5, slots, params, err, sizeof err) == 0 && slots[2] == 0x4000);
  CHECK(!strcmp(check_error(&m, args, 4), "kernel 'k' takes 5 arguments (its non-constexpr parameters), not 4"));
  args[1] = tile_int(2);
  CHECK(!strcmp(check_error(&m, args, 5), "argument 1 ('s'): the kernel was specialised for the integer 1 (':1'), not 2"));
  args[1] = tile_int(1);
  args[0] = tile_buffer(buf + 1, "fp32", 7);
  CHECK_CONTAINS(check_error(&m, args, 5), "argument 0 ('x'): address ");
  CHECK_CONTAINS(check_error(&m, args, 5), " is not 16-byte aligned, as the kernel's ':16' specialisation promises");
  args[0] = tile_buffer(buf, "float32", 8); /* Triton's spelling is the same type */
  CHECK(!strcmp(check_error(&m, args, 5), "(ok)"));
  args[0] = tile_buffer(buf, "i32", 8);
  CHECK(!strcmp(check_error(&m, args, 5), "argument 0 ('x'): a buffer of i32 for a parameter of type *fp32"));
  args[0] = tile_buffer(NULL, "fp32", 0);
  CHECK(!strcmp(check_error(&m, args, 5), "argument 0 ('x'): a NULL buffer"));
  args[0] = tile_int(3);
  CHECK(!strcmp(check_error(&m, args, 5), "argument 0 ('x'): a number for a parameter of type *fp32"));
  args[0] = tile_buffer(buf, "fp32", 8);
  args[2] = tile_float(3);
  CHECK(!strcmp(check_error(&m, args, 5), "argument 2 ('n'): a float for a parameter of type i64"));
  args[2] = tile_int(3);
  args[4] = tile_int(2);
  CHECK(!strcmp(check_error(&m, args, 5), "argument 4 ('b'): 2 does not fit the parameter's type i1"));
  args[4] = tile_buffer(buf, "fp32", 8);
  CHECK(!strcmp(check_error(&m, args, 5), "argument 4 ('b'): a buffer for a parameter of type i1"));
  arena_free(&a);
}

/* ---- the disk cache ------------------------------------------------------------------------ */

static char cache_dir[256];

static CacheEntry entry_of(const char *image, const char *metadata, int is_ptx) {
  CacheEntry e = {(unsigned char *)image, strlen(image), is_ptx, (char *)metadata, strlen(metadata), NULL, 0};
  return e;
}

static int read_back(const char *key, const char *image, const char *metadata, char *why, size_t whysize) {
  CacheEntry e;
  int r = cache_read(cache_dir, key, &e, why, whysize);
  if (r == 1) {
    r = e.image_size == strlen(image) && !memcmp(e.image, image, e.image_size) && !strcmp(e.metadata, metadata) ? 1 : -2;
    cache_entry_free(&e);
  }
  return r;
}

static void rewrite(const char *key, long at, const char *bytes, size_t n, long truncate_to) {
  char path[512];
  cache_path(cache_dir, key, path, sizeof path);
  FILE *f = fopen(path, "r+b");
  if (!f) return;
  if (bytes) {
    fseek(f, at, SEEK_SET);
    fwrite(bytes, 1, n, f);
  }
  fclose(f);
  if (truncate_to >= 0) CHECK(truncate(path, truncate_to) == 0);
}

static void test_cache_basics(void) {
  char why[512] = "";
  const char *key = "00ff";
  CacheEntry e = entry_of("\x7f" "ELF cubin bytes", "{\"name\": \"k\"}", 0);
  CHECK(read_back(key, "", "", why, sizeof why) == 0); /* a miss */
  CHECK(cache_write(cache_dir, key, &e, why, sizeof why) == 0);
  CHECK(read_back(key, "\x7f" "ELF cubin bytes", "{\"name\": \"k\"}", why, sizeof why) == 1);
  rewrite(key, 0, "X", 1, -1); /* magic */
  CHECK(read_back(key, "", "", why, sizeof why) == -1 && !strcmp(why, "bad magic"));
  CHECK(cache_write(cache_dir, key, &e, why, sizeof why) == 0); /* rebuilt over it */
  rewrite(key, CACHE_HEADER_SIZE + 3, "Z", 1, -1); /* the payload */
  CHECK(read_back(key, "", "", why, sizeof why) == -1 && !strcmp(why, "checksum mismatch"));
  CHECK(cache_write(cache_dir, key, &e, why, sizeof why) == 0);
  rewrite(key, 0, NULL, 0, CACHE_HEADER_SIZE + 5); /* truncated */
  CHECK(read_back(key, "", "", why, sizeof why) == -1 && !strcmp(why, "lengths do not match the file (truncated?)"));
  rewrite(key, 0, NULL, 0, 10); /* truncated inside the header */
  CHECK(read_back(key, "", "", why, sizeof why) == -1 && !strcmp(why, "bad magic"));
  CHECK(cache_write(cache_dir, key, &e, why, sizeof why) == 0);
  rewrite(key, 8, "\x01", 1, -1); /* another format version */
  CHECK(read_back(key, "", "", why, sizeof why) == -1 && !strcmp(why, "another format version"));
  /* the header is the entry too: once, a flipped kind gave cubin bytes as PTX text, and a
   * boundary moved by one gave metadata that never parsed, a compile error never rebuilt */
  CHECK(cache_write(cache_dir, key, &e, why, sizeof why) == 0);
  rewrite(key, 12, "\x01", 1, -1); /* the kind: PTX */
  CHECK(read_back(key, "", "", why, sizeof why) == -1 && !strcmp(why, "checksum mismatch"));
  CHECK(cache_write(cache_dir, key, &e, why, sizeof why) == 0);
  unsigned char sizes[16] = {0};
  size_t image_size = strlen((const char *)e.image) + 1, metadata_len = e.metadata_len - 1;
  for (int i = 0; i < 8; i++) sizes[i] = (unsigned char)(image_size >> 8 * i), sizes[8 + i] = (unsigned char)(metadata_len >> 8 * i);
  rewrite(key, 16, (const char *)sizes, sizeof sizes, -1); /* the image one byte longer, the metadata one shorter */
  CHECK(read_back(key, "", "", why, sizeof why) == -1 && !strcmp(why, "checksum mismatch"));
  CacheEntry ptx = entry_of(".version 8.0\n", "{}", 1), back;
  CHECK(cache_write(cache_dir, "abcd", &ptx, why, sizeof why) == 0);
  CHECK(cache_read(cache_dir, "abcd", &back, why, sizeof why) == 1 && back.image_is_ptx);
  cache_entry_free(&back);
}

/* Once: open() of a FIFO at an entry's path waited for a writer forever. */
static void test_cache_not_regular(void) {
  char path[512], why[256] = "";
  CacheEntry e;
  cache_path(cache_dir, "f1f0", path, sizeof path);
  CHECK(mkfifo(path, 0600) == 0);
  alarm(20);
  CHECK(cache_read(cache_dir, "f1f0", &e, why, sizeof why) == -1 && !strcmp(why, "not a regular file"));
  alarm(0);
  unlink(path);
  cache_path(cache_dir, "d1d0", path, sizeof path);
  CHECK(mkdir(path, 0700) == 0);
  CHECK(cache_read(cache_dir, "d1d0", &e, why, sizeof why) == -1 && !strcmp(why, "Is a directory"));
  rmdir(path);
}

static void test_cache_unwritable(void) {
  char file[300], dir[400], why[512] = "";
  snprintf(file, sizeof file, "%s/plain-file", cache_dir);
  FILE *f = fopen(file, "w");
  if (f) fclose(f);
  snprintf(dir, sizeof dir, "%s/sub/cache", file); /* under a regular file: cannot exist, even for root */
  CacheEntry e = entry_of("img", "{}", 0), back;
  CHECK(cache_write(dir, "aa", &e, why, sizeof why) == -1);
  CHECK_CONTAINS(why, "cannot create");
  CHECK_CONTAINS(why, "Not a directory");
  CHECK(cache_read(dir, "aa", &back, why, sizeof why) == -1 || cache_read(dir, "aa", &back, why, sizeof why) == 0);
}

/* Writers and readers in many processes at once: a reader sees no entry or a whole one. */
static void test_cache_concurrent(void) {
  enum { PROCESSES = 8, ROUNDS = 40 };
  const char *key = "c0ffee";
  static char image[200000]; /* large enough that a write is not one page */
  for (size_t i = 0; i + 1 < sizeof image; i++) image[i] = (char)('a' + (i * 7) % 26);
  pid_t pids[PROCESSES];
  for (int p = 0; p < PROCESSES; p++) {
    pids[p] = fork();
    if (pids[p] == 0) {
      char why[512];
      int bad = 0;
      for (int r = 0; r < ROUNDS; r++) {
        CacheEntry e = entry_of(image, "{\"same\": true}", 0);
        if (p % 2 == 0) bad |= cache_write(cache_dir, key, &e, why, sizeof why) != 0;
        else bad |= read_back(key, image, "{\"same\": true}", why, sizeof why) < 0;
      }
      _exit(bad);
    }
  }
  int failures = 0;
  for (int p = 0; p < PROCESSES; p++) {
    int status = 1;
    waitpid(pids[p], &status, 0);
    failures += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  CHECK(failures == 0);
  char why[512];
  CHECK(read_back(key, image, "{\"same\": true}", why, sizeof why) == 1);
  DIR *d = opendir(cache_dir); /* no temporary file is left behind */
  int temps = 0;
  for (struct dirent *ent; d && (ent = readdir(d));) temps += strstr(ent->d_name, ".tmp-") != NULL;
  if (d) closedir(d);
  CHECK(temps == 0);
}

static void remove_tree(const char *dir) {
  char command[600];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  if (system(command) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(void) {
  srand((unsigned)time(NULL));
  test_sha256();
  test_json();
  test_metadata();
  test_describe_round_trip();
  test_keys();
  test_checks_and_packing();
  snprintf(cache_dir, sizeof cache_dir, "/tmp/tile-cache-test-XXXXXX");
  if (!mkdtemp(cache_dir)) return 1;
  strcat(cache_dir, "/new/dirs"); /* made by the first write */
  test_cache_basics();
  test_cache_not_regular();
  test_cache_unwritable();
  test_cache_concurrent();
  cache_dir[strlen(cache_dir) - strlen("/new/dirs")] = 0;
  remove_tree(cache_dir);
  return check_report();
}
