/* Generated launchers: tilec pack --launcher STEM writes STEM.h and STEM.c,
 * which embed the bundle as bytes and give the kernel two typed functions:
 *
 *   tile_status add_kernel_load(tile_context *ctx, tile_kernel **out);
 *   tile_status add_kernel_launch(tile_kernel *k, tile_stream stream, float *x_ptr, size_t x_ptr_count,
 *                                 ..., int32_t n_elements);
 *
 * A buffer parameter takes its device pointer and its element count (the
 * interpreter checks every access against it); the grid comes from --grid's
 * expression over the integer parameters and the constexprs the launch
 * chose (Triton's `lambda meta: (triton.cdiv(n, meta['BLOCK']),)` written as
 * `cdiv(n, BLOCK)` or as it is), or, without --grid, from a `const unsigned grid[3]`
 * argument.  The runtime checks the arguments as tile_launch always does. */
#include "launcher.h"
#include "grid.h"
#include "../../runtime/json.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_PARAMS = 64 };

typedef struct Param {
  const char *name, *type;  /* "x_ptr", "*fp32" */
} Param;

typedef struct Kernel {
  const char *name;
  Param params[MAX_PARAMS];  /* in the kernel's order, constexprs left out */
  int n;
  const Json *constexprs;    /* the metadata's object of constexpr values */
} Kernel;

/* The element types, from the one table (lang/dtypes.def): a signature's
 * name, bits and kind (B)OOL, (S)INT, (U)INT or (F)LOAT. */
static const struct {
  const char *name;
  int bits;
  char kind;
} dtypes[] = {
#define DTYPE(id, name, triton, bits, kind) {name, bits, #kind[0]},
#include "dtypes.def"
#undef DTYPE
};

static int dtype_index(const char *name) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (!strcmp(dtypes[i].name, name)) return (int)i;
  return -1;
}

/* A dtype's C type: fp16 and bf16 as their bits (uint16_t), i1 as a byte. */
static const char *c_type(const char *name) {
  static const char *const sint[] = {"int8_t", "int16_t", "int32_t", "int64_t"};
  static const char *const uint[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t"};
  int i = dtype_index(name);
  if (i < 0) return NULL;
  int width = dtypes[i].bits <= 8 ? 0 : dtypes[i].bits == 16 ? 1 : dtypes[i].bits == 32 ? 2 : 3;
  switch (dtypes[i].kind) {
  case 'F': return dtypes[i].bits == 32 ? "float" : dtypes[i].bits == 64 ? "double" : "uint16_t";
  case 'U': return uint[width];
  default: return sint[width];
  }
}

static int is_float(const char *name) {
  int i = dtype_index(name);
  return i >= 0 && dtypes[i].kind == 'F';
}

/* Python names that C reserves, and the launcher's own: a parameter so named cannot be a C parameter. */
static int is_c_keyword(const char *name) {
  static const char *const words[] = {"auto", "case", "char", "const", "default", "do", "double", "enum", "extern",
                                      "float", "goto", "inline", "int", "long", "register", "restrict", "short",
                                      "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
                                      "unsigned", "void", "volatile", "args", "k", "stream", "grid"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (!strcmp(words[i], name)) return 1;
  return 0;
}

static int fail(const char *fmt, const char *what) {
  fprintf(stderr, "tilec: error: --launcher: ");
  fprintf(stderr, fmt, what);
  fputc('\n', stderr);
  return 1;
}

/* The parameters from the metadata: "params" and "specialized" ones (':1'), by position. */
static int read_kernel(Arena *a, const char *metadata, Kernel *k) {
  char err[200];
  const Json *root = json_parse(a, metadata, strlen(metadata), err, sizeof err);
  const Json *name = json_get(root, "name"), *constexprs = json_get(root, "constexprs");
  const char *lists[] = {"params", "specialized"};
  if (!root || !name || name->kind != JSON_STRING) return fail("the kernel's metadata does not read: %s", err);
  k->name = name->s;
  k->constexprs = constexprs;
  for (int l = 0; l < 2; l++) {
    const Json *list = json_get(root, lists[l]);
    for (int i = 0; list && list->kind == JSON_ARRAY && i < list->len; i++) {
      const Json *pn = json_get(list->items[i], "name"), *pt = json_get(list->items[i], "type");
      const Json *pos = json_get(list->items[i], "position");
      if (!pn || !pt || !pos || !pos->is_int || pos->i < 0 || pos->i >= MAX_PARAMS || k->params[pos->i].name)
        return fail("%s", "the kernel's metadata has a parameter without a name, type or place");
      k->params[pos->i] = (Param){pn->s, pt->s};
      if (pos->i >= k->n) k->n = (int)pos->i + 1;
    }
  }
  for (int i = 0; i < k->n; i++)
    if (!k->params[i].name) return fail("%s", "the kernel's metadata leaves a parameter out");
  return 0;
}

static int param_index(const Kernel *k, const char *name, size_t len) {
  for (int i = 0; i < k->n; i++)
    if (strlen(k->params[i].name) == len && !strncmp(k->params[i].name, name, len)) return i;
  return -1;
}

static int is_constexpr(const Kernel *k, const char *name, size_t len) {
  for (int i = 0; k->constexprs && k->constexprs->kind == JSON_OBJECT && i < k->constexprs->len; i++)
    if (strlen(k->constexprs->keys[i]) == len && !strncmp(k->constexprs->keys[i], name, len)) return 1;
  return 0;
}

/* Item i of the grid in C: names become the kernel's integer arguments or the grid function's
 * variables (v_NAME, the constexprs), cdiv/min/max its helpers, `//` C's division (grid sizes are not
 * negative), numbers long long.  *used: whether a constexpr is read. */
static int put_grid_node(const Kernel *k, const Grid *g, int i, Buf *out, unsigned char *used) {
  const GridNode *n = &g->nodes[i];
  static const char *const ops[] = {[GRID_ADD] = " + ", [GRID_SUB] = " - ", [GRID_MUL] = " * ", [GRID_DIV] = " / ",
                                    [GRID_REM] = " % "};
  static const char *const calls[] = {[GRID_CDIV] = "tile_grid_cdiv", [GRID_MIN] = "tile_grid_min", [GRID_MAX] = "tile_grid_max"};
  if (n->kind == GRID_NUMBER) {
    buf_printf(out, "%lldLL", n->value);
    return 0;
  }
  if (n->kind == GRID_NAME) {
    int param = param_index(k, n->name, strlen(n->name));
    if (param >= 0 && k->params[param].type[0] != '*' && !is_float(k->params[param].type)) {
      buf_printf(out, "(long long)args[%d].i", param);
    } else if (is_constexpr(k, n->name, strlen(n->name))) {
      buf_printf(out, "v_%s", n->name);
      *used = 1;
    } else {
      return fail("--grid: '%s' is neither an integer parameter of the kernel nor one of its constexprs", n->name);
    }
    return 0;
  }
  int call = n->kind == GRID_CDIV || n->kind == GRID_MIN || n->kind == GRID_MAX;
  buf_printf(out, "%s(", call ? calls[n->kind] : "");
  if (put_grid_node(k, g, n->a, out, used)) return 1;
  buf_puts(out, call ? ", " : ops[n->kind]);
  if (put_grid_node(k, g, n->b, out, used)) return 1;
  buf_puts(out, ")");
  return 0;
}

/* The grid's items in C, comma-separated, or 1 with the reason on stderr. */
static int translate(const Kernel *k, const char *grid, Buf *out, unsigned char *used) {
  Grid *g = malloc(sizeof *g);
  GridError e;
  char why[512];
  int rc = !g ? fail("%s", "out of memory") : grid_parse(grid, g, &e) ? fail("--grid: %s", grid_error_text(&e, why, sizeof why)) : 0;
  for (int i = 0; !rc && i < g->n_items; i++) {
    if (i) buf_puts(out, ", ");
    rc = put_grid_node(k, g, g->item[i], out, used);
  }
  free(g);
  return rc;
}

static void put_bytes(Buf *b, const unsigned char *data, size_t size) {
  for (size_t i = 0; i < size; i++) buf_printf(b, "%s0x%02x,", i % 16 ? " " : "\n    ", data[i]);
}

static void put_params(Buf *b, const Kernel *k) {
  for (int i = 0; i < k->n; i++) {
    const Param *p = &k->params[i];
    if (p->type[0] == '*') buf_printf(b, ", %s *%s, size_t %s_count", c_type(p->type + 1), p->name, p->name);
    else buf_printf(b, ", %s %s", c_type(p->type), p->name);
  }
}

static void put_args(Buf *b, const Kernel *k) {
  for (int i = 0; i < k->n; i++) {
    const Param *p = &k->params[i];
    if (p->type[0] == '*') buf_printf(b, "%s      tile_buffer(%s, \"%s\", %s_count)", i ? ",\n" : "", p->name, p->type + 1, p->name);
    else buf_printf(b, "%s      tile_%s(%s)", i ? ",\n" : "", is_float(p->type) ? "float" : "int", p->name);
  }
}

static void put_header(Buf *h, const Kernel *k, const char *source_path, const char *grid) {
  buf_printf(h, "/* Generated by tilec pack from %s: the kernel %s, bundled. Do not edit. */\n", source_path, k->name);
  buf_printf(h, "#ifndef TILE_GENERATED_%s_H\n#define TILE_GENERATED_%s_H\n\n", k->name, k->name);
  buf_puts(h, "#include <stddef.h>\n#include <stdint.h>\n#include <tile/tile.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
  buf_printf(h, "/* Loads the bundled kernel into ctx (tile_kernel_destroy frees it). */\n");
  buf_printf(h, "tile_status %s_load(tile_context *ctx, tile_kernel **out);\n\n", k->name);
  buf_printf(h, "/* Launches it on `stream` (NULL: the default stream) over %s%s; a buffer is\n", grid ? "the grid " : "", grid ? grid : "`grid`");
  buf_puts(h, " * device memory (host memory on the interpreter) of `_count` elements. */\n");
  buf_printf(h, "tile_status %s_launch(tile_kernel *k, tile_stream stream%s", k->name, grid ? "" : ", const unsigned grid[3]");
  put_params(h, k);
  buf_puts(h, ");\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

/* The helpers the grid expression calls, and only those: an unused static function is a warning
 * (clang's -Wunused-function) in the user's build. */
static void put_grid_helpers(Buf *c, const char *expr) {
  static const char *const helpers[][2] = {
      {"tile_grid_cdiv(", "static inline long long tile_grid_cdiv(long long a, long long b) { return b > 0 ? (a + b - 1) / b : 0; }\n"},
      {"tile_grid_min(", "static inline long long tile_grid_min(long long a, long long b) { return a < b ? a : b; }\n"},
      {"tile_grid_max(", "static inline long long tile_grid_max(long long a, long long b) { return a > b ? a : b; }\n"},
  };
  for (size_t i = 0; i < sizeof helpers / sizeof helpers[0]; i++)
    if (strstr(expr, helpers[i][0])) buf_puts(c, helpers[i][1]);
  buf_puts(c, "\n");
}

static int put_source(Buf *c, const Kernel *k, const char *stem_base, const char *grid, const void *bundle, size_t size) {
  buf_printf(c, "/* Generated by tilec pack: the kernel %s, bundled (docs/abi.md, section 12). Do not edit. */\n", k->name);
  buf_printf(c, "#include \"%s.h\"\n\n", stem_base);
  buf_printf(c, "static const unsigned char %s_bundle[%zu] = {", k->name, size);
  put_bytes(c, bundle, size);
  buf_printf(c, "\n};\n\ntile_status %s_load(tile_context *ctx, tile_kernel **out) {\n", k->name);
  buf_printf(c, "  return tile_kernel_load_bundle(ctx, \"%s\", %s_bundle, sizeof %s_bundle, out);\n}\n\n", k->name, k->name, k->name);
  if (grid) {
    Buf expr;
    char storage[4096];
    unsigned char used = 0;
    buf_init_fixed(&expr, storage, sizeof storage);
    if (translate(k, grid, &expr, &used)) return 1;
    put_grid_helpers(c, buf_cstr(&expr));
    buf_printf(c, "/* grid = %s */\n", grid);
    buf_printf(c, "static void %s_grid(const tile_kernel *k, const tile_arg *args, int num_args, unsigned grid[3], void *user) {\n", k->name);
    for (int i = 0; used && k->constexprs && i < k->constexprs->len; i++)
      buf_printf(c, "  long long v_%s = 0;\n  tile_kernel_constexpr(k, \"%s\", &v_%s);\n", k->constexprs->keys[i],
                 k->constexprs->keys[i], k->constexprs->keys[i]);
    buf_printf(c, "  long long g[3] = {%s};\n", buf_cstr(&expr));
    buf_puts(c, "  (void)args, (void)num_args, (void)user;\n");
    buf_puts(c, "  for (int i = 0; i < 3; i++) /* past the GPU's limits: 0, which the launch refuses */\n");
    buf_puts(c, "    grid[i] = i > 0 && !g[i] ? 1 : g[i] > 0 && g[i] <= 0x7fffffff ? (unsigned)g[i] : 0;\n}\n\n");
  }
  buf_printf(c, "tile_status %s_launch(tile_kernel *k, tile_stream stream%s", k->name, grid ? "" : ", const unsigned grid[3]");
  put_params(c, k);
  buf_printf(c, ") {\n  tile_arg args[%d] = {\n", k->n);
  put_args(c, k);
  if (grid) buf_printf(c, "};\n  return tile_launch_grid(k, %s_grid, NULL, stream, args, %d);\n}\n", k->name, k->n);
  else buf_printf(c, "};\n  return tile_launch(k, grid, stream, args, %d);\n}\n", k->n);
  return 0;
}

static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  size_t len = strlen(text);
  if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
    fprintf(stderr, "tilec: error: cannot write '%s': %s\n", path, strerror(errno));
    return 1;
  }
  return 0;
}

int launcher_write(const char *stem, const char *source_path, const char *metadata, const char *grid,
                   const void *bundle, size_t size) {
  Arena a;
  arena_init(&a, (size_t)1 << 30);
  Kernel k = {0};
  Buf h, c;
  buf_init(&h, &a), buf_init(&c, &a);
  const char *base = strrchr(stem, '/') ? strrchr(stem, '/') + 1 : stem;
  int rc = read_kernel(&a, metadata, &k);
  for (int i = 0; !rc && i < k.n; i++)
    if (!c_type(k.params[i].type + (k.params[i].type[0] == '*')))
      rc = fail("parameter of type '%s' has no C type here", k.params[i].type);
    else if (is_c_keyword(k.params[i].name))
      rc = fail("the parameter '%s' cannot be a C parameter of that name (a C keyword or the launcher's own): rename it",
                k.params[i].name);
  if (!rc) put_header(&h, &k, source_path, grid);
  if (!rc) rc = put_source(&c, &k, base, grid, bundle, size);
  if (!rc && (h.failed || c.failed)) rc = fail("%s", "out of memory");
  if (!rc) rc = write_file(arena_printf(&a, "%s.h", stem), buf_cstr(&h)) ||
                write_file(arena_printf(&a, "%s.c", stem), buf_cstr(&c));
  arena_free(&a);
  return rc;
}
