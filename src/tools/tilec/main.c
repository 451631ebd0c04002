/* tilec: the tile compiler's command line.  It maps flags onto
 * tile_options and calls the public API; it holds no compiler logic. */
#include "tile/tile.h"
#include "launcher.h"
#include "run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_DEFINES = 256, MAX_SIGNATURES = 64, MAX_ARCHS = 16 };

typedef struct Args {
  const char *input, *output, *emit, *metadata;
  tile_options opts;
  const char *defines[MAX_DEFINES];
  int list_builtins;
  int pack;                  /* tilec pack: --signature may repeat, --arch is a list, --config all */
  const char *launcher, *grid; /* tilec pack --launcher STEM [--grid EXPR]: STEM.h and STEM.c */
  const char *signatures[MAX_SIGNATURES];
  int num_signatures;
  char archs_text[256];
  const char *archs[MAX_ARCHS];
  int num_archs;
} Args;

static const char usage[] =
    "usage: tilec FILE.tl -o KERNEL.cubin|KERNEL.ptx [options]\n"
    "       tilec FILE.tl --emit=STAGE [-o FILE] [options]\n"
    "       tilec run FILE.tl [--kernel NAME] --grid G0[,G1[,G2]] [-D NAME=VALUE]...\n"
    "                 [--device cpu|gpu] [--passes=LIST] -- ARG...\n"
    "       tilec pack FILE.tl --signature SIG [--signature SIG]... --arch ARCH[,ARCH]...\n"
    "                  [--kernel NAME] [-D NAME=VALUE]... [--config N|all] -o KERNEL.tlk\n"
    "                  [--launcher STEM [--grid EXPR]]\n"
    "\n"
    "Compiles a kernel written in the tile language (Triton's Python DSL).\n"
    "FILE.tir is read as tile IR text, FILE.tgir as GPU-layout IR text (as\n"
    "--emit=tir and --emit=tgir print them), so passes can be run on IR.\n"
    "\n"
    "options:\n"
    "  -o FILE               write the output to FILE instead of stdout (- is\n"
    "                        stdout, as for a C compiler); without\n"
    "                        --emit, FILE.cubin is a cubin (ptxas) and FILE.ptx PTX,\n"
    "                        each with its metadata JSON beside it (FILE.json);\n"
    "                        no output may be an input file\n"
    "  --emit=STAGE          the stage to write: tokens, ast, tir, axisinfo, tgir,\n"
    "                        llir, ptx, metadata (JSON, docs/abi.md), cubin (needs -o)\n"
    "  --metadata FILE       where the metadata JSON of a cubin or PTX goes\n"
    "                        (ast is typed and specialised when the parameters have\n"
    "                        types, from --signature or annotations)\n"
    "  --kernel NAME         the kernel to compile (default: the one function no\n"
    "                        other function calls)\n"
    "  --signature SIG       parameter types in Triton's AOT form, one per\n"
    "                        non-constexpr parameter: \"*fp32:16,*fp32,i32\"\n"
    "  -D NAME=VALUE         value of a tl.constexpr parameter (1024, 0.5, True,\n"
    "                        \"leaky_relu\", tl.float16)\n"
    "  --config N            take constexpr values from the kernel's Nth\n"
    "                        @triton.autotune config\n"
    "  --arch ARCH           target (default sm_90; sm_90a adds wgmma and TMA; sim and\n"
    "                        sim90 are host LLVM IR for the test simulator, standing\n"
    "                        for sm_80 and sm_90a):"
#define ARCH(name, cc, wgmma, tma, sim, smem_kib, threads, programs, sms) " " name
#include "support/arch.def"
#undef ARCH
    "\n"
    "  --libdevice FILE      the libdevice.10.bc to link math functions from (default\n"
    "                        $TILE_LIBDEVICE_PATH, else in $CUDA_HOME or /usr/local/cuda)\n"
    "  --num-warps N         warps per program (default 4, or the config's)\n"
    "  --num-stages N        software-pipelining depth (default 3, or the config's)\n"
    "  --maxnreg N           registers a thread may use, 24 to 255 (PTX .maxnreg;\n"
    "                        default: the config's maxnreg, else no cap)\n"
    "  --refill=WHEN         when pipelined loops with a dot refill their buffers:\n"
    "                        early (one buffer more where it fits), late (after the\n"
    "                        iteration's reads and a barrier), auto (default: the\n"
    "                        compiler's choice)\n"
    "  --tma=auto|off        sm_90a: a pipelined loop's wgmma operands by the tensor\n"
    "                        memory accelerator where it can (auto, default), or\n"
    "                        always by cp.async (off)\n"
    "  --fp-fusion=on|off    fp32 and fp64 x * y + z as one fma, rounded once (on,\n"
    "                        default, as Triton's enable_fp_fusion), or every\n"
    "                        product rounded (off)\n"
    "  --passes=LIST         the passes to run, of these (default all; none), which\n"
    "                        run in this order (a name twice runs twice):\n"
    "                        tile IR"
#define PASS(level, id, name, summary) PASS_NAME_##level(name)
#define PASS_NAME_TIR(name) " " name
#define PASS_NAME_TGIR(name)
#include "driver/passes.def"
#undef PASS_NAME_TIR
#undef PASS_NAME_TGIR
    "\n                        GPU-layout IR"
#define PASS_NAME_TIR(name)
#define PASS_NAME_TGIR(name) " " name
#include "driver/passes.def"
#undef PASS_NAME_TIR
#undef PASS_NAME_TGIR
#undef PASS
    "\n"
    "  --print-after-all     print the IR after each pass (and GPU-layout IR step) too\n"
    "  --time                report the time of each stage on stderr (frontend, tile\n"
    "                        IR, GPU-layout IR, LLVM lowering, LLVM optimisation,\n"
    "                        NVPTX, ptxas)\n"
    "  --print-axis-info     print the AxisInfo analysis (contiguity, divisibility,\n"
    "                        constancy) of the optimised tile IR\n"
    "  --check               fail when a parameter has no type instead of printing\n"
    "                        the untyped tree\n"
    "  --list-builtins       print the builtin reference (markdown)\n"
    "  --list-ops            print the tile IR op reference (markdown)\n"
    "  --version             print the version and exit\n"
    "  --help                print this help and exit\n"
    "\n"
    "tilec run FILE.tl ... runs a kernel on the CPU interpreter or the GPU with\n"
    "arguments from the command line; tilec pack FILE.tl ... writes a kernel\n"
    "bundle. 'tilec run --help' and 'tilec pack --help' describe them.\n";

static const char pack_usage[] =
    "usage: tilec pack FILE.tl --signature SIG [--signature SIG]... --arch ARCH[,ARCH]...\n"
    "                  [--kernel NAME] [-D NAME=VALUE]... [--config N|all] -o KERNEL.tlk\n"
    "                  [--launcher STEM [--grid EXPR]] [options]\n"
    "\n"
    "Writes a kernel bundle (docs/abi.md, section 12): for each signature, config\n"
    "and architecture a cubin, its PTX and their metadata, and the tile IR the CPU\n"
    "interpreter runs; tile_kernel_load_bundle loads it.\n"
    "\n"
    "options:\n"
    "  -o FILE.tlk           the bundle to write (required)\n"
    "  --signature SIG       one specialisation, in Triton's AOT form (\"*fp32:16,i32\");\n"
    "                        repeat it for more (1 to 64)\n"
    "  --arch ARCH[,ARCH]... the targets, 1 to 16 (sm_80,sm_90a)\n"
    "  --kernel NAME         the kernel to pack (default: the one function no other\n"
    "                        function calls)\n"
    "  -D NAME=VALUE         value of a tl.constexpr parameter\n"
    "  --config N|all        the @triton.autotune configs to bundle: config N alone, or\n"
    "                        all of them (the default); a launch tunes among them\n"
    "  --launcher STEM       also write STEM.h and STEM.c: the bundle as bytes,\n"
    "                        KERNEL_load() and a typed KERNEL_launch()\n"
    "  --grid EXPR           the launcher's grid, Triton's expression over the integer\n"
    "                        parameters and constexprs (\"(triton.cdiv(n_elements,\n"
    "                        meta['BLOCK_SIZE']),)\"); without it KERNEL_launch takes\n"
    "                        a grid argument\n"
    "  --help                print this help and exit\n"
    "The compile options of 'tilec --help' (--num-warps, --num-stages, --maxnreg,\n"
    "--refill, --tma, --fp-fusion, --passes, --libdevice, --time) apply to every image.\n";

static int usage_error(const char *fmt, const char *arg) {
  fprintf(stderr, "tilec: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\ntry 'tilec --help'\n");
  return 1;
}

/* Matches "--name VALUE" and "--name=VALUE"; advances *i past the value. */
static const char *option_value(int argc, char **argv, int *i, const char *name) {
  size_t n = strlen(name);
  if (strncmp(argv[*i], name, n)) return NULL;
  if (argv[*i][n] == '=') return argv[*i] + n + 1;
  if (argv[*i][n] != 0) return NULL;
  if (*i + 1 >= argc) return "";
  return argv[++*i];
}

/* tilec pack's --arch sm_80,sm_90a into a->archs; -1 if it is not such a list. */
static int split_archs(Args *a, const char *list) {
  if (strlen(list) >= sizeof a->archs_text) return -1;
  strcpy(a->archs_text, list);
  a->num_archs = 0;
  for (char *p = a->archs_text, *comma;; p = comma + 1) {
    comma = strchr(p, ',');
    if (comma) *comma = 0;
    if (!*p || a->num_archs == MAX_ARCHS) return -1;
    a->archs[a->num_archs++] = p;
    if (!comma) return 0;
  }
}

/* 0: go on; 1: a usage error; 2: done (--help, --version). */
static int parse_args(int argc, char **argv, Args *a) {
  tile_options_init(&a->opts);
  a->opts.defines = a->defines;
  static const char *const valued[] = {"--passes",    "--emit",      "--kernel",    "--signature", "--config",
                                       "--arch",      "--libdevice", "--num-warps", "--num-stages", "--refill",
                                       "--tma",       "--fp-fusion", "-o",          "--metadata",  "-D",
                                       "--maxnreg",   NULL};
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *v, *missing = tilec_missing_value(argc, argv, i, valued);
    if (missing) return usage_error("%s needs a value", missing);
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
      fputs(a->pack ? pack_usage : usage, stdout);
      return 2;
    } else if (!strcmp(arg, "--version")) {
      printf("tilec %s (%s)\n", tile_version(), tile_build_info());
      return 2;
    } else if (!strcmp(arg, "--check")) {
      a->opts.require_types = 1;
    } else if (!strcmp(arg, "--list-builtins")) {
      a->list_builtins = 1;
    } else if (!strcmp(arg, "--list-ops")) {
      a->list_builtins = 2;
    } else if (!strcmp(arg, "--time")) {
      a->opts.time_stages = 1;
    } else if (!strcmp(arg, "--print-after-all")) {
      a->opts.print_after_all = 1;
    } else if (!strcmp(arg, "--print-axis-info")) {
      a->emit = "axisinfo";
    } else if ((v = option_value(argc, argv, &i, "--passes"))) {
      a->opts.passes = v;
    } else if ((v = option_value(argc, argv, &i, "--emit"))) {
      a->emit = v;
    } else if ((v = option_value(argc, argv, &i, "--kernel"))) {
      a->opts.kernel = v;
    } else if ((v = option_value(argc, argv, &i, "--signature"))) {
      if (a->pack && a->num_signatures == MAX_SIGNATURES) return usage_error("%s", "more than 64 --signature options");
      if (a->pack) a->signatures[a->num_signatures++] = v;
      a->opts.signature = v;
    } else if (a->pack && (v = option_value(argc, argv, &i, "--config")) && !strcmp(v, "all")) {
      a->opts.config = -1;
    } else if ((v = option_value(argc, argv, &i, "--config"))) { /* the numbers' ranges are tile_options_check's */
      if (!tilec_integer(v, INT_MIN, INT_MAX, &a->opts.config)) return usage_error("--config needs a config index, got '%s'", v);
    } else if ((v = option_value(argc, argv, &i, "--arch"))) {
      a->opts.arch = v;
      if (a->pack && split_archs(a, v)) return usage_error("--arch needs 1 to 16 targets separated by commas, got '%s'", v);
    } else if ((v = option_value(argc, argv, &i, "--libdevice"))) {
      a->opts.libdevice = v;
    } else if ((v = option_value(argc, argv, &i, "--num-warps"))) {
      if (!tilec_integer(v, INT_MIN, INT_MAX, &a->opts.num_warps)) return usage_error("--num-warps needs a power of two from 1 to 32, got '%s'", v);
    } else if ((v = option_value(argc, argv, &i, "--num-stages"))) {
      if (!tilec_integer(v, INT_MIN, INT_MAX, &a->opts.num_stages)) return usage_error("--num-stages needs a number from 1 to 16, got '%s'", v);
    } else if ((v = option_value(argc, argv, &i, "--maxnreg"))) {
      if (!tilec_integer(v, INT_MIN, INT_MAX, &a->opts.maxnreg)) return usage_error("--maxnreg needs a number from 24 to 255, got '%s'", v);
    } else if ((v = option_value(argc, argv, &i, "--refill"))) {
      const char *when[] = {"auto", "early", "late"}; /* tile_refill's order */
      int w = 0;
      while (w < 3 && strcmp(v, when[w])) w++;
      if (w == 3) return usage_error("--refill needs auto, early or late, got '%s'", v);
      a->opts.refill = (tile_refill)w;
    } else if ((v = option_value(argc, argv, &i, "--tma"))) {
      if (strcmp(v, "auto") && strcmp(v, "off")) return usage_error("--tma needs auto or off, got '%s'", v);
      a->opts.tma = strcmp(v, "off") ? TILE_TMA_AUTO : TILE_TMA_OFF;
    } else if ((v = option_value(argc, argv, &i, "--fp-fusion"))) {
      if (!tilec_fp_fusion(v, &a->opts.fp_fusion)) return usage_error("--fp-fusion needs on or off, got '%s'", v);
    } else if ((v = option_value(argc, argv, &i, "-o"))) {
      a->output = strcmp(v, "-") ? v : NULL; /* `-o -` is stdout, not a file named "-" */
    } else if ((v = option_value(argc, argv, &i, "--metadata"))) {
      a->metadata = v;
    } else if (!strncmp(arg, "-D", 2)) {
      v = arg[2] ? arg + 2 : (i + 1 < argc ? argv[++i] : "");
      if (a->opts.num_defines == MAX_DEFINES) return usage_error("%s", "too many -D options");
      a->defines[a->opts.num_defines++] = v;
    } else if (a->pack && (v = option_value(argc, argv, &i, "--launcher"))) {
      a->launcher = v;
    } else if (a->pack && (v = option_value(argc, argv, &i, "--grid"))) {
      a->grid = v;
    } else if (!strcmp(arg, "--grid") || !strcmp(arg, "--device")) {
      return usage_error("%s is an option of tilec run (tilec run FILE.tl --grid G0[,G1[,G2]] ... -- ARG...)", arg);
    } else if (arg[0] == '-' && arg[1]) {
      return usage_error("unknown option '%s'", arg);
    } else if (a->input) {
      return usage_error("more than one input file ('%s')", arg);
    } else {
      a->input = arg;
    }
  }
  if (!a->input && !a->list_builtins) return usage_error("%s", "no input file");
  return 0;
}

static int stage_of(const char *emit, tile_stage *stage) {
  if (!strcmp(emit, "tokens")) *stage = TILE_STAGE_TOKENS;
  else if (!strcmp(emit, "ast")) *stage = TILE_STAGE_AST;
  else if (!strcmp(emit, "tir")) *stage = TILE_STAGE_TIR;
  else if (!strcmp(emit, "axisinfo")) *stage = TILE_STAGE_AXIS_INFO;
  else if (!strcmp(emit, "tgir")) *stage = TILE_STAGE_TGIR;
  else if (!strcmp(emit, "llir")) *stage = TILE_STAGE_LLIR;
  else if (!strcmp(emit, "ptx")) *stage = TILE_STAGE_PTX;
  else if (!strcmp(emit, "metadata")) *stage = TILE_STAGE_METADATA;
  else return 0;
  return 1;
}

/* Writes `size` bytes to `path` (NULL: stdout), every step checked, so that
 * a full disk does not pass for success; a regular file not written whole is
 * removed (never a device such as /dev/full). */
static int write_bytes(const char *path, const void *data, size_t size) {
  FILE *f = path ? fopen(path, "wb") : stdout;
  int failed = !f || fwrite(data, 1, size, f) != size || fflush(f) != 0, saved = errno;
  if (path && f && fclose(f) != 0 && !failed) {
    failed = 1;
    saved = errno;
  }
  if (!failed) return 0;
  if (path) fprintf(stderr, "tilec: error: cannot write '%s': %s\n", path, strerror(saved));
  else fprintf(stderr, "tilec: error: cannot write to stdout: %s\n", strerror(saved));
  struct stat st;
  if (path && f && stat(path, &st) == 0 && S_ISREG(st.st_mode)) remove(path);
  return 1;
}

/* What is still buffered for stdout (--help, --version, device_print) and
 * its close can fail too; said once, not again after a failed write. */
static int close_stdout(int rc) {
  if (fflush(stdout) == 0 && !ferror(stdout) && fclose(stdout) == 0) return rc;
  if (!rc) fprintf(stderr, "tilec: error: cannot write to stdout: %s\n", strerror(errno));
  return 1;
}

/* An output that is an input would destroy it: `-o k.tl`, or the metadata
 * beside a cubin named as the source.  Files are compared by identity
 * (st_dev, st_ino), names only when one does not exist yet. */
static int clobbers(const Args *a, const char *output, const char *other_output) {
  const char *inputs[] = {a->input, a->opts.libdevice, other_output};
  for (int i = 0; output && i < 3; i++) {
    if (!inputs[i] || !tilec_same_file(output, inputs[i])) continue;
    if (i == 2) fprintf(stderr, "tilec: error: the image and its metadata would both be written to '%s'\n", output);
    else fprintf(stderr, "tilec: error: cannot write '%s': it is the input '%s'\n", output, inputs[i]);
    return 1;
  }
  return 0;
}

static int write_output(const char *path, const char *text) { return write_bytes(path, text, strlen(text)); }

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && !strcmp(s + n - m, suffix);
}

/* "cubin", "ptx" (an image with metadata, through tile_compile), or NULL for a text stage. */
static const char *image_kind(const Args *a) {
  if (a->emit) return !strcmp(a->emit, "cubin") || (!strcmp(a->emit, "ptx") && (a->output || a->metadata)) ? a->emit : NULL;
  if (a->output && ends_with(a->output, ".cubin")) return "cubin";
  if (a->output && ends_with(a->output, ".ptx")) return "ptx";
  return NULL;
}

/* k.cubin -> k.json */
static char *metadata_path(const Args *a) {
  if (a->metadata) return strdup(a->metadata);
  if (!a->output) return NULL;
  const char *dot = strrchr(a->output, '.'), *slash = strrchr(a->output, '/');
  size_t n = dot && (!slash || dot > slash + 1) ? (size_t)(dot - a->output) : strlen(a->output);
  char *path = malloc(n + sizeof ".json");
  if (path) snprintf(path, n + sizeof ".json", "%.*s.json", (int)n, a->output);
  return path;
}

static int report(tile_context *ctx, tile_status s) {
  fputs(tile_diagnostics(ctx), stderr);
  if (s != TILE_OK && s != TILE_ERROR_COMPILE) fprintf(stderr, "tilec: error: %s\n", tile_error(ctx));
  return s != TILE_OK;
}

/* A cubin or PTX and its metadata, ahead of time. */
static int compile_image(tile_context *ctx, const Args *a, const char *kind) {
  if (!strcmp(kind, "cubin") && !a->output)
    return usage_error("%s", "--emit=cubin needs -o FILE (a cubin is not written to stdout)");
  char *json_path = metadata_path(a);
  if (clobbers(a, a->output, NULL) || clobbers(a, json_path, a->output)) {
    free(json_path);
    return 1;
  }
  size_t len, size;
  char *source = tilec_read_file(a->input, &len);
  if (!source) {
    free(json_path);
    return 1;
  }
  const void *image;
  const char *json;
  tile_status s = tile_compile(ctx, a->input, source, len, &a->opts, !strcmp(kind, "ptx"), &image, &size, &json);
  free(source);
  int rc = report(ctx, s) || write_bytes(a->output, image, size) || (json_path && write_output(json_path, json));
  free(json_path);
  return rc;
}

static int compile(int argc, char **argv) {
  Args a = {0};
  int parsed = parse_args(argc, argv, &a);
  if (parsed) return parsed == 2 ? 0 : 1;
  tile_stage stage = a.list_builtins == 2 ? TILE_STAGE_OPS : TILE_STAGE_BUILTINS;
  const char *kind = a.list_builtins ? NULL : image_kind(&a);
  if (!a.list_builtins && !kind) {
    if (!a.emit && a.output)
      return usage_error("cannot tell what to write to '%s': name it .cubin or .ptx, or give --emit=STAGE", a.output);
    if (!a.emit) return usage_error("%s", "nothing to do: give -o KERNEL.cubin, -o KERNEL.ptx or --emit=STAGE");
    if (!stage_of(a.emit, &stage))
      return usage_error("unknown --emit stage '%s' (expected tokens, ast, tir, axisinfo, tgir, llir, ptx, metadata or cubin)",
                         a.emit);
  }
  tile_context *ctx = tilec_context("tilec");
  if (!ctx) return 1;
  int rc;
  if (tile_options_check(ctx, &a.opts) != TILE_OK) { /* the ranges the library takes, as every API call checks */
    fprintf(stderr, "tilec: error: %s\n", tile_error(ctx));
    rc = 1;
  } else if (kind) {
    rc = compile_image(ctx, &a, kind);
  } else if (!(rc = clobbers(&a, a.output, NULL))) {
    const char *text = NULL;
    tile_status s = a.list_builtins ? tile_emit(ctx, "<builtins>", "", 0, &a.opts, stage, &text)
                                    : tile_emit_file(ctx, a.input, &a.opts, stage, &text);
    rc = report(ctx, s) || write_output(a.output, text);
  }
  tile_context_destroy(ctx);
  return rc;
}

/* tilec pack --launcher: the parameters come from the metadata of the first
 * signature's PTX (no ptxas), with the -D values, else config 0's. */
static int launcher(tile_context *ctx, const Args *a, const char *source, size_t len, const void *bundle, size_t size) {
  tile_options o = a->opts;
  const void *image;
  size_t image_size;
  const char *metadata = NULL;
  o.signature = a->signatures[0];
  o.arch = a->archs[0];
  o.config = -1;
  if (tile_compile(ctx, a->input, source, len, &o, 1, &image, &image_size, &metadata) != TILE_OK) {
    o.config = 0;
    if (report(ctx, tile_compile(ctx, a->input, source, len, &o, 1, &image, &image_size, &metadata))) return 1;
  }
  return launcher_write(a->launcher, a->input, metadata, a->grid, bundle, size);
}

/* tilec pack: a kernel bundle, through tile_pack. */
static int pack(int argc, char **argv) {
  Args a = {.pack = 1};
  int parsed = parse_args(argc - 1, argv + 1, &a);
  if (parsed) return parsed == 2 ? 0 : 1;
  if (a.emit || a.metadata) return usage_error("%s", "tilec pack writes a bundle: --emit and --metadata are not its options");
  if (!a.output) return usage_error("%s", "tilec pack needs -o KERNEL.tlk");
  if (!a.num_signatures) return usage_error("%s", "tilec pack needs --signature SIG (once per specialisation)");
  if (!a.num_archs) return usage_error("%s", "tilec pack needs --arch ARCH[,ARCH]... (e.g. sm_80,sm_90a)");
  if (clobbers(&a, a.output, NULL)) return 1;
  char launcher_h[4096], launcher_c[4096];
  snprintf(launcher_h, sizeof launcher_h, "%s.h", a.launcher ? a.launcher : "");
  snprintf(launcher_c, sizeof launcher_c, "%s.c", a.launcher ? a.launcher : "");
  if (a.launcher && (clobbers(&a, launcher_h, a.output) || clobbers(&a, launcher_c, a.output))) return 1;
  if (a.grid && !a.launcher) return usage_error("%s", "--grid is for the generated launcher: give --launcher STEM too");
  size_t len, size;
  char *source = tilec_read_file(a.input, &len);
  if (!source) return 1;
  tile_context *ctx = tilec_context("tilec");
  if (!ctx) {
    free(source);
    return 1;
  }
  const void *bundle = NULL;
  a.opts.arch = NULL;
  a.opts.signature = NULL;
  tile_status s = tile_pack(ctx, a.input, source, len, &a.opts, a.signatures, a.num_signatures, a.archs, a.num_archs,
                            &bundle, &size);
  int rc = report(ctx, s) || write_bytes(a.output, bundle, size);
  void *copy = !rc && a.launcher ? malloc(size) : NULL; /* the bundle is borrowed: the next compile frees it */
  if (copy) memcpy(copy, bundle, size);
  if (!rc && a.launcher) rc = copy ? launcher(ctx, &a, source, len, copy, size) : 1;
  free(copy);
  free(source);
  tile_context_destroy(ctx);
  return rc;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "pack")) return close_stdout(pack(argc, argv));
  return close_stdout(argc > 1 && !strcmp(argv[1], "run") ? tilec_run(argc, argv) : compile(argc, argv));
}
