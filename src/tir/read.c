/* The reader of tile IR's textual form (print.c writes it, docs/ir.md
 * describes it), so that passes can be tested from IR text and IR can be
 * saved and reloaded.  It builds the function as printed, value ids
 * included; the verifier then checks it.  A syntax error stops the read
 * with one diagnostic placed in the text.
 *
 * GPU-layout IR (tgir_print, docs/tgir.md) reads back too: the layout
 * definitions before the function ("#blocked0 = #blocked<{...}>") are
 * interned in order, so they keep their numbers, and a "#name" after a
 * type or a region argument gives the value that layout. */
#include "tir.h"
#include "layout.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct NamedLayout {
  const char *name;      /* as written after '#', not terminated */
  size_t len;
  const Layout *layout;
} NamedLayout;

typedef struct Reader {
  const Source *src;
  Diags *diags;
  TirFunc *f;
  size_t pos;
  Source *origin;        /* stands for the source the printed loc() refer to */
  Arena *arena;
  LayoutTable *layouts;  /* GPU-layout IR: the layouts defined so far; NULL for tile IR */
  Vec(NamedLayout) names;    /* the layouts defined so far, by the names the text gives them */
  Loc last;              /* the place here() found last */
  jmp_buf fail;
} Reader;

/* ---- characters and tokens ----------------------------------------------- */

static int peek(Reader *R) { return R->pos < R->src->len ? (unsigned char)R->src->text[R->pos] : -1; }

/* The place of R->pos, counted on from the last place asked for (the
 * reader moves back only a word at a time), so that a text's places cost
 * its length once: counted from the start each time, a fuzzed chain of
 * 1000 comparisons took minutes. */
static Loc here(Reader *R) {
  Loc *l = &R->last;
  if (!l->src || l->offset > R->pos) *l = (Loc){R->src, 0, 1, 1, 1};
  for (size_t i = l->offset; i < R->pos; i++) {
    if (R->src->text[i] == '\n') {
      l->line++;
      l->col = 1;
    } else {
      l->col++;
    }
  }
  l->offset = (uint32_t)R->pos;
  return *l;
}

_Noreturn static void fail(Reader *R, const char *what) {
  diag_error(R->diags, here(R), "tile IR: expected %s", what);
  longjmp(R->fail, 1);
}

/* Skips white space and // comments (the headers of --print-after-all). */
static void skip(Reader *R) {
  for (;;) {
    int c = peek(R);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') R->pos++;
    else if (c == '/' && R->pos + 1 < R->src->len && R->src->text[R->pos + 1] == '/')
      while (peek(R) >= 0 && peek(R) != '\n') R->pos++;
    else return;
  }
}

static int at(Reader *R, const char *s) {
  skip(R);
  size_t n = strlen(s);
  return R->pos + n <= R->src->len && !memcmp(R->src->text + R->pos, s, n);
}

static int accept(Reader *R, const char *s) {
  if (!at(R, s)) return 0;
  R->pos += strlen(s);
  return 1;
}

static void expect(Reader *R, const char *s) {
  if (!accept(R, s)) {
    char what[64];
    snprintf(what, sizeof what, "'%s'", s);
    fail(R, what);
  }
}

/* A word: letters, digits, '_' and '.' (op names with kinds, dtypes). */
static const char *word(Reader *R, size_t *len) {
  skip(R);
  size_t start = R->pos;
  while (peek(R) >= 0 && (isalnum(peek(R)) || peek(R) == '_' || peek(R) == '.')) R->pos++;
  *len = R->pos - start;
  return R->src->text + start;
}

/* A cast's or division's rounding after its operands (cast %1 rtz); 0 if the next word is not one. */
static int modifier(Reader *R, TirOp *op) {
  size_t start = R->pos, n;
  const char *w = word(R, &n);
  int kind = tir_modifier_lookup(op->code, w, n);
  if (kind < 0) {
    R->pos = start;
    return 0;
  }
  op->kind = kind;
  return 1;
}

static int64_t integer(Reader *R) {
  skip(R);
  char *end;
  errno = 0;
  long long v = strtoll(R->src->text + R->pos, &end, 10);
  if (end == R->src->text + R->pos || errno) fail(R, "an integer");
  R->pos = (size_t)(end - R->src->text);
  return v;
}

static double number(Reader *R) {
  skip(R);
  if (accept(R, "inf")) return INFINITY;
  if (accept(R, "-inf")) return -INFINITY;
  if (accept(R, "nan")) return NAN;
  char *end;
  double v = strtod(R->src->text + R->pos, &end);
  if (end == R->src->text + R->pos) fail(R, "a number");
  R->pos = (size_t)(end - R->src->text);
  return v;
}

static const char *string(Reader *R) {
  expect(R, "\"");
  Buf b;
  buf_init(&b, R->f->arena);
  while (peek(R) >= 0 && peek(R) != '"') {
    char c = R->src->text[R->pos++];
    if (c == '\\' && peek(R) == 'x' && R->pos + 2 < R->src->len) {
      char hex[3] = {R->src->text[R->pos + 1], R->src->text[R->pos + 2], 0};
      c = (char)strtol(hex, NULL, 16);
      R->pos += 3;
    }
    buf_putn(&b, &c, 1);
  }
  expect(R, "\"");
  return buf_cstr(&b);
}

/* ---- values and types ------------------------------------------------------ */

static int value_id(Reader *R) {
  expect(R, "%");
  int64_t v = integer(R);
  if (v < 0 || v > 10000000) fail(R, "a value number");
  return (int)v;
}

/* A use: the value must be defined above (the printed order is SSA order). */
static int use(Reader *R) {
  Loc loc = here(R);
  int v = value_id(R);
  if (v >= R->f->types.len || !R->f->types.data[v]) {
    diag_error(R->diags, loc, "tile IR: %%%d is used before it is defined", v);
    longjmp(R->fail, 1);
  }
  return v;
}

static void define(Reader *R, int v, Type *t, Loc loc) {
  while (R->f->types.len <= v) tir_value_new(R->f, NULL, NULL);
  if (R->f->types.data[v]) {
    diag_error(R->diags, loc, "tile IR: %%%d is defined twice", v);
    longjmp(R->fail, 1);
  }
  R->f->types.data[v] = t;
}

static Type *type(Reader *R) {
  int is_ptr = accept(R, "*");
  size_t n;
  const char *w = word(R, &n);
  char name[16] = "";
  if (n < sizeof name) memcpy(name, w, n);
  int dt = dtype_lookup(name);
  if (dt < 0) fail(R, "a type such as i32, *fp32 or fp16[64,32]");
  Type *t = is_ptr ? type_pointer(R->f->arena, (DType)dt) : type_scalar(R->f->arena, (DType)dt);
  if (accept(R, "[")) {
    do {
      if (t->rank == MAX_RANK) fail(R, "at most 8 dimensions");
      t->shape[t->rank++] = integer(R);
      if (t->shape[t->rank - 1] <= 0) fail(R, "a positive dimension");
    } while (accept(R, ","));
    expect(R, "]");
  }
  return t;
}

/* ---- layouts (GPU-layout IR) ------------------------------------------------ */

_Noreturn static void fail_layout(Reader *R, Loc loc, const char *why) {
  diag_error(R->diags, loc, "GPU-layout IR: %s", why);
  longjmp(R->fail, 1);
}

/* "#name": a layout defined above. */
static const Layout *layout_ref(Reader *R) {
  skip(R);
  Loc loc = here(R);
  expect(R, "#");
  size_t n;
  const char *w = word(R, &n);
  for (int i = 0; i < R->names.len; i++)
    if (R->names.data[i].len == n && !memcmp(R->names.data[i].name, w, n)) return R->names.data[i].layout;
  fail_layout(R, loc,
              arena_printf(R->arena, "unknown layout #%.*s (layouts are defined before the function)", (int)n, w));
}

/* The layout after a type or a region argument, if there is one. */
static void optional_layout(Reader *R, int v) {
  if (at(R, "#")) tir_set_layout(R->f, v, layout_ref(R));
}

/* The fields of "#kind<{...}>" as written; -1 / 0 where absent. */
typedef struct LayoutText {
  int lists[5][MAX_RANK], n[5]; /* sizePerThread, threadsPerWarp, warpsPerCTA, order, instrShape */
  int dim, op_idx, k_width;
  int version, vec, per_phase, max_phase, swizzle, elem_bits;
  const Layout *parent;
} LayoutText;

enum { SPT, TPW, WPC, ORDER, INSTR };
static const char *const list_fields[] = {"sizePerThread", "threadsPerWarp", "warpsPerCTA", "order", "instrShape"};

static int small_int(Reader *R) {
  int64_t v = integer(R);
  if (v < 0 || v > (1 << 20)) fail(R, "an integer from 0 to 2^20");
  return (int)v;
}

static void int_list(Reader *R, int *v, int *n) {
  expect(R, "[");
  *n = 0;
  while (!at(R, "]")) {
    if (*n == MAX_RANK) fail(R, "at most 8 values");
    v[(*n)++] = small_int(R);
    if (!accept(R, ",")) break;
  }
  expect(R, "]");
}

static int is_word(const char *w, size_t n, const char *s) { return strlen(s) == n && !strncmp(w, s, n); }

static void layout_field(Reader *R, LayoutText *L) {
  skip(R);
  size_t start = R->pos, n;
  const char *key = word(R, &n);
  expect(R, "=");
  int list = -1;
  for (int i = 0; i < 5; i++)
    if (is_word(key, n, list_fields[i])) list = i;
  struct { const char *name; int *field; } ints[] = {
      {"dim", &L->dim}, {"opIdx", &L->op_idx}, {"kWidth", &L->k_width}, {"versionMajor", &L->version},
      {"vec", &L->vec}, {"perPhase", &L->per_phase}, {"maxPhase", &L->max_phase},
      {"swizzlingByteWidth", &L->swizzle}, {"elementBitWidth", &L->elem_bits}};
  int *field = NULL;
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (is_word(key, n, ints[i].name)) field = ints[i].field;
  if (list >= 0) int_list(R, L->lists[list], &L->n[list]);
  else if (is_word(key, n, "parent")) L->parent = layout_ref(R);
  else if (field) *field = small_int(R);
  else {
    R->pos = start;
    fail(R, "a layout field: sizePerThread, threadsPerWarp, warpsPerCTA, order, dim, parent, opIdx, kWidth, "
            "versionMajor, instrShape, vec, perPhase, maxPhase, swizzlingByteWidth or elementBitWidth");
  }
}

/* mma, shared and nvmma_shared layouts; NULL for other kinds. */
static const Layout *build_tc_layout(Reader *R, const char *kind, size_t n, const LayoutText *L, Loc loc) {
  const char *why = "";
  const Layout *l = NULL;
  if (is_word(kind, n, "mma")) {
    int instr[3] = {L->lists[INSTR][0], L->lists[INSTR][1], L->n[INSTR] > 2 ? L->lists[INSTR][2] : 0};
    if (L->n[WPC] < 2 || L->n[INSTR] != (L->version == 2 ? 2 : 3))
      fail_layout(R, loc, "an mma layout needs versionMajor, warpsPerCTA and instrShape (2 values for version 2, 3 for 3)");
    l = layout_mma(R->layouts, L->version, L->n[WPC], L->lists[WPC], instr, &why);
  } else if (is_word(kind, n, "shared")) {
    l = layout_shared(R->layouts, L->n[ORDER], L->vec, L->per_phase, L->max_phase, L->lists[ORDER], &why);
  } else if (is_word(kind, n, "nvmma_shared")) {
    l = layout_nvmma(R->layouts, L->n[ORDER], L->swizzle, L->elem_bits, L->lists[ORDER], &why);
  } else {
    return NULL;
  }
  if (!l) fail_layout(R, loc, why);
  return l;
}

static const Layout *build_layout(Reader *R, const char *kind, size_t n, const LayoutText *L, Loc loc) {
  const char *why = "";
  if (is_word(kind, n, "blocked")) {
    int rank = L->n[0];
    if (rank < 1 || L->n[1] != rank || L->n[2] != rank || L->n[3] != rank)
      fail_layout(R, loc, "a blocked layout needs sizePerThread, threadsPerWarp, warpsPerCTA and order of one rank");
    const Layout *l = layout_blocked(R->layouts, rank, L->lists[0], L->lists[1], L->lists[2], L->lists[3], &why);
    if (!l) fail_layout(R, loc, why);
    return l;
  }
  if (is_word(kind, n, "slice")) {
    if (!L->parent || L->parent->rank < 2 || L->dim < 0 || L->dim >= L->parent->rank)
      fail_layout(R, loc, "a slice needs a parent of rank 2 or more and a dim inside it");
    return layout_slice(R->layouts, L->dim, L->parent);
  }
  if (is_word(kind, n, "dot_op")) {
    if (!L->parent || L->parent->rank < 2 || (L->op_idx != 0 && L->op_idx != 1) || L->k_width < 1)
      fail_layout(R, loc, "a dot operand needs a parent of rank 2 or more, opIdx 0 or 1 and kWidth 1 or more");
    return layout_dot_operand(R->layouts, L->op_idx, L->parent, L->k_width);
  }
  const Layout *l = build_tc_layout(R, kind, n, L, loc);
  if (!l) fail_layout(R, loc, "expected a layout kind: blocked, slice, dot_op, mma, shared or nvmma_shared");
  return l;
}

/* "#name = #kind<{field = value, ...}>" lines before the function. */
static void read_layout_definitions(Reader *R) {
  while (at(R, "#")) {
    Loc loc = here(R);
    R->pos++;
    size_t n;
    const char *name = word(R, &n);
    if (!n) fail(R, "a layout name after '#'");
    for (int i = 0; i < R->names.len; i++)
      if (R->names.data[i].len == n && !memcmp(R->names.data[i].name, name, n))
        fail_layout(R, loc, arena_printf(R->arena, "layout #%.*s is defined twice", (int)n, name));
    expect(R, "=");
    expect(R, "#");
    Loc kind_loc = here(R);
    size_t kn;
    const char *kind = word(R, &kn);
    expect(R, "<{");
    LayoutText L = {.dim = -1, .op_idx = -1, .k_width = -1, .version = -1, .vec = -1, .per_phase = -1,
                    .max_phase = -1, .swizzle = -1, .elem_bits = -1};
    while (!at(R, "}>")) {
      layout_field(R, &L);
      if (!accept(R, ",")) break;
    }
    expect(R, "}>");
    if (!R->layouts) {
      R->layouts = arena_alloc(R->arena, sizeof *R->layouts);
      R->layouts->arena = R->arena;
    }
    NamedLayout named = {name, n, build_layout(R, kind, kn, &L, kind_loc)};
    vec_push(R->arena, &R->names, named);
  }
}

/* ---- ops ------------------------------------------------------------------- */

static void read_block(Reader *R, TirBlock *b, Loc *last);

static void read_loc(Reader *R, TirOp *op) {
  expect(R, "loc(");
  op->loc.src = R->origin;
  op->loc.line = (int)integer(R);
  expect(R, ":");
  op->loc.col = (int)integer(R);
  op->loc.len = 1;
  expect(R, ")");
}

static TirCode op_code(Reader *R, const char *w, size_t n, int *kind) {
  size_t base = n;
  for (size_t i = 0; i < n; i++)
    if (w[i] == '.') {
      base = i;
      break;
    }
  for (int c = 0; c < TIR_COUNT; c++) {
    const char *name = tir_op_name((TirCode)c);
    if (strlen(name) != base || strncmp(name, w, base)) continue;
    *kind = 0;
    if (base < n) *kind = tir_kind_lookup((TirCode)c, w + base + 1, n - base - 1);
    if (*kind < 0 || (base == n && tir_has_kinds((TirCode)c))) fail(R, "an op kind such as cmp.lt or reduce.sum");
    return (TirCode)c;
  }
  fail(R, "an op name (see tilec --list-ops)");
}

/* A word that `lookup` knows: its index. */
static int named(Reader *R, int (*lookup)(const char *, size_t), const char *what) {
  size_t n;
  const char *w = word(R, &n);
  int i = lookup(w, n);
  if (i < 0) {
    R->pos = (size_t)(w - R->src->text); /* the error points at the word */
    fail(R, what);
  }
  return i;
}

/* A parameter (%N) as a factor of a map field. */
static int map_param(Reader *R) {
  Loc loc = here(R);
  int v = value_id(R);
  for (int i = 0; i < R->f->params.len; i++)
    if (R->f->params.data[i].value == v) return i;
  diag_error(R->diags, loc, "tile IR: %%%d is not a parameter of the function", v);
  longjmp(R->fail, 1);
}

/* A map field: a constant, a parameter (%N), or their product (2*%5, %2*%3);
 * a product's factors are a positive constant and integer parameters. */
static TirMapField map_field(Reader *R) {
  TirMapField x = {1, 0, {0}};
  skip(R);
  if (!at(R, "%")) {
    x.value = integer(R);
    skip(R);
    if (!at(R, "*")) return x;
    if (x.value < 1) fail(R, "a positive constant factor");
    expect(R, "*");
  }
  for (;;) {
    if (x.n == ARCH_MAX_MAP_FACTORS)
      fail(R, arena_printf(R->arena, "at most %d parameters in a map field", ARCH_MAX_MAP_FACTORS));
    skip(R);
    x.params[x.n++] = map_param(R);
    skip(R);
    if (!at(R, "*")) return x;
    expect(R, "*");
  }
}

/* A map field whose parameters are integers (an extent or a stride). */
static TirMapField integer_field(Reader *R) {
  Loc loc = here(R);
  TirMapField x = map_field(R);
  for (int i = 0; i < x.n; i++)
    if (tir_type(R->f, R->f->params.data[x.params[i]].value)->is_ptr) {
      diag_error(R->diags, loc, "tile IR: a tensor map's extents and strides are integers, not pointer %%%d",
                 R->f->params.data[x.params[i]].value);
      longjmp(R->fail, 1);
    }
  return x;
}

/* "map(base=%0 dims=[%5, %3] stride=%6 box=[64, 128] swizzle=128)" after tma_copy: the map's index,
 * a map written the same way before sharing it. */
static int64_t read_tensor_map(Reader *R) {
  TirTensorMap m;
  memset(&m, 0, sizeof m);
  expect(R, "base=");
  TirMapField base = map_field(R);
  if (base.n != 1 || base.value != 1 || !tir_type(R->f, R->f->params.data[base.params[0]].value)->is_ptr)
    fail(R, "a pointer parameter");
  m.base = base.params[0];
  expect(R, "dims=[");
  m.dims[0] = integer_field(R);
  expect(R, ",");
  m.dims[1] = integer_field(R);
  expect(R, "]");
  expect(R, "stride=");
  m.stride = integer_field(R);
  expect(R, "box=[");
  m.box[0] = (int)integer(R);
  expect(R, ",");
  m.box[1] = (int)integer(R);
  expect(R, "]");
  expect(R, "swizzle=");
  m.swizzle = (int)integer(R);
  expect(R, ")");
  for (int i = 0; i < R->f->tensor_maps.len; i++)
    if (!memcmp(&R->f->tensor_maps.data[i], &m, sizeof m)) return i;
  vec_push(R->f->arena, &R->f->tensor_maps, m);
  return R->f->tensor_maps.len - 1;
}

/* The attributes of attrs.def with a form of their own; 0 if it is not there. */
static int read_own(Reader *R, TirOp *op, TirAttr a, int result_is_float_constant) {
  switch (a) {
  case ATTR_VALUE:
    if (result_is_float_constant) {
      op->fval = number(R);
    } else {
      op->ival = integer(R);
      op->fval = (double)op->ival;
    }
    return 1;
  case ATTR_RANGE:
    op->ival = integer(R);
    expect(R, ",");
    op->ival2 = integer(R);
    return 1;
  case ATTR_MAP:
    if (!accept(R, "map(")) return 0;
    op->ival = read_tensor_map(R);
    return 1;
  case ATTR_MODIFIER: return modifier(R, op);
  case ATTR_INTS:
    if (!accept(R, "[")) return 0;
    while (!at(R, "]")) {
      if (op->n_ints == MAX_RANK) fail(R, "at most 8 values");
      op->ints[op->n_ints++] = integer(R);
      if (!accept(R, ",")) break;
    }
    expect(R, "]");
    return 1;
  case ATTR_TEXT:
    if (!at(R, "\"")) return 0;
    op->str = string(R);
    return 1;
  case ATTR_ASM:
    if (!at(R, "\"")) return 0;
    op->str = string(R);
    expect(R, ",");
    op->str2 = string(R);
    return 1;
  default: return 0;
  }
}

/* One attribute at the reader's position; 0 if it is not there. */
static int read_attribute(Reader *R, TirOp *op, TirAttr a, int result_is_float_constant) {
  switch (a) {
#define ATTR_INT(id, spelling, field, always) \
  case ATTR_##id: \
    if (!accept(R, spelling "=")) return 0; \
    op->field = integer(R); \
    return 1;
#define ATTR_FLAG(id, spelling, bit) \
  case ATTR_##id: \
    if (!accept(R, spelling)) return 0; \
    op->flags |= (bit); \
    return 1;
#define ATTR_NAMED(id, spelling, field, table, what) \
  case ATTR_##id: \
    if (!accept(R, spelling "=")) return 0; \
    op->field = named(R, tir_##table##_lookup, what); \
    return 1;
#define ATTR_WORD(id, spelling) \
  case ATTR_##id: { \
    if (!accept(R, spelling "=")) return 0; \
    size_t n; \
    const char *w = word(R, &n); \
    op->str = arena_strndup(R->f->arena, w, n); \
    return 1; \
  }
#include "attrs.def"
  default: return read_own(R, op, a, result_is_float_constant);
  }
}

static void fail_attribute(Reader *R, const TirOp *op) {
  const char *choices = tir_attribute_choices(op->code, R->f->arena);
  const char *end = op->regions[0] ? "'->' or '{'" : "':' or loc(...)";
  fail(R, *choices ? arena_printf(R->f->arena, "an attribute of %s (%s), %s", tir_op_name(op->code), choices, end) : end);
}

/* The attributes after the operands (before the ':' of the result types, or
 * a for's '->' and region), as the op's row in ops.def names them, each once. */
static void read_attributes(Reader *R, TirOp *op, int result_is_float_constant) {
  unsigned seen = 0;
  for (;;) {
    skip(R);
    if (at(R, ":") || at(R, "loc(") || at(R, "->") || at(R, "{")) return;
    int a = 0;
    while (a < ATTR_COUNT && (!tir_op_has(op->code, (TirAttr)a) || (seen >> a & 1) ||
                              !read_attribute(R, op, (TirAttr)a, result_is_float_constant)))
      a++;
    if (a == ATTR_COUNT) fail_attribute(R, op);
    seen |= 1u << a;
  }
}

/* A constant's value is read before its type; look ahead for the type. */
static int constant_is_float(Reader *R) {
  size_t save = R->pos;
  while (peek(R) >= 0 && peek(R) != ':' && peek(R) != '\n') R->pos++;
  int is_float = 0;
  if (accept(R, ":")) {
    Type *t = type(R);
    is_float = dtype_is_float(t->elem);
  }
  R->pos = save;
  return is_float;
}

static void read_results(Reader *R, TirOp *op, const int *ids, int n, Loc loc) {
  for (int i = 0; i < n; i++) {
    if (i) expect(R, ",");
    Type *t = type(R);
    define(R, ids[i], t, loc);
    optional_layout(R, ids[i]);
    vec_push(R->f->arena, &op->results, ids[i]);
  }
}

/* combine(%a0, ..., %b0, ...) { ... yield ... }: the arguments are scalars
 * of the operands' element types, twice over. */
static void read_combine(Reader *R, TirOp *op) {
  Loc end;
  op->combine = tir_block_new(R->f);
  expect(R, "combine");
  expect(R, "(");
  for (int i = 0; !at(R, ")"); i++) {
    skip(R);
    if (!op->operands.len || i >= 2 * op->operands.len) fail(R, "two arguments per operand");
    Loc loc = here(R);
    int arg = value_id(R);
    Type *t = R->f->types.data[op->operands.data[i % op->operands.len]];
    define(R, arg, type_tile(R->f->arena, t, 0, NULL), loc);
    vec_push(R->f->arena, &op->combine->args, arg);
    if (!accept(R, ",")) break;
  }
  expect(R, ")");
  expect(R, "{");
  read_block(R, op->combine, &end);
}

static void read_plain(Reader *R, TirOp *op, const int *ids, int n_ids, Loc loc) {
  skip(R);
  while (at(R, "%")) {
    tir_add_operand(R->f, op, use(R));
    if (!accept(R, ",")) break;
  }
  int is_float = op->code == TIR_CONSTANT && constant_is_float(R);
  read_attributes(R, op, is_float);
  if (op->code == TIR_LOAD) op->flags |= (op->operands.len > 1 ? LOAD_MASK : 0) | (op->operands.len > 2 ? LOAD_OTHER : 0);
  if ((op->code == TIR_STORE && op->operands.len > 2) || (op->code == TIR_ATOMIC_RMW && op->operands.len > 2) ||
      (op->code == TIR_ASSERT && op->operands.len > 1) || (op->code == TIR_ASYNC_COPY && op->operands.len > 2))
    op->flags |= LOAD_MASK;
  if (accept(R, ":")) read_results(R, op, ids, n_ids, loc);
  else if (n_ids) fail(R, "':' and the result types");
  if (op->code == TIR_REDUCE_COMBINE || op->code == TIR_SCAN_COMBINE) read_combine(R, op);
}

/* (%a = %init, ...): block arguments bound to operands. */
static void read_bindings(Reader *R, TirOp *op, TirBlock *b) {
  expect(R, "(");
  while (!at(R, ")")) {
    Loc loc = here(R);
    int arg = value_id(R);
    optional_layout(R, arg);
    expect(R, "=");
    int init = use(R);
    tir_add_operand(R->f, op, init);
    define(R, arg, R->f->types.data[init], loc);
    vec_push(R->f->arena, &b->args, arg);
    if (!accept(R, ",")) break;
  }
  expect(R, ")");
}

static void read_result_types(Reader *R, TirOp *op, const int *ids, int n, Loc loc) {
  if (accept(R, "->")) read_results(R, op, ids, n, loc);
  else if (n) fail(R, "'->' and the result types");
}

static void read_structured(Reader *R, TirOp *op, const int *ids, int n, Loc loc) {
  TirBlock *r0 = tir_block_new(R->f);
  op->regions[0] = r0;
  Loc end;
  if (op->code == TIR_FOR) {
    Loc iv_loc = here(R);
    int iv = value_id(R);
    expect(R, "=");
    tir_add_operand(R->f, op, use(R));
    expect(R, "to");
    tir_add_operand(R->f, op, use(R));
    expect(R, "step");
    tir_add_operand(R->f, op, use(R));
    define(R, iv, R->f->types.data[op->operands.data[0]], iv_loc);
    vec_push(R->f->arena, &r0->args, iv);
    expect(R, "iter");
    read_bindings(R, op, r0);
    read_attributes(R, op, 0);
  } else if (op->code == TIR_IF) {
    tir_add_operand(R->f, op, use(R));
  } else {
    read_bindings(R, op, r0);
    read_attributes(R, op, 0);
  }
  read_result_types(R, op, ids, n, loc);
  expect(R, "{");
  read_block(R, r0, &end);
  if (op->code == TIR_IF) {
    op->regions[1] = tir_block_new(R->f);
    if (accept(R, "else")) {
      expect(R, "{");
      read_block(R, op->regions[1], &end);
    } else { /* a printed if without else yields nothing */
      tir_append(R->f, op->regions[1], tir_op_new(R->f, TIR_YIELD, loc));
    }
  } else if (op->code == TIR_WHILE) {
    TirBlock *r1 = tir_block_new(R->f);
    op->regions[1] = r1;
    expect(R, "do");
    expect(R, "(");
    for (int i = 0; !at(R, ")"); i++) {
      Loc arg_loc = here(R);
      int arg = value_id(R);
      optional_layout(R, arg);
      if (i >= op->results.len) fail(R, "as many body arguments as results");
      define(R, arg, R->f->types.data[op->results.data[i]], arg_loc);
      vec_push(R->f->arena, &r1->args, arg);
      if (!accept(R, ",")) break;
    }
    expect(R, ")");
    expect(R, "{");
    read_block(R, r1, &end);
  }
}

static TirOp *read_op(Reader *R) {
  Loc loc = here(R);
  int ids[64], n = 0;
  if (at(R, "%")) {
    do {
      if (n == 64) fail(R, "at most 64 results");
      ids[n++] = value_id(R);
    } while (accept(R, ","));
    expect(R, "=");
  }
  size_t len;
  skip(R);
  size_t start = R->pos;
  const char *w = word(R, &len);
  int kind = 0;
  R->pos = start; /* an unknown name is reported at its start */
  TirCode code = op_code(R, w, len, &kind);
  R->pos = start + len;
  TirOp *op = tir_op_new(R->f, code, loc);
  op->kind = kind;
  if (op->code == TIR_FOR || op->code == TIR_IF || op->code == TIR_WHILE) read_structured(R, op, ids, n, loc);
  else read_plain(R, op, ids, n, loc);
  read_loc(R, op);
  return op;
}

static void read_block(Reader *R, TirBlock *b, Loc *last) {
  while (!accept(R, "}")) {
    if (peek(R) < 0) fail(R, "'}'");
    tir_append(R->f, b, read_op(R));
  }
  *last = here(R);
}

static void read_params(Reader *R) {
  expect(R, "(");
  for (int i = 0; !at(R, ")"); i++) {
    Loc loc = here(R);
    TirParam p = {NULL, value_id(R), 1, i};
    expect(R, ":");
    define(R, p.value, type(R), loc);
    expect(R, "{");
    expect(R, "name");
    expect(R, "=");
    p.name = string(R);
    if (accept(R, ",")) {
      expect(R, "divisibility");
      expect(R, "=");
      p.divisibility = (int)integer(R);
    }
    expect(R, "}");
    vec_push(R->f->arena, &R->f->params, p);
    if (!accept(R, ",")) break;
  }
  expect(R, ")");
}

TirFunc *tir_read(const Source *text, Arena *a, Diags *d) {
  Reader R;
  memset(&R, 0, sizeof R);
  R.src = text;
  R.diags = d;
  R.origin = arena_alloc(a, sizeof *R.origin);
  R.origin->name = "<source>"; /* loc() places are in the kernel the IR came from */
  R.origin->text = "";
  R.arena = a;
  if (setjmp(R.fail)) return NULL; /* nothing after this is modified before a longjmp but R itself */
  read_layout_definitions(&R);
  expect(&R, "func");
  expect(&R, "@");
  size_t n;
  const char *name = word(&R, &n);
  if (!n) fail(&R, "the function's name");
  R.f = tir_func_new(a, arena_strndup(a, name, n));
  R.f->layout_table = R.layouts;
  read_params(&R);
  expect(&R, "num_warps=");
  R.f->num_warps = (int)integer(&R);
  if (!arch_valid_warps(R.f->num_warps)) fail(&R, "num_warps: a power of two from 1 to 32");
  expect(&R, "num_stages=");
  R.f->num_stages = (int)integer(&R);
  expect(&R, "{");
  Loc end;
  read_block(&R, R.f->body, &end);
  for (int i = 0; i < R.f->types.len; i++) /* numbers never defined: give them a type, unused */
    if (!R.f->types.data[i]) R.f->types.data[i] = type_scalar(a, DT_I32);
  skip(&R);
  if (peek(&R) >= 0) fail(&R, "the end of the text after the function");
  return R.f;
}
