/* Grid expressions: Triton's grid lambda written out, `(cdiv(n, meta['BLOCK']), 2)`.  One parser for
 * both tools that take one: tilec run --grid evaluates the items in the specialisation launched, tilec
 * pack --launcher --grid writes them as C. */
#ifndef TILEC_GRID_H
#define TILEC_GRID_H

enum { GRID_MAX_ITEMS = 3, GRID_MAX_NODES = 256, GRID_MAX_DEPTH = 64, GRID_MAX_NAME = 100 };

/* A node: a number, a name (NAME or meta['NAME']: a constexpr or, for the launcher, an integer
 * parameter), a call (GRID_CDIV, GRID_MIN, GRID_MAX) or an operator (+ - * // %) of two others. */
typedef enum { GRID_NUMBER, GRID_NAME, GRID_CDIV, GRID_MIN, GRID_MAX, GRID_ADD, GRID_SUB, GRID_MUL, GRID_DIV, GRID_REM } GridKind;

typedef struct GridNode {
  GridKind kind;
  long long value;                /* GRID_NUMBER */
  char name[GRID_MAX_NAME + 1];   /* GRID_NAME */
  int a, b;                       /* operands: indices in Grid.nodes */
} GridNode;

typedef struct Grid {
  int n_items;                    /* 1 to 3: the grid's axes */
  int item[GRID_MAX_ITEMS];       /* each axis's root node */
  int has_name[GRID_MAX_ITEMS];   /* whether it depends on a name (else its value is known now) */
  GridNode nodes[GRID_MAX_NODES];
  int n_nodes;
} Grid;

/* What went wrong: `why`; where, for a parse (`at`, a suffix of the text) or the name it is about. */
typedef struct GridError {
  const char *why;
  const char *at;
  char name[GRID_MAX_NAME + 1];
} GridError;

/* The value of a name: 0 and *value, or -1 when the name has none. */
typedef int (*GridLookup)(void *ctx, const char *name, long long *value);

/* The error in words: "'NAME' why", "why at 'TEXT'" or "why"; buf. */
const char *grid_error_text(const GridError *err, char *buf, unsigned long size);

/* Parses the grid: one to three items separated by commas, optionally a tuple's parentheses around
 * them and a last comma.  0, or -1 with *err set. */
int grid_parse(const char *text, Grid *g, GridError *err);

/* Item i's value (64-bit, overflow and division by less than 1 refused); names through lookup
 * (NULL: none has a value).  0 with err->why set when it has none. */
long long grid_eval(const Grid *g, int i, GridLookup lookup, void *ctx, GridError *err);

#endif
