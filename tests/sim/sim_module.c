/* Building code for the sim target (sim.h): the source goes to a fresh
 * temporary directory, clang (spawned with an argv array) makes a shared
 * object of it, dlopen loads it with every symbol resolved at once (a
 * tile_sim_* or __nv_* function the simulator lacks is an error here, not
 * a crash later), and the directory is removed.  Requires clang-19 and
 * compiler-rt's builtins (libclang-rt-19-dev). */
#include "sim.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TILE_SIM_CLANG
#define TILE_SIM_CLANG "clang-19"
#endif

extern char **environ;

struct SimModule {
  void *handle;
};

static int write_file(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = fwrite(data, 1, len, f);
  return fclose(f) || n != len ? -1 : 0;
}

/* The log's text (its first errsz - 1 bytes) into err after `what`. */
static void read_log(const char *path, const char *what, char *err, size_t errsz) {
  size_t n = (size_t)snprintf(err, errsz, "%s", what);
  FILE *f = fopen(path, "rb");
  if (!f || n >= errsz) {
    if (f) fclose(f);
    return;
  }
  size_t got = fread(err + n, 1, errsz - n - 1, f);
  err[n + got] = 0;
  fclose(f);
}

/* Runs argv with stdout and stderr into log; the exit status, or -1. */
static int spawn(char *const argv[], const char *log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc) return -1;
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int compile(const char *dir, const char *src, const char *so, const char *const *flags, char *err, size_t errsz) {
  const char *clang = getenv("TILE_SIM_CLANG") ? getenv("TILE_SIM_CLANG") : TILE_SIM_CLANG;
  /* compiler-rt's builtins supply the soft-float helpers host code for
   * fp16/bf16 calls (__truncsfbf2, ...), which older libgcc lacks */
  const char *argv[64] = {clang, "-O1", "-fPIC", "-shared", "-rtlib=compiler-rt", "-Wno-override-module", "-o", so, src};
  int n = 9;
  for (int i = 0; flags && flags[i] && n < 60; i++) argv[n++] = flags[i];
  argv[n++] = "-lm";
  argv[n] = NULL;
  char log[4200];
  snprintf(log, sizeof log, "%s/clang.log", dir);
  int rc = spawn((char *const *)argv, log);
  if (rc == 0) return 0;
  char what[512];
  snprintf(what, sizeof what, rc < 0 ? "cannot run %s\n" : "%s failed:\n", clang);
  read_log(log, what, err, errsz);
  return -1;
}

static void remove_dir(const char *dir, const char *const *files, int n) {
  char path[4200];
  for (int i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
}

int sim_module_build(const char *source, size_t len, const char *suffix, const char *const *flags, SimModule **out,
                     char *err, size_t errsz) {
  *out = NULL;
  const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char dir[4096], src[4200], so[4200];
  snprintf(dir, sizeof dir, "%s/tile-sim-XXXXXX", tmp);
  if (!mkdtemp(dir)) {
    snprintf(err, errsz, "cannot make a temporary directory under %s", tmp);
    return -1;
  }
  snprintf(src, sizeof src, "%s/kernel%s", dir, suffix);
  snprintf(so, sizeof so, "%s/kernel.so", dir);
  int failed = write_file(src, source, len);
  if (failed) snprintf(err, errsz, "cannot write %s", src);
  else failed = compile(dir, src, so, flags, err, errsz);
  void *handle = failed ? NULL : dlopen(so, RTLD_NOW | RTLD_LOCAL);
  if (!failed && !handle) snprintf(err, errsz, "cannot load the kernel: %s", dlerror()), failed = 1;
  char name[64];
  snprintf(name, sizeof name, "kernel%s", suffix);
  const char *files[] = {name, "kernel.so", "clang.log"};
  remove_dir(dir, files, 3);
  if (failed) return -1;
  *out = malloc(sizeof **out);
  if (!*out) {
    dlclose(handle);
    snprintf(err, errsz, "out of memory");
    return -1;
  }
  (*out)->handle = handle;
  return 0;
}

int sim_module_build_file(const char *path, const char *const *flags, SimModule **out, char *err, size_t errsz) {
  *out = NULL;
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  size_t len = 0;
  if (f && fseek(f, 0, SEEK_END) == 0) {
    long size = ftell(f);
    text = size >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)size + 1) : NULL;
    len = text ? fread(text, 1, (size_t)size, f) : 0;
  }
  if (f) fclose(f);
  if (!text) {
    snprintf(err, errsz, "cannot read %s", path);
    return -1;
  }
  const char *dot = strrchr(path, '.');
  int rc = sim_module_build(text, len, dot ? dot : ".c", flags, out, err, errsz);
  free(text);
  return rc;
}

void *sim_module_symbol(SimModule *m, const char *name) { return m ? dlsym(m->handle, name) : NULL; }

void sim_module_close(SimModule *m) {
  if (!m) return;
  dlclose(m->handle);
  free(m);
}
