/* Running kernels on the CPU interpreter: tile_run_cpu compiles and runs
 * in one call, specialised on its arguments as Triton specialises (the
 * same key as a GPU launch: src/runtime/args.c); launch_interpreted is the
 * one way tile IR meets host buffers, for it and for CPU-mode launches of
 * tile_kernel. */
#include "driver.h"
#include "../interp/interp.h"
#include "../runtime/args.h"
#include "../runtime/metadata.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Binds the tile IR's parameters to the arguments; buffers keep their order. */
static int bind_arguments(const TirFunc *f, const tile_arg *args, int n, const size_t *bytes, InterpLaunch *L,
                          InterpBuffer *buffers, InterpArg *iargs, char *err, size_t errsz) {
  for (int i = 0; i < n; i++) buffers[i] = (InterpBuffer){"?", args[i].data, 0};
  for (int p = 0; p < f->params.len; p++) {
    const TirParam *tp = &f->params.data[p];
    if (tp->arg_index >= n) {
      snprintf(err, errsz, "kernel '%s' takes more arguments than the %d given", f->name, n);
      return 0;
    }
    const tile_arg *a = &args[tp->arg_index];
    Type *t = tir_type(f, tp->value);
    if ((a->kind == TILE_ARG_BUFFER) != t->is_ptr) {
      snprintf(err, errsz, "argument %d ('%s'): a %s for a parameter of type %s", tp->arg_index, tp->name,
               a->kind == TILE_ARG_BUFFER ? "buffer" : "number", type_str(f->arena, t));
      return 0;
    }
    iargs[p] = (InterpArg){-1, a->i, a->kind == TILE_ARG_FLOAT ? a->f : (double)a->i};
    if (a->kind != TILE_ARG_BUFFER) continue;
    int dt = a->dtype ? dtype_lookup(a->dtype) : -1;
    DType elem = t->elem;
    if (dt != (int)elem) {
      snprintf(err, errsz, "argument %d ('%s'): a buffer of %s for a parameter of type *%s", tp->arg_index, tp->name,
               a->dtype ? a->dtype : "(no dtype)", dtype_name(elem));
      return 0;
    }
    buffers[tp->arg_index].name = tp->name;
    buffers[tp->arg_index].bytes = bytes[tp->arg_index];
    iargs[p].buffer = tp->arg_index;
  }
  L->buffers = buffers;
  L->n_buffers = n;
  L->args = iargs;
  return 1;
}

typedef struct Interpreting {
  const TirFunc *f;
  const unsigned *grid;
  const InterpMemory *mem;
  double time_limit_s;
  Buf *printed;
  char *err;
  size_t errsize;
  tile_status status;
} Interpreting;

/* The context's blocks after the arguments' buffers: what an address read from memory may point into. */
static void add_memory(InterpLaunch *L, InterpBuffer *buffers, const Allocation *memory, int n_memory) {
  for (int i = 0; i < n_memory; i++)
    buffers[L->n_buffers++] = (InterpBuffer){"a block of tile_malloc memory", (void *)memory[i].base, memory[i].bytes};
}

static tile_status interpret(const TirFunc *f, const unsigned grid[3], const InterpMemory *mem, double time_limit_s,
                             Buf *printed, char *err, size_t errsize) {
  InterpLaunch L = {0};
  InterpArg iargs[MAX_KERNEL_ARGS]; /* params that take arguments: at most n <= MAX_KERNEL_ARGS */
  int n = mem->n;
  if (n > MAX_KERNEL_ARGS || f->params.len > n) {
    snprintf(err, errsize, "kernel '%s' has %d run-time parameters but %d arguments were given", f->name,
             f->params.len, n);
    return TILE_ERROR_ARGUMENT;
  }
  InterpBuffer *buffers = malloc(sizeof *buffers * (size_t)(n + mem->n_memory + 1));
  if (!buffers) {
    snprintf(err, errsize, "out of memory for the interpreter's %d buffers", n + mem->n_memory);
    return TILE_ERROR_MEMORY;
  }
  tile_status s = TILE_ERROR_ARGUMENT;
  if (bind_arguments(f, mem->args, n, mem->bytes, &L, buffers, iargs, err, errsize)) {
    add_memory(&L, buffers, mem->memory, mem->n_memory);
    L.f = f;
    L.output = printed;
    L.time_limit_s = time_limit_s;
    for (int i = 0; i < 3; i++) L.grid[i] = (int)grid[i];
    s = interp_run(&L) == 0 ? TILE_OK : TILE_ERROR_RUNTIME;
    if (s != TILE_OK) snprintf(err, errsize, "%s", L.error);
  }
  free(buffers);
  return s;
}

static void run_interpreter(void *ud) {
  Interpreting *r = ud;
  r->status = interpret(r->f, r->grid, r->mem, r->time_limit_s, r->printed, r->err, r->errsize);
}

tile_status launch_interpreted(Guard *guard, const TirFunc *f, const unsigned grid[3], const InterpMemory *mem,
                               double time_limit_s, Buf *printed, char *err, size_t errsize) {
  Interpreting r = {f, grid, mem, time_limit_s, printed, err, errsize, TILE_ERROR_MEMORY};
  if (guard_run(guard, run_interpreter, &r)) snprintf(err, errsize, "%s", guard->message); /* device_print's text over the cap */
  return r.status;
}

/* Each buffer's bytes from its count: at most what the interpreter can address. */
static int buffer_bytes(const KernelMetadata *m, const tile_arg *args, size_t *bytes, char *err, size_t errsize) {
  for (int i = 0; i < m->num_params; i++) {
    const MetaParam *p = &m->params[i];
    size_t elem = dtype_size(p->dtype), count = args[p->position].count;
    if (!p->is_ptr) continue;
    if (count > INTERP_MAX_BUFFER_BYTES / elem) {
      snprintf(err, errsize, "argument %d ('%s'): %zu elements of %s are more than the interpreter can address (2^43 bytes)",
               p->position, p->name, count, dtype_name((DType)p->dtype));
      return -1;
    }
    bytes[p->position] = count * elem;
  }
  return 0;
}

typedef struct Running {
  const tile_options *opts;
  const tile_arg *args;
  int n;
  TirFunc *f;
  size_t bytes[MAX_KERNEL_ARGS];
  char err[512];
} Running;

static tile_status compile_tir(Compilation *c, void *ud) {
  Running *r = ud;
  r->f = pipeline_tir(c, r->opts, NULL);
  return r->f ? TILE_OK : TILE_ERROR_COMPILE;
}

/* The arguments checked against the kernel's metadata, as tile_launch checks
 * them (src/runtime/args.c), and each buffer's bytes. */
static tile_status check_arguments(Compilation *c, void *ud) {
  Running *r = ud;
  KernelMetadata m;
  const char *json = describe_kernel(c, r->f, NULL, 0);
  if (meta_parse(&c->arena, json, strlen(json), &m, r->err, sizeof r->err)) return TILE_ERROR_COMPILE;
  if (args_check(&m, r->args, r->n, NULL, NULL, r->err, sizeof r->err) ||
      buffer_bytes(&m, r->args, r->bytes, r->err, sizeof r->err))
    return TILE_ERROR_ARGUMENT;
  return TILE_OK;
}

static tile_status run(Compilation *c, const tile_options *opts, const unsigned grid[3], const tile_arg *args, int n,
                       const char **printed) {
  tile_context *ctx = c->ctx;
  Running r = {.opts = opts, .args = args, .n = n};
  tile_status s = compilation_run(c, compile_tir, &r);
  if (s != TILE_OK) return compilation_report(c, s);
  keep_diagnostics(ctx, c, s);
  Buf out;
  buf_init(&out, &c->arena);
  s = compilation_run(c, check_arguments, &r);
  if (s == TILE_ERROR_MEMORY) snprintf(r.err, sizeof r.err, "%s", c->guard.message);
  InterpMemory mem = {args, n, r.bytes, NULL, 0}; /* tile_run_cpu's buffers are the caller's own */
  if (s == TILE_OK) s = launch_interpreted(&c->guard, r.f, grid, &mem, ctx->interp_time_limit, &out, r.err, sizeof r.err);
  if (s != TILE_OK) return context_fail(ctx, s, r.err);
  if (printed && !(*printed = arena_strndup(&ctx->results, buf_cstr(&out), out.len)))
    return context_failf(ctx, TILE_ERROR_MEMORY, "out of memory for the %zu bytes device_print wrote", out.len);
  return s;
}

tile_status tile_run_cpu(tile_context *ctx, const char *name, const char *source, size_t len, const tile_options *opts,
                         const unsigned grid[3], const tile_arg *args, int num_args, const char **printed) {
  if (!context_valid(ctx)) return TILE_ERROR_ARGUMENT;
  if (printed) *printed = NULL;
  context_begin(ctx);
  tile_options o;
  tile_status s = context_read_options(ctx, opts, "tile_run_cpu", &o);
  if (s != TILE_OK) return s;
  Compilation *c = compilation_begin(ctx, name, source, len);
  if (!c) return context_fail(ctx, TILE_ERROR_MEMORY, "out of memory");
  char err[512] = "", signature[MAX_SIGNATURE];
  uint16_t key[MAX_KERNEL_ARGS];
  if (!source || !grid || (num_args && !args) || num_args < 0 || num_args > MAX_KERNEL_ARGS) {
    s = context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_run_cpu: NULL source, grid or arguments, or more than 256 arguments");
  } else if (grid[0] > 0x7fffffffu || grid[1] > 65535 || grid[2] > 65535) {
    s = context_fail(ctx, TILE_ERROR_ARGUMENT, "tile_run_cpu: the grid is larger than a GPU allows (2^31-1 x 65535 x 65535)");
  } else if (args_key(args, num_args, key, err, sizeof err)) {
    s = context_fail(ctx, TILE_ERROR_ARGUMENT, err);
  } else {
    key_signature(key, num_args, signature, sizeof signature);
    if (!o.signature) o.signature = signature;
    s = run(c, &o, grid, args, num_args, printed);
  }
  compilation_end(c);
  return s;
}
