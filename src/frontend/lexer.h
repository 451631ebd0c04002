/* The lexer: source bytes to a token array with Python's NEWLINE / INDENT /
 * DEDENT structure.  Newlines inside brackets and after a backslash are
 * joined, as in Python. */
#ifndef TILE_LEXER_H
#define TILE_LEXER_H

#include "../support/diag.h"

#include <stdint.h>

typedef enum {
#define TOKEN(id, spelling) TK_##id,
#include "token.def"
#undef TOKEN
  TK_COUNT
} TokenKind;

typedef struct Token {
  TokenKind kind;
  Loc loc;
  const char *text;   /* points into the source; loc.len bytes */
  uint64_t ival;      /* TK_INT */
  double fval;        /* TK_FLOAT */
  const char *str;    /* TK_STRING: decoded, NUL-terminated (may hold NULs) */
  size_t str_len;
} Token;

typedef Vec(Token) TokenVec;

const char *token_kind_name(TokenKind k);
/* Tokenizes `src`; errors go to `d` and lexing goes on past them.
 * The array always ends with TK_EOF. */
TokenVec lex(const Source *src, Diags *d);
void tokens_print(const TokenVec *toks, Buf *out);

#endif
