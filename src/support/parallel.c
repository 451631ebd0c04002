/* parallel_for: a shared counter hands out job indices to pthreads; no
 * state outlives the call. */
#include "parallel.h"

#include <pthread.h>
#include <stdatomic.h>

enum { STACK_BYTES = 16 << 20 };

typedef struct Work {
  atomic_int next;            /* the next index not taken */
  int count;
  void (*job)(void *jobs, int i);
  void *jobs;
} Work;

static void *take_jobs(void *arg) {
  Work *w = arg;
  for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->count;) w->job(w->jobs, i);
  return NULL;
}

void parallel_for(int count, int threads, void (*job)(void *jobs, int i), void *jobs) {
  Work w = {0, count, job, jobs};
  pthread_t helpers[PARALLEL_MAX_THREADS];
  pthread_attr_t attr;
  int made = 0, want = (threads < count ? threads : count) - 1;
  if (want > PARALLEL_MAX_THREADS) want = PARALLEL_MAX_THREADS;
  pthread_attr_init(&attr);
  /* the compiler recurses over the source's tree: twice the main thread's usual 8 MiB */
  pthread_attr_setstacksize(&attr, STACK_BYTES);
  while (made < want && pthread_create(&helpers[made], &attr, take_jobs, &w) == 0) made++;
  pthread_attr_destroy(&attr);
  take_jobs(&w);
  for (int i = 0; i < made; i++) pthread_join(helpers[i], NULL);
}
