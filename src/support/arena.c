/* Arena allocator and arena-backed text buffers. */
#include "arena.h"
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
  ArenaBlock *next;
  size_t used, size;
  max_align_t data[];
};

enum { BLOCK_SIZE = 64 * 1024 };

void arena_init(Arena *a, size_t cap) {
  memset(a, 0, sizeof *a);
  a->cap = cap;
}

void arena_free(Arena *a) {
  ArenaBlock *b = a->head;
  while (b) {
    ArenaBlock *next = b->next;
    free(b);
    b = next;
  }
  a->head = NULL;
  a->total = 0;
}

static void out_of_memory(Arena *a, size_t size) {
  if (a->guard)
    guard_fail(a->guard, "out of memory: compilation needs more than %zu bytes (asked for %zu more)",
               a->cap, size);
  abort(); /* unreachable in the library: every arena has a guard */
}

static ArenaBlock *new_block(Arena *a, size_t size) {
  size_t bytes = size > BLOCK_SIZE ? size : BLOCK_SIZE;
  if (a->cap && a->total + bytes > a->cap) out_of_memory(a, size);
  ArenaBlock *b = malloc(sizeof(ArenaBlock) + bytes);
  if (!b) out_of_memory(a, size);
  b->used = 0;
  b->size = bytes;
  b->next = a->head;
  a->head = b;
  a->total += bytes;
  return b;
}

void *arena_alloc(Arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size < 16) size = 16;
  ArenaBlock *b = a->head;
  if (!b || b->size - b->used < size) b = new_block(a, size);
  void *p = (char *)b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

void *arena_grow(Arena *a, void *old, size_t old_size, size_t new_size) {
  void *p = arena_alloc(a, new_size);
  if (old && old_size) memcpy(p, old, old_size < new_size ? old_size : new_size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

static char *vformat(Arena *a, const char *fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  char *p = arena_alloc(a, (size_t)n + 1);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  return p;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = vformat(a, fmt, ap);
  va_end(ap);
  return p;
}

void buf_init(Buf *b, Arena *a) {
  memset(b, 0, sizeof *b);
  b->arena = a;
}

void buf_putn(Buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap * 2 : 256;
    while (ncap < b->len + n + 1) ncap *= 2;
    b->data = arena_grow(b->arena, b->data, b->len, ncap);
    b->cap = ncap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void buf_puts(Buf *b, const char *s) { buf_putn(b, s, strlen(s)); }

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *p = vformat(b->arena, fmt, ap);
  va_end(ap);
  buf_puts(b, p);
}

const char *buf_cstr(Buf *b) { return b->data ? b->data : ""; }
