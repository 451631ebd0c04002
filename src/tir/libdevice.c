/* The libdevice functions of lang/libdevice.def: tile IR's libdevice op
 * names one by its row (the op's kind); the frontend checks calls against
 * the row's signature, the verifier the op's operands, and the LLVM lowering
 * calls its symbol. */
#include "tir.h"

#include <string.h>

typedef struct Row {
  const char *name, *f32, *f64, *kind;
  LibdeviceSig sig;
  LibdeviceTypes types;
} Row;

static const Row rows[] = {
#define LIBDEVICE(id, name, sig, types, f32, f64, c32, c64) {name, "__nv_" #f32, "__nv_" #f64, #f64, sig, LD_TYPES_##types},
#include "libdevice.def"
#undef LIBDEVICE
};

/* Each signature's arguments, a letter each (F: x's float type, I: i32), and its result (F, I: i32,
 * B: i1, L: i64), in LibdeviceSig's order. */
static const struct {
  const char *args;
  char result;
} sigs[] = {{"F", 'F'}, {"FF", 'F'}, {"FFF", 'F'}, {"FFFF", 'F'}, {"FI", 'F'},
            {"IF", 'F'}, {"F", 'I'},  {"F", 'B'},   {"F", 'L'}};

const char *libdevice_name(int id) { return rows[id].name; }
const char *libdevice_symbol(int id, int fp64) { return fp64 ? rows[id].f64 : rows[id].f32; }
const char *libdevice_kind(int id) { return rows[id].kind; }
int libdevice_arity(int id) { return (int)strlen(sigs[rows[id].sig].args); }
int libdevice_float_arg(int id) { return (int)(strchr(sigs[rows[id].sig].args, 'F') - sigs[rows[id].sig].args); }

int libdevice_takes(int id, DType x) {
  LibdeviceTypes t = rows[id].types;
  return (x == DT_FP32 && t != LD_TYPES_FP64) || (x == DT_FP64 && t != LD_TYPES_FP32);
}

DType libdevice_arg(int id, int i, DType x) { return sigs[rows[id].sig].args[i] == 'I' ? DT_I32 : x; }

DType libdevice_result(int id, DType x) {
  switch (sigs[rows[id].sig].result) {
  case 'I': return DT_I32;
  case 'B': return DT_I1;
  case 'L': return DT_I64;
  default: return x;
  }
}

int libdevice_lookup(const char *name) {
  for (int i = 0; i < LIBDEVICE_COUNT; i++)
    if (!strcmp(rows[i].name, name)) return i;
  return -1;
}
