/* Lexer: token kinds, values, positions, indentation and errors. */
#include "check.h"
#include "../../src/frontend/lexer.h"

typedef struct Lexed {
  Arena arena;
  Guard guard;
  Diags diags;
  Source src;
  TokenVec toks;
  Buf errors;
} Lexed;

static void run(Lexed *l, const char *text, size_t len) {
  arena_init(&l->arena, 0);
  l->arena.guard = &l->guard;
  diags_init(&l->diags, &l->arena, &l->guard);
  l->src = (Source){"t.tl", text, len};
  l->toks = lex(&l->src, &l->diags);
  buf_init(&l->errors, &l->arena);
  diag_render(&l->diags, &l->errors);
}

static int kinds_are(Lexed *l, const TokenKind *want, int n) {
  if (l->toks.len != n) return 0;
  for (int i = 0; i < n; i++)
    if (l->toks.data[i].kind != want[i]) return 0;
  return 1;
}

static void test_indentation(void) {
  Lexed l;
  const char *src = "def f(a,\n      b):\n    x = 1\n    if x:\n        y = 2\n\n    # comment\n    z = 3\n";
  run(&l, src, strlen(src));
  TokenKind want[] = {TK_KW_DEF, TK_NAME, TK_LPAREN, TK_NAME, TK_COMMA, TK_NAME, TK_RPAREN, TK_COLON, TK_NEWLINE,
                      TK_INDENT, TK_NAME, TK_ASSIGN, TK_INT, TK_NEWLINE,
                      TK_KW_IF, TK_NAME, TK_COLON, TK_NEWLINE,
                      TK_INDENT, TK_NAME, TK_ASSIGN, TK_INT, TK_NEWLINE,
                      TK_DEDENT, TK_NAME, TK_ASSIGN, TK_INT, TK_NEWLINE, TK_DEDENT, TK_EOF};
  CHECK(kinds_are(&l, want, (int)(sizeof want / sizeof want[0])));
  CHECK(l.diags.errors == 0);
  arena_free(&l.arena);
}

static void test_numbers_and_strings(void) {
  Lexed l;
  const char *src = "0x1F 1_000 0b101 0o17 1.5 2e3 .25 'a\\n' \"\"\"x\ny\"\"\" r'\\n'\n";
  run(&l, src, strlen(src));
  CHECK(l.diags.errors == 0);
  CHECK(l.toks.data[0].ival == 31);
  CHECK(l.toks.data[1].ival == 1000);
  CHECK(l.toks.data[2].ival == 5);
  CHECK(l.toks.data[3].ival == 15);
  CHECK(l.toks.data[4].kind == TK_FLOAT && l.toks.data[4].fval == 1.5);
  CHECK(l.toks.data[5].kind == TK_FLOAT && l.toks.data[5].fval == 2000.0);
  CHECK(l.toks.data[6].kind == TK_FLOAT && l.toks.data[6].fval == 0.25);
  CHECK(l.toks.data[7].kind == TK_STRING && !strcmp(l.toks.data[7].str, "a\n"));
  CHECK(l.toks.data[8].kind == TK_STRING && !strcmp(l.toks.data[8].str, "x\ny"));
  CHECK(l.toks.data[9].kind == TK_STRING && !strcmp(l.toks.data[9].str, "\\n"));
  CHECK(l.toks.data[9].loc.line == 2 && l.toks.data[9].loc.col == 6);
  arena_free(&l.arena);
}

static void test_operators(void) {
  Lexed l;
  const char *src = "a //= b ** c << d >= e != f -> g @ h\n";
  run(&l, src, strlen(src));
  TokenKind want[] = {TK_NAME, TK_FLOORDIV_EQ, TK_NAME, TK_POW, TK_NAME, TK_SHL, TK_NAME, TK_GE, TK_NAME,
                      TK_NE, TK_NAME, TK_ARROW, TK_NAME, TK_AT, TK_NAME, TK_NEWLINE, TK_EOF};
  CHECK(kinds_are(&l, want, (int)(sizeof want / sizeof want[0])));
  arena_free(&l.arena);
}

static void test_brackets_join_lines(void) {
  Lexed l;
  const char *src = "x = f(1,\n  2,\n      3)\ny = 1 + \\\n  2\n";
  run(&l, src, strlen(src));
  int newlines = 0;
  for (int i = 0; i < l.toks.len; i++) newlines += l.toks.data[i].kind == TK_NEWLINE;
  CHECK(newlines == 2);
  CHECK(l.diags.errors == 0);
  arena_free(&l.arena);
}

static void test_errors_have_places(void) {
  Lexed l;
  const char src[] = "x = 1\ny = $ + 'abc\nz = 12ab\nw = \0\n";
  run(&l, src, sizeof src - 1);
  CHECK(l.diags.errors == 4);
  CHECK_CONTAINS(buf_cstr(&l.errors), "t.tl:2:5: error: unexpected character '$'");
  CHECK_CONTAINS(buf_cstr(&l.errors), "t.tl:2:9: error: unterminated string literal");
  CHECK_CONTAINS(buf_cstr(&l.errors), "t.tl:3:5: error: invalid numeric literal '12ab'");
  CHECK_CONTAINS(buf_cstr(&l.errors), "t.tl:4:5: error: unexpected NUL byte in source");
  CHECK_CONTAINS(buf_cstr(&l.errors), "y = $ + 'abc\n    ^\n");
  arena_free(&l.arena);
}

static void test_bad_dedent(void) {
  Lexed l;
  const char *src = "if a:\n        b\n    c\n";
  run(&l, src, strlen(src));
  CHECK(l.diags.errors == 1);
  CHECK_CONTAINS(buf_cstr(&l.errors), "t.tl:3:5: error: unindent does not match any outer indentation level");
  arena_free(&l.arena);
}

static void test_empty_and_no_newline(void) {
  Lexed l;
  run(&l, "", 0);
  CHECK(l.toks.len == 1 && l.toks.data[0].kind == TK_EOF);
  arena_free(&l.arena);
  run(&l, "x", 1);
  TokenKind want[] = {TK_NAME, TK_NEWLINE, TK_EOF};
  CHECK(kinds_are(&l, want, 3));
  arena_free(&l.arena);
}

int main(void) {
  test_indentation();
  test_numbers_and_strings();
  test_operators();
  test_brackets_join_lines();
  test_errors_have_places();
  test_bad_dedent();
  test_empty_and_no_newline();
  return check_report();
}
