/* Tile IR: the op table and the building functions. */
#include "tir.h"

#include <string.h>

static const struct {
  const char *name;
  int flags, arity;
  unsigned attributes;
  const char *summary;
} ops[] = {
#define OP(id, name, flags, operands, attributes, summary) {name, flags, operands, attributes, summary},
#include "ops.def"
#undef OP
};

const char *tir_op_name(TirCode c) { return ops[c].name; }
int tir_op_flags(TirCode c) { return ops[c].flags; }
int tir_op_arity(TirCode c) { return ops[c].arity; }
int tir_op_has(TirCode c, TirAttr a) { return (ops[c].attributes >> a) & 1; }

TirFunc *tir_func_new(Arena *a, const char *name) {
  TirFunc *f = arena_alloc(a, sizeof *f);
  f->arena = a;
  f->name = name;
  f->body = tir_block_new(f);
  f->num_warps = ARCH_DEFAULT_WARPS;
  f->num_stages = ARCH_DEFAULT_STAGES;
  return f;
}

int tir_value_new(TirFunc *f, Type *t, const char *name) {
  vec_push(f->arena, &f->types, t);
  vec_push(f->arena, &f->names, name);
  return f->types.len - 1;
}

TirBlock *tir_block_new(TirFunc *f) { return arena_alloc(f->arena, sizeof(TirBlock)); }

TirOp *tir_op_new(TirFunc *f, TirCode code, Loc loc) {
  TirOp *op = arena_alloc(f->arena, sizeof *op);
  op->code = code;
  op->loc = loc;
  return op;
}

void tir_append(TirFunc *f, TirBlock *b, TirOp *op) { vec_push(f->arena, &b->ops, op); }

TirOp **tir_take_ops(TirFunc *f, TirBlock *b, int *n) {
  *n = b->ops.len;
  TirOp **ops = arena_alloc(f->arena, sizeof *ops * (size_t)(*n + 1));
  if (*n) memcpy(ops, b->ops.data, sizeof *ops * (size_t)*n);
  b->ops.len = 0;
  return ops;
}
void tir_add_operand(TirFunc *f, TirOp *op, int value) { vec_push(f->arena, &op->operands, value); }

void tir_index_values(const TirBlock *b, int *uses, const TirOp **defs) {
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; uses && k < op->operands.len; k++) uses[op->operands.data[k]]++;
    for (int k = 0; defs && k < op->results.len; k++) defs[op->results.data[k]] = op;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) tir_index_values(op->regions[r], uses, defs);
  }
}

void tir_replace_uses(TirBlock *b, int from, int to, const TirOp *except) {
  for (int i = 0; i < b->ops.len; i++) {
    TirOp *op = b->ops.data[i];
    for (int k = 0; op != except && k < op->operands.len; k++)
      if (op->operands.data[k] == from) op->operands.data[k] = to;
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) tir_replace_uses(op->regions[r], from, to, except);
  }
}

int tir_add_result(TirFunc *f, TirOp *op, Type *t) {
  int v = tir_value_new(f, t, NULL);
  vec_push(f->arena, &op->results, v);
  return v;
}

Type *tir_type(const TirFunc *f, int value) { return f->types.data[value]; }

const struct Layout *tir_layout(const TirFunc *f, int value) {
  return value >= 0 && value < f->layouts.len ? f->layouts.data[value] : NULL;
}

void tir_set_layout(TirFunc *f, int value, const struct Layout *l) {
  while (f->layouts.len <= value) vec_push(f->arena, &f->layouts, NULL);
  f->layouts.data[value] = l;
}

/* How the reference and the reader's errors write each attribute of attrs.def. */
static const char *const attribute_syntax[] = {
#define ATTR_INT(id, spelling, field, always) spelling "=N",
#define ATTR_FLAG(id, spelling, bit) spelling,
#define ATTR_NAMED(id, spelling, field, table, what) spelling "=NAME",
#define ATTR_WORD(id, spelling) spelling "=WORD",
#define ATTR_OWN(id, syntax) syntax,
#include "attrs.def"
};

static void print_attribute_syntax(Buf *out, TirCode c, const char *quote) {
  int n = 0;
  for (int a = 0; a < ATTR_COUNT; a++)
    if (tir_op_has(c, (TirAttr)a)) buf_printf(out, "%s%s%s%s", n++ ? ", " : "", quote, attribute_syntax[a], quote);
}

const char *tir_attribute_choices(TirCode c, Arena *a) {
  Buf b;
  buf_init(&b, a);
  print_attribute_syntax(&b, c, "");
  return buf_cstr(&b);
}

void tir_ops_reference(Buf *out) {
  buf_puts(out, "| op | operands | attributes | flags | meaning |\n|---|---|---|---|---|\n");
  for (int i = 0; i < TIR_COUNT; i++) {
    int f = ops[i].flags;
    buf_printf(out, "| `%s` | %s | ", ops[i].name, ops[i].arity < 0 ? "variable" : arena_printf(out->arena, "%d", ops[i].arity));
    print_attribute_syntax(out, (TirCode)i, "`");
    buf_printf(out, " | %s%s%s%s | %s |\n", f & PURE ? "pure " : "", f & EW ? "elementwise " : "", f & TERM ? "terminator" : "",
               f & GPU ? "GPU-layout IR only" : "", ops[i].summary);
  }
}

/* The names of ops' kinds as the textual form writes them: after a dot
 * (cmp.lt) or, with `modifiers`, cast's and division's roundings after the
 * operands (cast %1 rtz), written only when not the first. */
static const char *const *kind_names(TirCode code, int modifiers, int *count) {
#define NAME(id, name) name,
  static const char *const cmp[] = {
#define CMP_KIND NAME
#include "kinds.def"
  };
  static const char *const reduce[] = {
#define REDUCE_KIND NAME
#include "kinds.def"
  };
  static const char *const dot[] = {
#define DOT_KIND NAME
#include "kinds.def"
  };
  static const char *const hint[] = {
#define HINT_KIND NAME
#include "kinds.def"
  };
  static const char *const rand[] = {
#define RAND_KIND NAME
#include "kinds.def"
  };
  static const char *const rounding[] = {
#define ROUND_KIND NAME
#include "kinds.def"
  };
  static const char *const division[] = {
#define DIV_KIND NAME
#include "kinds.def"
  };
  static const char *const propagate_nan[] = {
#define NAN_KIND NAME
#include "kinds.def"
  };
#undef NAME
  static const char *const atomic[] = {
#define ATOMIC(id, name, ptx) name,
#include "memory.def"
  };
  static const char *const libdevice[] = {
#define LIBDEVICE(id, name, sig, types, f32, f64, c32, c64) #f64,
#include "libdevice.def"
#undef LIBDEVICE
  };
#define KINDS(table) (*count = (int)(sizeof table / sizeof table[0]), table)
  if (modifiers) {
    if (code == TIR_CAST) return KINDS(rounding);
    if (code == TIR_DIV) return KINDS(division);
    if (code == TIR_MAXIMUM || code == TIR_MINIMUM || code == TIR_CLAMP) return KINDS(propagate_nan);
  } else {
    switch (code) {
    case TIR_CMP: return KINDS(cmp);
    case TIR_REDUCE: case TIR_SCAN: return KINDS(reduce);
    case TIR_ATOMIC_RMW: return KINDS(atomic);
    case TIR_DOT: return KINDS(dot);
    case TIR_HINT: return KINDS(hint);
    case TIR_RAND: return KINDS(rand);
    case TIR_LIBDEVICE: return KINDS(libdevice);
    default: break;
    }
  }
#undef KINDS
  *count = 0;
  return NULL;
}

static int lookup(const char *const *names, int n, const char *name, size_t len) {
  for (int i = 0; i < n; i++)
    if (strlen(names[i]) == len && !strncmp(names[i], name, len)) return i;
  return -1;
}

const char *tir_kind_name(TirCode code, int kind) {
  int n;
  const char *const *names = kind_names(code, 0, &n);
  return names && kind >= 0 && kind < n ? names[kind] : NULL;
}

int tir_kind_lookup(TirCode code, const char *name, size_t len) {
  int n;
  const char *const *names = kind_names(code, 0, &n);
  return lookup(names, n, name, len);
}

const char *tir_modifier_name(TirCode code, int kind) {
  int n;
  const char *const *names = kind_names(code, 1, &n);
  return names && kind > 0 && kind < n ? names[kind] : NULL;
}

int tir_modifier_lookup(TirCode code, const char *name, size_t len) {
  int n;
  const char *const *names = kind_names(code, 1, &n);
  return lookup(names, n, name, len);
}

const char *tir_kind_choices(TirCode code, int modifiers, Arena *a) {
  int n;
  const char *const *names = kind_names(code, modifiers, &n);
  Buf b;
  buf_init(&b, a);
  for (int i = 0; i < n; i++) buf_printf(&b, "%s\"%s\"", i == 0 ? "" : i == n - 1 ? " or " : ", ", names[i]);
  return buf_cstr(&b);
}

int tir_has_kinds(TirCode code) {
  int n;
  return kind_names(code, 0, &n) != NULL;
}

/* Atomics' memory semantics and scopes, loads' and stores' eviction policies (lang/memory.def), in
 * enum order (the defaults first), as the language and as PTX spell them. */
typedef struct MemoryName {
  const char *name, *ptx;
} MemoryName;
static const MemoryName mem_sems[] = {
#define MEM_SEM(id, name, ptx) {name, ptx},
#include "memory.def"
    {NULL, NULL}};
static const MemoryName mem_scopes[] = {
#define MEM_SCOPE(id, name, ptx) {name, ptx},
#include "memory.def"
    {NULL, NULL}};
static const MemoryName evictions[] = {
#define EVICTION(id, name, ptx) {name, ptx},
#include "memory.def"
    {NULL, NULL}};
static const MemoryName atomics[] = {
#define ATOMIC(id, name, ptx) {name, ptx},
#include "memory.def"
    {NULL, NULL}};

static int name_index(const MemoryName *names, const char *name, size_t len) {
  for (int i = 0; names[i].name; i++)
    if (strlen(names[i].name) == len && !strncmp(names[i].name, name, len)) return i;
  return -1;
}

/* Row i of a table of `count` rows; NULL outside it. */
static const MemoryName *row(const MemoryName *names, int count, int i) { return i >= 0 && i < count ? &names[i] : NULL; }
static const char *name_of(const MemoryName *r) { return r ? r->name : NULL; }
static const char *ptx_of(const MemoryName *r) { return r ? r->ptx : NULL; }

const char *tir_sem_name(int sem) { return name_of(row(mem_sems, SEM_COUNT, sem)); }
const char *tir_scope_name(int scope) { return name_of(row(mem_scopes, SCOPE_COUNT, scope)); }
int tir_sem_lookup(const char *name, size_t len) { return name_index(mem_sems, name, len); }
int tir_scope_lookup(const char *name, size_t len) { return name_index(mem_scopes, name, len); }
const char *tir_evict_name(int policy) { return policy == EVICT_NONE ? NULL : name_of(row(evictions, EVICT_COUNT, policy)); }
int tir_evict_lookup(const char *name, size_t len) { return name_index(evictions, name, len); }
const char *tir_sem_ptx(int sem) { return ptx_of(row(mem_sems, SEM_COUNT, sem)); }
const char *tir_scope_ptx(int scope) { return ptx_of(row(mem_scopes, SCOPE_COUNT, scope)); }
const char *tir_evict_ptx(int policy) { return ptx_of(row(evictions, EVICT_COUNT, policy)); }
const char *tir_atomic_ptx(int kind) { return ptx_of(row(atomics, ATOM_COUNT, kind)); }
