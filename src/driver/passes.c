/* The pass manager of both IR levels: runs the selected passes of
 * passes.def in order, with the level's verifier after each, and prints
 * the IR after each for --print-after-all. */
#include "driver.h"
#include "../tgir/passes.h"

#include <string.h>

static const struct {
  PassLevel level;
  const char *name;
  void (*tir)(TirFunc *f);                          /* PASS_TIR */
  void (*tgir)(TirFunc *f, const TgirOptions *o);   /* PASS_TGIR */
} passes[] = {
#define PASS(level, id, name, summary) {PASS_##level, name, PASS_FN_##level(id)},
#define PASS_FN_TIR(id) tir_##id, NULL
#define PASS_FN_TGIR(id) NULL, tgir_##id
#include "passes.def"
#undef PASS
#undef PASS_FN_TIR
#undef PASS_FN_TGIR
};
enum { N_PASSES = sizeof passes / sizeof passes[0] };

/* Whether the comma-separated `list` holds the word of `len` bytes at `word`. */
static int listed_n(const char *list, const char *word, size_t len) {
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && !strncmp(p, word, len)) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

static int listed(const char *list, const char *name) { return listed_n(list, name, strlen(name)); }

static int known_name(const char *word, size_t len) {
  if (listed_n("all,none", word, len)) return 1;
  for (int i = 0; i < N_PASSES; i++)
    if (strlen(passes[i].name) == len && !strncmp(word, passes[i].name, len)) return 1;
  return 0;
}

const char *passes_names(Arena *a) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < N_PASSES; i++) {
    int seen = 0;
    for (int j = 0; j < i; j++) seen |= !strcmp(passes[i].name, passes[j].name);
    if (!seen) buf_printf(&b, "%s, ", passes[i].name);
  }
  buf_puts(&b, "all, none");
  return buf_cstr(&b);
}

/* Reports each unknown name of `list`; returns how many there are. */
static int check_names(const char *list, Arena *a, Diags *d) {
  int bad = 0;
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (!known_name(p, len)) {
      diag_error(d, (Loc){0}, "unknown pass '%.*s' (passes: %s)", (int)len, p, passes_names(a));
      bad++;
    }
    if (!end) break;
    p = end + 1;
  }
  return bad;
}

/* What every pass ends with: the IR printed into dump (if set), and the level's verifier. */
static int after_pass(PassLevel level, TirFunc *f, const char *name, Diags *d, Buf *dump) {
  int gpu = level == PASS_TGIR;
  if (gpu) tgir_compact_layouts(f);
  if (dump) {
    buf_printf(dump, "// after %s\n", name);
    (gpu ? tgir_print : tir_print)(f, dump);
  }
  int problems = gpu ? tgir_verify(f, d) : tir_verify(f, d);
  if (problems)
    diag_note(d, (Loc){0}, "the %s verifier failed after pass '%s'", gpu ? "GPU-layout IR" : "tile IR", name);
  return problems;
}

int passes_run(PassLevel level, TirFunc *f, const TgirOptions *o, const char *list, const char *skip, Diags *d,
               Buf *dump) {
  if (!list) list = "all";
  int problems = check_names(list, f->arena, d) + (skip ? check_names(skip, f->arena, d) : 0);
  for (int i = 0; i < N_PASSES && !problems; i++) {
    if (passes[i].level != level || (!listed(list, "all") && !listed(list, passes[i].name))) continue;
    if (skip && !strcmp(skip, passes[i].name)) continue;
    if (level == PASS_TIR) passes[i].tir(f);
    else passes[i].tgir(f, o);
    problems = after_pass(level, f, passes[i].name, d, dump);
  }
  return problems;
}

int passes_to_tgir(TirFunc *f, const TgirOptions *o, const char *list, Diags *d, Buf *dump) {
  tgir_convert(f);
  int problems = after_pass(PASS_TGIR, f, "assign-layouts", d, dump);
  return problems ? problems : passes_run(PASS_TGIR, f, o, list, NULL, d, dump);
}
