/* Green threads for the simulator: a fiber is a stack and a saved stack
 * pointer; fiber_switch saves the callee-saved registers of the running
 * fiber and resumes another.  x86-64 uses a hand-written switch (about ten
 * instructions: the simulator switches tens of millions of times per test);
 * other hosts fall back to ucontext.  Under AddressSanitizer every switch
 * is announced with __sanitizer_start/finish_switch_fiber so ASan knows
 * which stack is live. */
#ifndef TILE_SIM_FIBER_H
#define TILE_SIM_FIBER_H

#include <stddef.h>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

typedef struct Fiber {
  void *sp;              /* saved stack pointer while the fiber is not running */
#if !defined(__x86_64__)
  ucontext_t context;
#endif
  const void *bottom;    /* lowest address of the stack (for ASan); NULL for the thread's own stack */
  size_t size;
  void *fake_stack;      /* ASan's fake stack of the fiber, saved while it is suspended */
} Fiber;

typedef void (*FiberFn)(void *arg);

/* Prepares `f` to run fn(arg) on [stack, stack + size) the first time it is
 * switched to.  fn must never return: it ends by switching away for good. */
void fiber_init(Fiber *f, void *stack, size_t size, FiberFn fn, void *arg);

/* Suspends `from` (the running fiber) and resumes `to`.  `leaving_for_good`
 * says `from` will never be resumed (its ASan fake stack is dropped). */
void fiber_switch(Fiber *from, Fiber *to, int leaving_for_good);

/* The first thing fn does: completes the switch that started it; `from`
 * (the fiber that switched to it) learns its own stack bounds for ASan. */
void fiber_started(Fiber *self, Fiber *from);

/* Clears ASan's marks on a stack reused after a fiber was abandoned on it. */
void fiber_forget_stack(void *stack, size_t size);

#endif
