/* The pass manager: runs the selected passes of passes.def in order, with
 * the verifier after each one. */
#include "passes.h"

#include <string.h>

static const struct {
  const char *name;
  void (*run)(TirFunc *f);
} passes[] = {
#define PASS(id, name, summary) {name, tir_##id},
#include "passes.def"
#undef PASS
};
enum { N_PASSES = sizeof passes / sizeof passes[0] };

/* The GPU-layout IR steps a list may name too (src/tgir runs them). */
static const char *const gpu_steps[] = {
#define TGIR_PASS(id, name, summary) name,
#include "../tgir/passes.def"
#undef TGIR_PASS
};
enum { N_GPU_STEPS = sizeof gpu_steps / sizeof gpu_steps[0] };

/* Whether `name` is one of the comma-separated words of `list`. */
static int listed(const char *list, const char *name) {
  size_t n = strlen(name);
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

int tir_pass_listed(const char *list, const char *name) { return listed(list, name); }

/* "fold, cse, widen, ..., remove-converts, all, none": each pass once, in order. */
static const char *pass_names(Arena *a) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < N_PASSES; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= !strcmp(passes[i].name, passes[j].name);
    if (!seen) buf_printf(&b, "%s, ", passes[i].name);
  }
  for (int i = 0; i < N_GPU_STEPS; i++) buf_printf(&b, "%s, ", gpu_steps[i]);
  buf_puts(&b, "all, none");
  return buf_cstr(&b);
}

static int check_names(const char *list, Arena *a, Diags *d) {
  int bad = 0;
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    int known = (len == 3 && !strncmp(p, "all", 3)) || (len == 4 && !strncmp(p, "none", 4));
    for (int i = 0; i < N_PASSES; i++) known |= strlen(passes[i].name) == len && !strncmp(p, passes[i].name, len);
    for (int i = 0; i < N_GPU_STEPS; i++) known |= strlen(gpu_steps[i]) == len && !strncmp(p, gpu_steps[i], len);
    if (!known) {
      diag_error(d, (Loc){0}, "unknown pass '%.*s' (passes: %s)", (int)len, p, pass_names(a));
      bad++;
    }
    if (!end) break;
    p = end + 1;
  }
  return bad;
}

int tir_run_passes(TirFunc *f, const char *list, Diags *d, Buf *dump) {
  if (!list) list = "all";
  int problems = check_names(list, f->arena, d);
  if (problems) return problems;
  for (int i = 0; i < N_PASSES; i++) {
    if (!listed(list, "all") && !listed(list, passes[i].name)) continue;
    passes[i].run(f);
    if (dump) {
      buf_printf(dump, "// after %s\n", passes[i].name);
      tir_print(f, dump);
    }
    problems = tir_verify(f, d);
    if (problems) {
      diag_note(d, (Loc){0}, "the tile IR verifier failed after pass '%s'", passes[i].name);
      return problems;
    }
  }
  return 0;
}
