/* Tile IR to GPU-layout IR: layout assignment, and dropping the layouts no
 * value uses (after every step); the verifier and the optional steps that
 * follow are the pass manager's (src/driver/passes.c). */
#include "passes.h"


static void mark_used(const TirFunc *f, const TirBlock *b, const Layout **used) {
  for (int i = 0; i < b->args.len; i++) used[b->args.data[i]] = tir_layout(f, b->args.data[i]);
  for (int i = 0; i < b->ops.len; i++) {
    const TirOp *op = b->ops.data[i];
    for (int k = 0; k < op->results.len; k++) used[op->results.data[k]] = tir_layout(f, op->results.data[k]);
    for (int r = 0; r < 2; r++)
      if (op->regions[r]) mark_used(f, op->regions[r], used);
  }
}

/* A fresh layout table holding only the layouts values use (and their
 * parents), in the old order, numbered densely: the printed definitions
 * are the ones the function refers to. */
void tgir_compact_layouts(TirFunc *f) {
  const Layout **used = arena_alloc(f->arena, sizeof *used * ((size_t)f->types.len + 1));
  mark_used(f, f->body, used);
  LayoutTable *fresh = arena_alloc(f->arena, sizeof *fresh);
  fresh->arena = f->arena;
  const LayoutTable *old = f->layout_table;
  for (int i = 0; i < old->list.len; i++)
    for (int v = 0; v < f->types.len; v++)
      if (used[v] == old->list.data[i]) {
        layout_reintern(fresh, used[v]);
        break;
      }
  for (int v = 0; v < f->layouts.len; v++) tir_set_layout(f, v, used[v] ? layout_reintern(fresh, used[v]) : NULL);
  f->layout_table = fresh;
}

void tgir_convert(TirFunc *f) {
  LayoutTable *table = arena_alloc(f->arena, sizeof *table);
  table->arena = f->arena;
  f->layout_table = table;
  tgir_assign(f, table, tgir_coalesce(f, table));
}

int tgir_check_text(TirFunc *f, Diags *d) {
  if (!f->layout_table) { /* text without layout definitions: a function without tiles */
    f->layout_table = arena_alloc(f->arena, sizeof *f->layout_table);
    f->layout_table->arena = f->arena;
  }
  return tgir_verify(f, d);
}

void tgir_print(const TirFunc *f, Buf *out) {
  if (f->layout_table)
    for (int i = 0; i < f->layout_table->list.len; i++) {
      const Layout *l = f->layout_table->list.data[i];
      buf_printf(out, "%s = %s\n", layout_name(f->arena, l), layout_str(f->arena, l));
    }
  tir_print(f, out);
}
