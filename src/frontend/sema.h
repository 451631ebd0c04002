/* The checker: specialises a kernel on its signature and constexpr values
 * (as Triton's code generator does when it traces a kernel) and builds a
 * typed copy of it.  In the copy every expression has a type, constexpr
 * expressions are folded to constants, constexpr `if`s are resolved,
 * `static_range` loops are unrolled, implicit conversions and broadcasts are
 * explicit (Cast / Broadcast nodes), and helper functions are inlined. */
#ifndef TILE_SEMA_H
#define TILE_SEMA_H

#include "ast.h"
#include "../support/dtypes.h"
#include "../tir/tir.h"

/* The builtins of lang/builtins.def; typed calls carry their id. */
typedef enum {
#define BUILTIN(id, handler, op, flags, name, params, summary) B_##id,
#include "builtins.def"
#undef BUILTIN
  B_COUNT
} BuiltinId;

const char *builtin_name(int id);

typedef enum {
  V_INT, V_FLOAT, V_BOOL, V_STR, V_NONE,
  V_DTYPE,        /* tl.float32, tl.pointer_type(tl.float16) */
  V_BLOCK_TYPE,   /* x.type of a tile: dtype/dtype_is_ptr its elements, items its shape */
  V_TYPE_METHOD,  /* x.dtype.is_fp16 or n.bit_length(), bound: s the method's name, items[0] the dtype, block type or int */
  V_FUNC,         /* a @jit function of the module or of the standard library */
  V_BUILTIN,      /* a builtin; `self` set for a bound method (x.to) */
  V_LIBDEVICE,    /* a libdevice function by name; i: its first row in lang/libdevice.def */
  V_NAMESPACE,    /* tl, triton, triton.language, tl.math */
  V_CONSTEXPR,    /* tl.constexpr itself, as an annotation or called: tl.constexpr(3) */
  V_TENSOR,       /* tl.tensor, as an annotation (the signature gives the type) */
  V_CLASS,        /* tl.tensor_descriptor, tl.dtype for isinstance: s the name */
  V_MISSING_DTYPE, /* a dtype Triton has and tile does not (tl.float8e5): s the name; compared, never used */
  V_LIST,         /* a constexpr list or tuple (shapes, autotune configs) */
  V_CONFIG,       /* triton.Config(...) in an autotune decorator */
  V_LAMBDA,       /* a lambda, kept for @heuristics */
  V_MODULE,       /* a module of the kernel file's package (modules.c): s its import path */
  V_RECORD,       /* host code's object with attributes (torch.finfo(torch.float32)): keys, items */
  V_TUPLE_TYPE,   /* a tuple's x.type, tl.tuple_type([...]): items its elements' types (a constexpr element's
                     type is its value, as Triton's constexpr_type compares values) */
} ValueKind;

typedef struct Value Value;
struct Value {
  ValueKind kind;
  int64_t i;              /* V_INT, V_BOOL, V_BUILTIN id */
  int is_u64;             /* V_INT: i holds the bits of a value in [2^63, 2^64) (Triton's uint64) */
  double f;               /* V_FLOAT */
  const char *s;          /* V_STR, V_NAMESPACE name */
  size_t slen;
  DType dtype;            /* V_DTYPE */
  int dtype_is_ptr;
  Node *func;             /* V_FUNC definition, V_LAMBDA */
  struct ModuleState *module; /* V_MODULE */
  Node *self;             /* V_BUILTIN bound method receiver (typed) */
  Vec(Value *) items;     /* V_LIST; V_CONFIG kwargs values; V_RECORD attribute values */
  Vec(const char *) keys; /* V_CONFIG kwargs names; V_RECORD attribute names */
};

const char *value_str(Arena *a, const Value *v);

/* A run-time argument's value at a launch, for @triton.heuristics and early_config_prune. */
typedef enum { LAUNCH_OTHER, LAUNCH_INT, LAUNCH_FLOAT } LaunchKind;
typedef struct LaunchArg {
  LaunchKind kind;
  long long i;
  double f;
} LaunchArg;

/* How the kernel is specialised (everything the command line or the launch
 * gives).  Strings are borrowed. */
typedef struct SemaOptions {
  const char *kernel;       /* NULL: the one function no other calls */
  const char *signature;    /* Triton AOT form "*fp32:16,i32"; NULL: annotations */
  const char **defines;     /* "NAME=VALUE" */
  int n_defines;
  int require_types;        /* 1: a parameter with no type is an error */
  int config;               /* autotune config whose values to use; -1: none */
  const char *arch;         /* the target the host code's queries answer for; NULL: sm_90 */
  int num_sms;              /* its SM count; 0: the arch's default */
  const LaunchArg *launch;  /* the run-time arguments' values at a launch (JIT); NULL: not known */
  int n_launch;
  int prune_configs;        /* run autotune's early_config_prune on what is known (the -D values, the
                               signature's ':1' arguments, `launch`) where a config is picked (`config`,
                               which then indexes the configs it keeps) or declared (sema_declare: for
                               tile_pack and the JIT's launches); 0: every config kept (the JIT's
                               specialisations, whose config indices are the decorator's) */
  int num_warps;            /* the launch's warps (--num-warps); 0: the config's, else the default */
  int default_types;        /* for the fuzzer: untyped parameters get *fp32 (names with
                               "ptr") or i32, constexprs without a value 16 */
} SemaOptions;

typedef struct KernelParam {
  const char *name;
  Loc loc;
  int is_constexpr;
  Value *value;             /* constexpr value */
  Type *type;               /* runtime parameter's type */
  int divisibility;         /* 16 from a ':16' hint, else 1 */
  int value_from_define;    /* set by -D (a second -D is an error) */
  int specialized;          /* a run-time parameter made constexpr 1 by a ':1' hint */
  int is_const;             /* annotated tl.const: a pointer to constant data */
  int decl;                 /* the kernel's parameter it stands for (index in def->args) */
  struct DescParam *desc;   /* a tensordesc<...> parameter, and each of the parameters it becomes */
  int desc_part;            /* in those: 0 the base pointer, 1..rank the shape, then the strides */
  int is_desc_part;         /* one of those (expand_descriptors made it), not the descriptor itself */
} KernelParam;

/* A tensor descriptor parameter (signature "tensordesc<fp16[64, 64]>"):
 * passed as its base pointer (':16'), shape (i32) and strides (i64, the
 * last one ':1'), as Triton's launcher expands it (docs/abi.md). */
typedef struct DescParam {
  DType dtype;
  int rank;
  int64_t block[MAX_RANK];
} DescParam;

typedef struct TuneConfig {
  Vec(const char *) names;  /* meta-parameters the config sets */
  Vec(Value *) values;
  int num_warps, num_stages, num_ctas;
  int maxnreg;              /* registers a thread may use (PTX .maxnreg); 0: no cap */
  Loc loc;
  int index;                /* its place in the decorator's list (pruning keeps it) */
} TuneConfig;

typedef Vec(const char *) NameList;

typedef struct KernelMeta {
  Vec(TuneConfig) configs;          /* @triton.autotune(configs=...) */
  NameList keys;                    /* @triton.autotune(key=...) */
  NameList reset_to_zero;           /* reset_to_zero=[...]: pointer parameters zeroed before each timed run */
  NameList restore_value;           /* restore_value=[...]: pointer parameters restored after each timed run */
  double warmup_ms, rep_ms;         /* warmup=, rep=: the tuner's time budgets; 0: its defaults */
  struct HostVal *config_list;      /* the configs as host values, for early_config_prune */
  struct HostVal *prune;            /* prune_configs_by's early_config_prune; NULL: none */
  Loc prune_at;                     /* where prune_configs_by is given */
  Vec(const char *) heuristic_names;/* @triton.heuristics({name: lambda}) */
  Vec(Node *) heuristic_lambdas;    /* the lambda (or def) of each, for its place */
  Vec(struct HostVal *) heuristic_fns; /* the same, as host values (host.h) */
  struct Host *host;                /* the host evaluator the decorators ran in */
  struct HostVal *unevaluated;      /* configs or heuristics the host evaluator could not compute (its
                                       reason, host.h): an error only where a value they give is needed */
  const char *unevaluated_what;     /* which decorator argument that was */
  Loc unevaluated_at;               /* and where */
} KernelMeta;

/* What looking for one file of the kernel's package found (modules.c). */
typedef enum { MODULE_FILE_ABSENT, MODULE_FILE_UNREADABLE, MODULE_FILE_READ } ModuleFileState;

/* A file the frontend read, or looked for and did not find, beyond the
 * kernel's own source: what a JIT disk cache entry must be checked against,
 * since its key sees only that source (docs/abi.md section 9). */
typedef struct ModuleFile {
  const char *path;           /* as the import looked for it (relative to the working directory, or absolute) */
  ModuleFileState state;
  unsigned char sha256[32];   /* of its bytes, when read */
} ModuleFile;

typedef Vec(ModuleFile) ModuleFiles;

/* What reading `path` as a module of the package finds now, its digest
 * into sha256 when read: the same answer as the compilation that looked
 * for it, unless the file changed. */
ModuleFileState module_file_state(const char *path, unsigned char sha256[32]);

typedef struct CheckedKernel {
  Node *def;                /* the typed FUNCDEF of the kernel */
  Vec(KernelParam) params;
  KernelMeta meta;
  int typed;                /* 0: parsed only (no signature, annotations incomplete) */
  const ModuleFiles *module_files; /* the package's files read or looked for (modules.c), in that order */
} CheckedKernel;

/* Checks the kernel; returns NULL when errors were reported to `d`.
 * `stdlib` is lang/stdlib.tl, parsed. */
/* The launch arguments a parameter takes: none for a constexpr, 1 + 2 * rank for a tensor descriptor (its
 * base, shape and strides), else one (a ':1' parameter too: it is still passed). */
int kernel_param_slots(const KernelParam *p);
CheckedKernel *sema_check(const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d);
/* The kernel's declaration only: which function it is, its parameters as
 * declared (annotations, no signature or values) and its decorators' tuning
 * metadata (what the autotuner needs before any launch); the body is not
 * checked.  NULL when errors were reported to `d`. */
CheckedKernel *sema_declare(const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d);
/* The declaration with the -D values, config opts->config's values and the
 * @triton.heuristics' values computed on opts->launch (the JIT's, at a launch
 * whose heuristics read its arguments): the constexprs' values; NULL when
 * errors were reported to `d` (a heuristic that cannot be evaluated). */
CheckedKernel *sema_heuristics(const Module *m, const Module *stdlib, const SemaOptions *opts, Diags *d);

/* The warps and stages a kernel runs with: the given ones (0: not given),
 * else config `config`'s of k (k may be NULL), else what *warps and
 * *stages hold. */
void sema_launch_shape(const CheckedKernel *k, int config, int num_warps, int num_stages, int *warps, int *stages);

/* The register cap a kernel compiles with: `maxnreg` (the option; 0: not
 * given), else config `config`'s of k (k may be NULL); 0: none. */
int sema_register_cap(const CheckedKernel *k, int config, int maxnreg);

/* The builtin reference in markdown, printed from lang/builtins.def, then
 * the functions of the standard library (lang/stdlib.tl, parsed: NULL for none). */
void builtins_reference(const Module *stdlib, Buf *out);

/* Prints a checked kernel: its parameters, tuning metadata and typed body. */
void checked_print(const CheckedKernel *k, Buf *out);

/* The checked AST of a kernel to tile IR (lower.c). */
TirFunc *tir_lower(const CheckedKernel *k, Arena *a, Diags *d);

#endif
