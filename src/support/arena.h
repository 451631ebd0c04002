/* Arena memory: every compilation allocates from one arena and releases it
 * whole, so no pass frees individual nodes.  Allocation failure unwinds to
 * the protected call that owns the arena (see Guard in diag.h); an arena
 * without a guard (the context's results) returns NULL instead, and a Buf
 * on it drops what does not fit and says so (`failed`). */
#ifndef TILE_ARENA_H
#define TILE_ARENA_H

#include <stddef.h>

typedef struct ArenaBlock ArenaBlock;
typedef struct Guard Guard;

typedef struct Arena {
  ArenaBlock *head;   /* newest block; older ones chained behind it */
  size_t total;       /* bytes reserved so far, for the size cap */
  size_t cap;         /* hard limit: exceeding it is an error, not an abort */
  Guard *guard;       /* where to unwind on exhaustion; NULL: allocations return NULL */
  const char *stage;  /* the compilation's stage, for the message when the cap is reached; NULL: not a compilation */
} Arena;

void arena_init(Arena *a, size_t cap);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size);          /* zeroed; NULL only without a guard */
void *arena_grow(Arena *a, void *old, size_t old_size, size_t new_size);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Growable array of T living in an arena: `Vec(T) v = {0}; vec_push(a, &v, x);` */
#define Vec(T) struct { T *data; int len, cap; }
#define vec_push(arena, v, x)                                                  \
  do {                                                                         \
    if ((v)->len == (v)->cap) {                                                \
      int ncap_ = (v)->cap ? 2 * (v)->cap : 8;                                 \
      (v)->data = arena_grow((arena), (v)->data,                               \
                             sizeof(*(v)->data) * (size_t)(v)->cap,            \
                             sizeof(*(v)->data) * (size_t)ncap_);              \
      (v)->cap = ncap_;                                                        \
    }                                                                          \
    (v)->data[(v)->len++] = (x);                                               \
  } while (0)

/* Text accumulated piece by piece, in an arena. */
typedef struct Buf {
  Arena *arena;       /* NULL: fixed storage (buf_init_fixed) */
  char *data;
  size_t len, cap;
  int failed;         /* an append ran out of memory (only without a guard); later ones are dropped */
} Buf;

void buf_init(Buf *b, Arena *a);
/* A Buf over `size` bytes of storage that never grows: text past its end is dropped (`failed`). */
void buf_init_fixed(Buf *b, char *storage, size_t size);
void buf_putn(Buf *b, const char *s, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *buf_cstr(const Buf *b);

#endif
