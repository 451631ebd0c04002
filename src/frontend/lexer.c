/* Lexer for the tile language: Python's tokens and indentation rules. */
#include "lexer.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_INDENT_DEPTH = 100, TAB_WIDTH = 8 };

static const char *const spellings[] = {
#define TOKEN(id, spelling) spelling,
#include "token.def"
#undef TOKEN
};

const char *token_kind_name(TokenKind k) { return spellings[k]; }

typedef struct Lexer {
  const Source *src;
  Diags *diags;
  Arena *arena;
  size_t pos;
  int line;
  size_t line_start;     /* offset of the current line's first byte */
  int depth;             /* open brackets: newlines inside are joined */
  int indent_reported;   /* the indentation limit is reported once */
  int indents[MAX_INDENT_DEPTH];
  int alt_indents[MAX_INDENT_DEPTH]; /* the same widths with a tab as 1 column (Python's TabError check) */
  int n_indents;
  TokenVec toks;
} Lexer;

static int peek(Lexer *L, size_t ahead) {
  size_t p = L->pos + ahead;
  return p < L->src->len ? (unsigned char)L->src->text[p] : -1;
}

static Loc loc_at(Lexer *L, size_t start) {
  Loc loc = {L->src, (uint32_t)start, L->line, (int)(start - L->line_start) + 1, 1};
  return loc;
}

static Token *push(Lexer *L, TokenKind kind, size_t start) {
  Token t = {0};
  t.kind = kind;
  t.loc = loc_at(L, start);
  t.loc.len = (int)(L->pos - start) > 0 ? (int)(L->pos - start) : 1;
  t.text = L->src->text + start;
  vec_push(L->arena, &L->toks, t);
  return &L->toks.data[L->toks.len - 1];
}

static void newline(Lexer *L) {
  L->line++;
  L->line_start = L->pos;
}

static int is_name_start(int c) { return c == '_' || (c < 0x80 && isalpha(c)); }
static int is_name_char(int c) { return is_name_start(c) || isdigit(c); }

static void lex_name(Lexer *L) {
  size_t start = L->pos;
  while (peek(L, 0) >= 0 && is_name_char(peek(L, 0))) L->pos++;
  size_t n = L->pos - start;
  TokenKind kind = TK_NAME;
  for (int k = TK_KW_DEF; k < TK_COUNT; k++)
    if (strlen(spellings[k]) == n && !memcmp(spellings[k], L->src->text + start, n)) kind = k;
  push(L, kind, start);
}

/* Copies the digits of a literal without Python's '_' separators. */
static char *digits_without_underscores(Lexer *L, size_t start, size_t end) {
  char *s = arena_alloc(L->arena, end - start + 1);
  size_t n = 0;
  for (size_t i = start; i < end; i++)
    if (L->src->text[i] != '_') s[n++] = L->src->text[i];
  s[n] = 0;
  return s;
}

static void lex_number(Lexer *L) {
  size_t start = L->pos;
  int base = 10, is_float = 0;
  if (peek(L, 0) == '0' && strchr("xXoObB", peek(L, 1) > 0 ? peek(L, 1) : ' ')) {
    int c = tolower(peek(L, 1));
    base = c == 'x' ? 16 : c == 'o' ? 8 : 2;
    L->pos += 2;
    while (peek(L, 0) >= 0 && (isxdigit(peek(L, 0)) || peek(L, 0) == '_')) L->pos++;
  } else {
    while (peek(L, 0) >= 0 && (isdigit(peek(L, 0)) || peek(L, 0) == '_')) L->pos++;
    if (peek(L, 0) == '.' && peek(L, 1) != '.') {
      is_float = 1;
      L->pos++;
      while (peek(L, 0) >= 0 && (isdigit(peek(L, 0)) || peek(L, 0) == '_')) L->pos++;
    }
    if (peek(L, 0) == 'e' || peek(L, 0) == 'E') {
      size_t save = L->pos++;
      if (peek(L, 0) == '+' || peek(L, 0) == '-') L->pos++;
      if (peek(L, 0) >= 0 && isdigit(peek(L, 0))) {
        is_float = 1;
        while (peek(L, 0) >= 0 && isdigit(peek(L, 0))) L->pos++;
      } else {
        L->pos = save;
      }
    }
  }
  size_t end = L->pos;
  while (peek(L, 0) >= 0 && is_name_char(peek(L, 0))) L->pos++; /* swallow 12abc for one error */
  Token *t = push(L, is_float ? TK_FLOAT : TK_INT, start);
  if (L->pos != end) {
    diag_error(L->diags, t->loc, "invalid numeric literal '%.*s'", t->loc.len > 60 ? 60 : t->loc.len,
               t->text);
    return;
  }
  char *digits = digits_without_underscores(L, base == 10 ? start : start + 2, end);
  char *stop;
  errno = 0;
  if (is_float) {
    t->fval = strtod(digits, &stop);
  } else {
    t->ival = strtoull(digits, &stop, base);
    if (errno == ERANGE) /* [2^63, 2^64) is Triton's uint64 (ast.h); beyond, Triton has no type either */
      diag_error(L->diags, t->loc, "integer literal is too large (the limit is 2^64-1)");
  }
  if (*stop || !*digits) diag_error(L->diags, t->loc, "invalid numeric literal");
}

static int escape_value(int c) {
  switch (c) {
  case 'n': return '\n';
  case 't': return '\t';
  case 'r': return '\r';
  case '0': return '\0';
  case '\\': return '\\';
  case '\'': return '\'';
  case '"': return '"';
  default: return -1;
  }
}

/* One string literal, with an optional r/b/f/u prefix already consumed. */
static void lex_string(Lexer *L, size_t start, int raw) {
  int quote = peek(L, 0);
  int triple = peek(L, 1) == quote && peek(L, 2) == quote;
  L->pos += triple ? 3 : 1;
  Buf text;
  buf_init(&text, L->arena);
  int start_line = L->line;
  size_t start_line_start = L->line_start;
  for (;;) {
    int c = peek(L, 0);
    if (c < 0 || (!triple && c == '\n')) {
      L->line = start_line;
      L->line_start = start_line_start;
      size_t save = L->pos;
      L->pos = start + 1;
      Token *t = push(L, TK_ERROR, start); /* the parser stays quiet about the rest */
      L->pos = save;
      diag_error(L->diags, t->loc, "unterminated string literal");
      return;
    }
    if (c == quote && (!triple || (peek(L, 1) == quote && peek(L, 2) == quote))) {
      L->pos += triple ? 3 : 1;
      break;
    }
    if (c == '\\' && !raw && peek(L, 1) == 'x' && peek(L, 2) >= 0 && isxdigit(peek(L, 2)) && peek(L, 3) >= 0 &&
        isxdigit(peek(L, 3))) {
      char hex[3] = {(char)peek(L, 2), (char)peek(L, 3), 0};
      char ch = (char)strtol(hex, NULL, 16);
      buf_putn(&text, &ch, 1);
      L->pos += 4;
      continue;
    }
    if (c == '\\' && !raw && peek(L, 1) >= 0) {
      int e = escape_value(peek(L, 1));
      if (peek(L, 1) == '\n') {
        L->pos += 2;
        newline(L);
        continue;
      }
      char ch = e >= 0 ? (char)e : '\\';
      buf_putn(&text, &ch, 1);
      L->pos += e >= 0 ? 2 : 1;
      continue;
    }
    char ch = (char)c;
    buf_putn(&text, &ch, 1);
    L->pos++;
    if (c == '\n') newline(L);
  }
  /* A token spanning lines keeps its first line's position. */
  int end_line = L->line;
  size_t end_line_start = L->line_start;
  L->line = start_line;
  L->line_start = start_line_start;
  Token *t = push(L, TK_STRING, start);
  if (end_line != start_line) {
    size_t eol = start;
    while (eol < L->src->len && L->src->text[eol] != '\n') eol++;
    t->loc.len = (int)(eol - start);
  }
  L->line = end_line;
  L->line_start = end_line_start;
  t->str = buf_cstr(&text);
  t->str_len = text.len;
}

static int string_prefix_len(Lexer *L) {
  for (int n = 1; n <= 2; n++) {
    int q = peek(L, (size_t)n);
    if (q != '"' && q != '\'') continue;
    for (int i = 0; i < n; i++)
      if (!strchr("rRbBuUfF", peek(L, (size_t)i) > 0 ? peek(L, (size_t)i) : ' ')) return 0;
    return n;
  }
  return 0;
}

static int lex_punct(Lexer *L) {
  size_t rest = L->src->len - L->pos;
  for (int k = TK_POW_EQ; k <= TK_GT; k++) {
    size_t n = strlen(spellings[k]);
    if (n <= rest && !memcmp(spellings[k], L->src->text + L->pos, n)) {
      size_t start = L->pos;
      L->pos += n;
      push(L, k, start);
      if (k == TK_LPAREN || k == TK_LBRACKET || k == TK_LBRACE) L->depth++;
      if ((k == TK_RPAREN || k == TK_RBRACKET || k == TK_RBRACE) && L->depth > 0) L->depth--;
      return 1;
    }
  }
  return 0;
}

/* Measures the indentation of the line at L->pos, with tabs to multiples of
 * TAB_WIDTH and, in *alt, as one column each; returns -1 for a line that
 * holds nothing but white space or a comment. */
static int measure_indent(Lexer *L, int *alt) {
  int width = 0;
  *alt = 0;
  for (;;) {
    int c = peek(L, 0);
    if (c == ' ') width++, ++*alt;
    else if (c == '\t') width = (width / TAB_WIDTH + 1) * TAB_WIDTH, ++*alt;
    else if (c == '\f') width = *alt = 0;
    else break;
    L->pos++;
  }
  int c = peek(L, 0);
  if (c == '\n' || c == '#' || c == '\r' || c < 0) return -1;
  return width;
}

/* Python's rule: the nesting must come out the same whatever a tab's width,
 * so the widths with a tab as 8 and as 1 column must order alike. */
static void check_tabs(Lexer *L, int consistent) {
  if (!consistent) diag_error(L->diags, loc_at(L, L->pos), "inconsistent use of tabs and spaces in indentation");
}

static void indent_to(Lexer *L, int width, int alt) {
  int top = L->indents[L->n_indents - 1], alt_top = L->alt_indents[L->n_indents - 1];
  if (width > top) {
    if (L->n_indents == MAX_INDENT_DEPTH) {
      if (!L->indent_reported++)
        diag_error(L->diags, loc_at(L, L->pos), "too many levels of indentation (the limit is %d)",
                   MAX_INDENT_DEPTH);
      return;
    }
    check_tabs(L, alt > alt_top);
    L->alt_indents[L->n_indents] = alt;
    L->indents[L->n_indents++] = width;
    push(L, TK_INDENT, L->pos);
    return;
  }
  while (width < L->indents[L->n_indents - 1]) {
    L->n_indents--;
    push(L, TK_DEDENT, L->pos);
  }
  if (width != L->indents[L->n_indents - 1])
    diag_error(L->diags, loc_at(L, L->pos), "unindent does not match any outer indentation level");
  else
    check_tabs(L, alt == L->alt_indents[L->n_indents - 1]);
}

static int last_is(Lexer *L, TokenKind k) { return L->toks.len && L->toks.data[L->toks.len - 1].kind == k; }

static void lex_line_start(Lexer *L) {
  int alt, width = measure_indent(L, &alt);
  if (width >= 0) indent_to(L, width, alt);
}

/* A character outside ASCII (an en dash or smart quote pasted from a web
 * page, say): one error naming it, as Python does. */
static void lex_non_ascii(Lexer *L, size_t start) {
  const unsigned char *p = (const unsigned char *)L->src->text + start;
  size_t avail = L->src->len - start;
  int len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC0 ? 2 : 1;
  uint32_t cp = len == 1 ? p[0] : p[0] & (0x3F >> (len - 1));
  int valid = (size_t)len <= avail && len > 1;
  for (int i = 1; valid && i < len; i++) {
    valid = (p[i] & 0xC0) == 0x80;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  L->pos += valid ? (size_t)len : 1;
  Token *t = push(L, TK_ERROR, start);
  if (valid)
    diag_error(L->diags, t->loc, "invalid character '%.*s' (U+%04X)", len, (const char *)p, (unsigned)cp);
  else
    diag_error(L->diags, t->loc, "invalid byte 0x%02x (not UTF-8 text)", p[0]);
}

static void lex_one(Lexer *L) {
  int c = peek(L, 0);
  size_t start = L->pos;
  if (c == '\n') {
    L->pos++;
    if (L->depth == 0 && L->toks.len && !last_is(L, TK_NEWLINE) && !last_is(L, TK_INDENT) &&
        !last_is(L, TK_DEDENT))
      push(L, TK_NEWLINE, start);
    newline(L);
    if (L->depth == 0) lex_line_start(L);
    return;
  }
  if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
    L->pos++;
    return;
  }
  if (c == '#') {
    while (peek(L, 0) >= 0 && peek(L, 0) != '\n') L->pos++;
    return;
  }
  if (c == '\\' && (peek(L, 1) == '\n' || (peek(L, 1) == '\r' && peek(L, 2) == '\n'))) {
    L->pos += peek(L, 1) == '\n' ? 2 : 3;
    newline(L);
    return;
  }
  int prefix = string_prefix_len(L);
  if (prefix || c == '"' || c == '\'') {
    int raw = 0;
    for (int i = 0; i < prefix; i++) raw |= tolower(peek(L, (size_t)i)) == 'r';
    L->pos += (size_t)prefix;
    lex_string(L, start, raw);
    return;
  }
  if (isdigit(c) || (c == '.' && peek(L, 1) >= 0 && isdigit(peek(L, 1)))) {
    lex_number(L);
    return;
  }
  if (is_name_start(c)) {
    lex_name(L);
    return;
  }
  if (lex_punct(L)) return;
  if (c >= 0x80) {
    lex_non_ascii(L, start);
    return;
  }
  L->pos++;
  Loc loc = push(L, TK_ERROR, start)->loc;
  if (c == 0)
    diag_error(L->diags, loc, "unexpected NUL byte in source");
  else if (c < 0x20 || c == 0x7f)
    diag_error(L->diags, loc, "unexpected control character 0x%02x", c);
  else
    diag_error(L->diags, loc, "unexpected character '%c'", c);
}

TokenVec lex(const Source *src, Diags *d) {
  Lexer L = {0};
  L.src = src;
  L.diags = d;
  L.arena = d->arena;
  L.line = 1;
  L.n_indents = 1;
  lex_line_start(&L);
  while (L.pos < src->len) lex_one(&L);
  if (L.toks.len && !last_is(&L, TK_NEWLINE) && !last_is(&L, TK_DEDENT)) push(&L, TK_NEWLINE, L.pos);
  while (L.n_indents > 1) {
    L.n_indents--;
    push(&L, TK_DEDENT, L.pos);
  }
  push(&L, TK_EOF, L.pos);
  return L.toks;
}

void tokens_print(const TokenVec *toks, Buf *out) {
  for (int i = 0; i < toks->len; i++) {
    const Token *t = &toks->data[i];
    buf_printf(out, "%d:%d %s", t->loc.line, t->loc.col, token_kind_name(t->kind));
    if (t->kind == TK_NAME || t->kind == TK_INT || t->kind == TK_FLOAT || t->kind == TK_STRING)
      buf_printf(out, " '%.*s'", t->loc.len > 80 ? 80 : t->loc.len, t->text);
    buf_puts(out, "\n");
  }
}
