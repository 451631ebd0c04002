/* The LLVM lowering's layout moves on GPU-layout IR built by hand (so the
 * layouts are the test's, whatever layout assignment would choose):
 * conversions between layouts whose threads hold the same elements only
 * rename registers (no shared memory, no barrier); others go through padded
 * shared memory, in rounds when the tile is larger than the scratch budget. */
#include "check.h"
#include "../../src/llvm/generate.h"
#include "../../src/tir/layout.h"

#include <string.h>

typedef struct Kernel {
  Arena arena;
  Guard guard;
  Diags diags;
  TirFunc *f;
  LayoutTable table;
  int last;
} Kernel;

static void begin(Kernel *k, int num_warps) {
  memset(k, 0, sizeof *k);
  arena_init(&k->arena, 0);
  k->arena.guard = &k->guard;
  diags_init(&k->diags, &k->arena, &k->guard);
  k->f = tir_func_new(&k->arena, "k");
  k->f->num_warps = num_warps;
  k->table.arena = &k->arena;
  k->f->layout_table = &k->table;
}

static Type *tile(Kernel *k, DType t, int rank, int64_t d0, int64_t d1) {
  int64_t shape[2] = {d0, d1};
  return type_tile(&k->arena, type_scalar(&k->arena, t), rank, shape);
}

/* Appends op(operand) -> a value of type t in layout l; returns it. */
static int add(Kernel *k, TirCode code, int operand, Type *t, const Layout *l) {
  TirOp *op = tir_op_new(k->f, code, (Loc){0});
  if (operand >= 0) tir_add_operand(k->f, op, operand);
  if (code == TIR_MAKE_RANGE) op->ival2 = t->shape[0];
  if (code == TIR_EXPAND_DIMS) op->axis = 1;
  int v = tir_add_result(k->f, op, t);
  tir_set_layout(k->f, v, l);
  tir_append(k->f, k->f->body, op);
  return k->last = v;
}

static const Layout *blocked(Kernel *k, int rank, const int *spt, const int *tpw, const int *wpc, const int *order) {
  const char *why;
  return layout_blocked(&k->table, rank, spt, tpw, wpc, order, &why);
}

/* A [rows, cols] i32 tile in layout l: make_range, expand_dims, broadcast. */
static int tile_in(Kernel *k, int64_t rows, int64_t cols, const Layout *l) {
  int r = add(k, TIR_MAKE_RANGE, -1, tile(k, DT_I32, 1, rows, 0), layout_slice(&k->table, 1, l));
  int e = add(k, TIR_EXPAND_DIMS, r, tile(k, DT_I32, 2, rows, 1), l);
  return add(k, TIR_BROADCAST, e, tile(k, DT_I32, 2, rows, cols), l);
}

static GpuCode lower(Kernel *k) {
  tir_append(k->f, k->f->body, tir_op_new(k->f, TIR_RETURN, (Loc){0}));
  GpuTarget t = {"sim", NULL, NULL, 0};
  GpuCode code;
  memset(&code, 0, sizeof code);
  int status = llvm_generate(k->f, &t, 1, 0, &k->arena, &code, &k->diags);
  CHECK(status == 0);
  if (status) fprintf(stderr, "%s\n", k->diags.list.len ? k->diags.list.data[0].msg : "?");
  return code;
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; p && (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* Layouts that differ only in which repetition comes first in registers. */
static void test_register_renaming(void) {
  Kernel k;
  begin(&k, 4);
  int spt[2] = {1, 1}, tpw[2] = {1, 32}, wpc[2] = {4, 1}, rows_first[2] = {0, 1}, cols_first[2] = {1, 0};
  const Layout *a = blocked(&k, 2, spt, tpw, wpc, cols_first), *b = blocked(&k, 2, spt, tpw, wpc, rows_first);
  add(&k, TIR_CONVERT_LAYOUT, tile_in(&k, 64, 64, a), tile(&k, DT_I32, 2, 64, 64), b);
  GpuCode code = lower(&k);
  CHECK(code.llir && !strstr(code.llir, "tile_sim_barrier"));
  CHECK(code.shared_bytes == 0);
  arena_free(&k.arena);
}

/* Lanes along columns to lanes along rows: through shared memory, each
 * row padded by one element so that neither side has bank conflicts. */
static void test_transposing_convert(void) {
  Kernel k;
  begin(&k, 4);
  int spt[2] = {1, 1}, by_cols[2] = {1, 32}, by_rows[2] = {32, 1}, w_rows[2] = {4, 1}, w_cols[2] = {1, 4};
  int order[2] = {1, 0};
  const Layout *a = blocked(&k, 2, spt, by_cols, w_rows, order), *b = blocked(&k, 2, spt, by_rows, w_cols, order);
  add(&k, TIR_CONVERT_LAYOUT, tile_in(&k, 32, 32, a), tile(&k, DT_I32, 2, 32, 32), b);
  GpuCode code = lower(&k);
  CHECK(count(code.llir, "call void @tile_sim_barrier()") == 1);
  CHECK(code.shared_bytes == 32 * 33 * 4);
  arena_free(&k.arena);
}

/* 256 KiB of fp32 through at most 64 KiB of scratch at a time. */
static void test_rounds(void) {
  Kernel k;
  begin(&k, 4);
  int spt[2] = {1, 1}, by_cols[2] = {1, 32}, by_rows[2] = {32, 1}, w_rows[2] = {4, 1}, w_cols[2] = {1, 4};
  int order[2] = {1, 0};
  const Layout *a = blocked(&k, 2, spt, by_cols, w_rows, order), *b = blocked(&k, 2, spt, by_rows, w_cols, order);
  add(&k, TIR_CONVERT_LAYOUT, tile_in(&k, 256, 256, a), tile(&k, DT_I32, 2, 256, 256), b);
  GpuCode code = lower(&k);
  CHECK(code.shared_bytes > 0 && code.shared_bytes <= 64 * 1024 * 9 / 8);
  CHECK(count(code.llir, "call void @tile_sim_barrier()") >= 2 * 4 - 1); /* 4 rounds or more */
  arena_free(&k.arena);
}

/* Broadcasting a column along the registers of a replicated layout. */
static void test_broadcast_is_free(void) {
  Kernel k;
  begin(&k, 8);
  int spt[2] = {2, 2}, tpw[2] = {8, 4}, wpc[2] = {4, 2}, order[2] = {1, 0};
  const Layout *a = blocked(&k, 2, spt, tpw, wpc, order);
  tile_in(&k, 64, 128, a);
  GpuCode code = lower(&k);
  CHECK(code.llir && !strstr(code.llir, "tile_sim_barrier"));
  arena_free(&k.arena);
}

/* One register per thread: a splat moves for free, a varying tile does not. */
static void test_uniform_tiles(void) {
  Kernel k;
  begin(&k, 4);
  int spt[2] = {1, 1}, tpw_a[2] = {1, 32}, wpc_a[2] = {4, 1}, tpw_b[2] = {4, 8}, wpc_b[2] = {1, 4}, order[2] = {1, 0};
  const Layout *a = blocked(&k, 2, spt, tpw_a, wpc_a, order), *b = blocked(&k, 2, spt, tpw_b, wpc_b, order);
  TirParam p = {"x", tir_value_new(k.f, type_scalar(&k.arena, DT_I32), "x"), 1, 0};
  vec_push(&k.arena, &k.f->params, p);
  int splat = add(&k, TIR_SPLAT, p.value, tile(&k, DT_I32, 2, 4, 32), a);
  add(&k, TIR_CONVERT_LAYOUT, splat, tile(&k, DT_I32, 2, 4, 32), b);
  GpuCode code = lower(&k);
  CHECK(code.llir && !strstr(code.llir, "tile_sim_barrier"));
  arena_free(&k.arena);
  begin(&k, 4);
  a = blocked(&k, 2, spt, tpw_a, wpc_a, order), b = blocked(&k, 2, spt, tpw_b, wpc_b, order);
  add(&k, TIR_CONVERT_LAYOUT, tile_in(&k, 4, 32, a), tile(&k, DT_I32, 2, 4, 32), b);
  code = lower(&k);
  CHECK(count(code.llir, "call void @tile_sim_barrier()") == 1);
  arena_free(&k.arena);
}

int main(void) {
  test_register_renaming();
  test_transposing_convert();
  test_rounds();
  test_broadcast_is_free();
  test_uniform_tiles();
  return check_report();
}
