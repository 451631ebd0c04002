/* libFuzzer harness over the frontend: every input is lexed, parsed and,
 * with default parameter types (pointers for names with "ptr", else i32;
 * constexprs without a value get 16), checked.  Any crash, leak, hang or
 * sanitizer report is a bug: bad source must only ever produce
 * diagnostics. */
#include "driver/driver.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
      SemaOptions o = {0};
      o.config = -1;
      o.default_types = 1;
      CheckedKernel *k = sema_check(m, stdlib, &o, &c.diags);
      Buf out;
      buf_init(&out, &c.arena);
      if (k) checked_print(k, &out);
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
