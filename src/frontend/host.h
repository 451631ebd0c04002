/* The host evaluator: runs the Python that builds a kernel's autotune
 * configs and heuristics (module-level lists and functions, comprehensions,
 * lambdas, triton.Config, target queries), hermetic and deterministic like
 * Bazel's Starlark.  What it cannot evaluate (torch calls other than the
 * target queries, classes, I/O) becomes an UNKNOWN value that remembers
 * where and why; it is an error only where a kernel needs it.  Steps, call
 * depth and collection sizes are bounded, so hostile input ends. */
#ifndef TILE_HOST_H
#define TILE_HOST_H

#include "ast.h"

enum {
  HOST_MAX_STEPS = 1000000, /* expressions and statements evaluated per compilation */
  HOST_MAX_DEPTH = 64,      /* nested calls of host functions */
  HOST_MAX_ITEMS = 100000,  /* elements of a list, tuple, dict or range; bytes of a string */
};

typedef enum {
  H_NONE, H_BOOL, H_INT, H_FLOAT, H_STR, H_LIST, H_TUPLE, H_DICT,
  H_RECORD,   /* an object with attributes: a target, device properties */
  H_CONFIG,   /* triton.Config: items[0] the kwargs dict, items[1] its options (num_warps, ...) */
  H_FUNC,     /* a def or a lambda */
  H_BUILTIN,  /* a function of the evaluator; `self` for a bound method */
  H_MODULE,   /* triton, torch, ... and their attributes: a dotted path */
  H_TYPE,     /* int, float, str, bool, list, tuple, dict */
  H_MULTIPLE, /* an integer known only to be a multiple of i (a ':16' argument) */
  H_UNKNOWN,  /* could not be evaluated: s says why, loc where */
} HostKind;

typedef struct HostVal HostVal;
typedef Vec(HostVal *) HostVec;
typedef struct HostEnv HostEnv;

struct HostVal {
  HostKind kind;
  int64_t i;          /* BOOL, INT; MULTIPLE: the divisor; BUILTIN: its row; UNKNOWN: 1 once reported */
  double f;           /* FLOAT */
  const char *s;      /* STR (NUL-terminated), MODULE path, TYPE name, UNKNOWN reason */
  size_t slen;
  HostVec items;      /* LIST, TUPLE; DICT, RECORD: the values */
  HostVec keys;       /* DICT, RECORD: the keys */
  Node *node;         /* FUNC: the def or the lambda */
  HostEnv *env;       /* FUNC: the scope it was defined in */
  HostVal *self;      /* BUILTIN: a bound method's receiver */
  Loc loc;            /* UNKNOWN: what could not be evaluated; CONFIG: the triton.Config call */
};

/* What the target queries answer: the arch compiled for and its SM count. */
typedef struct HostTarget {
  const char *arch;   /* "sm_90"; NULL: sm_90 */
  int num_sms;        /* 0: the arch's default (docs/language.md §11) */
} HostTarget;

typedef struct Host Host;

/* An evaluator for module m; its statements before `upto` (the kernel's
 * def) run on the first evaluation. */
Host *host_new(Arena *a, const Module *m, const Node *upto, HostTarget target);
/* What h's target queries answer. */
HostTarget host_target(const Host *h);
/* The value an import the evaluator does not know itself binds (`from mylib.utils import IS_AMD`, a
 * module of the kernel file's package): the caller's answer (an UNKNOWN where it has no host value),
 * NULL where the package has no such name. */
typedef HostVal *(*HostImport)(void *ctx, Host *h, const Node *binding);
void host_set_import(Host *h, HostImport fn, void *ctx);
HostVal *host_eval(Host *h, Node *expr);
/* Whether the evaluator hit its step limit: every later evaluation fails too. */
int host_stopped(const Host *h);
HostVal *host_call(Host *h, HostVal *fn, HostVal **args, int n, Loc loc);
/* fn(*args, **kwargs) where fn has a '**' parameter, else fn(*args): the
 * dict `kwargs`'s entries as keyword arguments (Triton's
 * early_config_prune(configs, named_args, **kwargs)). */
HostVal *host_call_kwargs(Host *h, HostVal *fn, HostVal **args, int n, const HostVal *kwargs, Loc loc);

HostVal *host_value(Host *h, HostKind k);
HostVal *host_int(Host *h, int64_t i);
HostVal *host_str(Host *h, const char *s);
HostVal *host_unknown(Host *h, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void host_dict_set(Host *h, HostVal *dict, HostVal *key, HostVal *value);
HostVal *host_dict_get(const HostVal *dict, const char *key);
int host_truth(const HostVal *v);
const char *host_type_name(const HostVal *v);
const char *host_repr(Arena *a, const HostVal *v);

/* Reports v, an UNKNOWN that `what` needs at `use`: an error at its place, a note at the
 * use; once only (the step limit's UNKNOWN is what every later evaluation gives). */
void host_report(Diags *d, HostVal *v, Loc use, const char *what);

#endif
