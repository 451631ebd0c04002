/* Two contexts on two threads are independent (tile.h): threads, each with
 * its own context, compile to PTX at the same moment, as the first
 * compilations of their process (LLVM's target registration happens then,
 * and is not safe to race).  Each round runs in a fresh process, so every
 * round races the first compilation again; a round that hangs (a corrupt
 * target list loops for ever) is killed by an alarm.  Every thread's PTX
 * must equal the PTX the same kernel gives on one thread afterwards. */
#include "check.h"
#include "tile/tile.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { THREADS = 4, ROUNDS = 12, SECONDS_PER_ROUND = 120 };

static const char kernel[] =
    "import triton.language as tl\n"
    "@triton.jit\n"
    "def scale(x_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    x = tl.load(x_ptr + offs, mask=offs < n)\n"
    "    tl.store(x_ptr + offs, tl.sqrt(x) * 2 + tl.sum(x, axis=0), mask=offs < n)\n";

static pthread_barrier_t start;

/* The kernel's PTX for sm_90 in a fresh context (malloc'd), or NULL. */
static char *compile(void) {
  tile_context *ctx;
  if (tile_context_create(&ctx) != TILE_OK) return NULL;
  tile_options o;
  tile_options_init(&o);
  const char *defs[] = {"BLOCK=256"};
  o.signature = "*fp32:16,i32";
  o.defines = defs;
  o.num_defines = 1;
  o.arch = "sm_90";
  const char *text = NULL;
  char *ptx = NULL;
  if (tile_emit(ctx, "scale.tl", kernel, sizeof kernel - 1, &o, TILE_STAGE_PTX, &text) == TILE_OK) ptx = strdup(text);
  else fprintf(stderr, "%s\n", tile_error(ctx));
  tile_context_destroy(ctx);
  return ptx;
}

static void *thread_main(void *result) {
  pthread_barrier_wait(&start);
  *(char **)result = compile();
  return NULL;
}

/* One round, in a child process: 0 when every thread made the reference PTX. */
static int round_in_child(void) {
  alarm(SECONDS_PER_ROUND);
  pthread_t threads[THREADS];
  char *ptx[THREADS] = {0};
  pthread_barrier_init(&start, NULL, THREADS);
  for (int i = 0; i < THREADS; i++)
    if (pthread_create(&threads[i], NULL, thread_main, &ptx[i])) return 1;
  for (int i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&start);
  char *reference = compile();
  int failed = !reference || !strstr(reference, ".entry scale");
  for (int i = 0; i < THREADS; i++) {
    failed |= !ptx[i] || !reference || strcmp(ptx[i], reference);
    free(ptx[i]);
  }
  free(reference);
  return failed;
}

int main(void) {
  int failures = 0;
  for (int r = 0; r < ROUNDS; r++) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) _exit(round_in_child());
    int status = 1;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) status = 1;
    if (WIFSIGNALED(status)) fprintf(stderr, "round %d: killed by signal %d\n", r, WTERMSIG(status));
    failures += !WIFEXITED(status) || WEXITSTATUS(status);
  }
  CHECK(failures == 0);
  return check_report();
}
