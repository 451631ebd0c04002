/* Tile IR to GPU-layout IR: the steps of the conversion, in order, with the
 * verifier after each (as Triton's make_ttgir). */
#include "tgir.h"

const Layout **tgir_coalesce(TirFunc *f, LayoutTable *table);
void tgir_assign(TirFunc *f, LayoutTable *table, const Layout **forced);

static int valid_warps(int n) { return n >= 1 && n <= 32 && (n & (n - 1)) == 0; }

int tgir_convert(TirFunc *f, const TgirOptions *o, Diags *d, Buf *dump) {
  if (o->num_warps) f->num_warps = o->num_warps;
  if (!valid_warps(f->num_warps)) {
    diag_error(d, (Loc){0}, "num_warps must be a power of two from 1 to 32, not %d", f->num_warps);
    return 1;
  }
  LayoutTable *table = arena_alloc(f->arena, sizeof *table);
  table->arena = f->arena;
  f->layout_table = table;
  tgir_assign(f, table, tgir_coalesce(f, table));
  if (dump) {
    buf_puts(dump, "// after assign-layouts\n");
    tgir_print(f, dump);
  }
  int problems = tgir_verify(f, d);
  if (problems) diag_note(d, (Loc){0}, "the GPU-layout IR verifier failed after layout assignment");
  return problems;
}

void tgir_print(const TirFunc *f, Buf *out) {
  if (f->layout_table)
    for (int i = 0; i < f->layout_table->list.len; i++) {
      const Layout *l = f->layout_table->list.data[i];
      buf_printf(out, "%s = %s\n", layout_name(f->arena, l), layout_str(f->arena, l));
    }
  tir_print(f, out);
}
