/* GPU-layout IR (src/tgir):
 *   - layout conversion keeps what kernels compute: every seed kernel and
 *     every kernel of tests/lit/tgir/kernels_2d.tl runs on the interpreter
 *     as tile IR and as GPU-layout IR (which it runs too: convert_layout is
 *     a copy there), on the same fresh random inputs at irregular sizes,
 *     and every buffer must come out bit for bit the same, with at least
 *     one output written;
 *   - conversions are where the design says: none without a dot, the two
 *     dot operands and the epilogue with an FMA dot, the epilogue alone
 *     with a tensor-core dot (its operands go through shared memory);
 *   - the verifier rejects hand-made bad IR with the rule it breaks, and
 *     the reader rejects bad layout text at its place;
 *   - the layout helpers (FMA accumulator, transposed) give layouts whose
 *     linear form places every element once, where the docs say;
 *   - programs per SM follow the hardware's limits, registers rounded up
 *     to 8 a thread. */
#include "check.h"
#include "../../src/driver/driver.h"
#include "../../src/interp/interp.h"
#include "../../src/tgir/tgir.h"
#include "../../src/tir/passes.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef TILE_SOURCE_DIR
#define TILE_SOURCE_DIR "."
#endif

enum { MAX_PARAMS = 16 };

typedef struct Kernel {
  const char *file;          /* under TILE_SOURCE_DIR */
  const char *kernel;
  const char *signature;
  const char *defines[6];
  int num_warps;             /* 0: the default */
  int64_t ints[MAX_PARAMS];  /* the integer arguments, in order */
  int64_t elems;             /* elements of every buffer */
  unsigned grid[2];
  int converts;              /* convert_layout ops expected in the GPU-layout IR */
} Kernel;

/* ---- compiling and running ---- */

/* A compilation as the library makes one (this test links the compiler
 * without LLVM, so not the driver's pipeline). */
static Compilation *begin(const char *name, const char *text, size_t len) {
  Compilation *c = calloc(1, sizeof *c);
  arena_init(&c->arena, 1u << 30);
  c->arena.guard = &c->guard;
  diags_init(&c->diags, &c->arena, &c->guard);
  c->source = (Source){name, text, len};
  return c;
}

static void end(Compilation *c) {
  arena_free(&c->arena);
  free(c);
}

static Module *parse(Compilation *c, const Source *src) {
  TokenVec toks = lex(src, &c->diags);
  return parse_module(src, &toks, &c->diags);
}

/* The kernel as optimised tile IR, or (gpu) as GPU-layout IR; NULL after errors. */
static TirFunc *compile(Compilation *c, const Kernel *k, int gpu) {
  if (setjmp(c->guard.jump)) return NULL;
  Source *std = arena_alloc(&c->arena, sizeof *std);
  *std = (Source){"<stdlib>", (const char *)tile_stdlib_source, tile_stdlib_size};
  Module *m = parse(c, &c->source), *stdlib = parse(c, std);
  SemaOptions so = {0};
  so.kernel = k->kernel;
  so.signature = k->signature;
  so.defines = (const char **)k->defines;
  while (so.n_defines < 6 && k->defines[so.n_defines]) so.n_defines++;
  so.config = -1;
  so.require_types = 1;
  CheckedKernel *ck = c->diags.errors ? NULL : sema_check(m, stdlib, &so, &c->diags);
  if (!ck) return NULL;
  TirFunc *f = tir_lower(ck, &c->arena, &c->diags);
  if (c->diags.errors || tir_verify(f, &c->diags) || passes_run(PASS_TIR, f, NULL, NULL, NULL, &c->diags, NULL)) return NULL;
  TgirOptions o = {90, 1, NULL, 0, 0, 0};
  if (k->num_warps) f->num_warps = k->num_warps; /* 0: the default */
  return !gpu || !(passes_to_tgir(f, &o, NULL, &c->diags, NULL)) ? f
                                                                                                            : NULL;
}

static float frand(void) { return (float)rand() / (float)RAND_MAX * 4.0f - 2.0f; }

static void fill(void *data, DType elem, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    if (elem == DT_FP32) ((float *)data)[i] = frand();
    else if (elem == DT_FP16) ((uint16_t *)data)[i] = (uint16_t)((rand() & 0x8000) | (0x3000 + rand() % 0xc00));
    else if (elem == DT_I32) ((int32_t *)data)[i] = rand() % 200 - 100;
    else ((unsigned char *)data)[i] = (unsigned char)rand();
  }
}

static size_t elem_bytes(DType t) { return t == DT_I1 ? 1 : (size_t)dtype_bits(t) / 8; }

typedef struct Buffers {
  int n;
  void *data[MAX_PARAMS];
  size_t bytes[MAX_PARAMS];
} Buffers;

/* One buffer per pointer parameter of f, random. */
static void make_buffers(const TirFunc *f, const Kernel *k, Buffers *b) {
  b->n = 0;
  for (int p = 0; p < f->params.len && b->n < MAX_PARAMS; p++) {
    const Type *t = tir_type(f, f->params.data[p].value);
    if (!t->is_ptr) continue;
    b->bytes[b->n] = (size_t)k->elems * elem_bytes(t->elem);
    b->data[b->n] = malloc(b->bytes[b->n]);
    fill(b->data[b->n], t->elem, k->elems);
    b->n++;
  }
}

static void copy_buffers(const Buffers *from, Buffers *to) {
  *to = *from;
  for (int i = 0; i < from->n; i++) {
    to->data[i] = malloc(from->bytes[i]);
    memcpy(to->data[i], from->data[i], from->bytes[i]);
  }
}

static void free_buffers(Buffers *b) {
  for (int i = 0; i < b->n; i++) free(b->data[i]);
}

/* Runs f on the buffers (in parameter order) and k's integers. */
static int interpret(const TirFunc *f, const Kernel *k, Buffers *b, char *error, size_t size) {
  InterpBuffer buffers[MAX_PARAMS];
  InterpArg args[MAX_PARAMS];
  int nb = 0, ni = 0;
  for (int p = 0; p < f->params.len && p < MAX_PARAMS; p++) {
    if (tir_type(f, f->params.data[p].value)->is_ptr) {
      buffers[nb] = (InterpBuffer){f->params.data[p].name, b->data[nb], b->bytes[nb]};
      args[p] = (InterpArg){nb++, 0, 0};
    } else {
      args[p] = (InterpArg){-1, k->ints[ni], (double)k->ints[ni]};
      ni++;
    }
  }
  InterpLaunch L = {0};
  L.f = f;
  L.grid[0] = (int)k->grid[0];
  L.grid[1] = k->grid[1] ? (int)k->grid[1] : 1;
  L.grid[2] = 1;
  L.buffers = buffers;
  L.n_buffers = nb;
  L.args = args;
  int failed = interp_run(&L);
  snprintf(error, size, "%s", L.error);
  return failed;
}

static int count_converts(const TirBlock *b) {
  int n = 0;
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    n += op->code == TIR_CONVERT_LAYOUT;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) n += count_converts(op->regions[r]);
  }
  return n;
}

/* Tile IR and GPU-layout IR of k compute the same bits. */
static void check_same_results(const Kernel *k) {
  size_t len;
  char *src = check_read_file(TILE_SOURCE_DIR, k->file, &len);
  CHECK(src != NULL);
  if (!src) return;
  Compilation *ct = begin(k->file, src, len), *cg = begin(k->file, src, len);
  TirFunc *tir = compile(ct, k, 0), *gpu = compile(cg, k, 1);
  if (!tir || !gpu) {
    Buf d;
    buf_init(&d, &ct->arena);
    diag_render(tir ? &cg->diags : &ct->diags, &d);
    fprintf(stderr, "%s %s: does not compile:\n%s\n", k->file, k->kernel, buf_cstr(&d));
  }
  CHECK(tir && gpu);
  if (tir && gpu) {
    Buffers initial, a, b;
    make_buffers(tir, k, &initial);
    copy_buffers(&initial, &a);
    copy_buffers(&initial, &b);
    char ea[512], eb[512];
    int fa = interpret(tir, k, &a, ea, sizeof ea), fb = interpret(gpu, k, &b, eb, sizeof eb);
    if (fa || fb) fprintf(stderr, "%s %s: %s / %s\n", k->file, k->kernel, ea, eb);
    CHECK(!fa && !fb);
    int same = 1, written = 0;
    for (int i = 0; i < a.n; i++) {
      same &= !memcmp(a.data[i], b.data[i], a.bytes[i]);
      written |= memcmp(a.data[i], initial.data[i], a.bytes[i]) != 0;
    }
    if (!same) fprintf(stderr, "%s %s: the GPU-layout IR computes other values\n", k->file, k->kernel);
    CHECK(same);
    CHECK(written);
    int converts = count_converts(gpu->body);
    if (converts != k->converts)
      fprintf(stderr, "%s %s: %d convert_layout, expected %d\n", k->file, k->kernel, converts, k->converts);
    CHECK(converts == k->converts);
    free_buffers(&initial), free_buffers(&a), free_buffers(&b);
  }
  end(ct);
  end(cg);
  free(src);
}

#define SEED(name) "tests/seeds/" name
#define K2D "tests/lit/tgir/kernels_2d.tl"

static const Kernel kernels[] = {
    {SEED("vector_add.tl"), "add_kernel", "*fp32:16,*fp32:16,*fp32:16,i32:16", {"BLOCK_SIZE=1024"}, 0, {5008}, 5008, {5}, 0},
    {SEED("vector_add.tl"), "add_kernel", "*fp32,*fp32,*fp32,i32", {"BLOCK_SIZE=1024"}, 8, {5001}, 5001, {5}, 0},
    {SEED("vector_add.tl"), "add_kernel", "*fp16:16,*fp16:16,*fp16:16,i32", {"BLOCK_SIZE=512"}, 2, {3001}, 3001, {6}, 0},
    {SEED("vector_add_strided.tl"), "_vector_add_kernel", "*fp32,*fp32,*fp32,i32,i32,i32,i32", {"BLOCK_SIZE=1024"}, 0,
     {3001, 1, 2, 3}, 9003, {3}, 0},
    {SEED("softmax.tl"), "softmax_kernel", "*fp32,*fp32,i32,i32,i32", {"BLOCK_SIZE=1024"}, 0, {781, 781, 781}, 37 * 781,
     {37}, 0},
    {SEED("softmax.tl"), "softmax_kernel", "*fp32:16,*fp32:16,i32:16,i32:16,i32", {"BLOCK_SIZE=1024"}, 8,
     {784, 784, 781}, 37 * 784, {37}, 0},
    {SEED("softmax_persistent.tl"), "softmax_kernel", "*fp32,*fp32,i32,i32,i32,i32", {"BLOCK_SIZE=1024"}, 0,
     {781, 781, 37, 781}, 37 * 781, {8}, 0},
    {SEED("softmax_row_autotuned.tl"), "_row_softmax_kernel", "*fp32,*fp32,i32,i32,i32,i32,i32,i32",
     {"BLOCK_SIZE_N=1024"}, 2, {37, 781, 781, 1, 781, 1}, 37 * 781, {37}, 0},
    {SEED("matmul_basic.tl"), "_matmul_kernel", "*fp32,*fp32,*fp32,i32,i32,i32,i32,i32,i32,i32,i32,i32",
     {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=64"}, 0, {70, 45, 100, 100, 1, 45, 1, 45, 1}, 7000, {2}, 3},
    {SEED("matmul_basic_grouped.tl"), "_matmul_kernel", "*fp32,*fp32,*fp32,i32,i32,i32,i32,i32,i32,i32,i32,i32",
     {"BLOCK_SIZE_M=32", "BLOCK_SIZE_N=32", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=2"}, 0,
     {70, 45, 100, 100, 1, 45, 1, 45, 1}, 7000, {6}, 3},
    {SEED("matmul_naive.tl"), "naive_matmul_k", "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
     {"bm=16", "bn=16", "bk=16"}, 0, {48, 32, 64, 64, 1, 32, 1, 32, 1}, 48 * 64, {3, 2}, 1},
    {SEED("matmul_naive.tl"), "naive_matmul_k", "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
     {"bm=32", "bn=32", "bk=32"}, 0, {64, 96, 64, 64, 96, 96}, 96 * 64, {2, 3}, 1},
    {SEED("matmul_grouped.tl"), "grouped_matmul_k", "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
     {"bm=16", "bn=16", "bk=16", "group_sz=2"}, 0, {48, 32, 64, 64, 1, 32, 1, 32, 1}, 48 * 64, {3, 2}, 1},
    {SEED("matmul_autotuned.tl"), "matmul_kernel", "*fp16,*fp16,*fp16,i32,i32,i32,i32,i32,i32,i32,i32,i32",
     {"BLOCK_SIZE_M=32", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=8", "ACTIVATION=\"leaky_relu\""}, 2,
     {70, 45, 100, 100, 1, 45, 1, 45, 1}, 7000, {3}, 1},
    {SEED("matmul_autotuned.tl"), "matmul_kernel", "*fp16:16,*fp16:16,*fp16:16,i32,i32,i32:16,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
     {"BLOCK_SIZE_M=64", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=32", "GROUP_SIZE_M=8", "ACTIVATION=\"\""}, 8,
     {70, 45, 96, 96, 48, 48}, 96 * 70, {2}, 1},
    {SEED("matmul_basic.tl"), "_matmul_kernel", "*fp32:16,*fp32:16,*fp32:16,i32,i32,i32,i32:16,i32:1,i32:16,i32:1,i32:16,i32:1",
     {"BLOCK_SIZE_M=32", "BLOCK_SIZE_N=64", "BLOCK_SIZE_K=16"}, 2, {70, 45, 100, 112, 48, 48}, 112 * 70, {6}, 3},
    {K2D, "copy_rows", "*fp32:16,*fp32:16,i32:16,i32:16,i32:16", {"BM=32", "BN=64"}, 0, {48, 80, 96}, 48 * 96, {2, 2}, 0},
    {K2D, "copy_rows", "*fp32,*fp32,i32,i32,i32", {"BM=32", "BN=64"}, 0, {45, 77, 93}, 45 * 93, {2, 2}, 0},
    {K2D, "copy_cols", "*fp32:16,*fp32:16,i32:16,i32:16,i32:16", {"BM=32", "BN=64"}, 0, {48, 80, 64}, 64 * 80, {2, 2}, 0},
    {K2D, "transpose", "*fp32:16,*fp32:16,i32:16,i32:16", {"BM=64", "BN=32"}, 0, {80, 48}, 80 * 48, {2, 2}, 1},
    {K2D, "transpose", "*fp32,*fp32,i32,i32", {"BM=64", "BN=32"}, 8, {77, 45}, 77 * 45, {2, 2}, 1},
    {K2D, "row_sums", "*fp32:16,*fp32:16,i32:16,i32:16", {"BM=16", "BN=128"}, 0, {37, 300}, 37 * 300, {3}, 1},
    {K2D, "col_softmax", "*fp16:16,*fp16:16,i32:16,i32:16", {"BM=64", "BN=64"}, 0, {48, 80}, 48 * 80, {2}, 0},
    {K2D, "col_softmax", "*fp16,*fp16,i32,i32", {"BM=64", "BN=64"}, 1, {45, 77}, 45 * 77, {2}, 0},
    {K2D, "carried", "*fp32:16,*fp32:16,i32,i32", {"BM=32", "BN=32"}, 0, {5, 0}, 5 * 1024, {1}, 1},
    {K2D, "branches", "*fp32:16,*fp32:16,i32", {"B=256"}, 0, {1000}, 1000, {4}, 0},
};

/* ---- the verifier and the reader ---- */

/* The diagnostics of reading and verifying `text` as GPU-layout IR. */
static const char *diagnose(const char *text) {
  static char out[4096];
  Compilation *c = begin("bad.tgir", text, strlen(text));
  if (setjmp(c->guard.jump) == 0) {
    TirFunc *f = tir_read(&c->source, &c->arena, &c->diags);
    if (f && !tir_verify(f, &c->diags)) tgir_verify(f, &c->diags);
  }
  Buf d;
  buf_init(&d, &c->arena);
  diag_render(&c->diags, &d);
  snprintf(out, sizeof out, "%s", buf_cstr(&d));
  end(c);
  return out;
}

/* Layout definitions for hand-written IR, in the printer's names (the
 * verifier names layouts so); each text lists the ones it uses in order. */
#define BLOCKED(id, spt, tpw, wpc, order) \
  "#blocked" #id " = #blocked<{sizePerThread = " spt ", threadsPerWarp = " tpw ", warpsPerCTA = " wpc ", order = " order "}>\n"
#define V4(id) BLOCKED(id, "[4]", "[32]", "[4]", "[0]")
#define V1(id) BLOCKED(id, "[1]", "[32]", "[4]", "[0]")
#define ROWS(id) BLOCKED(id, "[1, 4]", "[4, 8]", "[4, 1]", "[1, 0]")
#define COLS(id) BLOCKED(id, "[4, 1]", "[8, 4]", "[1, 4]", "[0, 1]")
#define FUNC "func @k(%0: *fp32 {name = \"p\"}) num_warps=4 num_stages=3 {\n"
#define RANGE(layout) "  %1 = make_range 0, 64 : i32[64] " layout "  loc(1:1)\n"
#define END_FUNC "  return  loc(9:1)\n}\n"

static const char *loop_text(const char *arg, const char *result) {
  static char text[2048];
  snprintf(text, sizeof text, "%s  %%7 = for %%5 = %%2 to %%3 step %%4 iter(%%6 %s = %%1) -> i32[64] %s {\n%s",
           V4(0) V1(1) FUNC RANGE("#blocked0") "  %2 = constant 0 : i32  loc(2:1)\n  %3 = constant 4 : i32  loc(2:1)\n"
                                             "  %4 = constant 1 : i32  loc(2:1)\n",
           arg, result, "    yield %6  loc(4:1)\n  }  loc(3:1)\n" END_FUNC);
  return text;
}

static void check_verifier(void) {
  /* well-formed: no diagnostics at all */
  CHECK(!strcmp(diagnose(V4(0) FUNC RANGE("#blocked0") "  %2 = add %1, %1 : i32[64] #blocked0  loc(2:1)\n" END_FUNC), ""));
  /* elementwise operands share the result's layout, placed at the op's loc() */
  CHECK_CONTAINS(diagnose(V4(0) V1(1) FUNC RANGE("#blocked0") "  %2 = make_range 0, 64 : i32[64] #blocked1  loc(2:1)\n"
                                                                   "  %3 = add %1, %2 : i32[64] #blocked0  loc(3:7)\n" END_FUNC),
                 "<source>:3:7: error: internal error: GPU-layout IR verifier: 'add': operand %2 has #blocked1, "
                 "needs #blocked0 (elementwise operands share their result's layout)");
  /* a tile needs a layout, a scalar has none */
  CHECK_CONTAINS(diagnose(V4(0) FUNC "  %1 = make_range 0, 64 : i32[64]  loc(1:1)\n" END_FUNC), "tile %1 has no layout");
  CHECK_CONTAINS(diagnose(V4(0) FUNC "  %1 = constant 1 : i32 #blocked0  loc(1:1)\n" END_FUNC),
                 "scalar %1 has layout #blocked0");
  /* rank and warps */
  CHECK_CONTAINS(diagnose(ROWS(0) FUNC RANGE("#blocked0") END_FUNC), "%1 of rank 1 has layout #blocked0 of rank 2");
  CHECK_CONTAINS(diagnose(BLOCKED(0, "[1]", "[32]", "[8]", "[0]") FUNC RANGE("#blocked0") END_FUNC),
                 "%1 has layout #blocked0 for 8 warps in a function of 4");
  /* expand_dims: the slice of the result's */
  CHECK_CONTAINS(diagnose(V4(0) ROWS(1) FUNC RANGE("#blocked0") "  %2 = expand_dims %1 axis=1 : i32[64,1] #blocked1  loc(2:1)\n" END_FUNC),
                 "'expand_dims': operand %1 has #blocked0, needs #slice0 (expand_dims' operand has the slice of its "
                 "result's layout along the axis)");
  const char *slice = ROWS(0) "#slice0 = #slice<{dim = 1, parent = #blocked0}>\n";
  char text[4096];
  snprintf(text, sizeof text, "%s%s%s%s", slice, FUNC, RANGE("#slice0") "  %2 = expand_dims %1 axis=1 : i32[64,1] #blocked0  loc(2:1)\n", END_FUNC);
  CHECK(!strcmp(diagnose(text), ""));
  /* broadcast: the result's layout */
  snprintf(text, sizeof text, "%s%s%s%s", slice, COLS(1) FUNC,
           RANGE("#slice0") "  %2 = expand_dims %1 axis=1 : i32[64,1] #blocked0  loc(2:1)\n"
                            "  %3 = broadcast %2 : i32[64,64] #blocked1  loc(3:1)\n", END_FUNC);
  CHECK_CONTAINS(diagnose(text), "'broadcast': operand %2 has #blocked0, needs #blocked1 (broadcast's operand has its "
                                      "result's layout");
  /* reduce: the slice of the operand's */
  snprintf(text, sizeof text, "%s%s%s", slice, "#slice1 = #slice<{dim = 0, parent = #blocked0}>\n" FUNC,
           "  %1 = constant 0 : fp32[64,64] #blocked0  loc(1:1)\n  %2 = reduce.sum %1 axis=1 : fp32[64] #slice1  loc(2:1)\n" END_FUNC);
  CHECK_CONTAINS(diagnose(text), "'reduce': %2 has #slice1, needs #slice0 (reduce's result has the slice of its "
                                      "operand's layout");
  /* trans: the permuted operand layout */
  CHECK_CONTAINS(diagnose(ROWS(0) FUNC "  %1 = constant 0 : fp32[64,64] #blocked0  loc(1:1)\n"
                                           "  %2 = trans %1 [1, 0] : fp32[64,64] #blocked0  loc(2:1)\n" END_FUNC),
                 "'trans': %2 has #blocked0, needs #blocked1 (trans' result has its operand's blocked layout, permuted)");
  CHECK(!strcmp(diagnose(ROWS(0) COLS(1) FUNC "  %1 = constant 0 : fp32[64,32] #blocked0  loc(1:1)\n"
                                                  "  %2 = trans %1 [1, 0] : fp32[32,64] #blocked1  loc(2:1)\n" END_FUNC),
                ""));
  /* memory ops: one layout */
  CHECK_CONTAINS(diagnose(V4(0) V1(1) FUNC RANGE("#blocked0") "  %2 = splat %0 : *fp32[64] #blocked1  loc(2:1)\n"
                                                                   "  %3 = addptr %2, %1 : *fp32[64] #blocked1  loc(3:1)\n" END_FUNC),
                 "'addptr': operand %1 has #blocked0, needs #blocked1");
  CHECK_CONTAINS(diagnose(V4(0) V1(1) FUNC "  %1 = splat %0 : *fp32[64] #blocked0  loc(1:1)\n"
                                                "  %2 = constant 1 : fp32[64] #blocked1  loc(2:1)\n  store %1, %2  loc(3:1)\n" END_FUNC),
                 "'store': operand %2 has #blocked1, needs #blocked0 (a memory op's pointers, mask and values share one "
                 "layout)");
  /* dot: dot-operand layouts of the result's */
  CHECK_CONTAINS(diagnose(ROWS(0) FUNC "  %1 = constant 0 : fp32[64,64] #blocked0  loc(1:1)\n"
                                           "  %2 = dot.ieee %1, %1, %1 : fp32[64,64] #blocked0  loc(2:1)\n" END_FUNC),
                 "'dot': operand %1 has #blocked0, needs #dot_op0 (dot's operands have the dot-operand layouts");
  CHECK(!strcmp(diagnose(ROWS(0) "#dot_op0 = #dot_op<{opIdx = 0, parent = #blocked0, kWidth = 1}>\n"
                                      "#dot_op1 = #dot_op<{opIdx = 1, parent = #blocked0, kWidth = 1}>\n" FUNC
                                      "  %1 = constant 0 : fp32[64,64] #dot_op0  loc(1:1)\n"
                                      "  %2 = constant 0 : fp32[64,64] #dot_op1  loc(1:1)\n"
                                      "  %3 = constant 0 : fp32[64,64] #blocked0  loc(1:1)\n"
                                      "  %4 = dot.ieee %1, %2, %3 : fp32[64,64] #blocked0  loc(2:1)\n" END_FUNC),
                ""));
  /* carried values: init, region argument, yield and result */
  CHECK(!strcmp(diagnose(loop_text("#blocked0", "#blocked0")), ""));
  CHECK_CONTAINS(diagnose(loop_text("#blocked1", "#blocked0")),
                 "'for': %6 has #blocked1, needs #blocked0 (a carried value keeps its layout");
  CHECK_CONTAINS(diagnose(loop_text("#blocked1", "#blocked1")), "'for': operand %1 has #blocked0, needs #blocked1");
  /* convert_layout keeps the type */
  CHECK_CONTAINS(diagnose(V4(0) V1(1) FUNC RANGE("#blocked0") "  %2 = convert_layout %1 : i32[32] #blocked1  loc(2:1)\n" END_FUNC),
                 "'convert_layout': converts a tile to a tile of the same type");
  /* the reader: bad layout text, placed */
  CHECK_CONTAINS(diagnose("#dot_op0 = #dot_op<{opIdx = 0, parent = #s, kWidth = 1}>\n"), "unknown layout #s");
  CHECK_CONTAINS(diagnose(BLOCKED(0, "[1]", "[16]", "[4]", "[0]") FUNC END_FUNC),
                 "bad.tgir:1:14: error: GPU-layout IR: threads per warp must multiply to 32");
  CHECK_CONTAINS(diagnose(V4(0) V4(0) FUNC END_FUNC), "bad.tgir:2:1: error: GPU-layout IR: layout #blocked0 is defined twice");
  CHECK_CONTAINS(diagnose(V4(0) FUNC "  %1 = make_range 0, 64 : i32[64] #nope  loc(1:1)\n" END_FUNC),
                 "bad.tgir:3:35: error: GPU-layout IR: unknown layout #nope");
  CHECK_CONTAINS(diagnose("#mma0 = #mma<{}>\n"), "bad.tgir:1:10: error: GPU-layout IR: an mma layout needs versionMajor");
  CHECK_CONTAINS(diagnose("#m = #mma<{versionMajor = 3, warpsPerCTA = [2, 2], instrShape = [16, 64, 16]}>\n"),
                 "bad.tgir:1:7: error: GPU-layout IR: a version 3 mma layout has warps along M in groups of 4");
  CHECK_CONTAINS(diagnose("#s = #nvmma_shared<{swizzlingByteWidth = 96, elementBitWidth = 16, order = [1, 0]}>\n"),
                 "swizzlingByteWidth is 32, 64 or 128");
  CHECK_CONTAINS(diagnose("#s = #shared<{vec = 3, perPhase = 1, maxPhase = 1, order = [1, 0]}>\n"),
                 "vec, perPhase and maxPhase must be powers of two");
  CHECK_CONTAINS(diagnose("#s = #wavy<{}>\n"), "expected a layout kind: blocked, slice, dot_op, mma, shared or nvmma_shared");
}

/* ---- layouts ---- */

/* Every element of the shape is held by exactly `copies` threads and a
 * register each; no two registers of a thread hold the same element. */
static int places_each_element(const LinearLayout *ll, int copies) {
  int64_t n = 1;
  for (int d = 0; d < ll->rank; d++) n *= ll->shape[d];
  int *seen = calloc((size_t)n, sizeof *seen);
  for (uint32_t w = 0; w < (1u << ll->n_warp); w++)
    for (uint32_t l = 0; l < (1u << ll->n_lane); l++)
      for (uint32_t r = 0; r < (uint32_t)ll_registers(ll); r++) seen[ll_offset(ll, r, l, w)]++;
  int ok = 1;
  for (int64_t i = 0; i < n; i++) ok &= seen[i] == copies;
  free(seen);
  return ok;
}

static void check_layouts(void) {
  Arena a;
  arena_init(&a, 64u << 20);
  LayoutTable t = {&a, {0}};
  const char *why = NULL;
  LinearLayout ll;
  int64_t s64[2] = {64, 64}, s16[2] = {16, 16}, s128x256[2] = {128, 256};
  const Layout *acc = layout_fma_accumulator(&t, 2, s64, 4);
  CHECK_CONTAINS(layout_str(&a, acc), "sizePerThread = [4, 4], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2]");
  CHECK(layout_linear(acc, 2, s64, &ll, &why) == 0 && places_each_element(&ll, 1));
  CHECK(ll_contiguous_registers(&ll, 1) == 4); /* a thread's 4 columns are consecutive registers */
  acc = layout_fma_accumulator(&t, 2, s16, 4);
  CHECK_CONTAINS(layout_str(&a, acc), "sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1]");
  CHECK(layout_linear(acc, 2, s16, &ll, &why) == 0 && places_each_element(&ll, 1));
  acc = layout_fma_accumulator(&t, 2, s128x256, 8);
  CHECK(layout_linear(acc, 2, s128x256, &ll, &why) == 0 && places_each_element(&ll, 1));
  CHECK(ll_registers(&ll) == 128);
  /* the FMA A operand: a thread holds all of K for its rows, once per N-thread */
  const Layout *a_op = layout_dot_operand(&t, 0, layout_fma_accumulator(&t, 2, s64, 4), 1);
  int64_t a_shape[2] = {64, 32};
  CHECK(layout_linear(a_op, 2, a_shape, &ll, &why) == 0 && places_each_element(&ll, 8 * 2));
  /* transposed: element (i, j) of the operand is element (j, i) of the result, in the same thread and register */
  int spt[2] = {1, 4}, tpw[2] = {4, 8}, wpc[2] = {4, 1}, order[2] = {1, 0};
  int64_t perm[2] = {1, 0}, s_in[2] = {32, 128}, s_out[2] = {128, 32};
  const Layout *in = layout_blocked(&t, 2, spt, tpw, wpc, order, &why), *out = layout_transposed(&t, in, perm, 0);
  CHECK(out && layout_transposed(&t, out, perm, 1) == in);
  LinearLayout lin, lout;
  CHECK(layout_linear(in, 2, s_in, &lin, &why) == 0 && layout_linear(out, 2, s_out, &lout, &why) == 0);
  int same = lin.n_reg == lout.n_reg;
  for (uint32_t r = 0; same && r < (uint32_t)ll_registers(&lin); r++)
    for (uint32_t l = 0; l < 32; l++) {
      int64_t ci[2], co[2];
      ll_coords(&lin, ll_offset(&lin, r, l, 3), ci);
      ll_coords(&lout, ll_offset(&lout, r, l, 3), co);
      same &= ci[0] == co[1] && ci[1] == co[0];
    }
  CHECK(same);
  CHECK(layout_transposed(&t, layout_slice(&t, 0, in), perm, 0) == NULL);
  arena_free(&a);
}

/* Whether two linear layouts (flat offsets, any shapes of one size) give
 * each thread the same elements, registers in any order. */
static int same_thread_elements(const LinearLayout *x, const LinearLayout *y) {
  if (x->n_reg != y->n_reg || !ll_same_threads(x, y)) return 0;
  for (int i = 0; i < x->n_reg; i++)
    if (ll_find_register(y, x->reg[i]) < 0) return 0;
  return 1;
}

/* reshape's layouts: the operand's elements stay in their threads, re-split. */
static void check_reshaped_layouts(void) {
  Arena a = {0};
  LayoutTable t = {&a, {0}};
  const char *why;
  int spt[2] = {1, 4}, tpw[2] = {4, 8}, wpc[2] = {4, 1}, order[2] = {1, 0};
  int64_t flat[2] = {16, 32}, pairs[3] = {16, 16, 2}, rounds[4] = {16, 4, 2, 4};
  const Layout *in = layout_blocked(&t, 2, spt, tpw, wpc, order, &why);
  const Layout *out = layout_reshaped(&t, in, 2, flat, 3, pairs);
  CHECK(out && layout_reshaped(&t, out, 3, pairs, 2, flat) == in); /* a default layout comes back */
  CHECK_CONTAINS(layout_str(&a, out), "sizePerThread = [1, 2, 2], threadsPerWarp = [4, 8, 1]");
  LinearLayout lin, lout;
  CHECK(layout_linear(in, 2, flat, &lin, &why) == 0 && layout_linear(out, 3, pairs, &lout, &why) == 0);
  CHECK(same_thread_elements(&lin, &lout));
  CHECK(layout_joined(&t, out, 1) != NULL); /* the pair is in registers: split renames them */
  /* [16, 4, 2, 4]: the pair is bit 2 of the 32 columns, a lane bit; still blocked, not in registers */
  const Layout *round = layout_reshaped(&t, in, 2, flat, 4, rounds);
  CHECK(round && layout_linear(round, 4, rounds, &lout, &why) == 0 && same_thread_elements(&lin, &lout));
  /* an mma.sync accumulator's rows are lanes, a register, then warps: no blocked layout re-splits it */
  int mma_warps[2] = {4, 1}, instr[3] = {16, 8, 0};
  int64_t acc[2] = {64, 64}, halves[3] = {64, 2, 32};
  const Layout *mma = layout_mma(&t, 2, 2, mma_warps, instr, &why);
  CHECK(mma && layout_reshaped(&t, mma, 2, acc, 3, halves) == NULL);
  CHECK(layout_reshaped(&t, mma, 2, acc, 2, acc) == mma);
  arena_free(&a);
}

/* Programs per SM against the H100's limits as the CUDA occupancy
 * calculator counts them: 65536 registers allocated 8 a thread, 228 KB of
 * shared memory less 1 KB a program, 2048 threads, 32 programs. */
static void check_sm_programs(void) {
  const Arch *h100 = arch_find("sm_90a");
  CHECK(arch_programs_per_sm(h100, 0, 96, 128) == 5);           /* 65536 / (96 * 128) = 5.3 */
  CHECK(arch_programs_per_sm(h100, 0, 97, 128) == 4);           /* 97 takes 104: 4.9 */
  CHECK(arch_programs_per_sm(h100, 0, 104, 128) == 4);
  CHECK(arch_programs_per_sm(h100, 50 << 10, 32, 128) == 4);    /* 228 KB / 51 KB = 4.5 */
  CHECK(arch_programs_per_sm(h100, 0, 32, 512) == 4);           /* 2048 threads */
  CHECK(arch_programs_per_sm(h100, 0, 16, 32) == 32);           /* the programs' own limit */
  CHECK(arch_smem_per_program(h100) == 227 << 10);
}

/* The image the runtime prefers for each GPU: the newest of its major
 * version not above it, sm_90a only on 9.0, PTX of sm_90 beyond Hopper. */
static void check_arch_for_gpu(void) {
  static const struct { int major, minor; const char *arch; int ptx; } cases[] = {
      {8, 0, "sm_80", 0}, {8, 6, "sm_86", 0}, {8, 7, "sm_86", 0}, {8, 9, "sm_89", 0}, {9, 0, "sm_90a", 0},
      {9, 1, "sm_90", 0}, {10, 0, "sm_90", 1}, {12, 0, "sm_90", 1}, {7, 5, NULL, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int ptx = -1;
    const char *arch = arch_for_gpu(cases[i].major, cases[i].minor, &ptx);
    CHECK(cases[i].arch ? arch && !strcmp(arch, cases[i].arch) : !arch);
    CHECK(ptx == cases[i].ptx);
  }
  CHECK(!arch_find("sm_75") && !arch_find(NULL) && arch_find("sim90")->sim && arch_find("sim90")->tma == 1 &&
        arch_find("sm_90a")->tma == 2); /* the simulator: TMA stores, not copies */
}

int main(void) {
  unsigned seed = (unsigned)time(NULL);
  printf("seed %u\n", seed);
  srand(seed);
  for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) check_same_results(&kernels[i]);
  check_verifier();
  check_layouts();
  check_reshaped_layouts();
  check_sm_programs();
  check_arch_for_gpu();
  return check_report();
}
