/* Arena allocator and arena-backed text buffers. */
#include "arena.h"
#include "diag.h"

#include <stdarg.h>
#include <stdint.h>
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

/* Unwinds to the arena's guard; returns (the allocation then gives NULL) if it has none. */
static void out_of_memory(Arena *a, size_t size) {
  if (!a->guard) return;
  if (a->cap && a->stage)
    guard_fail(a->guard,
               "out of memory: the compilation reached its limit of %zu MiB in the %s stage (asking for %zu more "
               "bytes); very large tiles take much memory: give smaller block sizes",
               a->cap >> 20, a->stage, size);
  if (a->cap) guard_fail(a->guard, "out of memory: more than the %zu bytes allowed (asked for %zu more)", a->cap, size);
  guard_fail(a->guard, "out of memory (asked for %zu more bytes)", size);
}

static ArenaBlock *new_block(Arena *a, size_t size) {
  size_t bytes = size > BLOCK_SIZE ? size : BLOCK_SIZE;
  ArenaBlock *b = NULL;
  if (bytes < SIZE_MAX - sizeof(ArenaBlock) && (!a->cap || a->total + bytes <= a->cap))
    b = malloc(sizeof(ArenaBlock) + bytes);
  if (!b) {
    out_of_memory(a, size);
    return NULL;
  }
  b->used = 0;
  b->size = bytes;
  b->next = a->head;
  a->head = b;
  a->total += bytes;
  return b;
}

void *arena_alloc(Arena *a, size_t size) {
  size = size > SIZE_MAX - 15 ? SIZE_MAX - 15 : size; /* too large either way: fails in new_block */
  size = (size + 15) & ~(size_t)15;
  if (size < 16) size = 16;
  ArenaBlock *b = a->head;
  if (!b || b->size - b->used < size) b = new_block(a, size);
  if (!b) return NULL;
  void *p = (char *)b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

void *arena_grow(Arena *a, void *old, size_t old_size, size_t new_size) {
  void *p = arena_alloc(a, new_size);
  if (p && old && old_size) memcpy(p, old, old_size < new_size ? old_size : new_size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  if (!p) return NULL;
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
  char *p = n < 0 ? NULL : arena_alloc(a, (size_t)n + 1);
  if (p) vsnprintf(p, (size_t)n + 1, fmt, ap);
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

void buf_init_fixed(Buf *b, char *storage, size_t size) {
  memset(b, 0, sizeof *b);
  b->data = storage;
  b->cap = size;
  storage[0] = 0;
}

/* Appends what fits of s to a fixed Buf. */
static void put_fixed(Buf *b, const char *s, size_t n) {
  size_t room = b->cap - 1 - b->len;
  if (n > room) n = room, b->failed = 1;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void buf_putn(Buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (!b->arena) {
    put_fixed(b, s, n);
    return;
  }
  if (b->len + n + 1 > b->cap) {
    size_t ncap = b->cap ? b->cap * 2 : 256;
    while (ncap < b->len + n + 1) ncap *= 2;
    char *grown = arena_grow(b->arena, b->data, b->len, ncap);
    if (!grown) {
      b->failed = 1;
      return;
    }
    b->data = grown;
    b->cap = ncap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

void buf_puts(Buf *b, const char *s) { buf_putn(b, s, strlen(s)); }

/* Fixed storage: formats in place, keeping what fits. */
static void printf_fixed(Buf *b, const char *fmt, va_list ap) {
  size_t room = b->cap - b->len;
  int n = vsnprintf(b->data + b->len, room, fmt, ap);
  if (n < 0 || (size_t)n >= room) b->failed = 1;
  b->len += strlen(b->data + b->len);
}

void buf_printf(Buf *b, const char *fmt, ...) {
  if (b->failed) return;
  va_list ap;
  va_start(ap, fmt);
  if (!b->arena) {
    printf_fixed(b, fmt, ap);
  } else {
    char *p = vformat(b->arena, fmt, ap);
    if (p) buf_puts(b, p);
    else b->failed = 1;
  }
  va_end(ap);
}

const char *buf_cstr(const Buf *b) { return b->data ? b->data : ""; }
