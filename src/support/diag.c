/* Rendering of diagnostics and the fatal-error guard. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { MAX_SHOWN_LINE = 160, CONTEXT_BEFORE = 70 };

void diags_init(Diags *d, Arena *a, Guard *g) {
  memset(d, 0, sizeof *d);
  d->arena = a;
  d->guard = g;
  d->max_errors = 20;
}

static void add(Diags *d, DiagLevel level, Loc loc, const char *fmt, va_list ap) {
  char tmp[1024];
  vsnprintf(tmp, sizeof tmp, fmt, ap);
  Diag dg = {level, loc, arena_strdup(d->arena, tmp)};
  if (level == DIAG_ERROR && d->errors >= d->max_errors) {
    Diag stop = {DIAG_ERROR, loc, "too many errors emitted, stopping now"};
    vec_push(d->arena, &d->list, stop);
    d->errors++;
    guard_fail(d->guard, "too many errors");
  }
  vec_push(d->arena, &d->list, dg);
  if (level == DIAG_ERROR) d->errors++;
}

#define DEFINE_DIAG(fn, level)                                                 \
  void fn(Diags *d, Loc loc, const char *fmt, ...) {                           \
    va_list ap;                                                                \
    va_start(ap, fmt);                                                         \
    add(d, level, loc, fmt, ap);                                               \
    va_end(ap);                                                                \
  }
DEFINE_DIAG(diag_error, DIAG_ERROR)
DEFINE_DIAG(diag_warning, DIAG_WARNING)
DEFINE_DIAG(diag_note, DIAG_NOTE)

static const char *level_name(DiagLevel l) {
  return l == DIAG_ERROR ? "error" : l == DIAG_WARNING ? "warning" : "note";
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), 0 if invalid. */
static int utf8_length(const unsigned char *p, size_t n) {
  int len = p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : 0;
  if (len == 0 || (size_t)len > n) return 0;
  for (int i = 1; i < len; i++)
    if ((p[i] & 0xC0) != 0x80) return 0;
  return len;
}

/* Appends source bytes [from, to) as text a terminal shows safely: control
 * bytes and invalid UTF-8 become '?'.  Returns the characters shown. */
static size_t put_shown(Buf *out, const char *text, size_t from, size_t to) {
  size_t shown = 0;
  for (size_t i = from; i < to; shown++) {
    unsigned char c = (unsigned char)text[i];
    int len = c >= 0x80 ? utf8_length((const unsigned char *)text + i, to - i) : 1;
    if (len > 1) {
      buf_putn(out, text + i, (size_t)len);
      i += (size_t)len;
      continue;
    }
    buf_puts(out, c == '\t' ? "\t" : (c < 0x20 || c >= 0x7f) ? "?" : (char[]){(char)c, 0});
    i++;
  }
  return shown;
}

/* Prints the source line of `loc` and a caret line beneath it; a very long
 * line is shown as a window around the column. */
static void render_source(const Loc *loc, Buf *out) {
  const Source *s = loc->src;
  if (!s || loc->offset > s->len || (size_t)(loc->col - 1) > loc->offset) return;
  size_t start = loc->offset - (size_t)(loc->col - 1);
  size_t end = loc->offset;
  while (end < s->len && s->text[end] != '\n') end++;
  size_t from = start, to = end;
  int elided_front = 0, elided_back = 0;
  if (loc->offset - start > CONTEXT_BEFORE) {
    from = loc->offset - CONTEXT_BEFORE;
    elided_front = 1;
  }
  if (to - from > MAX_SHOWN_LINE) {
    to = from + MAX_SHOWN_LINE;
    elided_back = 1;
  }
  if (elided_front) buf_puts(out, "...");
  put_shown(out, s->text, from, to);
  if (elided_back) buf_puts(out, "...");
  buf_puts(out, "\n");
  if (elided_front) buf_puts(out, "   ");
  for (size_t i = from; i < loc->offset; i++) {
    unsigned char c = (unsigned char)s->text[i];
    if (c >= 0x80 && utf8_length((const unsigned char *)s->text + i, loc->offset - i) > 1) {
      i += (size_t)utf8_length((const unsigned char *)s->text + i, loc->offset - i) - 1;
    }
    buf_puts(out, c == '\t' ? "\t" : " ");
  }
  buf_puts(out, "^");
  for (int i = 1; i < loc->len && loc->offset + (size_t)i < to; i++) buf_puts(out, "~");
  buf_puts(out, "\n");
}

/* file:line:col: level: message, and the source line; a diagnostic without a location names the
 * compilation's source instead (from the library as from tilec). */
static void render_one(const Diags *d, const Diag *dg, Buf *out) {
  if (dg->loc.src)
    buf_printf(out, "%s:%d:%d: ", dg->loc.src->name, dg->loc.line, dg->loc.col);
  else
    buf_printf(out, "%s: ", d->origin ? d->origin : "tile");
  buf_printf(out, "%s: %s\n", level_name(dg->level), dg->msg);
  render_source(&dg->loc, out);
}

void diag_render(const Diags *d, Buf *out) {
  for (int i = 0; i < d->list.len; i++) render_one(d, &d->list.data[i], out);
}

_Noreturn void guard_fail(Guard *g, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g->message, sizeof g->message, fmt, ap);
  va_end(ap);
  longjmp(g->jump, 1);
}

int guard_run(Guard *g, GuardedFn *fn, void *ud) {
  if (setjmp(g->jump)) return 1;
  fn(ud);
  return 0;
}

int arena_run(Arena *a, GuardedFn *fn, void *ud) {
  Guard guard;
  Guard *outer = a->guard;
  a->guard = &guard;
  int unwound = guard_run(&guard, fn, ud);
  a->guard = outer;
  return unwound;
}
