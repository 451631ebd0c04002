/* Exchanges through shared memory: every thread writes its registers to a
 * scratch buffer at the offsets one Side gives, a barrier, and every thread
 * reads what the other Side says it holds.  Layout conversions, reductions
 * across warps and the broadcast of atomics' results are all exchanges.
 *
 * The buffer is indexed by element offset o through
 *   address(o) = c + (c >> row_bits) * pad,   c = o with the round bits removed,
 * a padding that moves rows to other banks; row_bits and pad are chosen by
 * counting, for the first warp, the wavefronts (distinct 4-byte words per
 * bank) every store and load instruction needs, and taking the cheapest.
 * Because every non-zero basis is a distinct single bit, the address of a
 * register is the address of its thread part plus that of its register
 * part: one run-time value per exchange side and a constant per register,
 * which the backend folds into the instruction.
 *
 * A tile too large for the scratch budget, or for the room the buffers live
 * across the exchange leave, is exchanged in rounds: offset bits that only
 * registers select on both sides pick which registers take part in each
 * round. */
#include "lower.h"

#include <string.h>

enum {
  SCRATCH_BUDGET = 64 << 10, /* bytes per round before an exchange splits into rounds */
  MAX_VECTOR_BYTES = 16,
  SAMPLED_GROUPS = 32,       /* instructions per side the bank-conflict count looks at */
};

static int is_single_bit(uint32_t b) { return b && !(b & (b - 1)); }

/* Low register bits j with reg[j] == 1 << j: consecutive elements, at most 16 bytes. */
static int vector_bits(const Side *s, int elem_bytes) {
  int k = 0;
  while (k < s->n_reg && s->reg[k] == (1u << k) && (2 << k) * elem_bytes <= MAX_VECTOR_BYTES) k++;
  return k;
}

/* Whether the non-zero bases of a side are distinct single bits. */
static int disjoint(const Side *s) {
  uint32_t seen = 0;
  for (int i = 0; i < s->n_reg + TID_BITS; i++) {
    uint32_t b = i < s->n_reg ? s->reg[i] : s->thread[i - s->n_reg];
    if (!b) continue;
    if (!is_single_bit(b) || (seen & b)) return 0;
    seen |= b;
  }
  return 1;
}

static uint32_t thread_bits(const Side *s) {
  uint32_t m = 0;
  for (int i = 0; i < TID_BITS; i++) m |= s->thread[i];
  return m;
}

/* The offset with the round bits removed (the bits above each move down). */
static uint32_t compress(const Scratch *p, uint32_t off) {
  uint32_t r = 0;
  for (int i = 0, j = 0; i < 32; i++) {
    if (p->round_mask >> i & 1) continue;
    r |= (off >> i & 1) << j++;
  }
  return r;
}

static uint32_t address_of(const Scratch *p, uint32_t off, int row_bits, int pad) {
  uint32_t c = compress(p, off);
  return c + (c >> row_bits) * (uint32_t)pad;
}

static uint32_t reg_offset(const Side *s, uint32_t r) {
  uint32_t off = 0;
  for (int i = 0; i < s->n_reg; i++)
    if (r >> i & 1) off ^= s->reg[i];
  return off;
}

/* ---- choosing the plan ---------------------------------------------------------- */

/* Round bits: from the top, offset bits no thread basis of either side
 * uses, until a round fits `budget` bytes. */
static void choose_rounds(Lower *L, Scratch *p, int64_t budget) {
  const Exchange *x = &p->x;
  uint32_t busy = thread_bits(&x->from) | thread_bits(&x->to);
  int low = p->vec_bits[0] > p->vec_bits[1] ? p->vec_bits[0] : p->vec_bits[1];
  int64_t bytes = ((int64_t)1 << x->space_bits) * p->elem_bytes;
  for (int bit = x->space_bits - 1; bit >= low && bytes > budget; bit--) {
    if (busy >> bit & 1) continue;
    p->round_mask |= 1u << bit;
    p->n_round_bits++;
    bytes /= 2;
  }
}

/* Wavefronts one warp-wide access needs: the most distinct 4-byte words any bank serves. */
static int wavefronts(const uint32_t *byte_address, int bytes) {
  uint32_t words[32 * 4];
  int n = 0, per_bank[32] = {0}, worst = 0;
  for (int lane = 0; lane < 32; lane++)
    for (uint32_t w = byte_address[lane] / 4; w <= (byte_address[lane] + (uint32_t)bytes - 1) / 4; w++) {
      int seen = 0;
      for (int i = 0; i < n && !seen; i++) seen = words[i] == w;
      if (seen) continue;
      words[n++] = w;
      if (++per_bank[w % 32] > worst) worst = per_bank[w % 32];
    }
  return worst;
}

/* Wavefronts of a sample of one side's instructions under a padding. */
static int side_cost(const Scratch *p, const Side *s, int vec, int row_bits, int pad) {
  uint32_t groups = 1u << (s->n_reg - vec), step = groups > SAMPLED_GROUPS ? groups / SAMPLED_GROUPS : 1;
  int cost = 0;
  for (uint32_t g = 0; g < groups; g += step) {
    uint32_t base = reg_offset(s, g << vec), address[32];
    for (int lane = 0; lane < 32; lane++) {
      uint32_t off = base;
      for (int i = 0; i < LANE_BITS; i++)
        if (lane >> i & 1) off ^= s->thread[i];
      address[lane] = address_of(p, off, row_bits, pad) * (uint32_t)p->elem_bytes;
    }
    cost += wavefronts(address, p->elem_bytes << vec);
  }
  return cost;
}

static int plan_cost(const Scratch *p, int row_bits, int pad) {
  return side_cost(p, &p->x.from, p->vec_bits[0], row_bits, pad) + side_cost(p, &p->x.to, p->vec_bits[1], row_bits, pad);
}

/* The padding with the fewest wavefronts; no padding on a tie. */
static void choose_padding(Scratch *p) {
  int vec = p->vec_bits[0] > p->vec_bits[1] ? p->vec_bits[0] : p->vec_bits[1];
  int bits = p->x.space_bits - p->n_round_bits;
  int best = plan_cost(p, bits, 0);
  p->row_bits = bits;
  p->pad = 0;
  for (int row = vec > 0 ? vec : 1; row < bits; row++)
    for (int pad = 1 << vec; pad * p->elem_bytes <= 64; pad *= 2) {
      int cost = plan_cost(p, row, pad);
      if (cost < best) best = cost, p->row_bits = row, p->pad = pad;
    }
}

static int round_up(int x, int to) { return (x + to - 1) / to * to; }

int lower_max_shared(const Lower *L) { return (int)arch_smem_per_program(arch_of_cc(L->compute_capability)); }

static void make_plan(Lower *L, const Exchange *x, int base, int64_t budget, Scratch *p) {
  memset(p, 0, sizeof *p);
  p->x = *x;
  p->base = base;
  LLVMTypeRef t = x->elem;
  p->mem_type = t == L->i1 ? L->i8 : LLVMGetTypeKind(t) == LLVMPointerTypeKind ? L->i64 : t;
  p->elem_bytes = lower_type_bits(p->mem_type) / 8;
  if (!disjoint(&x->from) || !disjoint(&x->to))
    lower_fail(L, "internal error: a layout whose bases are not distinct single bits");
  p->vec_bits[0] = vector_bits(&x->from, p->elem_bytes);
  p->vec_bits[1] = vector_bits(&x->to, p->elem_bytes);
  choose_rounds(L, p, budget);
  choose_padding(p);
  uint32_t last = address_of(p, (1u << x->space_bits) - 1, p->row_bits, p->pad);
  p->bytes = round_up((int)(last + 1) * p->elem_bytes, 16);
}

static int plan_fits(const Lower *L, const Scratch *p) { return L->scratch_base + p->base + p->bytes <= lower_max_shared(L); }

static void note_plan(Lower *L, const Scratch *p) {
  if (!plan_fits(L, p))
    lower_fail(L, "moving this tile between layouts needs %lld bytes of shared memory, more than %s has",
               (long long)(L->scratch_base + p->base + p->bytes), L->gpu->arch);
  lower_note_scratch(L, p->base + p->bytes);
}

void lower_scratch_plan(Lower *L, const Exchange *x, int base, int64_t budget, Scratch *p) {
  make_plan(L, x, base, budget, p);
  note_plan(L, p);
}

int64_t lower_scratch_offset(const Scratch *s, uint32_t off) {
  return (int64_t)address_of(s, off, s->row_bits, s->pad) * s->elem_bytes;
}

LLVMValueRef lower_scratch_thread(Lower *L, const Scratch *s, const uint32_t *thread) {
  int64_t c[TID_BITS];
  for (int i = 0; i < TID_BITS; i++) c[i] = lower_scratch_offset(s, thread[i]);
  LLVMValueRef off = LLVMBuildZExt(L->b, lower_thread_sum(L, c), L->i64, "");
  off = LLVMBuildAdd(L->b, off, lower_int(L, L->i64, s->base), "");
  return LLVMBuildGEP2(L->b, L->i8, L->shared, &off, 1, "");
}

/* Bytes of a run-time offset (no round bits): o + (o >> row_bits) * pad elements. */
LLVMValueRef lower_scratch_runtime(Lower *L, const Scratch *s, LLVMValueRef off) {
  LLVMValueRef c = off;
  if (s->pad) {
    LLVMValueRef rows = LLVMBuildLShr(L->b, off, lower_i32(L, s->row_bits), "");
    c = LLVMBuildAdd(L->b, off, LLVMBuildMul(L->b, rows, lower_i32(L, s->pad), ""), "");
  }
  c = LLVMBuildMul(L->b, c, lower_i32(L, s->elem_bytes), "");
  return LLVMBuildZExt(L->b, c, L->i64, "");
}

/* ---- emitting it ------------------------------------------------------------------- */

static LLVMValueRef register_pointer(Lower *L, const Scratch *p, LLVMValueRef base, uint32_t off) {
  LLVMValueRef c = lower_int(L, L->i64, lower_scratch_offset(p, off));
  return LLVMBuildGEP2(L->b, L->i8, base, &c, 1, "");
}

static int in_round(const Scratch *p, uint32_t off, uint32_t round) {
  uint32_t bits = 0;
  for (int i = 0, j = 0; i < 32; i++)
    if (p->round_mask >> i & 1) bits |= (off >> i & 1) << j++;
  return bits == round;
}

void lower_scratch_store(Lower *L, const Scratch *p, Regs src, uint32_t round) {
  const Side *s = &p->x.from;
  LLVMValueRef base = lower_scratch_thread(L, p, s->thread);
  int vec = p->vec_bits[0], n = 1 << vec, word_bits, words;
  LLVMTypeRef word = lower_word_type(L, p->elem_bytes * n, p->elem_bytes * 8, &word_bits, &words);
  LLVMValueRef elems[16];
  for (uint32_t r = 0; r < (uint32_t)src.n; r += (uint32_t)n) {
    uint32_t off = reg_offset(s, r);
    if (!in_round(p, off, round)) continue;
    for (int j = 0; j < n; j++) elems[j] = lower_to_memory(L, src.v[r + (uint32_t)j]);
    LLVMValueRef st = LLVMBuildStore(L->b, lower_pack(L, elems, n, word), register_pointer(L, p, base, off));
    LLVMSetAlignment(st, (unsigned)(p->elem_bytes * n));
  }
}

static uint32_t zero_register_bits(const Side *s) {
  uint32_t m = 0;
  for (int i = 0; i < s->n_reg; i++)
    if (!s->reg[i]) m |= 1u << i;
  return m;
}

static void load_side(Lower *L, const Scratch *p, Regs out, uint32_t round) {
  const Side *s = &p->x.to;
  LLVMValueRef base = lower_scratch_thread(L, p, s->thread);
  int vec = p->vec_bits[1], n = 1 << vec, word_bits, words;
  LLVMTypeRef word = lower_word_type(L, p->elem_bytes * n, p->elem_bytes * 8, &word_bits, &words);
  uint32_t zero = zero_register_bits(s);
  LLVMValueRef elems[16];
  for (uint32_t r = 0; r < (uint32_t)out.n; r += (uint32_t)n) {
    uint32_t off = reg_offset(s, r);
    if ((r & zero) || !in_round(p, off, round)) continue;
    LLVMValueRef v = LLVMBuildLoad2(L->b, word, register_pointer(L, p, base, off), "");
    LLVMSetAlignment(v, (unsigned)(p->elem_bytes * n));
    lower_unpack(L, v, p->mem_type, n, elems);
    for (int j = 0; j < n; j++) out.v[r + (uint32_t)j] = lower_from_memory(L, elems[j], p->x.elem);
  }
}

/* Writes one round of the `from` side, by one copy of each element where
 * the layout has copies in other warps (or, with owners_only, anywhere). */
void lower_scratch_write(Lower *L, const Scratch *s, Regs src, uint32_t round) {
  LLVMValueRef owner = lower_owner(L, s->x.from.thread, !s->x.owners_only);
  LLVMBasicBlockRef after = NULL;
  if (owner) {
    LLVMBasicBlockRef on = lower_new_block(L, "owner_store");
    after = lower_new_block(L, "stored");
    LLVMBuildCondBr(L->b, owner, on, after);
    LLVMPositionBuilderAtEnd(L->b, on);
  }
  lower_scratch_store(L, s, src, round);
  if (after) {
    LLVMBuildBr(L->b, after);
    LLVMPositionBuilderAtEnd(L->b, after);
  }
}

Regs lower_exchange(Lower *L, const Exchange *x, Regs src) {
  /* Buffers live across this op (a loop's staged operands) leave less than the
   * budget free: then smaller rounds, while there are bits to split by. */
  Scratch p;
  make_plan(L, x, 0, SCRATCH_BUDGET, &p);
  while (!plan_fits(L, &p)) {
    int rounds = p.n_round_bits;
    make_plan(L, x, 0, ((int64_t)p.elem_bytes << (x->space_bits - rounds)) / 2, &p);
    if (p.n_round_bits == rounds) break; /* no bit left to split by */
  }
  note_plan(L, &p);
  Regs out = lower_regs(L, 1 << x->to.n_reg);
  if (L->shared_dirty) lower_barrier(L);
  for (uint32_t round = 0; round < (1u << p.n_round_bits); round++) {
    if (round) lower_barrier(L);
    lower_scratch_write(L, &p, src, round);
    lower_barrier(L);
    load_side(L, &p, out, round);
  }
  uint32_t zero = zero_register_bits(&x->to);
  for (uint32_t r = 0; r < (uint32_t)out.n; r++)
    if (r & zero) out.v[r] = out.v[r & ~zero];
  lower_shared_unknown(L);
  return out;
}
