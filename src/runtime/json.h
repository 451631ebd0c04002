/* A small JSON reader and a string writer, for kernel metadata (AOT loading
 * reads what tilec --metadata wrote).  Values live in an arena; numbers keep
 * whether they were written as integers. */
#ifndef TILE_JSON_H
#define TILE_JSON_H

#include "../support/arena.h"

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonKind;

typedef struct Json Json;
struct Json {
  JsonKind kind;
  int is_int;            /* a number written without fraction or exponent that fits in 64 bits */
  long long i;           /* JSON_NUMBER when is_int (else 0), JSON_BOOL; readers range-check it */
  double f;              /* JSON_NUMBER */
  const char *s;         /* JSON_STRING, NUL-terminated (an embedded \u0000 ends it early) */
  Json **items;          /* JSON_ARRAY elements, JSON_OBJECT values */
  const char **keys;     /* JSON_OBJECT keys */
  int len;
};

/* Parses `len` bytes.  Returns the value, or NULL with "line L, column C:
 * what" in err.  Allocates from `a` (whose guard catches exhaustion). */
Json *json_parse(Arena *a, const char *text, size_t len, char *err, size_t errsize);
/* The member `key` of an object; NULL if absent or `obj` is not an object. */
const Json *json_get(const Json *obj, const char *key);
/* `s` as a JSON string literal, quotes and escapes included. */
void json_put_string(Buf *b, const char *s);

#endif
