/* libFuzzer harness over the kernel metadata reader (src/runtime/metadata.c,
 * json.c): every input is read as metadata JSON; what reads is then trusted by
 * a launch, so its tables are checked as a launch uses them (argument
 * positions, tensor maps) and arguments are checked and packed against it.
 * Any crash, leak, hang or sanitizer report is a bug: bad metadata must only
 * ever give "metadata: ..." (tile_kernel_load's TILE_ERROR_ARGUMENT). */
#include "../../src/support/dtypes.h"
#include "../../src/runtime/args.h"
#include "../../src/runtime/metadata.h"
#include "../../src/support/diag.h"

#include <stdint.h>
#include <string.h>

/* One argument of the kind and type each parameter wants, others for ':1' ones. */
static void arguments_for(const KernelMetadata *m, tile_arg *args, float *memory) {
  for (int i = 0; i < m->num_args; i++) args[i] = tile_int(1);
  for (int i = 0; i < m->num_params; i++) {
    const MetaParam *p = &m->params[i];
    args[p->position] = p->is_ptr ? tile_buffer(memory, dtype_name((DType)p->dtype), 4)
                        : p->is_int ? tile_int(p->divisibility == 16 ? 16 : 3) : tile_float(0.5);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static float memory[16] __attribute__((aligned(16)));
  Arena a;
  Guard guard;
  char err[512];
  arena_init(&a, 1 << 26);
  a.guard = &guard;
  if (setjmp(guard.jump) == 0) {
    KernelMetadata m;
    if (!meta_parse(&a, (const char *)data, size, &m, err, sizeof err)) {
      tile_arg args[MAX_KERNEL_ARGS];
      uint64_t slots[MAX_KERNEL_ARGS];
      void *params[MAX_KERNEL_ARGS];
      arguments_for(&m, args, memory);
      if (!args_check(&m, args, m.num_args, slots, params, err, sizeof err))
        for (int i = 0; i < m.num_tensor_maps; i++) {
          TensorMapShape shape;
          args_tensor_map(&m.tensor_maps[i], args, &shape, err, sizeof err);
        }
    } else if (strncmp(err, "metadata: ", 10)) {
      __builtin_trap(); /* every refusal says what it is */
    }
  }
  arena_free(&a);
  return 0;
}
