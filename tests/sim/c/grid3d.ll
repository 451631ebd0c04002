; sim/kernels/grid3d.tl's kernel written by hand in LLVM IR as the sim target's
; code would be (sim_diff --module tests/sim/c/grid3d.ll grid3d): the entry
; reads its parameter through params[0]; the 4 elements of the tile are held
; by threads 0-3 and replicated in the others, so only threads 0-3 store.
declare i32 @tile_sim_tid()
declare i32 @tile_sim_ctaid(i32)
declare i32 @tile_sim_nctaid(i32)
declare void @tile_sim_store(ptr, ptr, i32)

define void @grid3d(ptr %out) {
entry:
  %tmp = alloca i32, align 4
  %tid = call i32 @tile_sim_tid()
  %r = and i32 %tid, 3
  %x = call i32 @tile_sim_ctaid(i32 0)
  %y = call i32 @tile_sim_ctaid(i32 1)
  %z = call i32 @tile_sim_ctaid(i32 2)
  %nx = call i32 @tile_sim_nctaid(i32 0)
  %ny = call i32 @tile_sim_nctaid(i32 1)
  %nz = call i32 @tile_sim_nctaid(i32 2)
  %a = mul i32 %nx, 10000
  %b = mul i32 %ny, 100
  %ab = add i32 %a, %b
  %sizes = add i32 %ab, %nz
  %is0 = icmp eq i32 %r, 0
  %is1 = icmp eq i32 %r, 1
  %is2 = icmp eq i32 %r, 2
  %v2 = select i1 %is2, i32 %z, i32 %sizes
  %v1 = select i1 %is1, i32 %y, i32 %v2
  %v = select i1 %is0, i32 %x, i32 %v1
  %owner = icmp ult i32 %tid, 4
  br i1 %owner, label %store, label %done

store:
  %yz = mul i32 %ny, %z
  %row = add i32 %y, %yz
  %nrow = mul i32 %nx, %row
  %flat = add i32 %x, %nrow
  %base = mul i32 %flat, 4
  %index = add i32 %base, %r
  %index64 = sext i32 %index to i64
  %addr = getelementptr i32, ptr %out, i64 %index64
  store i32 %v, ptr %tmp, align 4
  call void @tile_sim_store(ptr %addr, ptr %tmp, i32 4)
  br label %done

done:
  ret void
}

define void @grid3d_sim_entry(ptr %params) {
  %slot = load ptr, ptr %params, align 8
  %out = load ptr, ptr %slot, align 8
  call void @grid3d(ptr %out)
  ret void
}

@grid3d_sim_shared_bytes = constant i32 0
