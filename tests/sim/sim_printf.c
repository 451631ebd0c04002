/* CUDA's device printf for the simulator (sim_internal.h).  Requires: the
 * argument buffer as the PTX vprintf ABI packs it.  Guarantees: each
 * conversion is formatted by the C library with the same flags, width and
 * precision, so the text is what CUDA prints. */
#include "sim_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int sim_text_append(SimText *t, const char *s, size_t n, size_t limit) {
  if (t->len + n > limit) return -1;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + n + 1) cap *= 2;
    char *p = realloc(t->data, cap);
    if (!p) return -1;
    t->data = p;
    t->cap = cap;
  }
  memcpy(t->data + t->len, s, n);
  t->len += n;
  t->data[t->len] = 0;
  return 0;
}

void sim_text_free(SimText *t) {
  free(t->data);
  t->data = NULL;
  t->len = t->cap = 0;
}

/* One conversion specification: %[flags][width][.precision][length]conv. */
typedef struct Spec {
  char text[64];       /* the specification rewritten for the C library */
  int star_width, star_precision;
  int size;            /* bytes of the argument: 4 or 8 */
  char conv;
} Spec;

static int parse_spec(const char **pp, Spec *s, char *err, size_t errsz) {
  const char *p = *pp + 1, *start = *pp;
  memset(s, 0, sizeof *s);
  while (*p && strchr("-+ #0", *p)) p++;
  if (*p == '*') s->star_width = 1, p++;
  while (*p >= '0' && *p <= '9') p++;
  if (*p == '.') {
    p++;
    if (*p == '*') s->star_precision = 1, p++;
    while (*p >= '0' && *p <= '9') p++;
  }
  const char *length = p;
  while (*p && strchr("hlLqjzt", *p)) p++;
  int long_length = p - length > 0 && (length[0] == 'l' || length[0] == 'L' || length[0] == 'q' ||
                                       length[0] == 'j' || length[0] == 'z' || length[0] == 't');
  s->conv = *p;
  if (!*p || !strchr("diouxXcspfFeEgGaA%", *p) || p - start + 1 >= (long)sizeof s->text - 4) {
    snprintf(err, errsz, "vprintf: unsupported conversion '%.*s'", (int)(p - start + (*p != 0)), start);
    return -1;
  }
  size_t prefix = (size_t)(length - start);
  memcpy(s->text, start, prefix);
  int integer = strchr("diouxX", *p) != NULL;
  if (integer && long_length) memcpy(s->text + prefix, "ll", 2), prefix += 2;
  else if (integer) memcpy(s->text + prefix, length, (size_t)(p - length)), prefix += (size_t)(p - length);
  s->text[prefix] = *p;
  s->size = (integer && !long_length) || *p == 'c' ? 4 : 8;
  *pp = p + 1;
  return 0;
}

/* Reads the next argument of `size` bytes, aligned to its size. */
static uint64_t next_arg(const unsigned char *args, size_t *offset, int size) {
  *offset = (*offset + (size_t)size - 1) & ~((size_t)size - 1);
  uint64_t v = 0;
  memcpy(&v, args + *offset, (size_t)size);
  *offset += (size_t)size;
  return v;
}

/* snprintf with the '*' width and precision the specification asks for. */
#define FORMAT_WITH(value)                                                                        \
  (s->star_width && s->star_precision ? snprintf(buf, sizeof buf, s->text, width, precision, value) \
   : s->star_width                    ? snprintf(buf, sizeof buf, s->text, width, value)            \
   : s->star_precision                ? snprintf(buf, sizeof buf, s->text, precision, value)        \
                                      : snprintf(buf, sizeof buf, s->text, value))

static int format_one(const Spec *s, const unsigned char *args, size_t *offset, SimText *out) {
  char buf[4096]; /* longer conversions are cut, as CUDA cuts long lines */
  int width = s->star_width ? (int32_t)next_arg(args, offset, 4) : 0;
  int precision = s->star_precision ? (int32_t)next_arg(args, offset, 4) : 0;
  uint64_t v = next_arg(args, offset, s->size);
  int n;
  if (strchr("fFeEgGaA", s->conv)) {
    double d;
    memcpy(&d, &v, sizeof d);
    n = FORMAT_WITH(d);
  } else if (s->conv == 's' || s->conv == 'p') {
    const void *ptr = (const void *)(uintptr_t)v;
    n = FORMAT_WITH(s->conv == 's' && !ptr ? "(null)" : ptr);
  } else if (s->size == 8) {
    n = FORMAT_WITH((long long)v);
  } else {
    n = FORMAT_WITH((int)(int32_t)v);
  }
  if (n < 0) return -1;
  return sim_text_append(out, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1, SIZE_MAX);
}

/* Appends ` in format "..."` (newlines and quotes escaped) to err; -1. */
static int describe_format(const char *format, char *err, size_t errsz) {
  size_t n = strlen(err);
  if (n + 16 >= errsz) return -1;
  n += (size_t)snprintf(err + n, errsz - n, " in format \"");
  for (const char *c = format; *c && n + 4 < errsz; c++) {
    if (*c == '\n' || *c == '"' || *c == '\\') err[n++] = '\\';
    err[n++] = *c == '\n' ? 'n' : *c;
  }
  err[n++] = '"';
  err[n] = 0;
  return -1;
}

int sim_format(const char *format, const void *args, SimText *out, char *err, size_t errsz) {
  const unsigned char *a = args;
  size_t offset = 0;
  int count = 0;
  for (const char *p = format; *p;) {
    const char *pct = strchr(p, '%');
    size_t plain = pct ? (size_t)(pct - p) : strlen(p);
    if (sim_text_append(out, p, plain, SIZE_MAX)) goto no_memory;
    if (!pct) break;
    if (pct[1] == '%') {
      if (sim_text_append(out, "%", 1, SIZE_MAX)) goto no_memory;
      p = pct + 2;
      continue;
    }
    Spec s;
    p = pct;
    if (parse_spec(&p, &s, err, errsz)) return describe_format(format, err, errsz);
    if (!a) {
      snprintf(err, errsz, "vprintf: a conversion but no argument buffer");
      return describe_format(format, err, errsz);
    }
    if (format_one(&s, a, &offset, out)) goto no_memory;
    count += 1 + s.star_width + s.star_precision;
  }
  return count;
no_memory:
  snprintf(err, errsz, "vprintf: out of memory");
  return -1;
}
