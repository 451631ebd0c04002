/* Diagnostics in clang's form (file:line:col: error: message, the source
 * line, a caret under the token) and the protected-call guard that turns a
 * fatal condition anywhere in the library into a status at the API edge. */
#ifndef TILE_DIAG_H
#define TILE_DIAG_H

#include "arena.h"

#include <setjmp.h>
#include <stdint.h>

typedef struct Source {
  const char *name;   /* file name as the user gave it */
  const char *text;   /* the bytes; may hold NULs, need not end in a newline */
  size_t len;
} Source;

typedef struct Loc {
  const Source *src;  /* NULL: no place (command line, internal) */
  uint32_t offset;    /* byte offset of the first character */
  int line, col;      /* 1-based; col counts bytes */
  int len;            /* bytes the token spans on its line, for the ~~~ */
} Loc;

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;

typedef struct Diag {
  DiagLevel level;
  Loc loc;
  const char *msg;
} Diag;

struct Guard {
  jmp_buf jump;
  char message[256];   /* set by guard_fail; fixed so an exhausted arena can still report */
};

typedef struct Diags {
  Arena *arena;
  Vec(Diag) list;
  int errors;
  int max_errors;      /* past this, unwind to the guard */
  Guard *guard;
  const char *origin;  /* what a diagnostic without a location names: the source's name (NULL: "tile") */
} Diags;

void diags_init(Diags *d, Arena *a, Guard *g);
void diag_error(Diags *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Diags *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_note(Diags *d, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_render(const Diags *d, Buf *out);

/* Unwind to the guard's protected call with a message; never returns. */
_Noreturn void guard_fail(Guard *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The protected call, as Lua's luaD_rawrunprotected: runs fn(ud) so that a
 * guard_fail inside it (an exhausted arena, too many errors) returns here.
 * 0 when fn returned, 1 when it was unwound (the reason in g->message).
 * The library's one setjmp for unwinding; fn keeps its results in *ud, so
 * no local of the caller changes between the setjmp and the longjmp. */
typedef void GuardedFn(void *ud);
int guard_run(Guard *g, GuardedFn *fn, void *ud);
/* guard_run with allocations from `a` unwinding to the call (a guard of its own, detached after). */
int arena_run(Arena *a, GuardedFn *fn, void *ud);

#endif
