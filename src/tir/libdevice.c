/* The libdevice functions of lang/libdevice.def: tile IR's libdevice op
 * names one by its row (the op's kind); the frontend checks calls against
 * the row's signature, the verifier the op's operands, and the LLVM lowering
 * calls its symbol. */
#include "tir.h"

#include <string.h>

typedef struct Row {
  const char *name, *f32, *f64, *kind;
  LibdeviceSig sig;
} Row;

static const Row rows[] = {
#define LIBDEVICE(id, name, sig, f32, f64, c32, c64) {name, "__nv_" #f32, "__nv_" #f64, #f64, sig},
#include "libdevice.def"
#undef LIBDEVICE
};

const char *libdevice_name(int id) { return rows[id].name; }
const char *libdevice_symbol(int id, int fp64) { return fp64 ? rows[id].f64 : rows[id].f32; }
const char *libdevice_kind(int id) { return rows[id].kind; }
LibdeviceSig libdevice_sig(int id) { return rows[id].sig; }

int libdevice_arity(int id) {
  switch (rows[id].sig) {
  case LD_FF: case LD_FI: return 2;
  case LD_FFF: return 3;
  default: return 1;
  }
}

int libdevice_lookup(const char *name) {
  for (int i = 0; i < LIBDEVICE_COUNT; i++)
    if (!strcmp(rows[i].name, name)) return i;
  return -1;
}
