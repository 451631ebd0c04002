/* Internals shared by the checker's files (sema.c: statements, names and
 * functions; expr.c: operators; builtins.c: the builtin table; value.c:
 * constexpr values). */
#ifndef TILE_SEMA_IMPL_H
#define TILE_SEMA_IMPL_H

#include "sema.h"

/* An IF's ival: one made by with_tails, whose branches each hold the rest of the kernel. */
enum { IF_TAIL = 1 };
/* How many statements the kernel's early exits may copy (with_tails) before the rest is checked as written. */
enum { MAX_TAIL_STATEMENTS = 20000 };

enum {
  TL = 1, METHOD = 2, PY = 4, CUDA = 8, /* tl.extra.cuda.NAME */
  EFFECT = 16,                          /* a side effect */
  IN_COMBINE = 32,                      /* an EFFECT a combine_fn may have all the same */
  DESC = 64,                            /* a tensor descriptor's method, desc.NAME only */
};

typedef struct Binding {
  const char *name;
  Node *value;              /* typed: a CONST, a runtime NAME, a TUPLE */
} Binding;

typedef Vec(Binding) Scope;

/* A module-level function or constant, in the index sorted by name then
 * statement, so a name costs log n (a file may define 20,000 kernels). */
typedef struct Symbol {
  const char *name;
  int index;                /* the statement in the module's body */
  int is_function;
  int called;               /* a call by bare name from another function */
  Node *value;              /* a constant's value, once evaluated */
} Symbol;

typedef Vec(Symbol) SymbolVec;

/* A module whose names a function's body sees: the kernel's file, or a
 * module of its package that it imports (modules.c). */
/* The module-level ifs a conditional binding is under, innermost first. */
typedef struct Branch {
  Node *test;
  int in_else;
  const struct Branch *outer;
} Branch;

/* A name bound inside module-level if, try or with blocks: an import's
 * binding, a def, or an assignment `name = value`. */
typedef struct Conditional {
  const char *name;
  Node *binding;            /* the IMPORT binding, the FUNCDEF or the ASSIGN */
  const Branch *branch;     /* NULL: under try/with only */
} Conditional;

typedef struct ModuleState {
  const Module *mod;
  SymbolVec symbols;        /* the module's functions and constants (symbols_build) */
  Vec(Node *) imports;      /* the module's IMPORT bindings (name, dotted path), in order */
  Vec(struct Conditional) conditionals; /* names bound inside module-level if/try/with blocks (conditional.c) */
  const char *dotted;       /* its import path (NULL: the kernel's file) */
  const char *file;         /* the file it was read from (NULL: the kernel's source) */
  const char *key;          /* that file's canonical name (realpath), which identifies the module */
  const char *package_dir;  /* a package's (__init__.py's) directory, where its submodules are; else NULL */
} ModuleState;

typedef struct Sema {
  Arena *arena;
  Diags *diags;
  ModuleState *here;        /* the module of the function being checked */
  Vec(ModuleState *) loaded; /* the modules of the package imported so far (modules.c) */
  ModuleFiles *files;       /* the files those imports read or looked for (modules.c) */
  const Module *stdlib;
  Scope scope;              /* variables of the function being checked */
  NodeVec *out;             /* where checked statements go */
  Node *ret;                /* typed return value of the current function */
  int returned;             /* a return was reached on this path */
  int in_helper;
  int depth;                /* helper call depth */
  int nesting;              /* check_expr/check_block recursion, through inlined helpers */
  int too_deep;             /* AST_MAX_DEPTH was reported: the rest is poison, silently */
  int unrolled;             /* static_range iterations so far */
  int in_for_iter;          /* checking the iterable of a for: range() is allowed */
  int in_while_cond;        /* checking a while loop's condition: tl.condition() is allowed */
  int n_temps;              /* temporaries made so far, for unique names */
  int n_inlined;            /* helper calls inlined so far, for unique names */
  const char *prefix;       /* "fn.N." inside an inlined helper, else NULL */
  int block_depth;          /* 1 in the kernel's own body */
  Loc return_loc;           /* the last return reached */
  int module_limit;         /* evaluating a module constant: statements before this one */
  CheckedKernel *kernel;
  Vec(Binding) dropped;     /* names bound on one path of a run-time if: value = the if */
  int quiet;                /* evaluating a conditional binding's test (conditional.c): failures not cached */
  int import_depth;         /* module members being resolved through re-exports (modules.c) */
  int num_warps;            /* the warps the kernel is compiled for (tl.extra.cuda.num_warps()) */
  int mapping;              /* checking a tl.map_elementwise scalar_fn, called on whole tiles */
  const Type *mapped_type;  /* the tiles it is called on (their broadcast shape) */
  const NodeVec *function_body; /* the helper's or mapped function's body being checked (with_tails makes
                                   its returns end every path) */
  int selecting;            /* inside such a function's run-time if, both of whose branches run */
  Node *active;             /* there, the elements whose path is being checked (an i1 value; NULL: all) */
} Sema;

/* sema.c: the module's symbols; `warn`: about imports tile does not understand */
void symbols_build(Sema *S, int warn);
/* A module-level name of module m (function, constant, import), looked up there; NULL: none. */
Node *sema_module_name(Sema *S, ModuleState *m, Loc loc, const char *name);
/* Why tl.NAME, an fp8 dtype tile can name but not compute with (lang/unsupported.def), is an error where used. */
const char *sema_missing_dtype_reason(Sema *S, const char *name);

int is_host_module(const char *path);                 /* torch, triton.jit, os, ...: host code's */
struct HostVal;
/* specialize.c: host code's expression as a constexpr, NULL when it is none (*unknown: why) */
Value *host_constexpr(Sema *S, Node *expr, struct HostVal **unknown);
/* expr evaluated as Python evaluates module statement `at` (the statements before it run first); NULL
 * where the host evaluator cannot. */
Value *host_constexpr_at(Sema *S, Node *expr, int at, struct HostVal **unknown);
/* conditional.c: checking on trial, its diagnostics kept out of the compilation's and its failures not
 * cached (a conditional binding's test, an import the host evaluator runs): sema_quiet_begin, then
 * sema_quiet_end, which gives the errors seen. */
typedef struct Quiet {
  Diags diags, *loud;
  int was_quiet;
} Quiet;
void sema_quiet_begin(Sema *S, Quiet *q);
int sema_quiet_end(Sema *S, Quiet *q);
/* `e` checked in the module's scope, quietly; NULL when it has any error. */
Node *sema_quiet_expr(Sema *S, Node *e);
/* specialize.c: whether a def is decorated as a kernel (jit, autotune, heuristics). */
int sema_is_jit(const Node *fn);
Node *import_value(Sema *S, Loc loc, const char *path); /* a path under triton tile understands, or NULL */

/* conditional.c: names bound inside module-level if/try/with blocks */
void conditionals_build(Sema *S, const Node *stmt);
Node *conditional_name(Sema *S, Loc loc, const char *name);
int conditional_defines(const ModuleState *m, const char *name);

/* hasattr(obj, name) on a namespace or module: 1 or 0; -1: obj is neither. */
Node *sema_attribute(Sema *S, Node *obj, Node *attr);           /* obj.NAME, obj checked; attr: NAME and place */
int sema_has_attribute(Sema *S, Node *obj, Loc loc, const char *name); /* hasattr, quietly */

/* modules.c: modules of the kernel file's package */
Node *module_import(Sema *S, Loc loc, const char *dotted);
int module_import_found(Sema *S, const char *dotted);
Node *module_member(Sema *S, ModuleState *m, Loc loc, const char *name);
ModuleState *module_of(Sema *S, const Node *def);
Symbol *symbols_find(Sema *S, const char *name, int *count);  /* the first of `count` entries, or NULL */

/* value.c */
Value *value_new(Sema *S, ValueKind kind);
Value *value_int(Sema *S, int64_t i);
Value *value_uint(Sema *S, uint64_t u); /* value_int, or an is_u64 one from 2^63 */
Value *value_float(Sema *S, double f);
Value *value_bool(Sema *S, int b);
Value *value_string(Sema *S, const char *s);
Value *value_dtype(Sema *S, DType t, int is_ptr);
int value_truth(const Value *v, int *ok);
int value_equal(const Value *x, const Value *y);
Value *fold_binary(Sema *S, Loc loc, TokenKind op, const Value *x, const Value *y);
Value *fold_unary(Sema *S, Loc loc, TokenKind op, const Value *x);
int type_predicate(const Value *t, const char *name);             /* is_fp16() ...; -1: no such method */
Value *type_attribute(Sema *S, const Value *t, const char *name); /* element_ty ...; NULL: none */
Value *value_type_of(Sema *S, const Type *t);                     /* x.type */

/* sema.c */
Node *mk_const(Sema *S, Loc loc, Value *v);
int is_const(const Node *n);
int is_const_kind(const Node *n, ValueKind k);
Node *check_expr(Sema *S, Node *n);
Node *poison(Sema *S, Loc loc);          /* an error value that silences follow-on errors */
int is_poison(const Node *n);
const char *describe(Sema *S, const Node *n);   /* for messages */
Value *const_of(Sema *S, Node *typed, const char *what);   /* constexpr or error */
Node *const_to_node(Sema *S, Loc loc, Value *v);  /* lists become typed tuples */
Node *call_function(Sema *S, Node *call, Node *def, Node **args, int n_args, Node **kw, int n_kw);
void emit(Sema *S, Node *stmt);
/* Evaluates a value's run-time parts into temporaries (read once, in order). */
Node *materialize(Sema *S, Node *v, Loc loc);
void sema_bind(Sema *S, const char *name, Node *value);
void sema_check_body(Sema *S, NodeVec *body, NodeVec *out);

/* expr.c */
Node *runtime(Sema *S, Node *n);          /* materialise a scalar constexpr */
Type *type_of(Sema *S, Node *n);          /* runtime type, or NULL */
Node *cast(Sema *S, Node *n, DType elem, int is_ptr);
Node *broadcast(Sema *S, Node *n, int rank, const int64_t *shape);
Node *binary(Sema *S, Loc loc, TokenKind op, Node *x, Node *y);
/* An fp8 type is only stored, loaded, converted and multiplied by tl.dot:
 * computing in it (`what`: "operator '+'", "tl.sum") is an error at loc
 * with a note to convert first.  Returns whether t is fp8. */
int refuse_fp8(Sema *S, Loc loc, const char *what, DType t);
Node *unary(Sema *S, Loc loc, TokenKind op, Node *x);
Node *to_bool(Sema *S, Node *n);
Node *typed_node(Sema *S, NodeKind kind, Loc loc, Type *t);
int check_shape_value(Sema *S, Loc loc, Value *v, int *rank, int64_t *shape);

/* builtins.c */
int builtin_lookup(const char *name, int flags);
int builtin_flags(int id);
const char *builtin_params(int id);
const char *builtin_summary(int id);
int builtin_count(void);
Node *check_builtin_call(Sema *S, Node *call, int id, Node *self, Node **args, int n_args,
                         Node **kw, int n_kw);
const char *suggest(Sema *S, const char *name, const char *const *cands, int n);
/* t reduced along axis (every axis when `all`), the reduced dimensions kept as 1 with keep_dims; elements of elem */
Type *reduced_type(Sema *S, const Type *t, int64_t axis, int all, int keep_dims, DType elem);

/* descriptor.c: tensor descriptors and block pointers, ND_DESC values (ival: the kind) */
enum { DESC_TENSOR, DESC_BLOCK_PTR };
Node *desc_make_tensor(Sema *S, Node *call, Node **arg);      /* bound arguments of the builtin */
Node *desc_make_block_ptr(Sema *S, Node *call, Node **arg);
Node *desc_advance(Sema *S, Node *call, Node **arg);
Node *desc_load(Sema *S, Node *call, Node **arg);
Node *desc_store(Sema *S, Node *call, Node **arg);
Node *desc_atomic(Sema *S, Node *call, int id, Node **arg); /* id: B_DESC_ATOMIC_ADD, ... */
Node *desc_gather(Sema *S, Node *call, Node **arg);
Node *desc_scatter(Sema *S, Node *call, Node **arg);
int desc_block_load(Sema *S, Node *call, Node **arg);         /* tl.load's arguments rewritten; 0 after errors */
int desc_block_store(Sema *S, Node *call, Node **arg);
Node *desc_attribute(Sema *S, Node *d, Node *attr);
Node *desc_with_offsets(Sema *S, Node *d, Node **offsets);
int desc_same_but_offsets(const Node *x, const Node *y);
int desc_rank(const Node *d);
Node *desc_param(Sema *S, Loc loc, const DescParam *p, Node **parts);  /* base, shape, strides */
const char *desc_str(Sema *S, const Node *d);                 /* "a tensor descriptor of fp16[64, 64]" */

/* combine.c: tl.reduce and tl.associative_scan with a combine_fn; arg: the bound arguments */
Node *combine_call(Sema *S, Node *call, int id, Node **arg, int n_args);
Node *map_elementwise_call(Sema *S, Node *call, Node **arg); /* combine.c: tl.map_elementwise */

/* libdevice.c */
int libdevice_lookup(const char *name);   /* the first row of that name, or -1 */
Node *check_libdevice_call(Sema *S, Node *call, int first_row, Node **args, int n_args, Node **kw, int n_kw);
Node *extern_elementwise_call(Sema *S, Node *call, Node **arg); /* the builtin's bound arguments */

#endif
