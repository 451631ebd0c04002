/* Running ptxas: the PTX goes to a private temporary directory, ptxas is
 * spawned with an argv array (never through a shell), and the cubin and
 * its report are read back; the directory is removed whatever happens.
 * Several threads may assemble at once: each has its own directory, and
 * opens its files close-on-exec ("e"), so that a ptxas another thread
 * spawns meanwhile does not inherit them. */
#include "ptxas.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int executable(const char *path) { return access(path, X_OK) == 0; }

int ptxas_locate(const char *override, const char *search_path, char *path, size_t size, char *err, size_t errsize) {
  if (override && *override) {
    if (!executable(override)) {
      snprintf(err, errsize, "TILE_PTXAS_PATH is '%s', which is not an executable file", override);
      return -1;
    }
    snprintf(path, size, "%s", override);
    return 0;
  }
  if (executable("/usr/local/cuda/bin/ptxas")) {
    snprintf(path, size, "/usr/local/cuda/bin/ptxas");
    return 0;
  }
  for (const char *p = search_path ? search_path : ""; *p;) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    snprintf(path, size, "%.*s/ptxas", (int)n, p);
    if (n && executable(path)) return 0;
    p = end ? end + 1 : p + n;
  }
  snprintf(err, errsize, "ptxas not found: install the CUDA toolkit or set TILE_PTXAS_PATH");
  return -1;
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rbe");
  if (!f) return NULL;
  char *data = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (data = malloc((size_t)n + 1))) {
      *len = fread(data, 1, (size_t)n, f);
      data[*len] = 0;
    }
  }
  fclose(f);
  return data;
}

static int write_all(const char *path, const char *data, size_t len) {
  FILE *f = fopen(path, "wbe");
  if (!f) return -1;
  int ok = fwrite(data, 1, len, f) == len;
  return fclose(f) == 0 && ok ? 0 : -1;
}

/* Runs ptxas in `dir`; returns its exit status, or -1 if it could not run. */
static int run_ptxas(const char *ptxas, const char *arch, const char *dir) {
  char arch_arg[64], in[512], out[512], log[512];
  snprintf(arch_arg, sizeof arch_arg, "-arch=%s", arch);
  snprintf(in, sizeof in, "%s/kernel.ptx", dir);
  snprintf(out, sizeof out, "%s/kernel.cubin", dir);
  snprintf(log, sizeof log, "%s/ptxas.log", dir);
  char *argv[] = {(char *)ptxas, arch_arg, "-v", "-o", out, in, NULL};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int spawned = posix_spawn(&pid, ptxas, &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void remove_dir(const char *dir) {
  const char *names[] = {"kernel.ptx", "kernel.cubin", "ptxas.log"};
  char path[512];
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    unlink(path);
  }
  rmdir(dir);
}

int ptxas_assemble(const char *ptxas, const char *ptx, size_t len, const char *arch, char **cubin, size_t *cubin_len,
                   char **log, char *err, size_t errsize) {
  char dir[] = "/tmp/tile-ptxas-XXXXXX", path[512];
  *cubin = *log = NULL;
  if (!mkdtemp(dir)) {
    snprintf(err, errsize, "cannot make a temporary directory for ptxas: %s", strerror(errno));
    return -1;
  }
  snprintf(path, sizeof path, "%s/kernel.ptx", dir);
  int status = write_all(path, ptx, len) ? -2 : run_ptxas(ptxas, arch, dir);
  size_t log_len = 0;
  snprintf(path, sizeof path, "%s/ptxas.log", dir);
  *log = read_all(path, &log_len);
  snprintf(path, sizeof path, "%s/kernel.cubin", dir);
  if (status == 0) *cubin = read_all(path, cubin_len);
  remove_dir(dir);
  if (status == 0 && *cubin) return 0;
  if (status == -2) snprintf(err, errsize, "cannot write the PTX for ptxas: %s", strerror(errno));
  else if (status == -1) snprintf(err, errsize, "cannot run %s", ptxas);
  else snprintf(err, errsize, "ptxas failed (exit %d): %.400s", status, *log ? *log : "");
  free(*cubin);
  *cubin = NULL;
  return -1;
}
