/* JSON (RFC 8259) by recursive descent.  Nesting is limited so a hostile
 * file cannot exhaust the stack; \u escapes become UTF-8 (surrogate pairs
 * joined). */
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

typedef struct Reader {
  Arena *arena;
  const char *text;
  size_t len, pos;
  char *err;
  size_t errsize;
  int failed;
} Reader;

static void fail(Reader *r, const char *what) {
  if (r->failed) return;
  r->failed = 1;
  int line = 1, col = 1;
  for (size_t i = 0; i < r->pos && i < r->len; i++, col++)
    if (r->text[i] == '\n') line++, col = 0;
  snprintf(r->err, r->errsize, "line %d, column %d: %s", line, col, what);
}

static int peek(Reader *r) { return r->pos < r->len ? (unsigned char)r->text[r->pos] : -1; }

static void skip_space(Reader *r) {
  while (peek(r) == ' ' || peek(r) == '\t' || peek(r) == '\n' || peek(r) == '\r') r->pos++;
}

static int accept_word(Reader *r, const char *word) {
  size_t n = strlen(word);
  if (r->len - r->pos < n || memcmp(r->text + r->pos, word, n)) return 0;
  r->pos += n;
  return 1;
}

static Json *new_value(Reader *r, JsonKind kind) {
  Json *v = arena_alloc(r->arena, sizeof *v);
  v->kind = kind;
  return v;
}

static Json *parse_value(Reader *r, int depth);

static int hex4(Reader *r, unsigned *out) {
  *out = 0;
  for (int i = 0; i < 4; i++) {
    int c = peek(r);
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return 0;
    *out = *out * 16 + (unsigned)d;
    r->pos++;
  }
  return 1;
}

static void put_utf8(Buf *b, unsigned cp) {
  char u[4];
  int n = 0;
  if (cp < 0x80) u[n++] = (char)cp;
  else if (cp < 0x800) u[n++] = (char)(0xC0 | cp >> 6), u[n++] = (char)(0x80 | (cp & 0x3F));
  else if (cp < 0x10000) u[n++] = (char)(0xE0 | cp >> 12), u[n++] = (char)(0x80 | (cp >> 6 & 0x3F)), u[n++] = (char)(0x80 | (cp & 0x3F));
  else u[n++] = (char)(0xF0 | cp >> 18), u[n++] = (char)(0x80 | (cp >> 12 & 0x3F)), u[n++] = (char)(0x80 | (cp >> 6 & 0x3F)), u[n++] = (char)(0x80 | (cp & 0x3F));
  buf_putn(b, u, (size_t)n);
}

/* After the backslash of a \uXXXX escape. */
static int unicode_escape(Reader *r, Buf *b) {
  unsigned cp, low;
  if (!hex4(r, &cp)) return 0;
  if (cp >= 0xD800 && cp < 0xDC00) {
    if (!accept_word(r, "\\u") || !hex4(r, &low) || low < 0xDC00 || low >= 0xE000) return 0;
    cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
  } else if (cp >= 0xDC00 && cp < 0xE000) {
    return 0;
  }
  put_utf8(b, cp);
  return 1;
}

static int escape(Reader *r, Buf *b) {
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  int c = peek(r);
  r->pos++;
  const char *at = c > 0 ? strchr(from, c) : NULL;
  if (at) {
    buf_putn(b, &to[at - from], 1);
    return 1;
  }
  return c == 'u' && unicode_escape(r, b);
}

static const char *parse_string_text(Reader *r) {
  Buf b;
  buf_init(&b, r->arena);
  size_t start = r->pos++; /* the opening quote */
  for (int c; (c = peek(r)) != '"'; ) {
    if (c < 0x20) {
      if (c < 0) r->pos = start; /* point at the string, not the end of the input */
      fail(r, c < 0 ? "unterminated string" : "control character in a string");
      return NULL;
    }
    r->pos++;
    if (c != '\\') buf_putn(&b, &r->text[r->pos - 1], 1);
    else if (!escape(r, &b)) {
      fail(r, "bad escape in a string");
      return NULL;
    }
  }
  r->pos++;
  return buf_cstr(&b);
}

static Json *parse_number(Reader *r) {
  size_t start = r->pos;
  if (peek(r) == '-') r->pos++;
  int digits = 0, integral = 1;
  while (peek(r) >= '0' && peek(r) <= '9') r->pos++, digits++;
  if (peek(r) == '.') {
    integral = 0;
    for (r->pos++; peek(r) >= '0' && peek(r) <= '9'; r->pos++) digits++;
  }
  if (peek(r) == 'e' || peek(r) == 'E') {
    integral = 0;
    r->pos++;
    if (peek(r) == '+' || peek(r) == '-') r->pos++;
    while (peek(r) >= '0' && peek(r) <= '9') r->pos++;
  }
  if (!digits) {
    fail(r, "expected a value");
    return NULL;
  }
  char *text = arena_strndup(r->arena, r->text + start, r->pos - start);
  Json *v = new_value(r, JSON_NUMBER);
  v->f = strtod(text, NULL); /* +-HUGE_VAL past double's range */
  errno = 0;
  v->i = integral ? strtoll(text, NULL, 10) : 0; /* never (long long)f: 1e400 has no integer */
  v->is_int = integral && errno == 0;
  return v;
}

static Json *parse_array(Reader *r, int depth) {
  Json *v = new_value(r, JSON_ARRAY);
  Vec(Json *) items = {0};
  r->pos++;
  skip_space(r);
  if (peek(r) == ']') {
    r->pos++;
    return v;
  }
  for (;;) {
    Json *item = parse_value(r, depth + 1);
    if (!item) return NULL;
    vec_push(r->arena, &items, item);
    skip_space(r);
    if (peek(r) == ']') break;
    if (peek(r) != ',') {
      fail(r, "expected ',' or ']' in an array");
      return NULL;
    }
    r->pos++;
  }
  r->pos++;
  v->items = items.data;
  v->len = items.len;
  return v;
}

static Json *parse_object(Reader *r, int depth) {
  Json *v = new_value(r, JSON_OBJECT);
  Vec(Json *) values = {0};
  Vec(const char *) keys = {0};
  r->pos++;
  skip_space(r);
  if (peek(r) == '}') {
    r->pos++;
    return v;
  }
  for (;;) {
    skip_space(r);
    if (peek(r) != '"') {
      fail(r, "expected a string key in an object");
      return NULL;
    }
    const char *key = parse_string_text(r);
    skip_space(r);
    if (!key || peek(r) != ':') {
      fail(r, "expected ':' after an object key");
      return NULL;
    }
    r->pos++;
    Json *item = parse_value(r, depth + 1);
    if (!item) return NULL;
    vec_push(r->arena, &keys, key);
    vec_push(r->arena, &values, item);
    skip_space(r);
    if (peek(r) == '}') break;
    if (peek(r) != ',') {
      fail(r, "expected ',' or '}' in an object");
      return NULL;
    }
    r->pos++;
  }
  r->pos++;
  v->items = values.data;
  v->keys = keys.data;
  v->len = values.len;
  return v;
}

static Json *parse_value(Reader *r, int depth) {
  if (depth > MAX_DEPTH) {
    fail(r, "nested too deeply");
    return NULL;
  }
  skip_space(r);
  int c = peek(r);
  if (c == '{') return parse_object(r, depth);
  if (c == '[') return parse_array(r, depth);
  if (c == '"') {
    const char *s = parse_string_text(r);
    Json *v = s ? new_value(r, JSON_STRING) : NULL;
    if (v) v->s = s;
    return v;
  }
  int truth = accept_word(r, "true");
  if (truth || accept_word(r, "false")) {
    Json *v = new_value(r, JSON_BOOL);
    v->i = truth;
    return v;
  }
  if (accept_word(r, "null")) return new_value(r, JSON_NULL);
  if (c == '-' || (c >= '0' && c <= '9')) return parse_number(r);
  fail(r, c < 0 ? "unexpected end of input" : "expected a value");
  return NULL;
}

Json *json_parse(Arena *a, const char *text, size_t len, char *err, size_t errsize) {
  Reader r = {a, text, len, 0, err, errsize, 0};
  Json *v = parse_value(&r, 0);
  skip_space(&r);
  if (v && r.pos != len) {
    fail(&r, "unexpected text after the value");
    return NULL;
  }
  return r.failed ? NULL : v;
}

const Json *json_get(const Json *obj, const char *key) {
  if (!obj || obj->kind != JSON_OBJECT) return NULL;
  for (int i = 0; i < obj->len; i++)
    if (!strcmp(obj->keys[i], key)) return obj->items[i];
  return NULL;
}

void json_put_string(Buf *b, const char *s) {
  buf_puts(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') buf_printf(b, "\\%c", c);
    else if (c == '\n') buf_puts(b, "\\n");
    else if (c == '\t') buf_puts(b, "\\t");
    else if (c < 0x20) buf_printf(b, "\\u%04x", c);
    else buf_putn(b, s, 1);
  }
  buf_puts(b, "\"");
}
