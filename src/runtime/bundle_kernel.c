/* Kernels loaded from a bundle (tile_kernel_load_bundle; docs/abi.md
 * section 12).  The bundle is the kernel's compiler, through the same
 * KernelCompiler table a JIT kernel has: a launch's arguments give a
 * specialisation key (args.c), which picks the most specialised bundled
 * signature they satisfy; the GPU present picks the image (a cubin it runs,
 * the newest first, else PTX the driver compiles); a kernel with several
 * bundled configs is tuned among them by the autotuner (autotune.c), its
 * choice kept in the disk cache keyed by the bundle's checksum, the GPU and
 * the case.  On the CPU interpreter the bundled tile IR runs, through
 * libtile's interpreter (libtile_rt has none). */
#include "bundle.h"
#include "args.h"
#include "cache.h"
#include "device.h"
#include "json.h"
#include "../support/diag.h"
#include "../support/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BUNDLE_BYTES = 1 << 30 };

/* How well a bundled signature's key fits a launch's: -1 if it does not
 * (a type differs, or a ':16' or ':1' the arguments do not give), else
 * more for each promise and exact dtype.  An integer argument fits any
 * integer parameter (args_check then checks its value fits). */
static int fit(const uint16_t *want, const uint16_t *have, int n) {
  int score = 0;
  for (int i = 0; i < n; i++) {
    int kind = want[i] & KEY_KIND, same_dtype = (want[i] & KEY_DTYPE) == (have[i] & KEY_DTYPE);
    int hint = have[i] & KEY_HINT;
    if (kind != (have[i] & KEY_KIND) || (!same_dtype && kind != KEY_INT)) return -1;
    if (hint && hint != (want[i] & KEY_HINT)) return -1;
    score += same_dtype + 2 * (hint != 0);
  }
  return score;
}

/* "A; B; C": what the bundle holds, for messages. */
static void list_signatures(const Bundle *b, char *out, size_t size) {
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < b->num_specs && used < size; i++) {
    int w = snprintf(out + used, size - used, "%s%s", i ? "; " : "", b->signatures[i]);
    if (w < 0) break;
    used += (size_t)w;
  }
}

/* The bundled specialisation for s's arguments. */
static tile_status choose_spec(tile_kernel *k, const Spec *s, int *out) {
  const Bundle *b = k->source;
  char held[1024], want[MAX_SIGNATURE];
  int best = -1, best_score = -1;
  list_signatures(b, held, sizeof held);
  if (s->key_len < 0 && b->num_specs == 1) return *out = 0, TILE_OK;
  if (s->key_len < 0)
    return context_failf(k->ctx, TILE_ERROR_ARGUMENT, "kernel '%s' (bundle '%s'): give the arguments to choose among its "
                         "specialisations (%s)", b->kernel, b->name, held);
  for (int i = 0; i < b->num_specs; i++) {
    int score = b->num_args[i] == s->key_len ? fit(s->key, b->keys[i], s->key_len) : -1;
    if (score > best_score) best = i, best_score = score;
  }
  if (best >= 0) return *out = best, TILE_OK;
  if (key_signature(s->key, s->key_len, want, sizeof want)) snprintf(want, sizeof want, "(too long to show)");
  return context_failf(k->ctx, TILE_ERROR_ARGUMENT,
                       "kernel '%s' (bundle '%s'): the arguments (%d, specialised as %s) match no bundled "
                       "specialisation; it holds %s", b->kernel, b->name, s->key_len, want, held);
}

/* sm_90a above sm_90 above sm_89 ...; 0 for what does not read as one. */
static int arch_rank(const char *arch) {
  int version = 0, n = 0;
  if (sscanf(arch, "sm_%3d%n", &version, &n) != 1) return 0;
  return 2 * version + (arch[n] == 'a');
}

/* The image of (spec, config) for the GPU present: a cubin it runs, the
 * newest, else PTX the driver compiles, the newest; NULL if none runs. */
static const BundleEntry *choose_image(tile_kernel *k, int spec, int config) {
  const Bundle *b = k->source;
  const BundleEntry *best = NULL;
  int best_rank = -1;
  for (int i = 1; i < b->num_entries; i++) {
    const BundleEntry *e = &b->entries[i];
    if ((e->kind != BUNDLE_CUBIN && e->kind != BUNDLE_PTX) || e->spec != spec || e->config != config) continue;
    DeviceRuns runs = device_runs(k->ctx, e->arch);
    if (runs == DEVICE_RUNS_NONE || (e->kind == BUNDLE_CUBIN && runs != DEVICE_RUNS_CUBIN)) continue;
    int rank = (e->kind == BUNDLE_CUBIN ? 1000 : 0) + arch_rank(e->arch);
    if (rank > best_rank) best = e, best_rank = rank;
  }
  return best;
}

static tile_status no_image(tile_kernel *k, int spec, int config) {
  const Bundle *b = k->source;
  char held[512] = "";
  size_t used = 0;
  for (int i = 1; i < b->num_entries && used < sizeof held; i++) {
    const BundleEntry *e = &b->entries[i];
    if ((e->kind == BUNDLE_CUBIN || e->kind == BUNDLE_PTX) && e->spec == spec && e->config == config) {
      int w = snprintf(held + used, sizeof held - used, "%s%s %s", used ? ", " : "", e->arch, e->kind == BUNDLE_CUBIN ? "cubin" : "PTX");
      if (w > 0) used += (size_t)w;
    }
  }
  return context_failf(k->ctx, TILE_ERROR_UNSUPPORTED, "kernel '%s' (bundle '%s'): no image of %s that runs on this GPU "
                       "(%s); the bundle holds %s", b->kernel, b->name, b->signatures[spec], tile_device_name(k->ctx),
                       held[0] ? held : "none");
}

static const BundleEntry *find_tir(const Bundle *b, int spec, int config) {
  for (int i = 1; i < b->num_entries; i++)
    if (b->entries[i].kind == BUNDLE_TIR && b->entries[i].spec == spec && b->entries[i].config == config)
      return &b->entries[i];
  return NULL;
}

/* The entry's image (none for tile IR) and metadata into s. */
static tile_status keep_entry(tile_kernel *k, Spec *s, const BundleEntry *e) {
  if (spec_copy_in(s, e->kind == BUNDLE_TIR ? NULL : e->data, e->size, e->kind == BUNDLE_PTX, e->metadata, e->metadata_len))
    return context_fail(k->ctx, TILE_ERROR_MEMORY, "out of memory loading a bundled kernel");
  return TILE_OK;
}

static tile_status build(tile_kernel *k, Spec *s) {
  const Bundle *b = k->source;
  int spec, slot = s->variant.config < 0 ? 0 : s->variant.config;
  int config = b->num_configs ? b->configs[slot] : BUNDLE_NONE;
  tile_status st = choose_spec(k, s, &spec);
  if (st != TILE_OK) return st;
  if (s->on_cpu) {
    const BundleInterpreter *interp = b->interp;
    const BundleEntry *tir = find_tir(b, spec, config);
    if (!interp)
      return context_failf(k->ctx, TILE_ERROR_UNSUPPORTED, "kernel '%s' (bundle '%s'): the CPU interpreter needs libtile "
                           "(libtile_rt runs bundles on the GPU only)", b->kernel, b->name);
    if (!tir)
      return context_failf(k->ctx, TILE_ERROR_UNSUPPORTED, "kernel '%s' (bundle '%s'): no tile IR for %s, config %d, "
                           "so it cannot run on the CPU interpreter", b->kernel, b->name, b->signatures[spec], config);
    st = keep_entry(k, s, tir);
    return st == TILE_OK ? interp->read(k, s, tir) : st;
  }
  const BundleEntry *image = choose_image(k, spec, config);
  return image ? keep_entry(k, s, image) : no_image(k, spec, config);
}

static tile_status run_cpu(tile_kernel *k, Spec *s, const unsigned grid[3], const tile_arg *args, int n,
                           const size_t *bytes) {
  const Bundle *b = k->source;
  return b->interp->run(k, s, grid, args, n, bytes);
}

static void release_spec(tile_kernel *k, Spec *s) {
  const Bundle *b = k->source;
  if (s->program && b->interp) b->interp->release(k, s);
  s->program = NULL;
}

static void release(tile_kernel *k) {
  if (k->source) bundle_free(k->source);
  free(k->source);
  k->source = NULL;
  k->tuning = NULL;
}

/* ---- the autotuner's choices ------------------------------------------------------------ */

/* The choice's cache key: the bundle (its checksum) and the case (the GPU, the signature, the key's values). */
static void choice_key(const Bundle *b, const char *what, char hex[65]) {
  Sha256 h;
  unsigned char digest[32];
  static const char tag[] = "tile bundle choice 1";
  sha256_init(&h);
  sha256_update(&h, tag, sizeof tag);
  sha256_update(&h, b->digest, sizeof b->digest);
  sha256_update(&h, what, strlen(what) + 1);
  sha256_final(&h, digest);
  sha256_hex(digest, hex);
}

static Variant load_choice(tile_kernel *k, const char *what, char *note, size_t notesize) {
  const Bundle *b = k->source;
  char key[65];
  choice_key(b, what, key);
  return autotune_read_choice(k, key, b->num_configs, NULL, note, notesize); /* bundles write no dependency list */
}

static void save_choice(tile_kernel *k, const char *what, Variant v, const char *timings) {
  char key[65];
  if (!k->ctx->cache_dir) return;
  choice_key(k->source, what, key);
  autotune_write_choice(k, key, what, v, timings, NULL, 0);
}

static const KernelCompiler bundle_compiler = {.build = build, .run_cpu = run_cpu, .release_spec = release_spec,
                                               .release = release, .load_choice = load_choice,
                                               .save_choice = save_choice};

/* ---- loading ------------------------------------------------------------------------------ */

tile_status bundle_load(tile_context *ctx, const char *name, const void *data, size_t size,
                        const BundleInterpreter *interp, tile_kernel **out) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (!out || (!data && size))
    return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_load_bundle: NULL data or out");
  *out = NULL;
  char err[1024];
  Bundle *b = calloc(1, sizeof *b);
  if (!b) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  if (bundle_decode(b, name, data ? data : "", size, err, sizeof err)) {
    bundle_free(b);
    free(b);
    return context_fail(ctx, TILE_ERROR_ARGUMENT, err);
  }
  b->interp = interp;
  tile_kernel *k = kernel_new(ctx, &bundle_compiler, b);
  if (!k) {
    bundle_free(b);
    free(b);
    return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  }
  k->tuning = b->num_configs > 1 ? &b->tuning : NULL;
  *out = k;
  return TILE_OK;
}

tile_status bundle_load_file(tile_context *ctx, const char *path, const BundleInterpreter *interp, tile_kernel **out) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  context_begin(ctx);
  if (out) *out = NULL;
  if (!path || !out) return context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_kernel_load_bundle_file: NULL path or out");
  char *data;
  size_t size;
  tile_status st = context_read_file(ctx, path, MAX_BUNDLE_BYTES, &data, &size);
  if (st == TILE_OK) st = bundle_load(ctx, path, data, size, interp, out);
  free(data);
  return st;
}
