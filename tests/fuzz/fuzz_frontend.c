/* libFuzzer harness over the whole CPU pipeline: every input is lexed,
 * parsed and, with default parameter types (pointers for names with "ptr",
 * else i32; constexprs without a value get 16), checked -- as the module's
 * kernel, then, when it defines several functions, each of its first four
 * taken as the kernel (so files of many kernels reach the back end); what type-checks
 * is lowered to tile IR, verified, optimised with the verifier after every
 * pass, printed and read back (the same text), and run on the interpreter
 * over two programs with small buffers.  It is then converted to GPU-layout
 * IR, which must verify, read back to the same text, be left unchanged by
 * another remove-converts, and leave the buffers exactly as the tile IR
 * did when interpreted (a conversion is a copy there).  Last, the GPU-layout
 * IR is lowered to LLVM IR for an NVPTX target (sm_90a, the layouts chosen
 * for compute capability 9.0) and, from the tile IR text read back and
 * converted again for 8.0, for the thread simulator's target; LLVM's
 * verifier checks each module.  The only lowering failure allowed is a tile
 * too large for shared memory.
 * Any crash, leak, hang or sanitizer report is a bug: bad source must only
 * ever produce diagnostics, and a bad kernel only a clean run-time error.
 * FUZZ_SHOW=1 prints each attempt's diagnostics (what an input reaches). */
#include "../../src/driver/driver.h"
#include "../../src/interp/interp.h"
#include "../../src/llvm/generate.h"
#include "../../src/tgir/tgir.h"
#include "../../src/tir/passes.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BUFFER_BYTES = 4096 };

static unsigned char memory[64][BUFFER_BYTES];

/* Runs f on buffers filled with one fixed pattern; -1 if it failed or
 * could not run. */
static int interpret(TirFunc *f) {
  InterpBuffer buffers[64];
  InterpArg args[64];
  int n = f->params.len < 64 ? f->params.len : 64;
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < BUFFER_BYTES; j++) memory[i][j] = (unsigned char)(i * 31 + j * 7);
  for (int i = 0; i < n; i++) {
    buffers[i] = (InterpBuffer){f->params.data[i].name, memory[i], BUFFER_BYTES};
    args[i] = (InterpArg){tir_type(f, f->params.data[i].value)->is_ptr ? i : -1, 3, 3.0};
  }
  InterpLaunch launch = {0};
  launch.f = f;
  launch.grid[0] = 2;
  launch.grid[1] = launch.grid[2] = 1;
  launch.buffers = buffers;
  launch.n_buffers = n;
  launch.args = args;
  launch.max_iterations = 1000;
  return n == f->params.len ? interp_run(&launch) : -1;
}

/* GPU-layout IR: verified, read back to the same text, a fixed point of
 * remove-converts, and computing what the tile IR computed. */
static void check_gpu_layout_ir(Compilation *c, TirFunc *f, int tir_status) {
  static unsigned char tir_memory[64][BUFFER_BYTES];
  memcpy(tir_memory, memory, sizeof memory);
  TgirOptions o = {90, 1, NULL, 0, 0, 0};
  if (passes_to_tgir(f, &o, NULL, &c->diags, NULL)) abort(); /* the verifier failed: a compiler bug */
  Buf text, again, cleaned;
  buf_init(&text, &c->arena);
  tgir_print(f, &text);
  Source *src = arena_alloc(&c->arena, sizeof *src);
  *src = (Source){"fuzz.tgir", buf_cstr(&text), text.len};
  TirFunc *g = tir_read(src, &c->arena, &c->diags);
  if (!g || tir_verify(g, &c->diags) || tgir_verify(g, &c->diags)) abort();
  buf_init(&again, &c->arena);
  tgir_print(g, &again);
  if (again.len != text.len || memcmp(buf_cstr(&again), buf_cstr(&text), text.len)) abort();
  if (tgir_check_text(g, &c->diags) || passes_run(PASS_TGIR, g, &o, NULL, NULL, &c->diags, NULL)) abort();
  buf_init(&cleaned, &c->arena);
  tgir_print(g, &cleaned);
  if (cleaned.len != text.len || memcmp(buf_cstr(&cleaned), buf_cstr(&text), text.len)) abort();
  if (interpret(f) != tir_status || (tir_status == 0 && memcmp(tir_memory, memory, sizeof memory))) abort();
}

/* Lowers f to LLVM IR for `arch` (verified inside llvm_generate); a failure
 * other than running out of shared memory, or inline PTX for the simulator,
 * is a compiler bug. */
static void lower(Compilation *c, const TirFunc *f, const char *arch) {
  GpuTarget target = {arch, NULL, NULL, 0};
  GpuCode code;
  int errors = c->diags.errors;
  if (llvm_generate(f, &target, 0, 0, &c->arena, &code, &c->diags) == 0) return;
  const Diag *last = &c->diags.list.data[c->diags.list.len - 1];
  int expected = strstr(last->msg, "shared memory") || strstr(last->msg, "shared-memory buffers need") ||
                 strstr(last->msg, "the simulator cannot run PTX");
  if (c->diags.errors > errors && expected && !strstr(last->msg, "internal error")) return;
  abort();
}

/* The tile IR text again, converted for compute capability 8.0, lowered for the simulator. */
static void lower_for_sim(Compilation *c, const char *tir, size_t len) {
  Source *src = arena_alloc(&c->arena, sizeof *src);
  *src = (Source){"fuzz.tir", tir, len};
  TirFunc *g = tir_read(src, &c->arena, &c->diags);
  TgirOptions o = {80, 0, NULL, 0, 0, 0};
  if (!g || passes_to_tgir(g, &o, NULL, &c->diags, NULL)) abort();
  lower(c, g, "sim");
}

/* Printed IR must read back to a valid function that prints the same. */
static void round_trip(Compilation *c, const char *text, size_t len) {
  Source *src = arena_alloc(&c->arena, sizeof *src);
  *src = (Source){"fuzz.tir", text, len};
  TirFunc *g = tir_read(src, &c->arena, &c->diags);
  if (!g || tir_verify(g, &c->diags)) abort();
  Buf again;
  buf_init(&again, &c->arena);
  tir_print(g, &again);
  if (again.len != len || memcmp(buf_cstr(&again), text, len)) abort();
}

/* Checks function `name` (NULL: the module's one kernel) with fresh
 * diagnostics and takes what type-checks through every stage. */
static void check_kernel(Compilation *c, Module *m, Module *stdlib, const char *name) {
  diags_init(&c->diags, &c->arena, &c->guard);
  SemaOptions o = {0};
  o.kernel = name;
  o.config = -1;
  o.default_types = 1;
  o.require_types = 1;
  CheckedKernel *k = sema_check(m, stdlib, &o, &c->diags);
  if (k) {
    Buf out;
    buf_init(&out, &c->arena);
    checked_print(k, &out);
    TirFunc *f = tir_lower(k, &c->arena, &c->diags);
    if (tir_verify(f, &c->diags)) abort(); /* lowering made invalid IR: a compiler bug */
    if (passes_run(PASS_TIR, f, NULL, NULL, NULL, &c->diags, NULL)) abort();
    Buf ir;
    buf_init(&ir, &c->arena);
    tir_print(f, &ir);
    round_trip(c, buf_cstr(&ir), ir.len);
    check_gpu_layout_ir(c, f, interpret(f));
    lower(c, f, "sm_90a");
    lower_for_sim(c, buf_cstr(&ir), ir.len);
  }
  Buf d;
  buf_init(&d, &c->arena);
  diag_render(&c->diags, &d);
  if (getenv("FUZZ_SHOW")) fprintf(stderr, "== %s: %s\n%s", name ? name : "(kernel)", k ? "checked" : "rejected", buf_cstr(&d));
}

static void run(const char *text, size_t len) {
  Compilation c = {0};
  arena_init(&c.arena, 256u << 20);
  c.arena.guard = &c.guard;
  diags_init(&c.diags, &c.arena, &c.guard);
  c.source = (Source){"fuzz.tl", text, len};
  if (setjmp(c.guard.jump) == 0) {
    TokenVec toks = lex(&c.source, &c.diags);
    Module *m = parse_module(&c.source, &toks, &c.diags);
    Source *std = arena_alloc(&c.arena, sizeof *std);
    *std = (Source){"<stdlib>", (const char *)tile_stdlib_source, tile_stdlib_size};
    TokenVec stoks = lex(std, &c.diags);
    Module *stdlib = parse_module(std, &stoks, &c.diags);
    if (!c.diags.errors) {
      check_kernel(&c, m, stdlib, NULL);
      int functions = 0;
      for (int i = 0; i < m->root->body.len; i++) functions += m->root->body.data[i]->kind == ND_FUNCDEF;
      for (int i = 0, tried = 0; functions > 1 && i < m->root->body.len && tried < 4; i++) {
        Node *fn = m->root->body.data[i];
        if (fn->kind != ND_FUNCDEF) continue;
        tried++;
        check_kernel(&c, m, stdlib, fn->name);
      }
    } else {
      Buf d;
      buf_init(&d, &c.arena);
      diag_render(&c.diags, &d);
    }
  }
  arena_free(&c.arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  run((const char *)data, size);
  return 0;
}
