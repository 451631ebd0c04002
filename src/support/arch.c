/* The target table of arch.def. */
#include "arch.h"

#include <string.h>

static const Arch archs[] = {
#define ARCH(name, cc, wgmma, tma, sim, smem_kib, threads, programs, sms) \
  {name, cc, wgmma, tma, sim, (int64_t)(smem_kib) << 10, 1 << 10, 65536, threads, programs, sms},
#include "arch.def"
#undef ARCH
};
enum { N_ARCHS = sizeof archs / sizeof archs[0] };

static const char all_names[] =
#define ARCH(name, cc, wgmma, tma, sim, smem_kib, threads, programs, sms) ", " name
#include "arch.def"
#undef ARCH
    ;

static const char gpu_names[] =
#define ARCH(name, cc, wgmma, tma, sim, smem_kib, threads, programs, sms) GPU_NAME_##sim(name)
#define GPU_NAME_0(name) ", " name
#define GPU_NAME_1(name)
#include "arch.def"
#undef GPU_NAME_0
#undef GPU_NAME_1
#undef ARCH
    ;

const char *arch_names(int sims) { return (sims ? all_names : gpu_names) + 2; }

const Arch *arch_find(const char *name) {
  for (int i = 0; i < N_ARCHS && name; i++)
    if (!strcmp(archs[i].name, name)) return &archs[i];
  return NULL;
}

const Arch *arch_of_cc(int cc) {
  for (int i = 0; i < N_ARCHS; i++)
    if (archs[i].cc == cc) return &archs[i];
  return NULL;
}

int64_t arch_smem_per_program(const Arch *a) { return a->smem - a->smem_reserved; }

int64_t arch_programs_per_sm(const Arch *a, int64_t smem, int64_t regs, int64_t threads) {
  int64_t by_smem = a->smem / (smem + a->smem_reserved), by_regs = a->registers / ((regs + 7) / 8 * 8 * threads);
  int64_t by_threads = a->threads / threads, n = by_smem < by_regs ? by_smem : by_regs;
  n = n < by_threads ? n : by_threads;
  return n < a->programs ? n : a->programs;
}

const char *arch_for_gpu(int major, int minor, int *prefer_ptx) {
  int gpu = major * 10 + minor;
  const Arch *best = NULL, *newest = NULL;
  *prefer_ptx = 0;
  for (int i = 0; i < N_ARCHS; i++) {
    const Arch *a = &archs[i];
    if (a->sim) continue;
    int specific = a->name[strlen(a->name) - 1] == 'a';
    if (!specific && (!newest || a->cc > newest->cc)) newest = a;
    if (a->cc / 10 != major || a->cc > gpu || (specific && a->cc != gpu)) continue;
    if (!best || a->cc > best->cc || (a->cc == best->cc && specific)) best = a;
  }
  if (best) return best->name;
  if (newest && gpu > newest->cc) {
    *prefer_ptx = 1;
    return newest->name;
  }
  return NULL;
}
