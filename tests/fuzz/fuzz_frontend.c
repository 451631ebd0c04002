/* libFuzzer harness over the whole CPU pipeline: every input is lexed,
 * parsed and, with default parameter types (pointers for names with "ptr",
 * else i32; constexprs without a value get 16), checked; what type-checks
 * is lowered to tile IR, verified, optimised with the verifier after every
 * pass, printed and read back (the same text), and run on the interpreter
 * over two programs with small buffers.
 * Any crash, leak, hang or sanitizer report is a bug: bad source must only
 * ever produce diagnostics, and a bad kernel only a clean run-time error. */
#include "driver/driver.h"
#include "interp/interp.h"
#include "tir/passes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { BUFFER_BYTES = 4096 };

static void interpret(TirFunc *f) {
  InterpBuffer buffers[64];
  InterpArg args[64];
  static unsigned char memory[64][BUFFER_BYTES];
  int n = f->params.len < 64 ? f->params.len : 64;
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
  if (n == f->params.len) interp_run(&launch);
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
    CheckedKernel *k = NULL;
    if (!c.diags.errors) {
      SemaOptions o = {0};
      o.config = -1;
      o.default_types = 1;
      o.require_types = 1;
      k = sema_check(m, stdlib, &o, &c.diags);
    }
    if (k) {
      Buf out;
      buf_init(&out, &c.arena);
      checked_print(k, &out);
      TirFunc *f = tir_lower(k, &c.arena, &c.diags);
      if (tir_verify(f, &c.diags)) abort(); /* lowering made invalid IR: a compiler bug */
      if (tir_run_passes(f, NULL, &c.diags, NULL)) abort();
      Buf ir;
      buf_init(&ir, &c.arena);
      tir_print(f, &ir);
      round_trip(&c, buf_cstr(&ir), ir.len);
      interpret(f);
    }
    Buf d;
    buf_init(&d, &c.arena);
    diag_render(&c.diags, &d);
  }
  arena_free(&c.arena);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  run((const char *)data, size);
  return 0;
}
