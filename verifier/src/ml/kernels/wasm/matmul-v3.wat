;; PoUW dense matmul of numerics "bitwise-v3" in WebAssembly SIMD128 (no relaxed SIMD, no FMA). The bits are
;; defined by the plain-JS reference verifier/src/ml/kernels/reference-v3.ts (matmulV3Ref: its header gives the
;; rules); test/ml/matmul-v3.test.ts checks this module against it bit for bit. Built by
;; `node scripts/build-kernels.ts` (wabt's wat2wasm) into matmul-v3.wasm, which is committed.
;;
;; The caller (kernels/wasm.ts, WasmMatmulV3) owns the layout of memory: it copies A and B in, calls
;; packA and packB once per product (quantize to bf16 bits on integers, flag special rows and columns), then
;; gemm, and copies C out, writing the canonical NaN over the flagged rows and columns.
;;
;; Packed layouts (f32 bit patterns, every one a bf16 value or +0):
;;   pa: panels of 4 rows of A; panel ip holds A[ip*4 + r][k] at ((ip*K + k)*4 + r); rows past M are +0
;;   pb: panels of 8 columns of B; panel jp holds B[k][jp*8 + c] at ((jp*K + k)*8 + c); columns past N are +0
;;   C:  [Mp, Np] row-major (Mp = M rounded up to 4, Np = N rounded up to 8); the padding is dropped by the caller
;;
;; INVARIANT: every element of C is owned by one f32x4 lane, which adds its products in ascending k starting
;; from +0: acc = round32(acc + a*b), the product exact (rule 1 of the reference), never split. Cache blocking
;; over K stores the lane's float32 partial sum to C and reloads it for the next block, which changes no bit
;; (the sum is a float32 either way); blocking over N and the row panels only reorders whole elements.
(module
  (memory (export "memory") 1)

  ;; Packing quantizes each operand inline (quantizeV3Bits of reference-v3.ts on the float32 bits): round to nearest
  ;; even at bit 16 (the operand is tested finite first, so the add cannot wrap past 2^32), +0 when the rounded
  ;; exponent field is below 71 (2^-56), special when the operand is NaN/Inf or the rounded field is 175 (2^48) or
  ;; more. A special operand is stored as +0 and sets its row's (column's) flag byte; the caller writes the NaNs.
  ;; Loops: k outer, the panel's rows (columns) inner, so every layout reads at most 8 sequential streams.

  ;; Packs A (element (i,k) at src + 4*(i*laneStride + k*kStride), i < lim = M) into pa; flag bytes at $flags (M of them) are zeroed, then set to 1 for each special row.
  (func (export "packA") (param $src i32) (param $laneStride i32) (param $kStride i32) (param $lim i32) (param $K i32) (param $dst i32) (param $flags i32)
    (local $l0 i32) (local $valid i32) (local $k i32) (local $l i32) (local $row i32) (local $at i32) (local $x i32) (local $q i32) (local $e i32)
    (local.set $laneStride (i32.shl (local.get $laneStride) (i32.const 2)))
    (local.set $kStride (i32.shl (local.get $kStride) (i32.const 2)))
    (local.set $l (i32.const 0))
    (block $fd (loop $fl
      (br_if $fd (i32.ge_u (local.get $l) (local.get $lim)))
      (i32.store8 (i32.add (local.get $flags) (local.get $l)) (i32.const 0))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $fl)))
    (block $pd (loop $pl
      (br_if $pd (i32.ge_u (local.get $l0) (local.get $lim)))
      (local.set $valid (i32.sub (local.get $lim) (local.get $l0)))
      (if (i32.gt_u (local.get $valid) (i32.const 4)) (then (local.set $valid (i32.const 4))))
      (local.set $row (i32.add (local.get $src) (i32.mul (local.get $l0) (local.get $laneStride))))
      (local.set $k (i32.const 0))
      (block $kd (loop $kl
        (br_if $kd (i32.ge_u (local.get $k) (local.get $K)))
        (local.set $at (local.get $row))
        (local.set $l (i32.const 0))
        (block $ld (loop $ll
          (br_if $ld (i32.ge_u (local.get $l) (local.get $valid)))
          (local.set $x (i32.load (local.get $at)))
          (local.set $q (i32.and
            (i32.add (i32.add (local.get $x) (i32.const 0x7fff)) (i32.and (i32.shr_u (local.get $x) (i32.const 16)) (i32.const 1)))
            (i32.const 0xffff0000)))
          (local.set $e (i32.and (i32.shr_u (local.get $q) (i32.const 23)) (i32.const 0xff)))
          (if (i32.or (i32.eq (i32.and (local.get $x) (i32.const 0x7f800000)) (i32.const 0x7f800000)) (i32.ge_u (local.get $e) (i32.const 175)))
            (then
              (i32.store8 (i32.add (local.get $flags) (i32.add (local.get $l0) (local.get $l))) (i32.const 1))
              (local.set $q (i32.const 0))))
          (i32.store (local.get $dst) (select (local.get $q) (i32.const 0) (i32.ge_u (local.get $e) (i32.const 71))))
          (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
          (local.set $at (i32.add (local.get $at) (local.get $laneStride)))
          (local.set $l (i32.add (local.get $l) (i32.const 1)))
          (br $ll)))
        ;; the lanes past the last row (column) of a partial panel are +0
        (block $zd (loop $zl
          (br_if $zd (i32.ge_u (local.get $l) (i32.const 4)))
          (i32.store (local.get $dst) (i32.const 0))
          (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
          (local.set $l (i32.add (local.get $l) (i32.const 1)))
          (br $zl)))
        (local.set $row (i32.add (local.get $row) (local.get $kStride)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $kl)))
      (local.set $l0 (i32.add (local.get $l0) (i32.const 4)))
      (br $pl))))

  ;; Packs B (element (k,j) at src + 4*(j*laneStride + k*kStride), j < lim = N) into pb; flag bytes at $flags (N of them) are zeroed, then set to 1 for each special column.
  (func (export "packB") (param $src i32) (param $laneStride i32) (param $kStride i32) (param $lim i32) (param $K i32) (param $dst i32) (param $flags i32)
    (local $l0 i32) (local $valid i32) (local $k i32) (local $l i32) (local $row i32) (local $at i32) (local $x i32) (local $q i32) (local $e i32)
    (local.set $laneStride (i32.shl (local.get $laneStride) (i32.const 2)))
    (local.set $kStride (i32.shl (local.get $kStride) (i32.const 2)))
    (local.set $l (i32.const 0))
    (block $fd (loop $fl
      (br_if $fd (i32.ge_u (local.get $l) (local.get $lim)))
      (i32.store8 (i32.add (local.get $flags) (local.get $l)) (i32.const 0))
      (local.set $l (i32.add (local.get $l) (i32.const 1)))
      (br $fl)))
    (block $pd (loop $pl
      (br_if $pd (i32.ge_u (local.get $l0) (local.get $lim)))
      (local.set $valid (i32.sub (local.get $lim) (local.get $l0)))
      (if (i32.gt_u (local.get $valid) (i32.const 8)) (then (local.set $valid (i32.const 8))))
      (local.set $row (i32.add (local.get $src) (i32.mul (local.get $l0) (local.get $laneStride))))
      (local.set $k (i32.const 0))
      (block $kd (loop $kl
        (br_if $kd (i32.ge_u (local.get $k) (local.get $K)))
        (local.set $at (local.get $row))
        (local.set $l (i32.const 0))
        (block $ld (loop $ll
          (br_if $ld (i32.ge_u (local.get $l) (local.get $valid)))
          (local.set $x (i32.load (local.get $at)))
          (local.set $q (i32.and
            (i32.add (i32.add (local.get $x) (i32.const 0x7fff)) (i32.and (i32.shr_u (local.get $x) (i32.const 16)) (i32.const 1)))
            (i32.const 0xffff0000)))
          (local.set $e (i32.and (i32.shr_u (local.get $q) (i32.const 23)) (i32.const 0xff)))
          (if (i32.or (i32.eq (i32.and (local.get $x) (i32.const 0x7f800000)) (i32.const 0x7f800000)) (i32.ge_u (local.get $e) (i32.const 175)))
            (then
              (i32.store8 (i32.add (local.get $flags) (i32.add (local.get $l0) (local.get $l))) (i32.const 1))
              (local.set $q (i32.const 0))))
          (i32.store (local.get $dst) (select (local.get $q) (i32.const 0) (i32.ge_u (local.get $e) (i32.const 71))))
          (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
          (local.set $at (i32.add (local.get $at) (local.get $laneStride)))
          (local.set $l (i32.add (local.get $l) (i32.const 1)))
          (br $ll)))
        ;; the lanes past the last row (column) of a partial panel are +0
        (block $zd (loop $zl
          (br_if $zd (i32.ge_u (local.get $l) (i32.const 8)))
          (i32.store (local.get $dst) (i32.const 0))
          (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
          (local.set $l (i32.add (local.get $l) (i32.const 1)))
          (br $zl)))
        (local.set $row (i32.add (local.get $row) (local.get $kStride)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $kl)))
      (local.set $l0 (i32.add (local.get $l0) (i32.const 8)))
      (br $pl))))

  ;; C[4 rows x 8 cols] (row stride $crs bytes) over kLen >= 1 values of k: each lane one element, k ascending;
  ;; the sums start from +0 when $first is 1, else from the float32 partial sums stored in C by the previous K block.
  (func $tile (param $pa i32) (param $pb i32) (param $c i32) (param $crs i32) (param $kLen i32) (param $first i32)
    (local $b0 v128) (local $b1 v128) (local $s v128) (local $c00 v128) (local $c01 v128) (local $c10 v128) (local $c11 v128) (local $c20 v128) (local $c21 v128) (local $c30 v128) (local $c31 v128) (local $end i32) (local $cr i32)
    (if (i32.eqz (local.get $first))
      (then
        (local.set $cr (local.get $c))
        (local.set $c00 (v128.load offset=0 (local.get $cr)))
        (local.set $c01 (v128.load offset=16 (local.get $cr)))
        (local.set $cr (i32.add (local.get $cr) (local.get $crs)))
        (local.set $c10 (v128.load offset=0 (local.get $cr)))
        (local.set $c11 (v128.load offset=16 (local.get $cr)))
        (local.set $cr (i32.add (local.get $cr) (local.get $crs)))
        (local.set $c20 (v128.load offset=0 (local.get $cr)))
        (local.set $c21 (v128.load offset=16 (local.get $cr)))
        (local.set $cr (i32.add (local.get $cr) (local.get $crs)))
        (local.set $c30 (v128.load offset=0 (local.get $cr)))
        (local.set $c31 (v128.load offset=16 (local.get $cr)))
))
    ;;  ($first: the accumulators are v128 locals, which start at +0)
    (local.set $end (i32.add (local.get $pb) (i32.shl (local.get $kLen) (i32.const 5))))
    (loop $kl
      (local.set $b0 (v128.load offset=0 (local.get $pb)))
      (local.set $b1 (v128.load offset=16 (local.get $pb)))
      (local.set $s (v128.load32_splat offset=0 (local.get $pa)))
      (local.set $c00 (f32x4.add (local.get $c00) (f32x4.mul (local.get $s) (local.get $b0))))
      (local.set $c01 (f32x4.add (local.get $c01) (f32x4.mul (local.get $s) (local.get $b1))))
      (local.set $s (v128.load32_splat offset=4 (local.get $pa)))
      (local.set $c10 (f32x4.add (local.get $c10) (f32x4.mul (local.get $s) (local.get $b0))))
      (local.set $c11 (f32x4.add (local.get $c11) (f32x4.mul (local.get $s) (local.get $b1))))
      (local.set $s (v128.load32_splat offset=8 (local.get $pa)))
      (local.set $c20 (f32x4.add (local.get $c20) (f32x4.mul (local.get $s) (local.get $b0))))
      (local.set $c21 (f32x4.add (local.get $c21) (f32x4.mul (local.get $s) (local.get $b1))))
      (local.set $s (v128.load32_splat offset=12 (local.get $pa)))
      (local.set $c30 (f32x4.add (local.get $c30) (f32x4.mul (local.get $s) (local.get $b0))))
      (local.set $c31 (f32x4.add (local.get $c31) (f32x4.mul (local.get $s) (local.get $b1))))
      (local.set $pa (i32.add (local.get $pa) (i32.const 16)))
      (local.set $pb (i32.add (local.get $pb) (i32.const 32)))
      (br_if $kl (i32.lt_u (local.get $pb) (local.get $end))))
    (v128.store offset=0 (local.get $c) (local.get $c00))
    (v128.store offset=16 (local.get $c) (local.get $c01))
    (local.set $c (i32.add (local.get $c) (local.get $crs)))
    (v128.store offset=0 (local.get $c) (local.get $c10))
    (v128.store offset=16 (local.get $c) (local.get $c11))
    (local.set $c (i32.add (local.get $c) (local.get $crs)))
    (v128.store offset=0 (local.get $c) (local.get $c20))
    (v128.store offset=16 (local.get $c) (local.get $c21))
    (local.set $c (i32.add (local.get $c) (local.get $crs)))
    (v128.store offset=0 (local.get $c) (local.get $c30))
    (v128.store offset=16 (local.get $c) (local.get $c31))
  )

  ;; C[Mp, Np] = pa . pb (packed as above; K >= 1). Blocks: kc values of k (the K block, in ascending order), then
  ;; nc columns (a multiple of 8), then every row panel, then the column panels of the block.
  (func (export "gemm") (param $pa i32) (param $pb i32) (param $c i32) (param $Mp i32) (param $K i32) (param $Np i32) (param $kc i32) (param $nc i32)
    (local $k0 i32) (local $kLen i32) (local $j0 i32) (local $j1 i32) (local $i0 i32) (local $jp i32) (local $crs i32) (local $apan i32) (local $cRow i32)
    (local.set $crs (i32.shl (local.get $Np) (i32.const 2)))
    (block $kd (loop $kl
      (br_if $kd (i32.ge_u (local.get $k0) (local.get $K)))
      (local.set $kLen (i32.sub (local.get $K) (local.get $k0)))
      (if (i32.gt_u (local.get $kLen) (local.get $kc)) (then (local.set $kLen (local.get $kc))))
      (local.set $j0 (i32.const 0))
      (block $jd (loop $jl
        (br_if $jd (i32.ge_u (local.get $j0) (local.get $Np)))
        (local.set $j1 (i32.add (local.get $j0) (local.get $nc)))
        (if (i32.gt_u (local.get $j1) (local.get $Np)) (then (local.set $j1 (local.get $Np))))
        (local.set $i0 (i32.const 0))
        (block $id (loop $il
          (br_if $id (i32.ge_u (local.get $i0) (local.get $Mp)))
          ;; the panel of rows i0.., from k0
          (local.set $apan (i32.add (local.get $pa) (i32.shl (i32.add (i32.mul (local.get $i0) (local.get $K)) (i32.mul (local.get $k0) (i32.const 4))) (i32.const 2))))
          (local.set $cRow (i32.add (local.get $c) (i32.mul (local.get $i0) (local.get $crs))))
          (local.set $jp (local.get $j0))
          (block $pd (loop $pl
            (br_if $pd (i32.ge_u (local.get $jp) (local.get $j1)))
            (call $tile
              (local.get $apan)
              (i32.add (local.get $pb) (i32.shl (i32.add (i32.mul (local.get $jp) (local.get $K)) (i32.shl (local.get $k0) (i32.const 3))) (i32.const 2)))
              (i32.add (local.get $cRow) (i32.shl (local.get $jp) (i32.const 2)))
              (local.get $crs) (local.get $kLen) (i32.eqz (local.get $k0)))
            (local.set $jp (i32.add (local.get $jp) (i32.const 8)))
            (br $pl)))
          (local.set $i0 (i32.add (local.get $i0) (i32.const 4)))
          (br $il)))
        (local.set $j0 (local.get $j1))
        (br $jl)))
      (local.set $k0 (i32.add (local.get $k0) (local.get $kLen)))
      (br $kl))))
)
