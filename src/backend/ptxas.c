/* Running ptxas: the PTX, the cubin and ptxas's report live in memory
 * files (memfd_create), which ptxas opens as /dev/fd/N, so nothing is left
 * on disk whatever happens to the caller.  ptxas is started with an argv
 * array (never through a shell), in its own process group, under the
 * caller's time and memory limits (PtxasLimits): when the time is up its
 * whole group is killed, and if the caller dies first the kernel kills it
 * (PR_SET_PDEATHSIG).  Several threads may assemble at once: each has its
 * own memory files. */
#define _GNU_SOURCE /* memfd_create, prctl */
#include "ptxas.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* Memory files hold the PTX, the cubin and ptxas's report; close-on-exec,
 * so that a ptxas another thread starts meanwhile does not inherit them. */
typedef struct Files {
  int ptx, cubin, log;
} Files;

static void close_files(Files *f) {
  int fds[] = {f->ptx, f->cubin, f->log};
  for (int i = 0; i < 3; i++)
    if (fds[i] >= 0) close(fds[i]);
}

static int open_files(Files *f) {
  f->ptx = memfd_create("kernel.ptx", MFD_CLOEXEC);
  f->cubin = memfd_create("kernel.cubin", MFD_CLOEXEC);
  f->log = memfd_create("ptxas.log", MFD_CLOEXEC);
  return f->ptx < 0 || f->cubin < 0 || f->log < 0 ? -1 : 0;
}

static int write_all(int fd, const char *data, size_t len) {
  while (len) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

/* A memory file's contents, malloc'd and NUL-terminated; NULL when out of memory. */
static char *read_all(int fd, size_t *len) {
  struct stat st;
  *len = 0;
  if (fstat(fd, &st) || lseek(fd, 0, SEEK_SET) != 0) return NULL;
  size_t size = (size_t)st.st_size, n = 0;
  char *data = malloc(size + 1);
  while (data && n < size) {
    ssize_t got = read(fd, data + n, size - n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    n += (size_t)got;
  }
  if (data) data[n] = 0;
  *len = n;
  return data;
}

/* The child between fork and exec: async-signal-safe calls only (another
 * thread may hold malloc's lock).  Its own process group, so that a timeout
 * kills whatever it started; killed with its parent (PR_SET_PDEATHSIG), so
 * that a caller that dies (SIGINT, SIGTERM, SIGKILL) leaves no ptxas behind. */
static void exec_ptxas(char **argv, const Files *f, const PtxasLimits *limits, pid_t parent) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  setpgid(0, 0);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
  if (limits->memory_mib) {
    struct rlimit r = {(rlim_t)limits->memory_mib << 20, (rlim_t)limits->memory_mib << 20};
    if (setrlimit(RLIMIT_AS, &r) != 0) _exit(127);
  }
  if (fcntl(f->ptx, F_SETFD, 0) || fcntl(f->cubin, F_SETFD, 0) || dup2(f->log, 1) < 0 || dup2(f->log, 2) < 0)
    _exit(127);
  execv(argv[0], argv);
  _exit(127);
}

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Waits for ptxas until `timeout_s` (0: forever) passes, then kills its
 * group: all of it after a timeout, stray children otherwise.  The exited
 * child is reaped only after the kill, so its process group id cannot have
 * been reused.  Returns the wait status, or -1; *timed_out says why. */
static int wait_ptxas(pid_t pid, int timeout_s, int *timed_out) {
  double deadline = seconds_now() + timeout_s;
  struct timespec pause = {0, 1000000}; /* 1 ms, doubling to 10 ms: ptxas takes tens of ms */
  siginfo_t info;
  *timed_out = 0;
  for (;;) {
    info.si_pid = 0;
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0 && errno != EINTR) break;
    if (info.si_pid) break;
    if (timeout_s && seconds_now() >= deadline) {
      *timed_out = 1;
      break;
    }
    nanosleep(&pause, NULL);
    if (pause.tv_nsec < 10000000) pause.tv_nsec *= 2;
  }
  kill(-pid, SIGKILL);
  if (*timed_out) kill(pid, SIGKILL);
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

/* Runs ptxas on the memory files; its wait status, or -1 if it could not start. */
static int run_ptxas(const char *ptxas, const char *arch, const Files *f, const PtxasLimits *limits, int *timed_out) {
  char arch_arg[64], in[32], out[32];
  snprintf(arch_arg, sizeof arch_arg, "-arch=%s", arch);
  snprintf(in, sizeof in, "/dev/fd/%d", f->ptx);
  snprintf(out, sizeof out, "/dev/fd/%d", f->cubin);
  char *argv[] = {(char *)ptxas, arch_arg, "-v", "-o", out, in, NULL};
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) exec_ptxas(argv, f, limits, parent);
  setpgid(pid, pid); /* as the child does: whichever runs first */
  return wait_ptxas(pid, limits->timeout_s, timed_out);
}

/* Why ptxas gave no cubin, into err. */
static void explain(const char *ptxas, const PtxasLimits *limits, int status, int timed_out, const char *log, char *err,
                    size_t errsize) {
  char memory[96] = "";
  if (limits->memory_mib && (status == -1 || WIFSIGNALED(status) || strstr(log, "Memory allocation")))
    snprintf(memory, sizeof memory, " (its memory is limited to %zu MiB: TILE_PTXAS_MEMORY)", limits->memory_mib);
  if (timed_out)
    snprintf(err, errsize,
             "ptxas did not finish within %d s (TILE_PTXAS_TIMEOUT) and was stopped: very large tiles make it slow; "
             "give smaller block sizes, or a larger TILE_PTXAS_TIMEOUT (0: no limit)",
             limits->timeout_s);
  else if (status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !*log))
    snprintf(err, errsize, "cannot run %s%s", ptxas, memory);
  else if (WIFSIGNALED(status))
    snprintf(err, errsize, "ptxas was killed by signal %d (%s)%s: %.400s", WTERMSIG(status), strsignal(WTERMSIG(status)),
             memory, log);
  else
    snprintf(err, errsize, "ptxas failed (exit %d)%s: %.400s", WEXITSTATUS(status), memory, log);
}

int ptxas_assemble(const char *ptxas, const PtxasLimits *limits, const char *ptx, size_t len, const char *arch,
                   char **cubin, size_t *cubin_len, char **log, char *err, size_t errsize) {
  Files f;
  *cubin = *log = NULL;
  *cubin_len = 0;
  if (open_files(&f) || write_all(f.ptx, ptx, len)) {
    snprintf(err, errsize, "cannot make the memory files for ptxas: %s", strerror(errno));
    close_files(&f);
    return -1;
  }
  int timed_out = 0;
  int status = run_ptxas(ptxas, arch, &f, limits, &timed_out);
  size_t log_len;
  *log = read_all(f.log, &log_len);
  int ok = status != -1 && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (ok) *cubin = read_all(f.cubin, cubin_len);
  close_files(&f);
  if (ok && *cubin && *cubin_len) return 0;
  if (ok) snprintf(err, errsize, "ptxas exited 0 without writing a cubin: %.400s", *log ? *log : "");
  else explain(ptxas, limits, status, timed_out, *log ? *log : "", err, errsize);
  free(*cubin);
  *cubin = NULL;
  return -1;
}

/* The integer just before `marker` in the log, or -1. */
static int number_before(const char *log, const char *marker) {
  const char *at = log ? strstr(log, marker) : NULL;
  if (!at) return -1;
  const char *start = at;
  while (start > log && start[-1] >= '0' && start[-1] <= '9') start--;
  return start == at ? -1 : atoi(start);
}

int ptxas_registers(const char *log) {
  const char *at = log ? strstr(log, "Used ") : NULL;
  if (!at) return -1;
  char *end;
  long n = strtol(at + 5, &end, 10);
  return end == at + 5 || strncmp(end, " register", 9) ? -1 : (int)n;
}

int ptxas_spill_stores(const char *log) { return number_before(log, " bytes spill stores"); }
