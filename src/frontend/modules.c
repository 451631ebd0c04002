/* The modules of a kernel file's own package.  A kernel library splits its
 * kernels from the helpers they call (`from .utils import exp`, `from
 * mylib.utils import ext as e`, then `e.program_id(0)`): Python finds those
 * modules on its path, and tile finds them as files beside the module that
 * imports them or under one of its parent directories (where the package's
 * root is): NAME.tl, NAME.py or NAME/__init__.py.  Each is parsed once per
 * compilation, kept only if it parses, and its functions and constants are
 * checked with its own names in scope (module_enter).  A kernel compiled
 * from a string with no file beside it imports nothing this way.  Every
 * file read or looked for is noted (S->files) with what was found: the
 * JIT's disk cache checks its entries against them (module_file_state). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sema_impl.h"
#include "lexer.h"
#include "../support/file.h"
#include "../support/sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_PARENT_DIRS = 8,           /* how far up a package root is looked for */
       MAX_IMPORT_DEPTH = 32,         /* re-exports followed through modules (a cycle ends here) */
       MAX_MODULE_BYTES = 16 << 20 }; /* a larger file is not a module of helpers */

/* The directory part of a file's name ("." for a bare name). */
static const char *dir_of(Sema *S, const char *file) {
  const char *slash = strrchr(file, '/');
  return slash ? arena_strndup(S->arena, file, (size_t)(slash - file)) : ".";
}

/* One note per path: the first look at a file is what the compilation used. */
static void note_file(Sema *S, const char *path, ModuleFileState state, const char *text, size_t len) {
  for (int i = 0; i < S->files->len; i++)
    if (!strcmp(S->files->data[i].path, path)) return;
  ModuleFile f = {path, state, {0}};
  if (state == MODULE_FILE_READ) sha256(text, len, f.sha256);
  vec_push(S->arena, S->files, f);
}

static char *read_file(Sema *S, const char *path, size_t *len) {
  char why[128];
  FILE *f = file_fopen_regular(path, why, sizeof why);
  if (!f) return NULL;
  Buf b;
  buf_init(&b, S->arena);
  char chunk[8192];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < MAX_MODULE_BYTES) buf_putn(&b, chunk, got);
  int bad = ferror(f) || b.len >= MAX_MODULE_BYTES;
  fclose(f);
  *len = b.len;
  return bad ? NULL : (char *)buf_cstr(&b);
}

/* As is_file then read_file see `path`, hashing its bytes as they come. */
ModuleFileState module_file_state(const char *path, unsigned char digest[32]) {
  char why[128];
  FILE *f = file_fopen_regular(path, why, sizeof why);
  if (!f) return MODULE_FILE_ABSENT;
  Sha256 h;
  sha256_init(&h);
  char chunk[8192];
  size_t got, total = 0;
  while (total < MAX_MODULE_BYTES && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    sha256_update(&h, chunk, got);
    total += got;
  }
  int bad = ferror(f) || total >= MAX_MODULE_BYTES;
  fclose(f);
  sha256_final(&h, digest);
  return bad ? MODULE_FILE_UNREADABLE : MODULE_FILE_READ;
}

/* The file's canonical name, so `pkg/ops/../utils/a.py` and `pkg/utils/a.py` are one module. */
static const char *canonical(Sema *S, const char *file) {
  char *real = realpath(file, NULL);
  const char *copy = arena_strdup(S->arena, real ? real : file);
  free(real);
  return copy;
}

static ModuleState *loaded_by_file(Sema *S, const char *key) {
  for (int i = 0; i < S->loaded.len; i++)
    if (S->loaded.data[i]->key && !strcmp(S->loaded.data[i]->key, key)) return S->loaded.data[i];
  return NULL;
}

/* Parses `file` as a module: NULL if it does not parse (its errors kept
 * out of the compilation's: the import is then one tile does not
 * understand). */
static ModuleState *load(Sema *S, const char *file, const char *dotted, int is_package) {
  const char *key = canonical(S, file);
  ModuleState *m = loaded_by_file(S, key);
  if (m) return m->mod ? m : NULL;
  m = arena_alloc(S->arena, sizeof *m);
  m->file = file;
  m->key = key;
  m->dotted = dotted;
  m->package_dir = is_package ? dir_of(S, file) : NULL;
  vec_push(S->arena, &S->loaded, m); /* before parsing: an import cycle finds it */
  Source *src = arena_alloc(S->arena, sizeof *src);
  src->name = file;
  src->text = read_file(S, file, &src->len);
  note_file(S, file, src->text ? MODULE_FILE_READ : MODULE_FILE_UNREADABLE, src->text, src->len);
  if (!src->text) return NULL;
  Diags quiet;
  diags_init(&quiet, S->arena, S->diags->guard);
  quiet.max_errors = 1 << 30;
  TokenVec toks = lex(src, &quiet);
  const Module *mod = quiet.errors ? NULL : parse_module(src, &toks, &quiet);
  if (!mod || quiet.errors) return NULL;
  m->mod = mod;
  ModuleState *saved = S->here;
  S->here = m;
  symbols_build(S, 0);
  S->here = saved;
  return m;
}

static int is_file(const char *path) {
  char why[128];
  int fd = file_open_regular(path, why, sizeof why);
  if (fd < 0) return 0;
  close(fd);
  return 1;
}

/* The module `rel` (a/b/c) under `dir`, NULL if there is none. */
static ModuleState *load_under(Sema *S, const char *dir, const char *rel, const char *dotted) {
  static const char *const forms[] = {"%s/%s.tl", "%s/%s.py", "%s/%s/__init__.py"};
  for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
    const char *file = arena_printf(S->arena, forms[i], dir, rel);
    if (is_file(file)) return load(S, file, dotted, i == 2);
    note_file(S, file, MODULE_FILE_ABSENT, NULL, 0); /* one made here later would be found first */
  }
  return NULL;
}

/* The module an import path names (without its leading dots, `rel` as
 * a/b/c): relative to the importing module's directory for `dots` > 0,
 * else there or under one of its parents. */
static ModuleState *find_module(Sema *S, int dots, const char *rel, const char *dotted) {
  const char *file = S->here->file ? S->here->file : S->here->mod->src->name;
  const char *dir = dir_of(S, file);
  for (int up = 1; up < dots; up++) dir = arena_printf(S->arena, "%s/..", dir);
  for (int up = 0; up <= (dots ? 0 : MAX_PARENT_DIRS); up++) {
    ModuleState *m = load_under(S, dir, rel, dotted);
    if (m) return m;
    dir = arena_printf(S->arena, "%s/..", dir);
  }
  return NULL;
}

static Node *module_value(Sema *S, Loc loc, ModuleState *m) {
  Value *v = value_new(S, V_MODULE);
  v->s = m->dotted;
  v->module = m;
  return mk_const(S, loc, v);
}

/* The module an import path names, or the module of which *member (set
 * then) is a name; NULL when neither file exists or parses. */
static ModuleState *imported_module(Sema *S, const char *dotted, const char **member) {
  *member = NULL;
  int dots = (int)strspn(dotted, ".");
  if (!dotted[dots]) return NULL;
  char *rel = arena_strdup(S->arena, dotted + dots);
  for (char *p = rel; *p; p++)
    if (*p == '.') *p = '/';
  ModuleState *m = find_module(S, dots, rel, dotted);
  if (m) return m;
  char *last = strrchr(rel, '/');
  if (!last) return NULL;
  *last = 0;
  *member = last + 1;
  return find_module(S, dots, rel, arena_strndup(S->arena, dotted, strlen(dotted) - strlen(last + 1) - 1));
}

/* What an import path of the package names: a module (`from mylib import
 * utils`), or a function or constant of one (`from mylib.utils import
 * exp`); NULL when there is no such file, it does not parse, or it has no
 * such name. */
Node *module_import(Sema *S, Loc loc, const char *dotted) {
  const char *member;
  ModuleState *m = imported_module(S, dotted, &member);
  if (!m) return NULL;
  return member ? module_member(S, m, loc, member) : module_value(S, loc, m);
}

/* Whether an import path names a module of the package or a name one
 * defines or imports, without evaluating anything (a constant is evaluated
 * only where a kernel uses it). */
int module_import_found(Sema *S, const char *dotted) {
  const char *member;
  ModuleState *m = imported_module(S, dotted, &member);
  if (!m || !member) return m != NULL;
  ModuleState *before = S->here;
  S->here = m;
  int count;
  int found = symbols_find(S, member, &count) != NULL;
  for (int i = 0; !found && i < m->imports.len; i++) found = !strcmp(m->imports.data[i]->name, member);
  found = found || conditional_defines(m, member);
  S->here = before;
  return found || (m->package_dir && load_under(S, m->package_dir, member, dotted));
}

/* m.name: a function, constant or import of module m, or a submodule of a
 * package; NULL when m has none (the caller's error). */
Node *module_member(Sema *S, ModuleState *m, Loc loc, const char *name) {
  if (S->import_depth >= MAX_IMPORT_DEPTH) return NULL; /* `from .a import b` in a.py, b not defined there */
  S->import_depth++;
  Node *v = sema_module_name(S, m, loc, name);
  S->import_depth--;
  if (v || !m->package_dir) return v;
  ModuleState *sub = load_under(S, m->package_dir, name, arena_printf(S->arena, "%s.%s", m->dotted, name));
  return sub ? module_value(S, loc, sub) : NULL;
}

/* The module that defined function `def`, where its body's names are
 * looked up; NULL for the kernel's own file and the standard library. */
ModuleState *module_of(Sema *S, const Node *def) {
  for (int i = 0; i < S->loaded.len; i++)
    if (S->loaded.data[i]->mod && S->loaded.data[i]->mod->src == def->loc.src) return S->loaded.data[i];
  return NULL;
}
