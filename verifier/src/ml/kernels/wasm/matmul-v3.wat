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

  ;; quantizeV3Bits (reference-v3.ts) on the float32 bits x: the bf16-rounded bits, +0 below 2^-56, or -1 for a
  ;; special operand (NaN, +-Inf, magnitude >= 2^48 after rounding). -1 is never a result bit pattern (its low
  ;; 16 bits are not zero).
  (func $quantize (param $x i32) (result i32)
    (local $q i32) (local $e i32)
    (if (i32.eq (i32.and (local.get $x) (i32.const 0x7f800000)) (i32.const 0x7f800000)) (then (return (i32.const -1))))
    ;; round to nearest even at bit 16; x is finite here, so the add cannot wrap past 2^32
    (local.set $q (i32.and
      (i32.add (i32.add (local.get $x) (i32.const 0x7fff)) (i32.and (i32.shr_u (local.get $x) (i32.const 16)) (i32.const 1)))
      (i32.const 0xffff0000)))
    (local.set $e (i32.and (i32.shr_u (local.get $q) (i32.const 23)) (i32.const 0xff)))
    (if (i32.ge_u (local.get $e) (i32.const 175)) (then (return (i32.const -1))))
    (if (i32.lt_u (local.get $e) (i32.const 71)) (then (return (i32.const 0))))
    (local.get $q))

  ;; Packs A (element (i,k) at a + 4*(i*aRow + k*aInner)) into pa; flags[i] = 1 when row i holds a special
  ;; operand (bytes at $fa, M of them). Returns 1 when any row is special.
  (func (export "packA") (param $a i32) (param $aRow i32) (param $aInner i32) (param $M i32) (param $K i32) (param $pa i32) (param $fa i32) (result i32)
    (local $i0 i32) (local $r i32) (local $i i32) (local $k i32) (local $v i32) (local $src i32) (local $dst i32) (local $any i32) (local $flag i32)
    (local.set $aRow (i32.shl (local.get $aRow) (i32.const 2)))
    (local.set $aInner (i32.shl (local.get $aInner) (i32.const 2)))
    (block $pd (loop $pl
      (br_if $pd (i32.ge_u (local.get $i0) (local.get $M)))
      (local.set $r (i32.const 0))
      (block $rd (loop $rl
        (br_if $rd (i32.ge_u (local.get $r) (i32.const 4)))
        (local.set $i (i32.add (local.get $i0) (local.get $r)))
        (local.set $dst (i32.add (local.get $pa) (i32.shl (i32.add (i32.mul (local.get $i0) (local.get $K)) (local.get $r)) (i32.const 2))))
        (local.set $flag (i32.const 0))
        (if (i32.lt_u (local.get $i) (local.get $M))
          (then
            (local.set $src (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $aRow))))
            (local.set $k (i32.const 0))
            (block $kd (loop $kl
              (br_if $kd (i32.ge_u (local.get $k) (local.get $K)))
              (local.set $v (call $quantize (i32.load (local.get $src))))
              (if (i32.eq (local.get $v) (i32.const -1)) (then (local.set $flag (i32.const 1)) (local.set $v (i32.const 0))))
              (i32.store (local.get $dst) (local.get $v))
              (local.set $src (i32.add (local.get $src) (local.get $aInner)))
              (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (br $kl)))
            (i32.store8 (i32.add (local.get $fa) (local.get $i)) (local.get $flag))
            (local.set $any (i32.or (local.get $any) (local.get $flag))))
          (else
            (local.set $k (i32.const 0))
            (block $zd (loop $zl
              (br_if $zd (i32.ge_u (local.get $k) (local.get $K)))
              (i32.store (local.get $dst) (i32.const 0))
              (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (br $zl)))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rl)))
      (local.set $i0 (i32.add (local.get $i0) (i32.const 4)))
      (br $pl)))
    (local.get $any))

  ;; Packs B (element (k,j) at b + 4*(k*bInner + j*bCol)) into pb; flags[j] = 1 when column j holds a special
  ;; operand (bytes at $fb, N of them). Returns 1 when any column is special.
  (func (export "packB") (param $b i32) (param $bInner i32) (param $bCol i32) (param $K i32) (param $N i32) (param $pb i32) (param $fb i32) (result i32)
    (local $j0 i32) (local $c i32) (local $j i32) (local $k i32) (local $v i32) (local $src i32) (local $dst i32) (local $any i32) (local $flag i32)
    (local.set $bInner (i32.shl (local.get $bInner) (i32.const 2)))
    (local.set $bCol (i32.shl (local.get $bCol) (i32.const 2)))
    (block $pd (loop $pl
      (br_if $pd (i32.ge_u (local.get $j0) (local.get $N)))
      (local.set $c (i32.const 0))
      (block $cd (loop $cl
        (br_if $cd (i32.ge_u (local.get $c) (i32.const 8)))
        (local.set $j (i32.add (local.get $j0) (local.get $c)))
        (local.set $dst (i32.add (local.get $pb) (i32.shl (i32.add (i32.mul (local.get $j0) (local.get $K)) (local.get $c)) (i32.const 2))))
        (local.set $flag (i32.const 0))
        (if (i32.lt_u (local.get $j) (local.get $N))
          (then
            (local.set $src (i32.add (local.get $b) (i32.mul (local.get $j) (local.get $bCol))))
            (local.set $k (i32.const 0))
            (block $kd (loop $kl
              (br_if $kd (i32.ge_u (local.get $k) (local.get $K)))
              (local.set $v (call $quantize (i32.load (local.get $src))))
              (if (i32.eq (local.get $v) (i32.const -1)) (then (local.set $flag (i32.const 1)) (local.set $v (i32.const 0))))
              (i32.store (local.get $dst) (local.get $v))
              (local.set $src (i32.add (local.get $src) (local.get $bInner)))
              (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (br $kl)))
            (i32.store8 (i32.add (local.get $fb) (local.get $j)) (local.get $flag))
            (local.set $any (i32.or (local.get $any) (local.get $flag))))
          (else
            (local.set $k (i32.const 0))
            (block $zd (loop $zl
              (br_if $zd (i32.ge_u (local.get $k) (local.get $K)))
              (i32.store (local.get $dst) (i32.const 0))
              (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
              (local.set $k (i32.add (local.get $k) (i32.const 1)))
              (br $zl)))))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br $cl)))
      (local.set $j0 (i32.add (local.get $j0) (i32.const 8)))
      (br $pl)))
    (local.get $any))

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
