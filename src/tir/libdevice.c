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

/* Each signature's arguments, a letter each (F: x's type, I: i32, U: u32), and its result (F, I: i32,
 * B: i1, L: i64, S: fp32, D: fp64), in LibdeviceSig's order. */
static const struct {
  const char *args;
  char result;
} sigs[] = {{"F", 'F'},  {"FF", 'F'}, {"FFF", 'F'}, {"FFFF", 'F'}, {"FI", 'F'},
            {"IF", 'F'}, {"FFU", 'F'}, {"F", 'I'},  {"F", 'B'},    {"F", 'L'},
            {"F", 'S'},  {"F", 'D'},  {"FF", 'D'}};

static const DType x_types[][2] = {
#define LD_TYPES_PAIR(types, narrow, wide) {DT_##narrow, DT_##wide},
    LIBDEVICE_TYPES(LD_TYPES_PAIR)
#undef LD_TYPES_PAIR
};

const char *libdevice_name(int id) { return rows[id].name; }
const char *libdevice_symbol(int id, int wide) { return wide ? rows[id].f64 : rows[id].f32; }
const char *libdevice_kind(int id) { return rows[id].kind; }
int libdevice_arity(int id) { return (int)strlen(sigs[rows[id].sig].args); }
int libdevice_x_arg(int id) { return (int)(strchr(sigs[rows[id].sig].args, 'F') - sigs[rows[id].sig].args); }
int libdevice_n_arg(int id) {
  const char *n = strchr(sigs[rows[id].sig].args, 'I');
  return n ? (int)(n - sigs[rows[id].sig].args) : -1;
}

DType libdevice_x_type(int id, int wide) { return x_types[rows[id].types][wide]; }
int libdevice_takes(int id, DType x) {
  const DType *t = x_types[rows[id].types];
  return x != DT_COUNT && (x == t[0] || x == t[1]);
}

DType libdevice_arg(int id, int i, DType x) {
  char a = sigs[rows[id].sig].args[i];
  return a == 'I' ? DT_I32 : a == 'U' ? DT_U32 : x;
}

DType libdevice_result(int id, DType x) {
  switch (sigs[rows[id].sig].result) {
  case 'I': return DT_I32;
  case 'B': return DT_I1;
  case 'L': return DT_I64;
  case 'S': return DT_FP32;
  case 'D': return DT_FP64;
  default: return x;
  }
}

int libdevice_lookup(const char *name) {
  for (int i = 0; i < LIBDEVICE_COUNT; i++)
    if (!strcmp(rows[i].name, name)) return i;
  return -1;
}
