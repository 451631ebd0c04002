/* tilec run: runs a kernel on the CPU interpreter or the GPU with arguments
 * from the command line, .npy inputs and outputs.
 *   tilec run FILE.tl [--kernel NAME] --grid G0[,G1[,G2]] [-D NAME=VALUE]...
 *             [--device cpu|gpu] [--passes=LIST] [--fp-fusion=on|off] -- ARG...
 * ARG is a number (a scalar), PATH.npy (an input buffer of the file's dtype),
 * out:PATH.npy:DTYPE:D0xD1... (an output buffer, poisoned before the run and
 * written to PATH after it), zeros:PATH.npy:DTYPE:D0xD1... (the same, starting
 * at zero: an atomic accumulator) or inout:PATH.npy (read from PATH, written
 * back to it after the run).  Both devices go through the same calls
 * (tile_malloc, copies, tile_kernel_create_file, tile_launch): with --device
 * cpu the context runs on the interpreter. */
#include "run.h"
#include "grid.h"

#include "npy.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_ARGS = 64, MAX_HIDDEN = 192, MAX_SLOTS = MAX_ARGS + MAX_HIDDEN };

struct RunArgs {
  const char *input, *device;
  unsigned grid[3];              /* the counts of --grid's items without names (1 past its items) */
  Grid grid_expr;                /* --grid, parsed */
  const char *grid_arg;          /* as given */
  int have_grid;
  tile_options opts;
  const char *defines[256];
  tile_arg args[MAX_ARGS];
  /* Buffers by slot: argument i's in slot i, the buffers a ptrs: argument points to (not passed) from
   * slot MAX_ARGS on. */
  NpyArray arrays[MAX_SLOTS];     /* inputs and outputs (an output's dtype and shape once parsed), freed at the end */
  const char *out_paths[MAX_SLOTS]; /* malloc'd */
  const char *in_paths[MAX_SLOTS]; /* the .npy inputs (inout: too), borrowed from argv or in_text */
  char in_text[MAX_SLOTS][1024];  /* an input PATH.npy:DTYPE's path */
  const char *in_dtypes[MAX_SLOTS]; /* its DTYPE, which the file's bytes are read as; NULL: the file's own */
  int zeros[MAX_SLOTS];           /* an output that starts at zero (zeros:), not poisoned */
  void *buffers[MAX_SLOTS];       /* each buffer's device copy */
  int ptrs_first[MAX_ARGS], ptrs_count[MAX_ARGS]; /* a ptrs: argument's slots; count 0: not one */
  char *ptrs_text[MAX_ARGS];      /* its list, malloc'd: its buffers' paths point into it */
  int n_args, n_hidden;
};

/* Whether slot i holds a buffer or a scalar of this run. */
static int slot_used(const RunArgs *r, int i) {
  return i < r->n_args || (i >= MAX_ARGS && i < MAX_ARGS + r->n_hidden);
}

static const char run_usage[] =
    "usage: tilec run FILE.tl [--kernel NAME] --grid G0[,G1[,G2]] [-D NAME=VALUE]...\n"
    "                 [--config N] [--num-warps N] [--num-stages N] [--device cpu|gpu]\n"
    "                 [--signature SIG] [--passes=LIST]\n"
    "                 [--fp-fusion=on|off] -- ARG...\n"
    "\n"
    "Runs a kernel on the CPU interpreter (--device cpu, the default) or the GPU\n"
    "(--device gpu; the kernel is compiled for the GPU present), through the same\n"
    "calls a C program makes (tile_malloc, tile_kernel_create_file, tile_launch).\n"
    "\n"
    "options:\n"
    "  --grid G0[,G1[,G2]]   the number of programs along each axis (required): each\n"
    "                        a count or an expression of the kernel's constexprs, as\n"
    "                        Triton's grid lambda: 'cdiv(1000,BLOCK_SIZE),4' or\n"
    "                        \"cdiv(300,meta['BM'])*cdiv(200,meta['BN'])\" (integers,\n"
    "                        names, + - * // % ( ), cdiv, min, max)\n"
    "  --kernel NAME         the kernel to run (default: the one function no other\n"
    "                        function calls)\n"
    "  -D NAME=VALUE         value of a tl.constexpr parameter\n"
    "  --config N            take the constexprs of @triton.autotune config N instead\n"
    "                        of tuning (the interpreter takes the first that compiles)\n"
    "  --num-warps N         warps per program, as a launch's num_warps= (default: the\n"
    "                        config's, else 4); --num-stages N likewise (1..16)\n"
    "  --device cpu|gpu      where it runs (default cpu)\n"
    "  --signature SIG       parameter types, instead of the arguments' own\n"
    "  --passes=LIST         tile IR passes to run (none: the IR as lowered)\n"
    "  --fp-fusion=on|off    x * y + z in fp32 and fp64 as one fma (on, default) or\n"
    "                        every product rounded (off), as 'tilec --help' says\n"
    "  --help                print this help and exit\n"
    "\n"
    "Each ARG, one per non-constexpr parameter, is one of:\n"
    "  NUMBER                a scalar: an integer (0x for hex), else a float\n"
    "  PATH.npy              an input buffer of the file's dtype and shape\n"
    "  PATH.npy:DTYPE        the file's bytes as DTYPE, of the same size (u8 as fp8e4nv\n"
    "                        or fp8e5, u16 as bf16: NumPy has no such dtypes)\n"
    "  out:PATH.npy:DTYPE:D0xD1...\n"
    "                        an output buffer of that dtype and shape, poisoned (NaN,\n"
    "                        or 0xA5 bytes) before the run, written to PATH after it\n"
    "  zeros:PATH.npy:DTYPE:D0xD1...\n"
    "                        the same, but starting at zero (an atomic accumulator)\n"
    "  inout:PATH.npy        read from PATH before the run, written back to it after\n"
    "  ptrs:BUF[,BUF...]     a u64 buffer of the addresses of buffers that are not\n"
    "                        arguments, each BUF a PATH.npy[:DTYPE], out:... or zeros:...\n"
    "                        (tutorial 08's table of matrices)\n"
    "No output may be the kernel's source or another argument's file.\n";

static int run_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "tilec run: error: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

/* ---- grids: counts, or expressions of the meta-parameters ---------------------------------- */

/* Item i of the grid as a number of programs along its axis: 1..2^31-1, else 0 with err->why set. */
static long long grid_count(const Grid *g, int i, GridLookup lookup, void *ctx, GridError *err) {
  long long v = grid_eval(g, i, lookup, ctx, err);
  if (!err->why && (v < 1 || v > 0x7fffffffLL)) err->why = "a count outside 1..2^31-1";
  return err->why ? 0 : v;
}

/* --grid: the items without names are counted now; the others in the specialisation launched. */
static int parse_grid(RunArgs *r, const char *s) {
  GridError e;
  char why[512];
  r->grid_arg = s;
  r->grid[0] = r->grid[1] = r->grid[2] = 1;
  if (grid_parse(s, &r->grid_expr, &e))
    return run_error("bad --grid '%s': %s (expected one to three counts or expressions)", s, grid_error_text(&e, why, sizeof why));
  for (int i = 0; i < r->grid_expr.n_items; i++) {
    if (r->grid_expr.has_name[i]) continue;
    long long v = grid_count(&r->grid_expr, i, NULL, NULL, &e);
    if (e.why) return run_error("bad --grid '%s': %s (expected one to three counts or expressions)", s, grid_error_text(&e, why, sizeof why));
    r->grid[i] = (unsigned)v;
  }
  return 0;
}

/* tile_launch_grid's function: the items with names evaluated in the specialisation launched. */
typedef struct GridUse {
  const RunArgs *r;
  char error[512];
} GridUse;

static int constexpr_value(void *k, const char *name, long long *value) {
  return tile_kernel_constexpr(k, name, value) == TILE_OK ? 0 : -1;
}

static void grid_of_meta(const tile_kernel *k, const tile_arg *args, int num_args, unsigned grid[3], void *user) {
  (void)args, (void)num_args;
  GridUse *use = user;
  for (int i = 0; i < 3; i++) {
    grid[i] = use->r->grid[i];
    if (i >= use->r->grid_expr.n_items || !use->r->grid_expr.has_name[i]) continue;
    GridError e;
    char why[256];
    long long v = grid_count(&use->r->grid_expr, i, constexpr_value, (void *)k, &e);
    grid[i] = e.why ? 0 : (unsigned)v;
    if (e.why && !use->error[0])
      snprintf(use->error, sizeof use->error, "--grid '%s': %s", use->r->grid_arg, grid_error_text(&e, why, sizeof why));
  }
}

/* The poison an output starts with: NaN for floats, 0xA5 bytes otherwise,
 * so an element the kernel never wrote is visible. */
static void poison(NpyArray *a) {
  if (a->dtype == NPY_F16 || a->dtype == NPY_BF16) {
    uint16_t nan = a->dtype == NPY_F16 ? 0x7e00 : 0x7fc0;
    for (size_t i = 0; i < a->count; i++) memcpy((char *)a->data + 2 * i, &nan, 2);
  } else if (a->dtype == NPY_F32) {
    for (size_t i = 0; i < a->count; i++) ((float *)a->data)[i] = NAN;
  } else if (a->dtype == NPY_F64) {
    for (size_t i = 0; i < a->count; i++) ((double *)a->data)[i] = NAN;
  } else {
    memset(a->data, 0xA5, a->count * a->elem_size);
  }
}

/* out:PATH.npy:DTYPE:D0xD1... and zeros:PATH.npy:DTYPE:D0xD1... */
static int parse_output(RunArgs *r, const char *arg, int slot) {
  char buf[1024];
  const char *kind = r->zeros[slot] ? "zeros" : "out";
  snprintf(buf, sizeof buf, "%s", strchr(arg, ':') + 1);
  char *dims = strrchr(buf, ':');
  if (!dims) return run_error("'%s': expected %s:PATH.npy:DTYPE:D0xD1...", arg, kind);
  *dims++ = 0;
  char *dtype = strrchr(buf, ':');
  if (!dtype) return run_error("'%s': expected %s:PATH.npy:DTYPE:D0xD1...", arg, kind);
  *dtype++ = 0;
  NpyDtype t;
  if (npy_dtype_from_name(dtype, &t)) return run_error("unknown dtype '%s' (expected e.g. fp32, fp16, i32)", dtype);
  int64_t shape[NPY_MAX_RANK];
  int rank = 0;
  for (char *p = dims; *p;) {
    char *end;
    errno = 0;
    long long d = strtoll(p, &end, 10);
    if (end == p || d < 0 || errno || rank == NPY_MAX_RANK)
      return run_error("bad shape '%s' (expected e.g. 1823x781)", dims);
    shape[rank++] = d;
    p = *end == 'x' ? end + 1 : end;
    if (*end && *end != 'x') return run_error("bad shape '%s' (expected e.g. 1823x781)", dims);
  }
  NpyArray *a = &r->arrays[slot];
  a->dtype = t;
  a->rank = rank;
  memcpy(a->shape, shape, sizeof shape);
  if (!(r->out_paths[slot] = strdup(buf))) return run_error("%s", "out of memory");
  return 0;
}

/* A scalar argument: an integer (decimal, or hex after 0x) that fits 64
 * bits, else a number strtod reads whole (1.5, 1e-3, inf).  1: *out is it;
 * 0: not a number; -1: a number that does not fit its type (said on stderr,
 * never rounded to the nearest value or to infinity without a word). */
static int parse_scalar(const char *s, int index, tile_arg *out) {
  const char *digits = s + (*s == '-' || *s == '+');
  int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
  char *end;
  errno = 0;
  long long i = strtoll(s, &end, base);
  if (*s && end != s && !*end) {
    if (errno == ERANGE)
      return fprintf(stderr, "tilec run: error: argument %d ('%s') does not fit a 64-bit integer\n", index, s), -1;
    *out = tile_int(i);
    return 1;
  }
  errno = 0;
  double f = strtod(s, &end);
  if (!*s || end == s || *end) return 0;
  if (errno == ERANGE && (isinf(f) || f == 0)) /* subnormals are kept */
    return fprintf(stderr, "tilec run: error: argument %d ('%s') is out of the range of a 64-bit float\n", index, s), -1;
  *out = tile_float(f);
  return 1;
}

static int is_npy(const char *path) {
  size_t n = strlen(path);
  return n >= 4 && !strcmp(path + n - 4, ".npy");
}

/* inout:PATH.npy: an input whose buffer is written back to its file. */
static int parse_inout(RunArgs *r, const char *arg, int slot) {
  const char *path = arg + 6;
  if (!is_npy(path)) return run_error("'%s': expected inout:PATH.npy", arg);
  r->in_paths[slot] = path;
  if (!(r->out_paths[slot] = strdup(path))) return run_error("%s", "out of memory");
  return 0;
}

/* A buffer's argument into `slot`: out:, zeros:, inout:, PATH.npy or PATH.npy:DTYPE. */
static int parse_buffer(RunArgs *r, const char *arg, int slot) {
  if (!strncmp(arg, "out:", 4)) return parse_output(r, arg, slot);
  if (!strncmp(arg, "zeros:", 6)) return r->zeros[slot] = 1, parse_output(r, arg, slot);
  if (!strncmp(arg, "inout:", 6)) return parse_inout(r, arg, slot);
  const char *as = strstr(arg, ".npy:");
  if (as && strlen(arg) < sizeof r->in_text[0]) { /* PATH.npy:DTYPE */
    snprintf(r->in_text[slot], sizeof r->in_text[0], "%.*s", (int)(as + 4 - arg), arg);
    NpyDtype t;
    if (npy_dtype_from_name(as + 5, &t)) return run_error("'%s': unknown dtype '%s' (expected e.g. fp8e5, bf16)", arg, as + 5);
    r->in_dtypes[slot] = as + 5;
    r->in_paths[slot] = r->in_text[slot];
    return 0;
  }
  if (!is_npy(arg)) return run_error("argument '%s' is not a number, a .npy file, out:, zeros:, inout: or ptrs:...", arg);
  r->in_paths[slot] = arg;
  return 0;
}

/* ptrs:BUF,BUF,...: each BUF a buffer of its own, in the hidden slots; the argument their addresses. */
static int parse_ptrs(RunArgs *r, const char *arg, int slot) {
  char *list = r->ptrs_text[slot] = strdup(arg + 5); /* the items' paths point into it until the end */
  if (!list) return run_error("%s", "out of memory");
  r->ptrs_first[slot] = MAX_ARGS + r->n_hidden;
  char *rest = NULL;
  for (char *item = strtok_r(list, ",", &rest); item; item = strtok_r(NULL, ",", &rest)) {
    if (r->n_hidden == MAX_HIDDEN) return run_error("'%.40s...': more than %d buffers behind ptrs: arguments", arg, MAX_HIDDEN);
    int hidden = MAX_ARGS + r->n_hidden++;
    if (!strncmp(item, "ptrs:", 5)) return run_error("'%s': a ptrs: argument cannot hold another", arg);
    if (parse_buffer(r, item, hidden)) return 1;
    r->ptrs_count[slot]++;
  }
  if (!r->ptrs_count[slot]) return run_error("'%s': expected ptrs:BUF[,BUF...]", arg);
  r->arrays[slot].dtype = NPY_U64;
  r->arrays[slot].rank = 1;
  r->arrays[slot].shape[0] = r->ptrs_count[slot];
  return 0;
}

static int parse_kernel_arg(RunArgs *r, const char *arg) {
  if (r->n_args == MAX_ARGS) return run_error("%s", "too many arguments (the limit is 64)");
  int slot = r->n_args++;
  if (!strncmp(arg, "ptrs:", 5)) return parse_ptrs(r, arg, slot);
  int scalar = parse_scalar(arg, slot + 1, &r->args[slot]);
  if (scalar) return scalar < 0;
  return parse_buffer(r, arg, slot);
}

/* An input's elements read as `dtype`, of their size: the bits NumPy cannot name (fp8, bf16). */
static int reinterpret(NpyArray *a, const char *dtype, const char *path) {
  NpyDtype t;
  npy_dtype_from_name(dtype, &t); /* checked when parsed */
  if (npy_dtype_size(t) != a->elem_size)
    return run_error("'%s:%s': its elements are %s, of %zu bytes, not %zu as %s's", path, dtype,
                     npy_dtype_name(a->dtype), a->elem_size, npy_dtype_size(t), dtype);
  a->dtype = t;
  return 0;
}

/* Whether slot i holds a buffer: a file's, an output, or a ptrs: argument's addresses. */
static int is_buffer(const RunArgs *r, int i) {
  return slot_used(r, i) && (r->in_paths[i] || r->out_paths[i] || (i < MAX_ARGS && r->ptrs_count[i]));
}

/* Reads the inputs and makes the outputs, poisoned (zeros: zeroed), and the ptrs: arguments' tables
 * (their addresses come once the buffers exist): the files parsing only named. */
static int load_buffers(RunArgs *r) {
  for (int i = 0; i < MAX_SLOTS; i++) {
    if (!is_buffer(r, i)) continue;
    NpyArray *a = &r->arrays[i], spec = *a; /* npy_alloc clears *a before reading the shape */
    char err[512];
    if (r->in_paths[i] ? npy_read(r->in_paths[i], a, err, sizeof err)
                       : npy_alloc(a, spec.dtype, spec.rank, spec.shape, err, sizeof err))
      return run_error("%s", err);
    if (r->out_paths[i] && !r->in_paths[i] && !r->zeros[i]) poison(a); /* npy_alloc's memory is zeroed */
    if (r->in_dtypes[i] && reinterpret(a, r->in_dtypes[i], r->in_paths[i])) return 1;
    if (i < MAX_ARGS) r->args[i] = tile_buffer(a->data, npy_dtype_name(a->dtype), a->count);
  }
  return 0;
}

/* An output written over the kernel's source, an input or another output
 * would destroy it (compared by identity: tilec_same_file); an inout:
 * argument's own input is its output. */
static int clobbers(const RunArgs *r) {
  for (int i = 0; i < MAX_SLOTS; i++) {
    const char *out = slot_used(r, i) ? r->out_paths[i] : NULL;
    if (!out) continue;
    if (tilec_same_file(out, r->input)) return run_error("cannot write '%s': it is the kernel's source", out);
    for (int j = 0; j < MAX_SLOTS; j++) {
      const char *other = j == i || !slot_used(r, j) ? NULL : r->in_paths[j] ? r->in_paths[j] : j < i ? r->out_paths[j] : NULL;
      if (other && tilec_same_file(out, other))
        return run_error("cannot write '%s': it is also another argument's file", out);
    }
  }
  return 0;
}

static int parse_run_args(int argc, char **argv, RunArgs *r) {
  tile_options_init(&r->opts);
  r->opts.defines = r->defines;
  r->device = "cpu";
  static const char *const valued[] = {"--kernel",   "--grid",       "--device",     "--signature", "--passes",
                                       "--config",   "--num-warps",  "--num-stages", "-D",          NULL};
  int i = 2;
  for (; i < argc && strcmp(argv[i], "--"); i++) {
    const char *a = argv[i], *missing = tilec_missing_value(argc, argv, i, valued);
    if (missing) return run_error("%s needs a value", missing);
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--kernel") && next) r->opts.kernel = argv[++i];
    else if (!strcmp(a, "--grid") && next) {
      if (parse_grid(r, argv[++i])) return 1;
      r->have_grid = 1;
    } else if (!strcmp(a, "--config") && next) {
      if (!tilec_integer(argv[++i], 0, (1 << 20) - 1, &r->opts.config)) return run_error("bad --config '%s' (expected 0..2^20-1)", argv[i]);
    } else if (!strcmp(a, "--num-warps") && next) {
      if (!tilec_integer(argv[++i], 1, 32, &r->opts.num_warps) || (r->opts.num_warps & (r->opts.num_warps - 1)))
        return run_error("bad --num-warps '%s' (expected a power of two from 1 to 32)", argv[i]);
    } else if (!strcmp(a, "--num-stages") && next) {
      if (!tilec_integer(argv[++i], 1, 16, &r->opts.num_stages)) return run_error("bad --num-stages '%s' (expected 1..16)", argv[i]);
    } else if (!strcmp(a, "--device") && next) r->device = argv[++i];
    else if (!strcmp(a, "--signature") && next) r->opts.signature = argv[++i];
    else if (!strncmp(a, "--passes=", 9)) r->opts.passes = a + 9; /* --passes=none runs the IR as lowered */
    else if (!strncmp(a, "--fp-fusion=", 12)) {
      if (!tilec_fp_fusion(a + 12, &r->opts.fp_fusion)) return run_error("--fp-fusion needs on or off, got '%s'", a + 12);
    }
    else if (!strncmp(a, "-D", 2)) {
      if (r->opts.num_defines == 256) return run_error("%s", "too many -D options");
      r->defines[r->opts.num_defines++] = a[2] ? a + 2 : (next ? argv[++i] : "");
    } else if (a[0] == '-') return run_error("unknown option '%s'", a);
    else if (r->input) return run_error("more than one input file ('%s')", a);
    else r->input = a;
  }
  if (!r->input) return run_error("%s", "no input file");
  if (!r->have_grid) return run_error("%s", "--grid is required");
  if (strcmp(r->device, "cpu") && strcmp(r->device, "gpu")) return run_error("unknown --device '%s' (cpu or gpu)", r->device);
  for (i++; i < argc; i++)
    if (parse_kernel_arg(r, argv[i])) return 1;
  return clobbers(r);
}

char *tilec_read_file(const char *path, size_t *len) {
  enum { MAX_BYTES = 64u << 20 };
  FILE *f = fopen(path, "rb");
  size_t cap = 1 << 16;
  char *s = f ? malloc(cap) : NULL;
  *len = 0;
  for (size_t got; s && (got = fread(s + *len, 1, cap - 1 - *len, f)) > 0;) {
    *len += got;
    if (*len == cap - 1) {
      char *bigger = cap < MAX_BYTES ? realloc(s, cap *= 2) : NULL;
      if (!bigger) free(s);
      s = bigger;
    }
  }
  int saved = errno, read_error = f && ferror(f);
  if (f) fclose(f);
  if (f && s && !read_error) {
    s[*len] = 0;
    return s;
  }
  free(s);
  if (f && !read_error && cap >= MAX_BYTES)
    fprintf(stderr, "tilec: error: cannot read '%s': it is larger than %u MiB\n", path, MAX_BYTES >> 20);
  else fprintf(stderr, "tilec: error: cannot read '%s': %s\n", path, strerror(saved));
  return NULL;
}

/* A path's identity: the file's (st_dev, st_ino) and *name NULL, or, for a
 * file not made yet, its folder's and *name its last component. */
static int identity(const char *path, struct stat *st, const char **name) {
  *name = NULL;
  if (stat(path, st) == 0) return 0;
  const char *slash = strrchr(path, '/');
  char dir[4096];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 1, slash ? path : ".");
  *name = slash ? slash + 1 : path;
  return stat(dir, st);
}

const char *tilec_missing_value(int argc, char **argv, int i, const char *const *options) {
  for (; *options; options++) {
    size_t n = strlen(*options);
    if (strncmp(argv[i], *options, n)) continue;
    const char *rest = argv[i] + n, *next = i + 1 < argc ? argv[i + 1] : NULL;
    int empty_ok = !strcmp(*options, "--signature"); /* "": a kernel without run-time parameters */
    if ((*rest == '=' && !rest[1] && !empty_ok) || (!*rest && (!next || (!*next && !empty_ok) || !strcmp(next, "--"))))
      return *options;
  }
  return NULL;
}

int tilec_integer(const char *v, long lo, long hi, int *out) {
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (!*v || *end || errno || n < lo || n > hi) return 0;
  *out = (int)n;
  return 1;
}

int tilec_fp_fusion(const char *value, tile_fp_fusion *out) {
  if (strcmp(value, "on") && strcmp(value, "off")) return 0;
  *out = strcmp(value, "off") ? TILE_FP_FUSION_ON : TILE_FP_FUSION_OFF;
  return 1;
}

int tilec_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  const char *na, *nb;
  if (identity(a, &sa, &na) || identity(b, &sb, &nb)) return !strcmp(a, b);
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && (na == nb || (na && nb && !strcmp(na, nb)));
}

tile_context *tilec_context(const char *who) {
  tile_context *ctx = NULL;
  if (tile_context_create(&ctx) == TILE_OK) return ctx;
  fprintf(stderr, "%s: error: %s\n", who, ctx ? tile_error(ctx) : "out of memory");
  tile_context_destroy(ctx);
  return NULL;
}

/* A successful call's warnings and notes (the source's, the compile's, the autotuner's) on stderr
 * now: the next call on the context starts its diagnostics afresh. */
static tile_status relay(tile_context *ctx, tile_status s) {
  if (s == TILE_OK) fputs(tile_diagnostics(ctx), stderr);
  return s;
}

static int fail(tile_context *ctx, tile_status s) {
  fputs(tile_diagnostics(ctx), stderr);
  if (s != TILE_ERROR_COMPILE) fprintf(stderr, "tilec run: error: %s\n", tile_error(ctx));
  return 1;
}

static size_t bytes_of(const NpyArray *a) { return a->count * a->elem_size; }

/* Each buffer to the device (outputs too: their poison shows what the kernel did not write, their zeros are
 * what an accumulator starts from), each ptrs: argument's table with the addresses its buffers got. */
static tile_status to_device(tile_context *ctx, RunArgs *r) {
  for (int i = 0; i < MAX_SLOTS; i++) {
    if (!is_buffer(r, i)) continue;
    tile_status s = tile_malloc(ctx, &r->buffers[i], bytes_of(&r->arrays[i]));
    if (s != TILE_OK) return s;
    if (i < MAX_ARGS) r->args[i].data = r->buffers[i];
  }
  for (int i = 0; i < r->n_args; i++)
    for (int k = 0; k < r->ptrs_count[i]; k++)
      ((uint64_t *)r->arrays[i].data)[k] = (uint64_t)(uintptr_t)r->buffers[r->ptrs_first[i] + k];
  for (int i = 0; i < MAX_SLOTS; i++) {
    tile_status s = is_buffer(r, i) ? tile_memcpy_to_device(ctx, r->buffers[i], r->arrays[i].data, bytes_of(&r->arrays[i]))
                                    : TILE_OK;
    if (s != TILE_OK) return s;
  }
  return TILE_OK;
}

static tile_status from_device(tile_context *ctx, RunArgs *r) {
  for (int i = 0; i < MAX_SLOTS; i++) {
    if (!slot_used(r, i) || !r->out_paths[i]) continue;
    tile_status s = tile_memcpy_to_host(ctx, r->arrays[i].data, r->buffers[i], bytes_of(&r->arrays[i]));
    if (s != TILE_OK) return s;
  }
  return TILE_OK;
}

static int write_outputs(RunArgs *r) {
  for (int i = 0; i < MAX_SLOTS; i++) {
    if (!slot_used(r, i) || !r->out_paths[i]) continue;
    char err[512];
    if (npy_write(r->out_paths[i], &r->arrays[i], err, sizeof err)) return run_error("%s", err);
  }
  return 0;
}

static int execute(RunArgs *r) {
  tile_context *ctx = tilec_context("tilec run");
  if (!ctx) return 1;
  tile_kernel *k = NULL;
  tile_status s = !strcmp(r->device, "cpu") ? tile_context_use_cpu(ctx) : TILE_OK;
  if (s == TILE_OK) s = to_device(ctx, r);
  if (s == TILE_OK) s = relay(ctx, tile_kernel_create_file(ctx, r->input, &r->opts, &k));
  GridUse grid = {r, ""};
  if (s == TILE_OK) s = relay(ctx, tile_launch_grid(k, grid_of_meta, &grid, NULL, r->args, r->n_args));
  if (s == TILE_OK && grid.error[0]) {
    tile_context_destroy(ctx);
    return run_error("%s", grid.error);
  }
  if (s == TILE_OK) s = tile_synchronize(ctx);
  if (s == TILE_OK) s = from_device(ctx, r);
  int rc = s == TILE_OK ? write_outputs(r) : fail(ctx, s);
  tile_context_destroy(ctx); /* frees the kernel and the device buffers */
  return rc;
}

RunArgs *tilec_run_parse(int argc, char **argv) {
  RunArgs *r = calloc(1, sizeof *r);
  if (!r) {
    run_error("%s", "out of memory");
    return NULL;
  }
  if (!parse_run_args(argc, argv, r)) return r;
  tilec_run_free(r);
  return NULL;
}

void tilec_run_free(RunArgs *r) {
  if (!r) return;
  for (int i = 0; i < MAX_SLOTS; i++) {
    npy_free(&r->arrays[i]);
    free((char *)r->out_paths[i]);
  }
  for (int i = 0; i < MAX_ARGS; i++) free(r->ptrs_text[i]);
  free(r);
}

/* --help before the `--` that starts the kernel's arguments. */
static int wants_help(int argc, char **argv) {
  for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

int tilec_run(int argc, char **argv) {
  if (wants_help(argc, argv)) return fputs(run_usage, stdout), 0;
  RunArgs *r = tilec_run_parse(argc, argv);
  int rc = !r || load_buffers(r) || execute(r);
  tilec_run_free(r);
  return rc;
}
