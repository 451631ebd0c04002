/* Running independent jobs on several threads at once. */
#ifndef TILE_PARALLEL_H
#define TILE_PARALLEL_H

enum { PARALLEL_MAX_THREADS = 64 }; /* parallel_for uses no more, whatever it is asked */

/* Calls job(jobs, i) for every i in [0, count), on up to `threads` threads,
 * the calling one among them, and returns when every call has returned.
 * Each thread takes the next index not yet taken, so a slow job holds up
 * one thread only; at most PARALLEL_MAX_THREADS.  A thread that cannot be created leaves its share to the
 * others; threads <= 1 runs everything on the calling thread. */
void parallel_for(int count, int threads, void (*job)(void *jobs, int i), void *jobs);

#endif
