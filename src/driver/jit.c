/* Just-in-time kernels: tile_kernel_create keeps the source and options;
 * the runtime (src/runtime/kernel.c) asks, through the KernelCompiler
 * table here, for each specialisation it has not seen.  For the GPU a
 * specialisation comes from the disk cache when it can (key: SHA-256 of the
 * compiler's identity, the source and its name, the standard library, every option that
 * changes code, the signature, the target, libdevice's and ptxas's
 * identities; the entry names the package's files the source imported, and
 * is used only while they read as they did: jit_deps.c), else from
 * the pipeline, and is then written to the cache; several (an autotuned
 * kernel's configs) compile at once on threads (build_many).  Without ptxas
 * the PTX is the image and the driver compiles it.  For the CPU interpreter the tile
 * IR is kept and run. */
#define _GNU_SOURCE /* dladdr */
#include "driver.h"
#include "../runtime/cache.h"
#include "../runtime/device.h"
#include "../runtime/json.h"
#include "../runtime/kernel.h"
#include "../support/parallel.h"
#include "../support/sha256.h"
#include "../tir/tir.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The source and options of a JIT kernel, copied at creation. */
typedef struct JitSource {
  char *name;
  char *text;
  size_t len;
  tile_options opts;       /* strings point to the copies below */
  char **defines;
  char *kernel, *signature, *passes, *arch, *libdevice;
  char *declared_name, *declared_params; /* from the declaration at creation (NULL: none) */
  int num_declared_params;
  JitHeuristics *heuristics; /* its @triton.heuristics read a launch's arguments (heuristics.c); NULL: not */
  char *deps;                /* the dependency list of the GPU specialisation built or read from the cache last */
  size_t deps_len;           /* (malloc'd; NULL with a length: lost to memory): a choice tuned from them records it */
} JitSource;

/* A kernel's KernelTuning in one block: the arrays it points to, then the
 * names' bytes. */
typedef struct JitTuning {
  KernelTuning t;
  int key_args[MAX_KERNEL_ARGS], reset_args[MAX_KERNEL_ARGS], restore_args[MAX_KERNEL_ARGS];
  const char *key_names[MAX_KERNEL_ARGS], *reset_names[MAX_KERNEL_ARGS], *restore_names[MAX_KERNEL_ARGS];
  size_t used;   /* bytes of names[] taken */
  char names[];
} JitTuning;

/* ---- the disk cache key ------------------------------------------------------------- */

static void hash_field(Sha256 *h, const void *data, size_t len) {
  unsigned char n[8];
  for (int i = 0; i < 8; i++) n[i] = (unsigned char)((uint64_t)len >> (8 * i));
  sha256_update(h, n, sizeof n);
  sha256_update(h, data, len);
}

static void hash_string(Sha256 *h, const char *s) { hash_field(h, s ? s : "\x01(none)", strlen(s ? s : "\x01(none)")); }

static void hash_int(Sha256 *h, long long v) {
  char text[32];
  snprintf(text, sizeof text, "%lld", v);
  hash_string(h, text);
}

/* A file's identity: its path, size and modification time. */
static void hash_file(Sha256 *h, const char *path) {
  struct stat st;
  hash_string(h, path);
  if (!path || stat(path, &st)) return hash_string(h, "(missing)");
  hash_int(h, (long long)st.st_size);
  hash_int(h, (long long)st.st_mtim.tv_sec);
  hash_int(h, (long long)st.st_mtim.tv_nsec);
}

/* The compiler: its version and the binary it lives in (a rebuild changes the key). */
static void hash_compiler(Sha256 *h) {
  Dl_info info;
  hash_string(h, tile_version());
  hash_file(h, dladdr((void *)&hash_compiler, &info) && info.dli_fname ? info.dli_fname : NULL);
  hash_field(h, tile_stdlib_source, tile_stdlib_size);
}

/* The compiler, the source (its name too: device_assert reports it) and every
 * option that changes code. */
static void hash_kernel(Sha256 *h, const JitSource *src, const tile_options *o) {
  hash_compiler(h);
  hash_string(h, src->name);
  hash_field(h, src->text, src->len);
  hash_string(h, o->kernel);
  hash_int(h, o->num_defines);
  for (int i = 0; i < o->num_defines; i++) hash_string(h, o->defines[i]);
  hash_int(h, o->config);
  hash_int(h, o->num_warps);
  hash_int(h, o->num_stages);
  hash_int(h, o->maxnreg);
  hash_int(h, o->refill);
  hash_int(h, o->tma);
  hash_int(h, o->fp_fusion);
  hash_string(h, o->passes);
  hash_string(h, o->arch);
  hash_string(h, o->signature);
}

/* `libdevice`: the one the kernel would link (the options', else the context's). */
static void cache_key(const JitSource *src, const tile_options *o, const char *libdevice, const char *ptxas,
                      int want_ptx, char hex[65]) {
  Sha256 h;
  unsigned char digest[32];
  sha256_init(&h);
  hash_string(&h, "tile jit cache key 1");
  hash_kernel(&h, src, o);
  hash_file(&h, libdevice); /* whether the kernel links it is known only after compiling */
  hash_string(&h, want_ptx ? "ptx" : "cubin");
  if (!want_ptx) hash_file(&h, ptxas);
  sha256_final(&h, digest);
  sha256_hex(digest, hex);
}

/* ---- building a specialisation ------------------------------------------------------- */

/* The options this specialisation compiles with. */
static tile_options spec_options(const tile_kernel *k, const Spec *s) {
  const JitSource *src = k->source;
  tile_options o = src->opts;
  if (!k->fixed_signature) o.signature = s->signature;
  if (s->variant.config >= 0) o.config = s->variant.config;
  if (s->variant.refill != TILE_REFILL_AUTO) o.refill = s->variant.refill;
  if (s->variant.tma != TILE_TMA_AUTO) o.tma = s->variant.tma;
  if (s->variant.maxnreg) o.maxnreg = s->variant.maxnreg;
  if (s->heuristics >= 0 && src->heuristics) /* the options' -D values with the heuristics' */
    o.defines = heuristics_defines(src->heuristics, s->heuristics, s->variant.config, &o.num_defines);
  return o;
}

static tile_status end_compile(Compilation *c, tile_status s) {
  s = compilation_report(c, s);
  compilation_end(c);
  return s;
}

typedef struct CpuBuild {
  Spec *s;
  const tile_options *o;
} CpuBuild;

static tile_status build_tir(Compilation *c, void *ud) {
  CpuBuild *b = ud;
  Spec *s = b->s;
  TirFunc *f = pipeline_tir(c, b->o, NULL);
  pipeline_note_times(c, b->o);
  if (!f) return TILE_ERROR_COMPILE;
  s->metadata = arena_strdup(&s->arena, describe_kernel(c, f, NULL, 0));
  Buf tir;
  buf_init(&tir, &s->arena);
  tir_print(f, &tir);
  s->text[TILE_STAGE_TIR] = buf_cstr(&tir);
  CpuProgram *p = arena_alloc(&c->arena, sizeof *p);
  *p = (CpuProgram){c, f};
  s->program = p;
  return TILE_OK;
}

/* The tile IR for the interpreter, kept with its compilation. */
static tile_status build_cpu(tile_kernel *k, Spec *s) {
  const JitSource *src = k->source;
  tile_options o = spec_options(k, s);
  Compilation *c = compilation_begin(k->ctx, src->name, src->text, src->len);
  if (!c) return context_fail(k->ctx, TILE_ERROR_MEMORY, "out of memory");
  c->configs_as_listed = 1;
  CpuBuild b = {s, &o};
  s->arena.guard = &c->guard;
  tile_status status = compilation_run(c, build_tir, &b);
  s->arena.guard = NULL;
  if (status == TILE_OK) { /* the compilation lives on in s->program */
    keep_diagnostics(k->ctx, c, status);
    return status;
  }
  s->program = NULL;
  return end_compile(c, status);
}

static const char *keep_text(Spec *s, const char *text) { return text ? arena_strdup(&s->arena, text) : NULL; }

typedef struct EntryCheck {
  Arena arena;
  const CacheEntry *e;
  int of_kernel;  /* its metadata is a kernel's, checked here (an autotuner's choice's is the runtime's) */
  char *why;
  size_t whysize;
  int status;
} EntryCheck;

static void check_metadata(void *ud) {
  EntryCheck *x = ud;
  KernelMetadata m;
  ModuleFiles deps;
  if (x->of_kernel && meta_parse(&x->arena, x->e->metadata, x->e->metadata_len, &m, x->why, x->whysize)) return;
  if (x->of_kernel && strcmp(m.target, x->e->image_is_ptx ? "ptx" : "cubin")) {
    snprintf(x->why, x->whysize, "its metadata says %s, its header the other", m.target);
    return;
  }
  if (jit_deps_parse(&x->arena, x->e->deps, x->e->deps_len, &deps, x->why, x->whysize)) return;
  x->status = jit_deps_hold(&deps); /* 0: compiled from other versions of its imports, a plain miss */
}

/* An entry whose checksum holds but whose metadata (of_kernel) or dependency
 * list does not read, or whose metadata names another kind of image, was
 * written wrong: -1 with why, to be rebuilt rather than fail every launch
 * after it.  0: sound, but an imported file has changed since. */
static int check_entry(const CacheEntry *e, int of_kernel, char *why, size_t whysize) {
  EntryCheck x = {.e = e, .of_kernel = of_kernel, .why = why, .whysize = whysize, .status = -1};
  arena_init(&x.arena, 1 << 24);
  if (arena_run(&x.arena, check_metadata, &x)) snprintf(why, whysize, "out of memory reading it");
  arena_free(&x.arena);
  return x.status;
}

/* The files a specialisation of k was compiled from, kept for the autotuner's
 * choice among its variants (save_choice). */
static void keep_deps(tile_kernel *k, const char *deps, size_t len) {
  JitSource *src = k->source;
  free(src->deps);
  src->deps = len ? malloc(len) : NULL;
  src->deps_len = len;
  if (src->deps) memcpy(src->deps, deps, len);
}

/* The entry for `key` if the cache has a sound one; a note naming it if it had a bad one. */
static int from_cache(tile_kernel *k, Spec *s, const char *key, char *note, size_t notesize) {
  CacheEntry e;
  char why[256];
  int found = cache_read(k->ctx->cache_dir, key, &e, why, sizeof why);
  if (found > 0 && (found = check_entry(&e, 1, why, sizeof why)) <= 0) cache_entry_free(&e);
  if (found < 0) snprintf(note, notesize, "cache: ignored the entry %s/%s.tile (%s) and compiled again", k->ctx->cache_dir, key, why);
  if (found <= 0) return 0;
  if (spec_copy_in(s, e.image, e.image_size, e.image_is_ptx, e.metadata, e.metadata_len))
    found = 0; /* out of memory: compile instead, which will say so */
  else
    keep_deps(k, e.deps, e.deps_len);
  cache_entry_free(&e);
  return found;
}

static void to_cache(tile_kernel *k, Spec *s, const char *key, const char *deps, size_t deps_len, char *note,
                     size_t notesize) {
  char why[512];
  CacheEntry e = {(unsigned char *)s->image, s->image_size, s->image_is_ptx, (char *)s->metadata, strlen(s->metadata),
                  (char *)deps, deps_len};
  if (cache_write(k->ctx->cache_dir, key, &e, why, sizeof why))
    snprintf(note, notesize, "cache: %s; the kernel was compiled but not cached", why);
}

/* One GPU specialisation being built, in three steps: prepare_job and
 * finish_job on the context's thread, compile_job, which touches nothing of
 * the context, on any thread in between. */
typedef struct GpuJob {
  tile_kernel *k;
  Spec *s;
  tile_options o;            /* the specialisation's, with the target resolved */
  char ptxas[4096];          /* "": none, the PTX is the image */
  int want_ptx;
  char key[65];              /* the disk cache's */
  const char *deps;          /* the files it imported, as its entry lists them (in c's arena) */
  size_t deps_len;
  char notes[2][1024];       /* for tile_diagnostics: no ptxas; the cache */
  Compilation *c;            /* what compile_job runs; NULL: nothing to compile */
  tile_status status;
} GpuJob;

/* The target, ptxas and cache key of j->s; a cache hit fills it.  Leaves
 * j->c to compile, or NULL with j->status saying why not. */
static void prepare_job(GpuJob *j, tile_kernel *k, Spec *s) {
  tile_context *ctx = k->ctx;
  const JitSource *src = k->source;
  int prefer_ptx = 0;
  char why[512];
  memset(j, 0, sizeof *j);
  j->k = k, j->s = s, j->o = spec_options(k, s);
  if (!j->o.arch) j->o.arch = device_arch(ctx, &prefer_ptx);
  if (!j->o.arch) j->o.arch = "sm_90";
  DeviceRuns runs = device_runs(ctx, j->o.arch);
  if (runs == DEVICE_RUNS_NONE) {
    j->status = context_failf(ctx, TILE_ERROR_UNSUPPORTED, "code for %s cannot run on this GPU (%s): ask for an older target",
                              j->o.arch, tile_device_name(ctx));
    return;
  }
  prefer_ptx |= runs == DEVICE_RUNS_PTX;
  if (context_ptxas(ctx, j->ptxas, sizeof j->ptxas, why, sizeof why)) {
    j->ptxas[0] = 0;
    snprintf(j->notes[0], sizeof j->notes[0], "%s: the CUDA driver will compile the PTX", why);
  }
  j->want_ptx = prefer_ptx || !j->ptxas[0];
  cache_key(src, &j->o, j->o.libdevice ? j->o.libdevice : ctx->libdevice_path, j->ptxas[0] ? j->ptxas : NULL,
            j->want_ptx, j->key);
  if (ctx->cache_dir && from_cache(k, s, j->key, j->notes[1], sizeof j->notes[1])) return;
  if (!(j->c = compilation_new(ctx, src->name, src->text, src->len)))
    j->status = context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  else
    j->c->configs_as_listed = 1;
}

static tile_status gpu_pipeline(Compilation *c, void *ud) {
  GpuJob *j = ud;
  Spec *s = j->s;
  GpuArtifacts g;
  tile_status status = pipeline_gpu(c, &j->o, j->want_ptx ? TILE_STAGE_PTX : TILE_STAGE_METADATA, j->ptxas[0] ? j->ptxas : NULL, &g);
  if (status != TILE_OK) return status;
  if (!g.ptx) {
    diag_error(&c->diags, (Loc){0}, "no PTX for target '%s'", g.arch);
    return TILE_ERROR_COMPILE;
  }
  const char *metadata = describe_kernel(c, g.f, &g, j->want_ptx);
  if (spec_copy_in(s, j->want_ptx ? (const void *)g.ptx : g.cubin, j->want_ptx ? g.ptx_len : g.cubin_size, j->want_ptx,
                   metadata, strlen(metadata)))
    guard_fail(&c->guard, "out of memory keeping the compiled image");
  s->text[TILE_STAGE_TIR] = keep_text(s, g.tir);
  s->text[TILE_STAGE_TGIR] = keep_text(s, g.tgir);
  s->text[TILE_STAGE_LLIR] = keep_text(s, g.llir);
  s->text[TILE_STAGE_PTX] = keep_text(s, g.ptx);
  j->deps = jit_deps_format(&c->arena, c->checked ? c->checked->module_files : NULL, &j->deps_len);
  return TILE_OK;
}

/* The pipeline for the GPU; the image, metadata and stage texts into j->s.
 * Reads the context (libdevice's path), writes nothing of it. */
static void compile_job(GpuJob *j) {
  j->s->arena.guard = &j->c->guard;
  j->status = compilation_run(j->c, gpu_pipeline, j);
  j->s->arena.guard = NULL;
}

/* The compilation's messages into the context, which starts afresh as at
 * any compilation's start; the cache written; the notes. */
static tile_status finish_job(GpuJob *j) {
  tile_context *ctx = j->k->ctx;
  if (j->c) {
    context_begin(ctx);
    j->status = compilation_report(j->c, j->status);
    if (j->status == TILE_OK) keep_deps(j->k, j->deps, j->deps_len);
    if (j->status == TILE_OK && ctx->cache_dir)
      to_cache(j->k, j->s, j->key, j->deps, j->deps_len, j->notes[1], sizeof j->notes[1]);
    compilation_end(j->c); /* after the entry and keep_deps: the dependency list lives in the compilation */
  }
  for (int i = 0; i < 2; i++)
    if (j->notes[i][0]) context_note(ctx, "%s", j->notes[i]);
  return j->status;
}

static tile_status build_gpu(tile_kernel *k, Spec *s) {
  GpuJob j;
  prepare_job(&j, k, s);
  if (j.c) compile_job(&j);
  return finish_job(&j);
}

static void compile_nth(void *jobs, int i) {
  GpuJob *j = &((GpuJob *)jobs)[i];
  if (j->c) compile_job(j);
}

/* build_gpu for each spec, the compilations on `threads` threads at once. */
static void build_many(tile_kernel *k, Spec **specs, int count, int threads, tile_status *status) {
  GpuJob *jobs = malloc(sizeof *jobs * (size_t)count);
  for (int i = 0; i < count; i++) status[i] = TILE_ERROR_MEMORY;
  if (!jobs) return;
  for (int i = 0; i < count; i++) prepare_job(&jobs[i], k, specs[i]);
  parallel_for(count, threads, compile_nth, jobs);
  for (int i = 0; i < count; i++) status[i] = finish_job(&jobs[i]);
  free(jobs);
}

static tile_status build(tile_kernel *k, Spec *s) { return s->on_cpu ? build_cpu(k, s) : build_gpu(k, s); }

/* ---- running on the interpreter ----------------------------------------------------- */

tile_status jit_run_cpu(tile_kernel *k, Spec *s, const unsigned grid[3], const tile_arg *args, int n,
                           const size_t *bytes) {
  const CpuProgram *p = s->program;
  Guard *guard = &p->c->guard; /* armed again here: the program's arena (argument errors name types there) */
  Arena printed_arena;
  arena_init(&printed_arena, k->ctx->memory_cap);
  printed_arena.guard = guard;
  char err[512];
  Buf printed;
  buf_init(&printed, &printed_arena);
  InterpMemory mem = {args, n, bytes, k->ctx->allocations, k->ctx->num_allocations};
  tile_status status = launch_interpreted(guard, p->f, grid, &mem, k->ctx->interp_time_limit, &printed, err, sizeof err);
  if (printed.len) { /* device_print writes to stdout, as the GPU's printf does */
    fwrite(printed.data, 1, printed.len, stdout);
    fflush(stdout);
  }
  arena_free(&printed_arena);
  return status == TILE_OK ? status : context_fail(k->ctx, status, err);
}

void jit_release_spec(tile_kernel *k, Spec *s) {
  CpuProgram *p = s->program;
  if (p) compilation_end(p->c);
  s->program = NULL;
}

static void release(tile_kernel *k) {
  JitSource *src = k->source;
  free((void *)k->tuning);
  k->tuning = NULL;
  if (!src) return;
  for (int i = 0; src->defines && i < src->opts.num_defines; i++) free(src->defines[i]);
  free(src->defines);
  free(src->name);
  free(src->text);
  free(src->kernel);
  free(src->signature);
  free(src->passes);
  free(src->arch);
  free(src->libdevice);
  free(src->declared_name);
  free(src->declared_params);
  heuristics_free(src->heuristics);
  free(src->deps);
  free(src);
  k->source = NULL;
}

/* ---- the autotuner's choices on disk -------------------------------------------------------- */

static void choice_key(const tile_kernel *k, const char *what, char hex[65]) {
  const JitSource *src = k->source;
  Sha256 h;
  unsigned char digest[32];
  sha256_init(&h);
  hash_string(&h, "tile autotune choice 1");
  hash_kernel(&h, src, &src->opts);
  hash_string(&h, what);
  sha256_final(&h, digest);
  sha256_hex(digest, hex);
}

/* A ChoiceDepsCheck: a choice's entry checked as a kernel's is, but for its metadata. */
static int choice_deps_check(const char *deps, size_t len, char *why, size_t whysize) {
  CacheEntry e = {.deps = (char *)deps, .deps_len = len};
  return check_entry(&e, 0, why, whysize);
}

static Variant load_choice(tile_kernel *k, const char *what, char *note, size_t notesize) {
  char key[65];
  choice_key(k, what, key);
  return autotune_read_choice(k, key, 1 << 20, choice_deps_check, note, notesize);
}

/* The choice lists the files its variants were compiled from, so that an
 * edited helper (or the module giving the configs) has it tuned again. */
static void save_choice(tile_kernel *k, const char *what, Variant v, const char *timings) {
  const JitSource *src = k->source;
  char key[65];
  if (!k->ctx->cache_dir || (src->deps_len && !src->deps)) return; /* not knowing its files, it is not kept */
  choice_key(k, what, key);
  autotune_write_choice(k, key, what, v, timings, src->deps, src->deps_len);
}

/* ---- early_config_prune at a launch -------------------------------------------------------- */

typedef struct Pruning {
  const JitSource *src;
  const tile_arg *args;
  int n;
  unsigned char *kept;  /* one per config of the decorator's list */
  int num_configs;
} Pruning;

static LaunchArg launch_arg(const tile_arg *a) {
  LaunchKind kind = a->kind == TILE_ARG_INT ? LAUNCH_INT : a->kind == TILE_ARG_FLOAT ? LAUNCH_FLOAT : LAUNCH_OTHER;
  return (LaunchArg){kind, a->i, a->f};
}

static tile_status prune_declared(Compilation *c, void *ud) {
  Pruning *p = ud;
  LaunchArg *launch = arena_alloc(&c->arena, sizeof *launch * (size_t)(p->n + 1));
  for (int i = 0; i < p->n; i++) launch[i] = launch_arg(&p->args[i]);
  Module *m = pipeline_parse(c);
  const CheckedKernel *k = m ? pipeline_prune(c, m, &p->src->opts, launch, p->n) : NULL;
  if (!k) return TILE_ERROR_COMPILE;
  for (int i = 0; i < k->meta.configs.len; i++)
    if (k->meta.configs.data[i].index < p->num_configs) p->kept[k->meta.configs.data[i].index] = 1;
  return TILE_OK;
}

/* The kernel declared again with the launch's values, which its
 * early_config_prune reads (sema's named_args, as @triton.heuristics). */
static tile_status prune(tile_kernel *k, const tile_arg *args, int n, unsigned char *kept) {
  const JitSource *src = k->source;
  Compilation *c = compilation_begin(k->ctx, src->name, src->text, src->len);
  if (!c) return context_fail(k->ctx, TILE_ERROR_MEMORY, "out of memory");
  Pruning p = {src, args, n, kept, k->tuning->num_configs};
  return end_compile(c, compilation_run(c, prune_declared, &p));
}

static tile_status heuristics(tile_kernel *k, const tile_arg *args, int n, int *out) {
  const JitSource *src = k->source;
  return heuristics_case(src->heuristics, k->ctx, src->name, src->text, src->len, &src->opts, args, n, out);
}

static const KernelCompiler jit_compiler = {.build = build, .build_many = build_many, .run_cpu = jit_run_cpu,
                                            .release_spec = jit_release_spec, .release = release,
                                            .load_choice = load_choice, .save_choice = save_choice, .prune = prune,
                                            .heuristics = heuristics};

/* ---- creation ------------------------------------------------------------------------ */

/* A malloc'd copy; *failed set if it could not be made. */
static char *copy(const char *s, int *failed) {
  if (!s) return NULL;
  char *c = strdup(s);
  *failed |= !c;
  return c;
}

static JitSource *copy_source(const char *name, const char *text, size_t len, const tile_options *opts) {
  JitSource *src = calloc(1, sizeof *src);
  if (!src) return NULL;
  int failed = 0;
  src->opts = *opts;
  src->name = copy(name ? name : "<input>", &failed);
  src->text = malloc(len + 1);
  failed |= !src->text;
  if (src->text) memcpy(src->text, text, len), src->text[len] = 0;
  src->len = len;
  src->opts.kernel = src->kernel = copy(opts->kernel, &failed);
  src->opts.signature = src->signature = copy(opts->signature, &failed);
  src->opts.passes = src->passes = copy(opts->passes, &failed);
  src->opts.arch = src->arch = copy(opts->arch, &failed);
  src->opts.libdevice = src->libdevice = copy(opts->libdevice, &failed);
  src->defines = calloc((size_t)opts->num_defines + 1, sizeof *src->defines);
  failed |= !src->defines;
  for (int i = 0; src->defines && i < opts->num_defines; i++) src->defines[i] = copy(opts->defines[i], &failed);
  src->opts.defines = (const char *const *)src->defines;
  src->opts.print_after_all = 0;
  if (!failed) return src;
  tile_kernel k = {.source = src};
  release(&k);
  return NULL;
}

/* ---- the autotuner's view of a kernel ---------------------------------------------------- */

static const char *keep_name(JitTuning *j, const char *name) {
  size_t n = strlen(name) + 1;
  char *p = j->names + j->used;
  memcpy(p, name, n);
  j->used += n;
  return p;
}

/* The launch position of run-time parameter `name` (a descriptor's: its base); -1 for a constexpr. */
static int arg_position(const CheckedKernel *k, const char *name) {
  for (int i = 0, position = 0; i < k->params.len; i++) {
    const KernelParam *p = &k->params.data[i];
    if (!strcmp(p->name, name)) return kernel_param_slots(p) ? position : -1;
    position += kernel_param_slots(p);
  }
  return -1;
}

/* The run-time parameters among `names`: positions and names; constexprs are left out. */
static int list_args(JitTuning *j, const CheckedKernel *k, const NameList *names, int *args, const char **kept) {
  int n = 0;
  for (int i = 0; i < names->len; i++) {
    int position = arg_position(k, names->data[i]);
    if (position < 0 || position >= MAX_KERNEL_ARGS || n == MAX_KERNEL_ARGS) continue;
    args[n] = position;
    kept[n++] = keep_name(j, names->data[i]);
  }
  return n;
}

static size_t names_bytes(const CheckedKernel *k) {
  const NameList *lists[] = {&k->meta.keys, &k->meta.reset_to_zero, &k->meta.restore_value};
  size_t n = strlen(k->def->name) + 1;
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < lists[l]->len; i++) n += strlen(lists[l]->data[i]) + 1;
  return n;
}

KernelTuning *jit_tuning_of(const CheckedKernel *k, int tune_refill, int tune_tma) {
  JitTuning *j = calloc(1, sizeof *j + names_bytes(k));
  if (!j) return NULL;
  KernelTuning *t = &j->t;
  t->kernel = keep_name(j, k->def->name);
  t->num_configs = k->meta.configs.len;
  t->num_keys = list_args(j, k, &k->meta.keys, j->key_args, j->key_names);
  t->num_resets = list_args(j, k, &k->meta.reset_to_zero, j->reset_args, j->reset_names);
  t->num_restores = list_args(j, k, &k->meta.restore_value, j->restore_args, j->restore_names);
  t->key_args = j->key_args, t->key_names = j->key_names;
  t->reset_args = j->reset_args, t->reset_names = j->reset_names;
  t->restore_args = j->restore_args, t->restore_names = j->restore_names;
  t->warmup_ms = k->meta.warmup_ms;
  t->rep_ms = k->meta.rep_ms;
  t->tune_refill = tune_refill;
  t->tune_tma = tune_tma;
  t->prunes = k->meta.prune != NULL;
  return &j->t;
}

/* When the options fix no config: a kernel whose source lists several is
 * tuned at launch (*out), one that lists one uses it. */
static tile_status declare_tuning(Compilation *c, const CheckedKernel *k, JitSource *src, const KernelTuning **out) {
  int configs = k && src->opts.config < 0 ? k->meta.configs.len : 0;
  if (configs == 1) src->opts.config = 0;
  if (configs <= 1) return TILE_OK;
  KernelTuning *j = jit_tuning_of(k, src->opts.refill == TILE_REFILL_AUTO, src->opts.tma == TILE_TMA_AUTO);
  *out = j;
  return j ? TILE_OK : context_fail(c->ctx, TILE_ERROR_MEMORY, "out of memory");
}

/* The declared kernel's name and run-time parameters ("x_ptr, n"), for the
 * launches' argument count; none when the declaration failed. */
static void remember_params(Compilation *c, const CheckedKernel *k, JitSource *src) {
  if (!k) return;
  size_t bytes = 1;
  for (int i = 0; i < k->params.len; i++) bytes += strlen(k->params.data[i].name) + 2;
  if (!(src->declared_params = calloc(1, bytes)) || !(src->declared_name = strdup(k->def->name)))
    guard_fail(&c->guard, "out of memory for the kernel's parameters");
  for (int i = 0; i < k->params.len; i++) {
    if (k->params.data[i].is_constexpr) continue;
    if (src->num_declared_params++) strcat(src->declared_params, ", ");
    strcat(src->declared_params, k->params.data[i].name);
  }
}

/* Heuristics that read a launch's arguments are run at each launch
 * (heuristics.c); those that do not, as the kernel compiles. */
static tile_status declare_heuristics(Compilation *c, const Module *m, const CheckedKernel *k, JitSource *src) {
  int slots = src->opts.config < 0 ? k->meta.configs.len : 1;
  if (!k->meta.heuristic_names.len || !heuristics_read_launch(c, m, &src->opts, slots < 1 ? 1 : slots))
    return TILE_OK;
  src->heuristics = heuristics_new(slots);
  return src->heuristics ? TILE_OK : context_fail(c->ctx, TILE_ERROR_MEMORY, "out of memory");
}

typedef struct Declaring {
  JitSource *src;
  const KernelTuning **out;
} Declaring;

static tile_status declare_kernel(Compilation *c, void *ud) {
  Declaring *d = ud;
  Module *m = pipeline_parse(c);
  const CheckedKernel *k = m ? pipeline_declare_module(c, m, &d->src->opts) : NULL;
  if (c->diags.errors) return TILE_ERROR_COMPILE;
  if (!k) return TILE_OK;
  remember_params(c, k, d->src);
  tile_status s = declare_tuning(c, k, d->src, d->out);
  return s == TILE_OK ? declare_heuristics(c, m, k, d->src) : s;
}

/* Parses and declares the kernel once, at creation: syntax errors, a
 * define the kernel does not take, a kernel name not in the source, an
 * autotune decorator in error fail the creation (not the first launch);
 * the declaration gives the tuning and the run-time parameters a launch
 * must pass. */
static tile_status declare(tile_context *ctx, JitSource *src, const KernelTuning **out) {
  *out = NULL;
  Compilation *c = compilation_begin(ctx, src->name, src->text, src->len);
  if (!c) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  c->configs_as_listed = 1;
  Declaring d = {src, out};
  return end_compile(c, compilation_run(c, declare_kernel, &d));
}

tile_status tile_kernel_create(tile_context *ctx, const char *name, const char *source, size_t len,
                               const tile_options *opts, tile_kernel **out) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!out || !source) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_create: NULL source or out");
  *out = NULL;
  tile_options full;
  tile_status s = context_read_options(ctx, opts, "tile_kernel_create", &full);
  if (s != TILE_OK) return s;
  opts = &full;
  if (opts->arch && !arch_find(opts->arch)) /* at creation, not at the first launch */
    return context_failf(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_create: unknown arch '%s' (known: %s)", opts->arch,
                         arch_names(1));
  JitSource *src = copy_source(name, source, len, opts);
  if (!src) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  const KernelTuning *tuning = NULL;
  s = declare(ctx, src, &tuning);
  tile_kernel *k = s == TILE_OK ? kernel_new(ctx, &jit_compiler, src) : NULL;
  if (!k) {
    release(&(tile_kernel){.source = src, .tuning = tuning});
    return s == TILE_OK ? context_fail(ctx, TILE_ERROR_MEMORY, "out of memory") : s;
  }
  k->tuning = tuning;
  k->fixed_signature = opts->signature != NULL;
  k->declared_name = src->declared_name;
  k->declared_params = src->declared_params;
  k->num_declared_params = src->num_declared_params;
  k->heuristics_at_launch = src->heuristics != NULL;
  *out = k;
  return TILE_OK;
}

tile_status tile_kernel_create_file(tile_context *ctx, const char *path, const tile_options *opts, tile_kernel **out) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (out) *out = NULL;
  if (!path || !out) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_create_file: NULL path or out");
  char *text;
  size_t len;
  tile_status s = context_read_file(ctx, path, 64u << 20, &text, &len);
  if (s == TILE_OK) s = tile_kernel_create(ctx, path, text, len, opts, out);
  free(text);
  return s;
}
