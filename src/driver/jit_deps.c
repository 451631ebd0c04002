/* The files a JIT specialisation was compiled from beyond its source: the
 * modules of its package, found and read by frontend/modules.c.  Its disk
 * cache entry keeps the list (runtime/cache.c stores it as bytes) and the
 * JIT checks it before using the entry, as ccache checks the headers a
 * compilation read: the key sees the source alone, and an edited helper must
 * not bring back code compiled from its old text.  The list is text:
 *
 *   tile deps 1
 *   STATE LENGTH PATH      (one line per file)
 *
 * STATE is the file's SHA-256 in lowercase hex, `absent` (looked for and
 * not there: one made later would be imported instead) or `unreadable`;
 * LENGTH is the path's bytes in decimal, so any byte but NUL may be in it.
 * A kernel that imports no file has an empty list.  Only the canonical
 * spelling parses, so a list that parses is the bytes jit_deps_format
 * gives for it. */
#include "driver.h"
#include "../support/sha256.h"

#include <stdio.h>
#include <string.h>

static const char header[] = "tile deps 1\n";
enum { MAX_DEP_PATH = 4096 };

static const char *state_name(ModuleFileState s) { return s == MODULE_FILE_ABSENT ? "absent" : "unreadable"; }

const char *jit_deps_format(Arena *a, const ModuleFiles *files, size_t *len) {
  Buf b;
  buf_init(&b, a);
  for (int i = 0; files && i < files->len; i++) {
    const ModuleFile *f = &files->data[i];
    char hex[65];
    if (f->state == MODULE_FILE_READ) sha256_hex(f->sha256, hex);
    if (!i) buf_puts(&b, header);
    buf_printf(&b, "%s %zu ", f->state == MODULE_FILE_READ ? hex : state_name(f->state), strlen(f->path));
    buf_puts(&b, f->path);
    buf_puts(&b, "\n");
  }
  *len = b.len;
  return buf_cstr(&b);
}

static int hex_digit(char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; }

/* STATE: a digest of 64 lowercase hex digits, or a state's name. */
static int read_state(const char *p, size_t n, ModuleFile *f) {
  if (n == 64) {
    for (size_t i = 0; i < 64; i += 2) {
      int hi = hex_digit(p[i]), lo = hex_digit(p[i + 1]);
      if (hi < 0 || lo < 0) return 0;
      f->sha256[i / 2] = (unsigned char)(hi << 4 | lo);
    }
    f->state = MODULE_FILE_READ;
    return 1;
  }
  for (ModuleFileState s = MODULE_FILE_ABSENT; s <= MODULE_FILE_UNREADABLE; s++)
    if (n == strlen(state_name(s)) && !memcmp(p, state_name(s), n)) return f->state = s, 1;
  return 0;
}

/* LENGTH: 1 to MAX_DEP_PATH in decimal, no leading zero; its digits' count, 0 if none. */
static size_t read_length(const char *p, const char *end, size_t *length) {
  size_t n = 0;
  *length = 0;
  while (p + n < end && p[n] >= '0' && p[n] <= '9' && *length <= MAX_DEP_PATH) *length = *length * 10 + (size_t)(p[n++] - '0');
  return n && p[0] != '0' && *length <= MAX_DEP_PATH ? n : 0;
}

/* One line from p: the file into *f (its path in a); the bytes it took, 0 when malformed. */
static size_t read_line(Arena *a, const char *p, const char *end, ModuleFile *f) {
  const char *space = memchr(p, ' ', (size_t)(end - p));
  if (!space || !read_state(p, (size_t)(space - p), f)) return 0;
  const char *q = space + 1;
  size_t length, digits = read_length(q, end, &length);
  q += digits;
  if (!digits || q >= end || *q++ != ' ' || (size_t)(end - q) < length + 1 || q[length] != '\n') return 0;
  if (memchr(q, 0, length)) return 0; /* no file has such a name */
  f->path = arena_strndup(a, q, length);
  return (size_t)(q + length + 1 - p);
}

int jit_deps_parse(Arena *a, const char *deps, size_t len, ModuleFiles *out, char *why, size_t whysize) {
  memset(out, 0, sizeof *out);
  if (!len) return 0;
  size_t at = sizeof header - 1;
  if (len <= at || memcmp(deps, header, at)) { /* a header alone is no list jit_deps_format writes */
    snprintf(why, whysize, "its dependency list has no header, or nothing after it");
    return -1;
  }
  while (at < len) {
    ModuleFile f = {0};
    size_t took = read_line(a, deps + at, deps + len, &f);
    if (!took) {
      snprintf(why, whysize, "its dependency list is malformed at byte %zu", at);
      return -1;
    }
    vec_push(a, out, f);
    at += took;
  }
  return 0;
}

int jit_deps_hold(const ModuleFiles *files) {
  for (int i = 0; i < files->len; i++) {
    const ModuleFile *f = &files->data[i];
    unsigned char digest[32];
    ModuleFileState now = module_file_state(f->path, digest);
    if (now != f->state || (now == MODULE_FILE_READ && memcmp(digest, f->sha256, 32))) return 0;
  }
  return 1;
}
