/* Checker: promotion and broadcasting against independent references on
 * random inputs, constexpr folding with Python semantics, and typed trees
 * of small kernels. */
#include "check.h"
#include "../../src/frontend/sema.h"
#include "../../src/frontend/sema_impl.h"
#include "../../src/tir/tir.h"

#include <stdlib.h>
#include <time.h>

typedef struct Checked {
  Arena arena;
  Guard guard;
  Diags diags;
  Source src;
  CheckedKernel *k;
  const char *dump, *errors;
} Checked;

extern const unsigned char tile_stdlib_source[];
extern const size_t tile_stdlib_size;

static Module *parse_text(Checked *c, Source *src) {
  TokenVec toks = lex(src, &c->diags);
  return parse_module(src, &toks, &c->diags);
}

static void check_kernel(Checked *c, const char *text, const char *sig, const char **defines, int n_defines) {
  arena_init(&c->arena, 0);
  c->arena.guard = &c->guard;
  diags_init(&c->diags, &c->arena, &c->guard);
  c->src = (Source){"s.tl", text, strlen(text)};
  Source *std = arena_alloc(&c->arena, sizeof *std);
  *std = (Source){"<stdlib>", (const char *)tile_stdlib_source, tile_stdlib_size};
  Module *m = parse_text(c, &c->src), *stdlib = parse_text(c, std);
  SemaOptions o = {0};
  o.signature = sig;
  o.defines = defines;
  o.n_defines = n_defines;
  o.config = -1;
  o.require_types = 1;
  c->k = setjmp(c->guard.jump) == 0 ? sema_check(m, stdlib, &o, &c->diags) : NULL;
  Buf b, e;
  buf_init(&b, &c->arena);
  buf_init(&e, &c->arena);
  if (c->k) checked_print(c->k, &b);
  diag_render(&c->diags, &e);
  c->dump = buf_cstr(&b);
  c->errors = buf_cstr(&e);
}

/* Triton's documented results for its promotion rules. */
static void test_promotion_table(void) {
  CHECK(promote(DT_FP16, 0, DT_FP32, 0, 0) == DT_FP32);
  CHECK(promote(DT_FP16, 0, DT_BF16, 0, 0) == DT_FP16);
  CHECK(promote(DT_BF16, 0, DT_I32, 0, 0) == DT_FP32);
  CHECK(promote(DT_BF16, 0, DT_BF16, 0, 0) == DT_BF16);
  CHECK(promote(DT_FP16, 0, DT_I32, 0, 0) == DT_FP16);
  CHECK(promote(DT_FP16, 0, DT_FP16, 0, 1) == DT_FP32);
  CHECK(promote(DT_I32, 0, DT_FP32, 1, 0) == DT_FP32);   /* i32 tile + 1.5 */
  CHECK(promote(DT_FP16, 0, DT_FP32, 1, 0) == DT_FP16);  /* fp16 tile + 1.5 */
  CHECK(promote(DT_I8, 0, DT_I32, 1, 0) == DT_I8);       /* i8 tile + 1 */
  CHECK(promote(DT_I32, 0, DT_U32, 0, 0) == DT_U32);
  CHECK(promote(DT_U8, 0, DT_I32, 1, 0) == DT_U8);       /* u8 tile + 1: a literal of the same kind */
  CHECK(promote(DT_I64, 0, DT_U32, 0, 0) == DT_I64);
  CHECK(promote(DT_I1, 0, DT_I16, 0, 0) == DT_I16);
  CHECK(promote(DT_FP64, 0, DT_FP16, 0, 0) == DT_FP64);
}

/* numpy's rule, written independently: align right, equal or one is 1. */
static int reference_broadcast(const Type *x, const Type *y, int64_t *out, int *rank) {
  int r = x->rank > y->rank ? x->rank : y->rank;
  for (int k = 1; k <= r; k++) {
    int64_t a = k <= x->rank ? x->shape[x->rank - k] : 1;
    int64_t b = k <= y->rank ? y->shape[y->rank - k] : 1;
    if (a != 1 && b != 1 && a != b) return 0;
    out[r - k] = a > b ? a : b;
  }
  *rank = r;
  return 1;
}

static void random_shape(Type *t) {
  t->rank = rand() % 4;
  for (int i = 0; i < t->rank; i++) t->shape[i] = (int64_t)1 << (rand() % 3 * (rand() % 2));
}

static void test_broadcast_random(void) {
  int agree = 1;
  for (int trial = 0; trial < 5000; trial++) {
    Type x = {0}, y = {0};
    random_shape(&x);
    random_shape(&y);
    int64_t got[MAX_RANK], want[MAX_RANK];
    int gr, wr;
    int g = broadcast_shapes(&x, &y, &gr, got), w = reference_broadcast(&x, &y, want, &wr);
    if (g != w || (g && (gr != wr || memcmp(got, want, sizeof(int64_t) * (size_t)gr)))) agree = 0;
  }
  CHECK(agree);
}

/* Python's // and % on random operands, against a floor computed in double. */
static void test_constexpr_division_random(void) {
  Checked c;
  check_kernel(&c, "def k(x: '*fp32'):\n    pass\n", NULL, NULL, 0);
  Sema S = {0};
  S.arena = &c.arena;
  S.diags = &c.diags;
  int agree = 1;
  for (int trial = 0; trial < 2000; trial++) {
    int64_t a = rand() % 2001 - 1000, b = rand() % 201 - 100;
    if (b == 0) continue;
    Value *q = fold_binary(&S, c.src.text ? (Loc){0} : (Loc){0}, TK_FLOORDIV, value_int(&S, a), value_int(&S, b));
    Value *r = fold_binary(&S, (Loc){0}, TK_PERCENT, value_int(&S, a), value_int(&S, b));
    int64_t want_q = (int64_t)__builtin_floor((double)a / (double)b);
    if (q->i != want_q || r->i != a - b * want_q) agree = 0;
  }
  CHECK(agree);
  arena_free(&c.arena);
}

static void test_vector_add_types(void) {
  Checked c;
  const char *defs[] = {"BLOCK=256"};
  check_kernel(&c,
               "import triton.language as tl\n"
               "@triton.jit\n"
               "def add(x, y, out, n, BLOCK: tl.constexpr):\n"
               "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
               "    mask = offs < n\n"
               "    a = tl.load(x + offs, mask=mask, other=0)\n"
               "    tl.store(out + offs, a + tl.load(y + offs, mask=mask), mask=mask)\n",
               "*fp16,*fp32,*fp32,i32", defs, 1);
  CHECK(c.k != NULL);
  CHECK_CONTAINS(c.dump, "Call load <6:12> : fp16[256]");
  CHECK_CONTAINS(c.dump, "BinOp '+' <7:28> : fp32[256]");
  CHECK_CONTAINS(c.dump, "Cast <7:26> : fp32[256]");
  CHECK_CONTAINS(c.dump, "Name mask <5:5> : i1[256]");
  arena_free(&c.arena);
}

static void test_helpers_fold_and_inline(void) {
  Checked c;
  const char *defs[] = {"B=64"};
  check_kernel(&c,
               "@jit\n"
               "def blocks(n, size):\n"
               "    return tl.cdiv(n, size), size * 2\n"
               "@jit\n"
               "def k(p, n, B: tl.constexpr):\n"
               "    nb, twice = blocks(1000, B)\n"
               "    tl.static_assert(nb == 16 and twice == 128)\n"
               "    rt, _ = blocks(n, B)\n"
               "    for i in tl.static_range(3):\n"
               "        tl.store(p + i, rt)\n",
               "*i32,i32", defs, 1);
  CHECK(c.k != NULL);
  CHECK(c.diags.errors == 0);
  CHECK_CONTAINS(c.dump, "Name blocks.3.n <2:12> : i32");
  int stores = 0;
  for (const char *s = c.dump; (s = strstr(s, "Call store")); s++) stores++;
  CHECK(stores == 3);
  arena_free(&c.arena);
}

static void test_loop_carried_and_if_merge(void) {
  Checked c;
  check_kernel(&c,
               "def k(p: '*fp32', n: 'i32'):\n"
               "    acc = 0.0\n"
               "    if n > 4:\n"
               "        acc = tl.load(p)\n"
               "    for i in range(0, n):\n"
               "        acc += tl.load(p + i)\n"
               "    tl.store(p, acc)\n",
               NULL, NULL, 0);
  CHECK(c.k != NULL);
  CHECK_CONTAINS(c.dump, "For <5:5>");
  CHECK_CONTAINS(c.dump, "Name acc <3:5> : fp32");
  arena_free(&c.arena);

  check_kernel(&c,
               "def k(p: '*fp32', n: 'i32'):\n"
               "    acc = 0\n"
               "    for i in range(0, n):\n"
               "        acc += tl.load(p + i)\n",
               NULL, NULL, 0);
  CHECK(c.k == NULL);
  CHECK_CONTAINS(c.errors, "s.tl:4:9: error: loop-carried variable 'acc' has type i32 before the loop but fp32 after an iteration");
  arena_free(&c.arena);
}

static void test_errors_are_independent(void) {
  Checked c;
  check_kernel(&c,
               "def k(p: '*fp32', n: 'i32'):\n"
               "    a = tl.arange(0, 48)\n"
               "    b = undefined_thing + 1\n"
               "    c = tl.lod(p)\n"
               "    d = p + 1.5\n",
               NULL, NULL, 0);
  CHECK(c.diags.errors == 4);
  CHECK_CONTAINS(c.errors, "s.tl:2:12: error: arange: the range [0, 48) has 48 elements");
  CHECK_CONTAINS(c.errors, "s.tl:3:9: error: name 'undefined_thing' is not defined");
  CHECK_CONTAINS(c.errors, "s.tl:4:12: error: module 'tl' has no attribute 'lod'");
  CHECK_CONTAINS(c.errors, "note: did you mean tl.load?");
  CHECK_CONTAINS(c.errors, "s.tl:5:11: error: invalid pointer arithmetic: *fp32 + fp32");
  arena_free(&c.arena);
}

static int has_builtin(const char *name) {
  for (int id = 0; id < B_COUNT; id++)
    if (!strcmp(builtin_name(id), name)) return 1;
  return 0;
}

/* lang/memory.def is the one table: every name reads back to its row, has a PTX spelling, and each
 * atomic kind is a builtin tl.atomic_NAME (the lowering finds the kind by that name). */
static void test_memory_table(void) {
  int ok = 1;
  for (int i = 0; i < SEM_COUNT; i++) {
    const char *n = tir_sem_name(i);
    ok &= n && tir_sem_lookup(n, strlen(n)) == i && tir_sem_ptx(i)[0] == '.';
  }
  for (int i = 0; i < SCOPE_COUNT; i++) {
    const char *n = tir_scope_name(i);
    ok &= n && tir_scope_lookup(n, strlen(n)) == i && tir_scope_ptx(i)[0] == '.';
  }
  ok &= tir_evict_name(EVICT_NONE) == NULL && !strcmp(tir_evict_ptx(EVICT_NONE), "");
  for (int i = 1; i < EVICT_COUNT; i++) {
    const char *n = tir_evict_name(i);
    ok &= n && tir_evict_lookup(n, strlen(n)) == i && !strncmp(tir_evict_ptx(i), ".L1::", 5);
  }
  for (int i = 0; i < ATOM_COUNT; i++) {
    const char *n = tir_kind_name(TIR_ATOMIC_RMW, i);
    char builtin[64];
    snprintf(builtin, sizeof builtin, "atomic_%s", n ? n : "?");
    ok &= n && tir_kind_lookup(TIR_ATOMIC_RMW, n, strlen(n)) == i && has_builtin(builtin) && tir_atomic_ptx(i)[0];
  }
  ok &= SEM_ACQ_REL == 0 && SCOPE_GPU == 0 && EVICT_NONE == 0; /* the defaults are 0 (TirOp.ival, ival2) */
  ok &= tir_sem_name(SEM_COUNT) == NULL && tir_atomic_ptx(-1) == NULL;
  CHECK(ok);
}

int main(void) {
  unsigned seed = (unsigned)time(NULL);
  printf("seed %u\n", seed);
  srand(seed);
  test_promotion_table();
  test_broadcast_random();
  test_constexpr_division_random();
  test_vector_add_types();
  test_helpers_fold_and_inline();
  test_loop_carried_and_if_merge();
  test_errors_are_independent();
  test_memory_table();
  return check_report();
}
