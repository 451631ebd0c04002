/* The .npy reader and writer; npy.h says what is accepted and written.
 *
 * A file is: the magic "\x93NUMPY", the format version (major, minor byte),
 * the header's length (2 bytes in 1.0, 4 in 2.0 and 3.0, little-endian), the
 * header, then the raw data.  The header is a Python dict literal padded with
 * spaces, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }.
 * It is read by a small tokenizer and a recursive-descent parser of just
 * that literal, never evaluated, so any bytes give a message and no crash. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* fileno, fstat */
#endif
#include "npy.h"
#include "../../support/file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c keeps data in file order, little-endian: a big-endian host needs byte swapping first"
#endif
_Static_assert(sizeof(size_t) >= 8, "2^40 elements of 8 bytes must fit in size_t");

static const unsigned char MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

enum {
  ALIGN = 64,          /* numpy starts the data at a multiple of this */
  GROWTH_DIGITS = 21,  /* numpy leaves room for shape[0] to grow to this many digits */
  SHAPE_TEXT = 192,    /* "(" + 8 x "-9223372036854775808, " + ")" fits */
  HEADER_MAX = 512,    /* the longest header we write, preamble included, fits */
  SHOW_MAX = 24,       /* bytes of a string quoted in a message */
};

/* ---- messages ------------------------------------------------------------ */

/* Where a message goes and the file it names. */
typedef struct Report {
  const char *name;  /* prefixes the message; NULL for none */
  char *err;         /* may be NULL */
  size_t errsz;
} Report;

/* Writes "name: message" into the report; returns -1 for `return fail(...)`. */
__attribute__((format(printf, 2, 3))) static int fail(const Report *r, const char *fmt, ...) {
  if (!r->err || r->errsz == 0) return -1;
  size_t n = 0;
  if (r->name) {
    int k = snprintf(r->err, r->errsz, "%s: ", r->name);
    n = k < 0 ? 0 : (size_t)k;
  }
  if (n < r->errsz) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errsz - n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* Copies bytes from the file for a message: at most SHOW_MAX of them, other
 * than printable ASCII as '?', so a fuzzed header still gives one clean line. */
static const char *show(char buf[SHOW_MAX + 4], const char *s, size_t len) {
  size_t n = len < SHOW_MAX ? len : SHOW_MAX;
  for (size_t i = 0; i < n; i++) buf[i] = s[i] >= ' ' && s[i] <= '~' ? s[i] : '?';
  strcpy(buf + n, len > n ? "..." : "");
  return buf;
}

/* ---- dtypes -------------------------------------------------------------- */

typedef struct DtypeInfo {
  const char *name;  /* Triton's short name */
  size_t size;       /* bytes */
  char kind;         /* numpy's kind letter in descr */
} DtypeInfo;

static const DtypeInfo DTYPES[] = {
#define NPY_INFO(id, name, size, kind) {name, size, kind},
    NPY_DTYPES(NPY_INFO)
#undef NPY_INFO
};

static int valid_dtype(NpyDtype t) { return (unsigned)t < NPY_DTYPE_COUNT; }

const char *npy_dtype_name(NpyDtype t) { return valid_dtype(t) ? DTYPES[t].name : "?"; }

size_t npy_dtype_size(NpyDtype t) { return valid_dtype(t) ? DTYPES[t].size : 0; }

int npy_dtype_from_name(const char *name, NpyDtype *out) {
  for (int t = 0; name && t < NPY_DTYPE_COUNT; t++) {
    if (strcmp(name, DTYPES[t].name) == 0) {
      *out = (NpyDtype)t;
      return 0;
    }
  }
  return -1;
}

/* The dtype a descr's kind letter and size name; bf16 and fp8 are never the
 * answer, as their bits read back as u16 and u8, which come first (npy.h). */
static int dtype_for(char kind, size_t size, NpyDtype *out) {
  for (int t = 0; t < NPY_DTYPE_COUNT; t++) {
    if (t != NPY_BF16 && DTYPES[t].kind == kind && DTYPES[t].size == size) {
      *out = (NpyDtype)t;
      return 0;
    }
  }
  return -1;
}

/* ---- shapes -------------------------------------------------------------- */

/* Python's repr of the shape tuple, as the header holds it: "()", "(7,)", "(2, 3)". */
static void format_shape(char buf[SHAPE_TEXT], int rank, const int64_t *shape) {
  size_t n = (size_t)snprintf(buf, SHAPE_TEXT, "(");
  for (int i = 0; i < rank && n < SHAPE_TEXT; i++)
    n += (size_t)snprintf(buf + n, SHAPE_TEXT - n, i ? ", %lld" : "%lld", (long long)shape[i]);
  if (n < SHAPE_TEXT) snprintf(buf + n, SHAPE_TEXT - n, rank == 1 ? ",)" : ")");
}

/* Counts the elements of a shape of rank 0..8; returns what is wrong with it, or NULL. */
static const char *count_elements(int rank, const int64_t *shape, size_t *count) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (shape[i] < 0) return "has a negative dimension";
    /* even beside a 0, so that no product of dimensions overflows later */
    if (shape[i] > NPY_MAX_ELEMENTS) return "has a dimension over 2^40";
    if (n != 0 && shape[i] > NPY_MAX_ELEMENTS / n) return "has more than 2^40 elements";
    n *= shape[i];
  }
  *count = (size_t)n;
  return NULL;
}

/* ---- the header's tokens --------------------------------------------------- */

typedef enum {
  HT_END,          /* no more bytes in the header */
  HT_STRING,       /* '...' or "...": text is what lies between the quotes */
  HT_OPEN_STRING,  /* a quote with no closing one */
  HT_INT,
  HT_WORD,         /* True, False, or a name the parser will refuse */
  HT_PUNCT,        /* one of { } ( ) [ ] : , */
  HT_BAD,          /* any other byte */
} HeaderTok;

typedef struct Token {
  HeaderTok kind;
  const char *text;  /* the token's bytes in the header */
  size_t len;
  int64_t value;     /* HT_INT, saturated at +-INT64_MAX */
} Token;

typedef struct Lexer {
  const char *p, *end;
  Token tok;         /* the current token, one ahead of the parser */
} Lexer;

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* string := ' byte* ' | " byte* "   (numpy never writes escapes) */
static Token lex_string(Lexer *l) {
  const char *open = l->p, *start = open + 1;
  const char *close = memchr(start, *open, (size_t)(l->end - start));
  if (!close) {
    l->p = l->end;
    return (Token){HT_OPEN_STRING, open, (size_t)(l->end - open), 0};
  }
  l->p = close + 1;
  return (Token){HT_STRING, start, (size_t)(close - start), 0};
}

/* int := ['-'] digit+ ['L']   (the L from numpy under Python 2) */
static Token lex_int(Lexer *l) {
  const char *start = l->p;
  int negative = *l->p == '-';
  int64_t v = 0;
  if (negative) l->p++;
  const char *digits = l->p;
  for (; l->p < l->end && is_digit(*l->p); l->p++) {
    int d = *l->p - '0';
    v = v > (INT64_MAX - d) / 10 ? INT64_MAX : v * 10 + d;
  }
  HeaderTok kind = l->p > digits ? HT_INT : HT_BAD;
  if (kind == HT_INT && l->p < l->end && *l->p == 'L') l->p++;
  return (Token){kind, start, (size_t)(l->p - start), negative ? -v : v};
}

static Token lex_word(Lexer *l) {
  const char *start = l->p;
  while (l->p < l->end && (is_alpha(*l->p) || is_digit(*l->p))) l->p++;
  return (Token){HT_WORD, start, (size_t)(l->p - start), 0};
}

static void lex_next(Lexer *l) {
  while (l->p < l->end && is_space(*l->p)) l->p++;
  if (l->p == l->end) {
    l->tok = (Token){HT_END, l->p, 0, 0};
    return;
  }
  char c = *l->p;
  if (c == '\'' || c == '"')
    l->tok = lex_string(l);
  else if (c == '-' || is_digit(c))
    l->tok = lex_int(l);
  else if (is_alpha(c))
    l->tok = lex_word(l);
  else
    l->tok = (Token){memchr("{}()[]:,", c, 8) ? HT_PUNCT : HT_BAD, l->p++, 1, 0};
}

static int token_is(const Token *t, HeaderTok kind, const char *text) {
  return t->kind == kind && t->len == strlen(text) && memcmp(t->text, text, t->len) == 0;
}

/* ---- the header's dict ------------------------------------------------------ */

enum { KEY_DESCR = 1, KEY_FORTRAN = 2, KEY_SHAPE = 4 };

/* What the header says, before it is checked. */
typedef struct Header {
  const char *descr;  /* the descr string, in the file's bytes */
  size_t descr_len;
  int fortran;        /* fortran_order */
  int rank;
  int64_t shape[NPY_MAX_RANK];
  unsigned seen;      /* KEY_ bits of the keys met so far */
} Header;

typedef struct Parser {
  Lexer lex;
  Header *h;
  const Report *r;
} Parser;

static int expected(Parser *ps, const char *what) {
  const Token *t = &ps->lex.tok;
  char buf[SHOW_MAX + 4];
  if (t->kind == HT_END) return fail(ps->r, "malformed header: expected %s, found its end", what);
  if (t->kind == HT_OPEN_STRING)
    return fail(ps->r, "malformed header: expected %s, found an unterminated string", what);
  const char *q = t->kind == HT_STRING ? "'" : "";
  return fail(ps->r, "malformed header: expected %s, found %s%s%s", what, q, show(buf, t->text, t->len), q);
}

static int at_punct(Parser *ps, char c) { return ps->lex.tok.kind == HT_PUNCT && ps->lex.tok.text[0] == c; }

/* Steps over punctuation `c` if it is next. */
static int accept(Parser *ps, char c) {
  if (!at_punct(ps, c)) return 0;
  lex_next(&ps->lex);
  return 1;
}

/* descr := string   (a list would be a structured dtype) */
static int parse_descr(Parser *ps) {
  if (at_punct(ps, '[')) return fail(ps->r, "structured dtypes are not supported");
  if (ps->lex.tok.kind != HT_STRING) return expected(ps, "a string for 'descr'");
  ps->h->descr = ps->lex.tok.text;
  ps->h->descr_len = ps->lex.tok.len;
  lex_next(&ps->lex);
  return 0;
}

/* fortran_order := 'True' | 'False' */
static int parse_fortran(Parser *ps) {
  int is_true = token_is(&ps->lex.tok, HT_WORD, "True");
  if (!is_true && !token_is(&ps->lex.tok, HT_WORD, "False"))
    return expected(ps, "True or False for 'fortran_order'");
  ps->h->fortran = is_true;
  lex_next(&ps->lex);
  return 0;
}

/* shape := '(' [int (',' int)* [',']] ')'
 * "(5)" is taken as (5,): Python would read an int, but the meaning is plain. */
static int parse_shape(Parser *ps) {
  Header *h = ps->h;
  if (!accept(ps, '(')) return expected(ps, "a tuple for 'shape'");
  while (!accept(ps, ')')) {
    if (ps->lex.tok.kind != HT_INT) return expected(ps, "an integer in 'shape'");
    if (h->rank == NPY_MAX_RANK) return fail(ps->r, "shape has more than %d dimensions", NPY_MAX_RANK);
    h->shape[h->rank++] = ps->lex.tok.value;
    lex_next(&ps->lex);
    if (!accept(ps, ',') && !at_punct(ps, ')')) return expected(ps, "',' or ')' in 'shape'");
  }
  return 0;
}

static const struct {
  const char *name;
  unsigned bit;
  int (*parse)(Parser *);
} KEYS[] = {
    {"descr", KEY_DESCR, parse_descr},
    {"fortran_order", KEY_FORTRAN, parse_fortran},
    {"shape", KEY_SHAPE, parse_shape},
};
enum { KEY_COUNT = sizeof KEYS / sizeof KEYS[0] };

/* entry := string ':' value   (the value's form depends on the key) */
static int parse_entry(Parser *ps) {
  Token key = ps->lex.tok;
  char buf[SHOW_MAX + 4];
  if (key.kind != HT_STRING) return expected(ps, "a key string");
  lex_next(&ps->lex);
  if (!accept(ps, ':')) return expected(ps, "':' after a key");
  for (int i = 0; i < KEY_COUNT; i++) {
    if (!token_is(&key, HT_STRING, KEYS[i].name)) continue;
    if (ps->h->seen & KEYS[i].bit) return fail(ps->r, "header repeats key '%s'", KEYS[i].name);
    ps->h->seen |= KEYS[i].bit;
    return KEYS[i].parse(ps);
  }
  return fail(ps->r, "unexpected key '%s' in header", show(buf, key.text, key.len));
}

/* header := '{' [entry (',' entry)* [',']] '}'   then only spaces */
static int parse_header(const char *text, size_t len, const Report *r, Header *h) {
  Parser ps = {{text, text + len, {0}}, h, r};
  lex_next(&ps.lex);
  if (!accept(&ps, '{')) return expected(&ps, "'{'");
  while (!accept(&ps, '}')) {
    if (parse_entry(&ps)) return -1;
    if (!accept(&ps, ',') && !at_punct(&ps, '}')) return expected(&ps, "',' or '}'");
  }
  if (ps.lex.tok.kind != HT_END) return expected(&ps, "the end of the header after '}'");
  for (int i = 0; i < KEY_COUNT; i++)
    if (!(h->seen & KEYS[i].bit)) return fail(r, "header has no '%s' key", KEYS[i].name);
  return 0;
}

/* ---- from header to array -------------------------------------------------- */

/* descr := [byte order] kind size, as '<f4', '|b1', 'i8' */
static int decode_descr(const Header *h, const Report *r, NpyDtype *out) {
  const char *s = h->descr, *end = s + h->descr_len;
  char buf[SHOW_MAX + 4];
  const char *text = show(buf, h->descr, h->descr_len);
  char order = s < end && memchr("<>|=", *s, 4) ? *s++ : '=';
  char kind = s < end ? *s++ : 0;
  size_t size = 0;
  for (; s < end && is_digit(*s) && size < 1000; s++) size = size * 10 + (size_t)(*s - '0');
  if (kind == 'V')
    return fail(r, "void dtype '%s' is not supported (for bfloat16 save the uint16 bits, see npy.h)", text);
  if (s != end || dtype_for(kind, size, out)) return fail(r, "unsupported dtype '%s'", text);
  if (order == '>' && size > 1)
    return fail(r, "big-endian dtype '%s' is not supported (save it as little-endian)", text);
  return 0;
}

/* Fortran order lays out the same bytes as C order when at most one dimension exceeds 1. */
static int same_in_both_orders(const Header *h) {
  int long_dims = 0;
  for (int i = 0; i < h->rank; i++) long_dims += h->shape[i] > 1;
  return long_dims <= 1;
}

/* Checks what the header says and fills everything in *a but the data. */
static int header_to_array(const Header *h, const Report *r, NpyArray *a) {
  NpyDtype t = NPY_BOOL;
  size_t count = 0;
  if (decode_descr(h, r, &t)) return -1;
  if (h->fortran && !same_in_both_orders(h))
    return fail(r, "fortran_order arrays are not supported (save with np.ascontiguousarray)");
  const char *why = count_elements(h->rank, h->shape, &count);
  if (why) {
    char shape[SHAPE_TEXT];
    format_shape(shape, h->rank, h->shape);
    return fail(r, "shape %s %s", shape, why);
  }
  *a = (NpyArray){.dtype = t, .rank = h->rank, .elem_size = DTYPES[t].size, .count = count};
  memcpy(a->shape, h->shape, sizeof h->shape);
  return 0;
}

/* ---- reading ----------------------------------------------------------------- */

/* Refuses bytes that do not start as a .npy file does, so far as there are any. */
static int check_magic(const unsigned char *b, size_t len, const Report *r) {
  size_t n = len < sizeof MAGIC ? len : sizeof MAGIC;
  if (n > 0 && memcmp(b, MAGIC, n) != 0) return fail(r, "not a .npy file (bad magic)");
  return 0;
}

/* preamble := magic major minor length   (length: 2 bytes in 1.0, 4 after)
 * Gives where the header starts and how long it is. */
static int read_preamble(const unsigned char *b, size_t len, const Report *r, size_t *at, size_t *hlen) {
  if (check_magic(b, len, r)) return -1;
  if (len < 8) return fail(r, "truncated header: the file has only %zu bytes", len);
  if (b[6] < 1 || b[6] > 3 || b[7] != 0)
    return fail(r, "unsupported .npy format version %d.%d (1.0, 2.0 and 3.0 are read)", b[6], b[7]);
  *at = b[6] == 1 ? 10 : 12;
  if (len < *at) return fail(r, "truncated header: the file has only %zu bytes", len);
  uint32_t n = (uint32_t)b[8] | (uint32_t)b[9] << 8;
  if (*at == 12) n |= (uint32_t)b[10] << 16 | (uint32_t)b[11] << 24;
  if (n > len - *at)
    return fail(r, "header length %u goes beyond the end of the file (%zu bytes)", (unsigned)n, len);
  *hlen = n;
  return 0;
}

/* Reads everything before the data into *a (no data) and checks all the data
 * is there; gives the data's offset.  Allocates nothing. */
static int decode(const unsigned char *b, size_t len, const Report *r, NpyArray *a, size_t *data_at) {
  Header h = {0};
  size_t at = 0, hlen = 0;
  if (read_preamble(b, len, r, &at, &hlen)) return -1;
  if (parse_header((const char *)b + at, hlen, r, &h)) return -1;
  if (header_to_array(&h, r, a)) return -1;
  size_t bytes = a->count * a->elem_size, avail = len - at - hlen;
  if (avail < bytes) return fail(r, "truncated: header says %zu bytes of data, file has %zu", bytes, avail);
  *data_at = at + hlen;
  return 0;
}

int npy_read_memory(const void *bytes, size_t len, const char *name, NpyArray *out, char *err,
                    size_t errsz) {
  Report r = {name, err, errsz};
  NpyArray a = {0};
  size_t at = 0;
  *out = (NpyArray){0};
  if (decode(bytes, bytes ? len : 0, &r, &a, &at)) return -1;
  size_t n = a.count * a.elem_size;
  a.data = malloc(n ? n : 1);
  if (!a.data) return fail(&r, "out of memory for %zu bytes of data", n);
  if (n) memcpy(a.data, (const unsigned char *)bytes + at, n);
  *out = a;
  return 0;
}

/* Appends the rest of the stream to (*buf)[0..*len), growing it by doubling
 * from `cap`.  The caller passes a regular file's size + 1, so such a file
 * fits the first allocation and only a pipe makes it grow. */
static int read_rest(FILE *f, const Report *r, unsigned char **buf, size_t *len, size_t cap) {
  for (;;) {
    if (*len == cap) {
      unsigned char *grown = cap <= SIZE_MAX / 2 ? realloc(*buf, cap * 2) : NULL;
      if (!grown) return fail(r, "out of memory reading %zu bytes", cap);
      *buf = grown;
      cap *= 2;
    }
    size_t got = fread(*buf + *len, 1, cap - *len, f);
    *len += got;
    if (got == 0) return ferror(f) ? fail(r, "read error: %s", strerror(errno)) : 0;
  }
}

/* Reads a whole stream into a malloc'd buffer, after checking it starts with
 * the magic: a wrong file gives its message without being loaded. */
static int read_stream(FILE *f, const Report *r, unsigned char **buf, size_t *len) {
  unsigned char head[sizeof MAGIC];
  size_t n = fread(head, 1, sizeof head, f), cap = 1 << 16;
  struct stat st;
  if (check_magic(head, n, r)) return -1;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= n)
    cap = (size_t)st.st_size + 1;
  *buf = malloc(cap);
  if (!*buf) return fail(r, "out of memory reading %zu bytes", cap);
  memcpy(*buf, head, n);
  *len = n;
  return read_rest(f, r, buf, len, cap);
}

int npy_read(const char *path, NpyArray *out, char *err, size_t errsz) {
  Report r = {path, err, errsz};
  unsigned char *buf = NULL;
  size_t len = 0, at = 0;
  NpyArray a = {0};
  *out = (NpyArray){0};
  char why[128];
  FILE *f = file_fopen_regular(path, why, sizeof why);
  if (!f) return fail(&r, "cannot open: %s", why);
  int rc = read_stream(f, &r, &buf, &len);
  fclose(f);
  if (rc || decode(buf, len, &r, &a, &at)) {
    free(buf);
    return -1;
  }
  /* The data moves to the front of the buffer read, which then becomes it. */
  size_t n = a.count * a.elem_size;
  memmove(buf, buf + at, n);
  void *fitted = realloc(buf, n ? n : 1);
  a.data = fitted ? fitted : buf;
  *out = a;
  return 0;
}

/* ---- writing ----------------------------------------------------------------- */

/* Checks an array the caller built is self-consistent before writing it. */
static int check_array(const NpyArray *a, const Report *r) {
  char shape[SHAPE_TEXT];
  size_t count = 0;
  if (!valid_dtype(a->dtype)) return fail(r, "invalid dtype %d", (int)a->dtype);
  if (a->rank < 0 || a->rank > NPY_MAX_RANK) return fail(r, "rank %d is not 0 to %d", a->rank, NPY_MAX_RANK);
  format_shape(shape, a->rank, a->shape);
  const char *why = count_elements(a->rank, a->shape, &count);
  if (why) return fail(r, "shape %s %s", shape, why);
  if (a->count != count) return fail(r, "count %zu does not match shape %s", a->count, shape);
  if (a->elem_size != DTYPES[a->dtype].size)
    return fail(r, "elem_size %zu is not the size of %s", a->elem_size, DTYPES[a->dtype].name);
  if (!a->data && count) return fail(r, "array has no data");
  return 0;
}

/* The header numpy.save writes (numpy.lib.format._wrap_header): the dict with
 * sorted keys; spaces for shape[0] to grow to 21 digits in place; spaces and
 * '\n' up to the next multiple of 64 (64 more when already there, as numpy
 * does).  Writes the preamble and header into buf; returns their length. */
static size_t build_header(const NpyArray *a, unsigned char buf[HEADER_MAX]) {
  const DtypeInfo *d = &DTYPES[a->dtype];
  char shape[SHAPE_TEXT], dict[HEADER_MAX];
  format_shape(shape, a->rank, a->shape);
  size_t n = (size_t)snprintf(dict, sizeof dict,
                              "{'descr': '%c%c%zu', 'fortran_order': False, 'shape': %s, }",
                              d->size == 1 ? '|' : '<', d->kind, d->size, shape);
  size_t growth = a->rank ? GROWTH_DIGITS - (size_t)snprintf(NULL, 0, "%lld", (long long)a->shape[0]) : 0;
  size_t hlen = n + growth + 1, pad = ALIGN - (10 + hlen) % ALIGN, total = 10 + hlen + pad;
  memcpy(buf, MAGIC, sizeof MAGIC);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (unsigned char)((hlen + pad) & 0xff);
  buf[9] = (unsigned char)((hlen + pad) >> 8);
  memcpy(buf + 10, dict, n);
  memset(buf + 10 + n, ' ', total - 11 - n);
  buf[total - 1] = '\n';
  return total;
}

int npy_write(const char *path, const NpyArray *a, char *err, size_t errsz) {
  Report r = {path, err, errsz};
  unsigned char header[HEADER_MAX];
  if (check_array(a, &r)) return -1;
  size_t hlen = build_header(a, header);
  FILE *f = fopen(path, "wb");
  if (!f) return fail(&r, "cannot open for writing: %s", strerror(errno));
  struct stat st;
  int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
  int ok = fwrite(header, 1, hlen, f) == hlen &&
           (a->count == 0 || fwrite(a->data, a->elem_size, a->count, f) == a->count);
  int closed = fclose(f) == 0;
  if (ok && closed) return 0;
  int e = errno;
  if (regular) remove(path); /* never a device such as /dev/full */
  return fail(&r, "write failed: %s", strerror(e));
}

/* ---- building and freeing ------------------------------------------------------- */

int npy_alloc(NpyArray *a, NpyDtype t, int rank, const int64_t *shape, char *err, size_t errsz) {
  Report r = {NULL, err, errsz};
  NpyArray fresh = {.dtype = t, .rank = rank};
  *a = (NpyArray){0};
  if (!valid_dtype(t)) return fail(&r, "invalid dtype %d", (int)t);
  if (rank < 0 || rank > NPY_MAX_RANK || (rank > 0 && !shape))
    return fail(&r, "rank %d is not 0 to %d with a shape", rank, NPY_MAX_RANK);
  if (rank > 0) memcpy(fresh.shape, shape, (size_t)rank * sizeof *shape);
  const char *why = count_elements(rank, fresh.shape, &fresh.count);
  if (why) {
    char text[SHAPE_TEXT];
    format_shape(text, rank, fresh.shape);
    return fail(&r, "shape %s %s", text, why);
  }
  fresh.elem_size = DTYPES[t].size;
  fresh.data = calloc(fresh.count ? fresh.count : 1, fresh.elem_size);
  if (!fresh.data) return fail(&r, "out of memory for %zu elements of %s", fresh.count, DTYPES[t].name);
  *a = fresh;
  return 0;
}

void npy_free(NpyArray *a) {
  if (!a) return;
  free(a->data);
  *a = (NpyArray){0};
}
