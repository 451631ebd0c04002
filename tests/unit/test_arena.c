/* The arena's cap: reaching it unwinds to the guard with a message that
 * names the limit and the compilation's stage, never an abort. */
#include "check.h"
#include "../../src/support/arena.h"
#include "../../src/support/diag.h"

#include <setjmp.h>
#include <string.h>

static const char *exhaust(const char *stage) {
  static Guard guard;
  static Arena a;
  arena_init(&a, 4u << 20);
  a.guard = &guard;
  a.stage = stage;
  if (setjmp(guard.jump) == 0)
    for (;;) arena_alloc(&a, 1u << 20);
  arena_free(&a);
  return guard.message;
}

int main(void) {
  CHECK_CONTAINS(exhaust("GPU-layout IR"),
                 "out of memory: the compilation reached its limit of 4 MiB in the GPU-layout IR stage (asking for "
                 "1048576 more bytes); very large tiles take much memory: give smaller block sizes");
  CHECK_CONTAINS(exhaust(NULL), "out of memory: more than the 4194304 bytes allowed (asked for 1048576 more)");
  return check_report();
}
