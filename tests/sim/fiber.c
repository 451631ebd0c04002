/* Green threads (fiber.h).  Requires: one fiber runs at a time on an OS
 * thread; a fiber's function never returns.  Guarantees: fiber_switch keeps
 * the System V callee-saved state (rbx, rbp, r12-r15, rsp, MXCSR and the
 * x87 control word) of the fiber it suspends. */
#include "fiber.h"

#include <stdint.h>
#include <string.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define FIBER_ASAN 1
#endif

#ifdef FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__x86_64__)

/* fiber_swap(save, load): pushes the callee-saved registers and the float
 * control words, stores rsp in *save, loads rsp from load, pops the same
 * state and returns into the resumed fiber.  fiber_entry is where a new
 * fiber's first swap returns to: r12 holds fn, r13 its argument. */
void fiber_swap(void **save, void *load);
void fiber_entry(void);
__asm__(".text\n"
        ".p2align 4\n"
        ".hidden fiber_swap\n"
        ".globl fiber_swap\n"
        ".type fiber_swap,@function\n"
        "fiber_swap:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size fiber_swap, .-fiber_swap\n"
        ".p2align 4\n"
        ".hidden fiber_entry\n"
        ".globl fiber_entry\n"
        ".type fiber_entry,@function\n"
        "fiber_entry:\n"
        "  movq %r13, %rdi\n"
        "  callq *%r12\n"
        "  ud2\n"
        ".size fiber_entry, .-fiber_entry\n");

/* The new stack, from its lowest used word up: the control words, r15, r14,
 * r13 (arg), r12 (fn), rbx, rbp, the return address fiber_entry, and 16
 * bytes so that rsp is 16-byte aligned when fiber_entry calls fn. */
void fiber_init(Fiber *f, void *stack, size_t size, FiberFn fn, void *arg) {
  uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
  uint64_t *sp = (uint64_t *)(top - 80);
  uint32_t controls[2];
  __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(controls[0]), "=m"(controls[1]));
  memcpy(&sp[0], controls, sizeof controls);
  sp[1] = 0, sp[2] = 0;                       /* r15, r14 */
  sp[3] = (uint64_t)(uintptr_t)arg;           /* r13 */
  sp[4] = (uint64_t)(uintptr_t)fn;            /* r12 */
  sp[5] = 0, sp[6] = 0;                       /* rbx, rbp */
  sp[7] = (uint64_t)(uintptr_t)fiber_entry;   /* return address */
  f->sp = sp;
  f->bottom = stack;
  f->size = size;
  f->fake_stack = NULL;
}

static void raw_switch(Fiber *from, Fiber *to) { fiber_swap(&from->sp, to->sp); }

#else /* ucontext: slower (a signal-mask system call per switch) but portable */

static void ucontext_entry(unsigned fn_lo, unsigned fn_hi, unsigned arg_lo, unsigned arg_hi) {
  FiberFn fn = (FiberFn)(uintptr_t)((uint64_t)fn_hi << 32 | fn_lo);
  fn((void *)(uintptr_t)((uint64_t)arg_hi << 32 | arg_lo));
}

void fiber_init(Fiber *f, void *stack, size_t size, FiberFn fn, void *arg) {
  getcontext(&f->context);
  f->context.uc_stack.ss_sp = stack;
  f->context.uc_stack.ss_size = size;
  f->context.uc_link = NULL;
  uint64_t fv = (uint64_t)(uintptr_t)fn, av = (uint64_t)(uintptr_t)arg;
  makecontext(&f->context, (void (*)(void))ucontext_entry, 4, (unsigned)fv, (unsigned)(fv >> 32), (unsigned)av,
              (unsigned)(av >> 32));
  f->bottom = stack;
  f->size = size;
  f->fake_stack = NULL;
}

static void raw_switch(Fiber *from, Fiber *to) { swapcontext(&from->context, &to->context); }

#endif

void fiber_switch(Fiber *from, Fiber *to, int leaving_for_good) {
#ifdef FIBER_ASAN
  __sanitizer_start_switch_fiber(leaving_for_good ? NULL : &from->fake_stack, to->bottom, to->size);
#else
  (void)leaving_for_good;
#endif
  raw_switch(from, to);
#ifdef FIBER_ASAN
  const void *bottom;
  size_t size;
  __sanitizer_finish_switch_fiber(from->fake_stack, &bottom, &size);
#endif
}

void fiber_started(Fiber *self, Fiber *from) {
#ifdef FIBER_ASAN
  __sanitizer_finish_switch_fiber(NULL, &from->bottom, &from->size);
#else
  (void)from;
#endif
  (void)self;
}

void fiber_forget_stack(void *stack, size_t size) {
#ifdef FIBER_ASAN
  __asan_unpoison_memory_region(stack, size);
#else
  (void)stack, (void)size;
#endif
}
