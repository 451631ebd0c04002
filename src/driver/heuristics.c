/* @triton.heuristics that read a launch's arguments, in the JIT.  Triton
 * runs the heuristics at each launch and specialises on what they give;
 * here a launch's integer and float arguments are looked up among those
 * seen lately, and only new ones declare the kernel again to run the
 * heuristics (for each config: they see its values).  What they give is a
 * *case*: the -D values that the specialisations of those arguments compile
 * with, one list per config.  Launches whose heuristics give the same values
 * share a case, so a specialisation and its disk cache entry (whose key
 * holds the -D values).  Kernels whose heuristics read no argument never
 * come here (heuristics_read_launch says so at creation). */
#include "driver.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_SEEN = 64 }; /* launches' values remembered; a loop over more sizes evaluates again */

typedef struct Defines {
  char **list;  /* the options' -D values, then NAME=VALUE of each heuristic */
  int count;
} Defines;

/* The integer and float arguments of a launch and the case they gave. */
typedef struct Seen {
  LaunchArg *args;
  int n;
  int which;
} Seen;

struct JitHeuristics {
  int slots;        /* configs the kernel tunes over, else 1 */
  Defines *cases;   /* case c, config s at [c * slots + s] */
  int num_cases;
  Seen seen[MAX_SEEN]; /* most recent first */
  int num_seen;
};

JitHeuristics *heuristics_new(int slots) {
  JitHeuristics *h = calloc(1, sizeof *h);
  if (h) h->slots = slots < 1 ? 1 : slots;
  return h;
}

static void free_defines(Defines *d) {
  for (int i = 0; i < d->count; i++) free(d->list[i]);
  free(d->list);
}

void heuristics_free(JitHeuristics *h) {
  if (!h) return;
  for (int i = 0; i < h->num_cases * h->slots; i++) free_defines(&h->cases[i]);
  free(h->cases);
  for (int i = 0; i < h->num_seen; i++) free(h->seen[i].args);
  free(h);
}

const char *const *heuristics_defines(const JitHeuristics *h, int which, int config, int *count) {
  int slot = config > 0 && config < h->slots ? config : 0;
  const Defines *d = &h->cases[which * h->slots + slot];
  *count = d->count;
  return (const char *const *)d->list;
}

static LaunchArg launch_value(const tile_arg *a) {
  LaunchKind kind = a->kind == TILE_ARG_INT ? LAUNCH_INT : a->kind == TILE_ARG_FLOAT ? LAUNCH_FLOAT : LAUNCH_OTHER;
  return (LaunchArg){kind, kind == LAUNCH_INT ? a->i : 0, kind == LAUNCH_FLOAT ? a->f : 0};
}

/* Same kinds and values (a float's bits: -0.0 is not 0.0 to a heuristic that prints it). */
static int same_values(const Seen *s, const tile_arg *args, int n) {
  if (s->n != n) return 0;
  for (int i = 0; i < n; i++) {
    LaunchArg a = launch_value(&args[i]);
    if (a.kind != s->args[i].kind || a.i != s->args[i].i || memcmp(&a.f, &s->args[i].f, sizeof a.f)) return 0;
  }
  return 1;
}

/* The case these values gave, moved to the front; -1 if not seen lately. */
static int find_seen(JitHeuristics *h, const tile_arg *args, int n) {
  for (int i = 0; i < h->num_seen; i++) {
    if (!same_values(&h->seen[i], args, n)) continue;
    Seen s = h->seen[i];
    memmove(&h->seen[1], &h->seen[0], sizeof s * (size_t)i);
    h->seen[0] = s;
    return s.which;
  }
  return -1;
}

/* Remembers these values' case at the front, forgetting the oldest; out of memory forgets them. */
static void remember(JitHeuristics *h, const tile_arg *args, int n, int which) {
  LaunchArg *values = malloc(sizeof *values * (size_t)(n + 1));
  if (!values) return;
  for (int i = 0; i < n; i++) values[i] = launch_value(&args[i]);
  if (h->num_seen == MAX_SEEN) free(h->seen[--h->num_seen].args);
  memmove(&h->seen[1], &h->seen[0], sizeof *h->seen * (size_t)h->num_seen++);
  h->seen[0] = (Seen){values, n, which};
}

/* ---- running the heuristics ------------------------------------------------------------ */

/* The options of config slot `slot`: the kernel tunes (slots > 1), or the options' config. */
static tile_options slot_options(const tile_options *opts, int slots, int slot) {
  tile_options o = *opts;
  if (slots > 1) o.config = slot;
  return o;
}

/* The NAME=VALUE of each heuristic of k that no -D gives, after the options' -D values, into d
 * (the compilation's arena). */
static void collect(Compilation *c, const CheckedKernel *k, const tile_options *o, Defines *d) {
  const KernelMeta *m = &k->meta;
  d->list = arena_alloc(&c->arena, sizeof *d->list * (size_t)(o->num_defines + m->heuristic_names.len + 1));
  d->count = 0;
  for (int i = 0; i < o->num_defines; i++) d->list[d->count++] = (char *)o->defines[i];
  for (int i = 0; i < m->heuristic_names.len; i++)
    for (int j = 0; j < k->params.len; j++) {
      const KernelParam *p = &k->params.data[j];
      if (strcmp(p->name, m->heuristic_names.data[i]) || p->value_from_define || !p->value) continue;
      d->list[d->count++] = arena_printf(&c->arena, "%s=%s", p->name, value_str(&c->arena, p->value));
    }
}

int heuristics_read_launch(Compilation *c, const Module *m, const tile_options *opts, int slots) {
  Diags quiet; /* what fails here is reported where it matters: at a launch */
  diags_init(&quiet, &c->arena, &c->guard);
  quiet.max_errors = INT_MAX;
  for (int s = 0; s < slots; s++) {
    tile_options o = slot_options(opts, slots, s);
    if (!pipeline_heuristics(c, m, &o, NULL, 0, &quiet)) return 1;
  }
  return 0;
}

static int same_defines(const Defines *x, const Defines *y) {
  if (x->count != y->count) return 0;
  for (int i = 0; i < x->count; i++)
    if (strcmp(x->list[i], y->list[i])) return 0;
  return 1;
}

/* The case whose lists are `found` (one per slot): an existing one, else a
 * copy added; -1 when out of memory. */
static int intern_case(JitHeuristics *h, const Defines *found) {
  for (int c = 0; c < h->num_cases; c++) {
    int same = 1;
    for (int s = 0; s < h->slots && same; s++) same = same_defines(&h->cases[c * h->slots + s], &found[s]);
    if (same) return c;
  }
  Defines *cases = realloc(h->cases, sizeof *cases * (size_t)(h->num_cases + 1) * (size_t)h->slots);
  if (!cases) return -1;
  h->cases = cases;
  Defines *added = &cases[h->num_cases * h->slots];
  memset(added, 0, sizeof *added * (size_t)h->slots);
  h->num_cases++; /* freed with the others, copied or not */
  int failed = 0;
  for (int s = 0; s < h->slots; s++) {
    added[s].list = calloc((size_t)found[s].count + 1, sizeof *added[s].list);
    failed |= !added[s].list;
    for (int i = 0; added[s].list && i < found[s].count; i++) {
      failed |= !(added[s].list[i] = strdup(found[s].list[i]));
      added[s].count += added[s].list[i] != NULL;
    }
  }
  return failed ? -1 : h->num_cases - 1;
}

typedef struct Evaluation {
  JitHeuristics *h;
  const tile_options *opts;
  const tile_arg *args;
  int n;
  int which;
} Evaluation;

static tile_status evaluate(Compilation *c, void *ud) {
  Evaluation *e = ud;
  LaunchArg *launch = arena_alloc(&c->arena, sizeof *launch * (size_t)(e->n + 1));
  Defines *found = arena_alloc(&c->arena, sizeof *found * (size_t)e->h->slots);
  for (int i = 0; i < e->n; i++) launch[i] = launch_value(&e->args[i]);
  Module *m = pipeline_parse(c);
  if (!m) return TILE_ERROR_COMPILE;
  for (int s = 0; s < e->h->slots; s++) {
    tile_options o = slot_options(e->opts, e->h->slots, s);
    const CheckedKernel *k = pipeline_heuristics(c, m, &o, launch, e->n, &c->diags);
    if (!k) return TILE_ERROR_COMPILE;
    collect(c, k, &o, &found[s]);
  }
  if ((e->which = intern_case(e->h, found)) < 0) guard_fail(&c->guard, "out of memory keeping the heuristics' values");
  return TILE_OK;
}

tile_status heuristics_case(JitHeuristics *h, tile_context *ctx, const char *name, const char *text, size_t len,
                            const tile_options *opts, const tile_arg *args, int n, int *out) {
  if ((*out = find_seen(h, args, n)) >= 0) return TILE_OK;
  Compilation *c = compilation_begin(ctx, name, text, len);
  if (!c) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  Evaluation e = {h, opts, args, n, -1};
  tile_status st = compilation_report(c, compilation_run(c, evaluate, &e));
  compilation_end(c);
  if (st != TILE_OK) return st;
  remember(h, args, n, e.which);
  *out = e.which;
  return TILE_OK;
}
