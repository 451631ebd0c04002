/* Reading mma operands from shared memory, with ldmatrix where it fits.
 *
 * ldmatrix.x4 reads four 8 x 8 matrices of 16-bit words: lane 8j + q
 * gives the address of row q of matrix j (16 contiguous bytes), and lane l
 * receives, as its register j, the 4 bytes at position l % 4 of row l / 4
 * of matrix j (.trans: the two 16-bit words of rows 2(l % 4) and 2(l % 4) +
 * 1 at column l / 4).  An mma operand layout holds its elements in 32-bit
 * words whose lane bits 0-1 select the word within 16 bytes of a row and
 * lane bits 2-4 the row: exactly that, when the buffer keeps those 16
 * bytes contiguous.  So in the layout's memory offsets (BufferView):
 *   non-trans: the word's elements are contiguous, lane bits 0 and 1 step
 *     4 and 8 bytes, and the rows (lane bits 2-4) are 16-byte aligned;
 *   trans (16-bit only): lane bits 2-4 step 1, 2, 4 elements along a
 *     16-byte row, and the word's second element and lane bits 0-1 step
 *     to rows 1, 2 and 4 further.
 * Four consecutive words of a thread (the two register bits above the
 * word's) make the four matrices; the address a lane gives is then another
 * linear map of its tid bits (rows from its bits 0-2, matrices from bits
 * 3-4), computed once per kernel with the same XOR-aware addressing as
 * every buffer access.  Where neither form fits (tf32 or int8 stored along
 * M or N), each word is read with ld.shared.
 *
 * A reader loads words on demand: the mma dot asks for the words of each
 * K step as it reaches it, so only a step's fragments are live at once
 * (Triton's prefetch pass splits K for the same reason). */
#include "lower.h"

#include <string.h>

typedef struct Ldmatrix {
  int trans;
  int count;            /* matrices per instruction: 1, 2 or 4 */
  BufferView address;   /* what each lane's row address is */
} Ldmatrix;

struct OperandReader {
  int word_bits;        /* register bits inside a 32-bit word: log2(kWidth) */
  int n_words;
  BufferView view;      /* the operand's registers and threads in the buffer */
  int ldmatrix;         /* whether plan holds */
  Ldmatrix plan;
  LLVMTypeRef elem;
  LLVMValueRef *words;  /* i32 words read so far (NULL: not yet) */
};

static int log2_of(int x) { return x > 1 ? 31 - __builtin_clz((unsigned)x) : 0; }

/* Whether an offset is a multiple of `unit` elements. */
static int aligned(uint32_t offset, uint32_t unit) { return (offset & (unit - 1)) == 0; }

static int plan(const BufferView *v, int word_bits, Ldmatrix *p) {
  uint32_t row = 16 / (uint32_t)v->elem_bytes, kw = 1u << word_bits; /* elements in 16 bytes, in a word */
  int words = v->n_reg - word_bits;
  p->count = words >= 2 ? 4 : words == 1 ? 2 : 1;
  p->address = *v;
  uint32_t *t = p->address.thread;
  if (!p->trans) {
    for (int j = 0; j < word_bits; j++)
      if (v->reg[j] != 1u << j) return 0;
    if (v->thread[0] != kw || v->thread[1] != 2 * kw) return 0;
    t[0] = v->thread[2], t[1] = v->thread[3], t[2] = v->thread[4];
  } else {
    if (v->elem_bytes != 2 || word_bits != 1 || v->thread[2] != 1 || v->thread[3] != 2 || v->thread[4] != 4) return 0;
    t[0] = v->reg[0], t[1] = v->thread[0], t[2] = v->thread[1];
  }
  t[3] = p->count >= 2 ? v->reg[word_bits] : 0;
  t[4] = p->count == 4 ? v->reg[word_bits + 1] : 0;
  p->address.thread_mask = 0;
  for (int i = 0; i < TID_BITS; i++) {
    if (!aligned(t[i], row)) return 0;
    p->address.thread_mask |= t[i];
  }
  for (int i = word_bits + log2_of(p->count); i < v->n_reg; i++)
    if (!aligned(v->reg[i], row)) return 0;
  return 1;
}

OperandReader *lower_operand_reader(Lower *L, const TirOp *load) {
  int buffer = load->operands.data[0], res = load->results.data[0];
  const Layout *l = tir_layout(L->f, res);
  LinearLayout ll;
  lower_linear(L, res, &ll);
  OperandReader *r = arena_alloc(L->arena, sizeof *r);
  r->word_bits = log2_of(l->k_width);
  r->n_words = ll_registers(&ll) >> r->word_bits;
  lower_buffer_view(L, buffer, &ll, &r->view);
  r->elem = lower_elem_type(L, lower_type(L, res));
  r->words = arena_alloc(L->arena, sizeof(LLVMValueRef) * (size_t)r->n_words);
  memset(&r->plan, 0, sizeof r->plan);
  r->ldmatrix = plan(&r->view, r->word_bits, &r->plan);
  if (!r->ldmatrix) {
    r->plan.trans = 1;
    r->ldmatrix = plan(&r->view, r->word_bits, &r->plan);
  }
  return r;
}

/* The offset of word w's first register. */
static uint32_t word_offset(const OperandReader *r, int w) { return lower_view_offset(&r->view, (uint32_t)w << r->word_bits); }

static void read_group(Lower *L, OperandReader *r, int w) {
  int g = w & ~(r->plan.count - 1);
  LLVMValueRef out[4];
  L->target->ldmatrix(L, r->plan.count, r->plan.trans, lower_view_address(L, &r->plan.address, word_offset(r, g)), out);
  for (int j = 0; j < r->plan.count; j++) r->words[g + j] = out[j];
}

/* One word with ld.shared: its elements, in one access where contiguous. */
static void read_word(Lower *L, OperandReader *r, int w) {
  int kw = 1 << r->word_bits, vec = lower_view_vector_bits(&r->view, 4) >= r->word_bits;
  LLVMValueRef e[4];
  for (int j = 0; j < kw; j += vec ? kw : 1) {
    int n = vec ? kw : 1, word_bits, words;
    LLVMTypeRef t = lower_word_type(L, r->view.elem_bytes * n, r->view.elem_bytes * 8, &word_bits, &words);
    uint32_t off = lower_view_offset(&r->view, ((uint32_t)w << r->word_bits) | (uint32_t)j);
    LLVMValueRef x = LLVMBuildLoad2(L->b, t, lower_view_address(L, &r->view, off), "");
    LLVMSetAlignment(x, (unsigned)(r->view.elem_bytes * n));
    lower_unpack(L, x, r->elem, n, e + j);
  }
  r->words[w] = lower_pack(L, e, kw, L->i32);
}

LLVMValueRef lower_read_word(Lower *L, OperandReader *r, int w) {
  if (!r->words[w]) {
    if (r->ldmatrix) read_group(L, r, w);
    else read_word(L, r, w);
  }
  return r->words[w];
}

int lower_ldmatrix(Lower *L, const TirOp *op, const LinearLayout *ll) {
  const Layout *l = tir_layout(L->f, op->results.data[0]);
  if (!l || l->kind != LAYOUT_DOT_OPERAND || l->parent->kind != LAYOUT_MMA) return 0;
  OperandReader *r = lower_operand_reader(L, op);
  if (!r->ldmatrix) return 0;
  Regs out = lower_regs(L, ll_registers(ll));
  for (int w = 0; w < r->n_words; w++)
    lower_unpack(L, lower_read_word(L, r, w), r->elem, 1 << r->word_bits, out.v + (w << r->word_bits));
  lower_result(L, op, 0, out);
  return 1;
}
