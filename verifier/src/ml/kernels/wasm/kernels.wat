;; PoUW kernels in WebAssembly SIMD128 (no relaxed SIMD, no FMA: every result is the IEEE-rounded
;; one the spec fixes, the same on x86-64 and arm64). The bits are defined by the plain-JS
;; reference, verifier/src/ml/kernels/reference.ts; test/ml/kernels.test.ts checks this module
;; against it bit for bit. Built by `node scripts/build-kernels.ts` (wabt's wat2wasm) into
;; kernels.wasm, which is committed; the test rebuilds it and compares the bytes.
;;
;; Memory is owned by the caller (kernels/wasm.ts), which copies operands in and results out.
(module
  (memory (export "memory") 1)

  ;; dst[r*cols + c] = f64(src[r*rs + c*cs]) for r < rows, c < cols (strides in elements).
  ;; Widening float32 -> float64 is exact, so packing changes no value, only the layout. Contiguous rows
  ;; (cs = 1) widen four elements per f32x4 load (two f64x2.promote_low_f32x4), the rest one by one.
  (func $pack (param $src i32) (param $dst i32) (param $rows i32) (param $cols i32) (param $rs i32) (param $cs i32)
    (local $r i32) (local $c i32) (local $row i32) (local $c4 i32) (local $v v128)
    (if (i32.eq (local.get $cs) (i32.const 1))
      (then (local.set $c4 (i32.and (local.get $cols) (i32.const -4)))))
    (block $rdone
      (loop $rloop
        (br_if $rdone (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $row (i32.add (local.get $src) (i32.shl (i32.mul (local.get $r) (local.get $rs)) (i32.const 2))))
        (local.set $c (i32.const 0))
        (block $vdone
          (loop $vloop
            (br_if $vdone (i32.ge_u (local.get $c) (local.get $c4)))
            (local.set $v (v128.load (i32.add (local.get $row) (i32.shl (local.get $c) (i32.const 2)))))
            (v128.store offset=0 (local.get $dst) (f64x2.promote_low_f32x4 (local.get $v)))
            (v128.store offset=16 (local.get $dst)
              (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
            (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
            (local.set $c (i32.add (local.get $c) (i32.const 4)))
            (br $vloop)))
        (block $cdone
          (loop $cloop
            (br_if $cdone (i32.ge_u (local.get $c) (local.get $cols)))
            (f64.store (local.get $dst)
              (f64.promote_f32 (f32.load (i32.add (local.get $row) (i32.shl (i32.mul (local.get $c) (local.get $cs)) (i32.const 2))))))
            (local.set $dst (i32.add (local.get $dst) (i32.const 8)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $cloop)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rloop))))  ;; C[M,N] += A . B in tfjs-cpu's order (reference.ts matmulRef); C must arrive zeroed.
  ;; A[i,k] = a[i*aRow + k*aInner], B[k,j] = b[k*bInner + j*bCol] (float32, strides in elements).
  ;; pa, pb: scratch for A as float64 [M,K] and B as float64 [K,N], 16-byte aligned.
  ;; INVARIANT: per element C[i,j], for each 48-block of k in ascending order: a float64 sum from
  ;; +0.0 over the block's k ascending, then C[i,j] = f32(f64(C[i,j]) + sum). Each f64x2 lane is one
  ;; output column and each accumulator one (row, column pair), so the register tiling (2 rows x 8
  ;; columns, then 1 x 8, 1 x 2, 1 x 1) and the order in which a k block visits the elements (64-column
  ;; chunks, then the column tails) change no element's arithmetic.
  (func (export "matmul")
    (param $a i32) (param $b i32) (param $c i32) (param $M i32) (param $K i32) (param $N i32)
    (param $aRow i32) (param $aInner i32) (param $bInner i32) (param $bCol i32) (param $pa i32) (param $pb i32)
    (local $k0 i32) (local $kEnd i32) (local $i i32) (local $j8 i32) (local $jc i32) (local $jcEnd i32) (local $bstride i32) (local $astride i32) (local $cstride i32)
    (call $pack (local.get $a) (local.get $pa) (local.get $M) (local.get $K) (local.get $aRow) (local.get $aInner))
    (call $pack (local.get $b) (local.get $pb) (local.get $K) (local.get $N) (local.get $bInner) (local.get $bCol))
    (local.set $bstride (i32.shl (local.get $N) (i32.const 3)))
    (local.set $astride (i32.shl (local.get $K) (i32.const 3)))
    (local.set $cstride (i32.shl (local.get $N) (i32.const 2)))
    (local.set $j8 (i32.and (local.get $N) (i32.const -8)))
    (block $k0done
      (loop $k0loop
        (br_if $k0done (i32.ge_u (local.get $k0) (local.get $K)))
        (local.set $kEnd (i32.add (local.get $k0) (i32.const 48)))
        (if (i32.gt_u (local.get $kEnd) (local.get $K)) (then (local.set $kEnd (local.get $K))))
        ;; columns in chunks of 64 (the block's rows of packed B: 48 x 64 x 8 = 24 KiB, which stays in L1
        ;; while every row pair of A passes over it), then the column tails of every row
        (local.set $jc (i32.const 0))
        (block $jcdone
          (loop $jcloop
            (br_if $jcdone (i32.ge_u (local.get $jc) (local.get $j8)))
            (local.set $jcEnd (i32.add (local.get $jc) (i32.const 64)))
            (if (i32.gt_u (local.get $jcEnd) (local.get $j8)) (then (local.set $jcEnd (local.get $j8))))
            (local.set $i (i32.const 0))
            (block $idone
              (loop $iloop
                (br_if $idone (i32.gt_u (i32.add (local.get $i) (i32.const 2)) (local.get $M)))
                (call $rows2x8
                  (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $astride)))
                  (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $cstride)))
                  (local.get $astride) (local.get $cstride) (local.get $pb) (local.get $k0) (local.get $kEnd)
                  (local.get $jc) (local.get $jcEnd) (local.get $bstride))
                (local.set $i (i32.add (local.get $i) (i32.const 2)))
                (br $iloop)))
            (local.set $jc (local.get $jcEnd))
            (br $jcloop)))
        (local.set $i (i32.const 0))
        (block $tdone
          (loop $tloop
            (br_if $tdone (i32.gt_u (i32.add (local.get $i) (i32.const 2)) (local.get $M)))
            (call $rowTail
              (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $astride)))
              (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $cstride)))
              (local.get $pb) (local.get $k0) (local.get $kEnd) (local.get $j8) (local.get $N) (local.get $bstride))
            (call $rowTail
              (i32.add (local.get $pa) (i32.mul (i32.add (local.get $i) (i32.const 1)) (local.get $astride)))
              (i32.add (local.get $c) (i32.mul (i32.add (local.get $i) (i32.const 1)) (local.get $cstride)))
              (local.get $pb) (local.get $k0) (local.get $kEnd) (local.get $j8) (local.get $N) (local.get $bstride))
            (local.set $i (i32.add (local.get $i) (i32.const 2)))
            (br $tloop)))
        (if (i32.lt_u (local.get $i) (local.get $M))
          (then
            (call $row1x8
              (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $astride)))
              (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $cstride)))
              (local.get $pb) (local.get $k0) (local.get $kEnd) (local.get $j8) (local.get $bstride))
            (call $rowTail
              (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $astride)))
              (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $cstride)))
              (local.get $pb) (local.get $k0) (local.get $kEnd) (local.get $j8) (local.get $N) (local.get $bstride))))
        (local.set $k0 (i32.add (local.get $k0) (i32.const 48)))
        (br $k0loop))))

  ;; Columns j0..j8-1 (both multiples of 8) of rows i and i+1 for the k block [k0, kEnd): eight f64x2
  ;; accumulators, each B load shared by both rows. ar0/cr0: row i of packed A and of C; as/cs: row strides.
  (func $rows2x8 (param $ar0 i32) (param $cr0 i32) (param $as i32) (param $cs i32) (param $pb i32)
    (param $k0 i32) (param $kEnd i32) (param $j0 i32) (param $j8 i32) (param $bstride i32)
    (local $j i32) (local $k i32) (local $ap i32) (local $bp i32) (local $cp i32)
    (local $x0 v128) (local $x1 v128) (local $bv v128)
    (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128)
    (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128)
    (local.set $j (local.get $j0))
    (block $jdone
      (loop $jloop
        (br_if $jdone (i32.ge_u (local.get $j) (local.get $j8)))
        (local.set $p0 (v128.const i64x2 0 0)) (local.set $p1 (v128.const i64x2 0 0))
        (local.set $p2 (v128.const i64x2 0 0)) (local.set $p3 (v128.const i64x2 0 0))
        (local.set $q0 (v128.const i64x2 0 0)) (local.set $q1 (v128.const i64x2 0 0))
        (local.set $q2 (v128.const i64x2 0 0)) (local.set $q3 (v128.const i64x2 0 0))
        (local.set $ap (i32.add (local.get $ar0) (i32.shl (local.get $k0) (i32.const 3))))
        (local.set $bp (i32.add (local.get $pb)
          (i32.add (i32.mul (local.get $k0) (local.get $bstride)) (i32.shl (local.get $j) (i32.const 3)))))
        (local.set $k (local.get $k0))
        (block $kdone
          (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $k) (local.get $kEnd)))
            (local.set $x0 (f64x2.splat (f64.load (local.get $ap))))
            (local.set $x1 (f64x2.splat (f64.load (i32.add (local.get $ap) (local.get $as)))))
            (local.set $bv (v128.load offset=0 (local.get $bp)))
            (local.set $p0 (f64x2.add (local.get $p0) (f64x2.mul (local.get $x0) (local.get $bv))))
            (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $x1) (local.get $bv))))
            (local.set $bv (v128.load offset=16 (local.get $bp)))
            (local.set $p1 (f64x2.add (local.get $p1) (f64x2.mul (local.get $x0) (local.get $bv))))
            (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $x1) (local.get $bv))))
            (local.set $bv (v128.load offset=32 (local.get $bp)))
            (local.set $p2 (f64x2.add (local.get $p2) (f64x2.mul (local.get $x0) (local.get $bv))))
            (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $x1) (local.get $bv))))
            (local.set $bv (v128.load offset=48 (local.get $bp)))
            (local.set $p3 (f64x2.add (local.get $p3) (f64x2.mul (local.get $x0) (local.get $bv))))
            (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $x1) (local.get $bv))))
            (local.set $ap (i32.add (local.get $ap) (i32.const 8)))
            (local.set $bp (i32.add (local.get $bp) (local.get $bstride)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $kloop)))
        (local.set $cp (i32.add (local.get $cr0) (i32.shl (local.get $j) (i32.const 2))))
        (v128.store64_lane offset=0 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $cp))) (local.get $p0))))
        (v128.store64_lane offset=8 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $cp))) (local.get $p1))))
        (v128.store64_lane offset=16 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 (local.get $cp))) (local.get $p2))))
        (v128.store64_lane offset=24 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 (local.get $cp))) (local.get $p3))))
        (local.set $cp (i32.add (local.get $cp) (local.get $cs)))
        (v128.store64_lane offset=0 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $cp))) (local.get $q0))))
        (v128.store64_lane offset=8 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $cp))) (local.get $q1))))
        (v128.store64_lane offset=16 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 (local.get $cp))) (local.get $q2))))
        (v128.store64_lane offset=24 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 (local.get $cp))) (local.get $q3))))
        (local.set $j (i32.add (local.get $j) (i32.const 8)))
        (br $jloop))))

  ;; Columns 0..j8-1 of one row (the last row when M is odd): four f64x2 accumulators.
  (func $row1x8 (param $arow i32) (param $crow i32) (param $pb i32)
    (param $k0 i32) (param $kEnd i32) (param $j8 i32) (param $bstride i32)
    (local $j i32) (local $k i32) (local $ap i32) (local $bp i32) (local $cp i32)
    (local $av v128) (local $acc0 v128) (local $acc1 v128) (local $acc2 v128) (local $acc3 v128)
    (block $jdone
      (loop $jloop
        (br_if $jdone (i32.ge_u (local.get $j) (local.get $j8)))
        (local.set $acc0 (v128.const i64x2 0 0)) (local.set $acc1 (v128.const i64x2 0 0))
        (local.set $acc2 (v128.const i64x2 0 0)) (local.set $acc3 (v128.const i64x2 0 0))
        (local.set $ap (i32.add (local.get $arow) (i32.shl (local.get $k0) (i32.const 3))))
        (local.set $bp (i32.add (local.get $pb)
          (i32.add (i32.mul (local.get $k0) (local.get $bstride)) (i32.shl (local.get $j) (i32.const 3)))))
        (local.set $k (local.get $k0))
        (block $kdone
          (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $k) (local.get $kEnd)))
            (local.set $av (f64x2.splat (f64.load (local.get $ap))))
            (local.set $acc0 (f64x2.add (local.get $acc0) (f64x2.mul (local.get $av) (v128.load offset=0 (local.get $bp)))))
            (local.set $acc1 (f64x2.add (local.get $acc1) (f64x2.mul (local.get $av) (v128.load offset=16 (local.get $bp)))))
            (local.set $acc2 (f64x2.add (local.get $acc2) (f64x2.mul (local.get $av) (v128.load offset=32 (local.get $bp)))))
            (local.set $acc3 (f64x2.add (local.get $acc3) (f64x2.mul (local.get $av) (v128.load offset=48 (local.get $bp)))))
            (local.set $ap (i32.add (local.get $ap) (i32.const 8)))
            (local.set $bp (i32.add (local.get $bp) (local.get $bstride)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $kloop)))
        (local.set $cp (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))))
        (v128.store64_lane offset=0 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $cp))) (local.get $acc0))))
        (v128.store64_lane offset=8 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $cp))) (local.get $acc1))))
        (v128.store64_lane offset=16 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 (local.get $cp))) (local.get $acc2))))
        (v128.store64_lane offset=24 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 (local.get $cp))) (local.get $acc3))))
        (local.set $j (i32.add (local.get $j) (i32.const 8)))
        (br $jloop))))

  ;; Columns j0..N-1 of one row (j0 = N rounded down to 8): pairs in one f64x2, then an odd last column in f64.
  (func $rowTail (param $arow i32) (param $crow i32) (param $pb i32)
    (param $k0 i32) (param $kEnd i32) (param $j0 i32) (param $N i32) (param $bstride i32)
    (local $j i32) (local $k i32) (local $ap i32) (local $bp i32) (local $cp i32) (local $acc v128) (local $s f64)
    (local.set $j (local.get $j0))
    (block $j2done
      (loop $j2loop
        (br_if $j2done (i32.gt_u (i32.add (local.get $j) (i32.const 2)) (local.get $N)))
        (local.set $acc (v128.const i64x2 0 0))
        (local.set $ap (i32.add (local.get $arow) (i32.shl (local.get $k0) (i32.const 3))))
        (local.set $bp (i32.add (local.get $pb)
          (i32.add (i32.mul (local.get $k0) (local.get $bstride)) (i32.shl (local.get $j) (i32.const 3)))))
        (local.set $k (local.get $k0))
        (block $kdone
          (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $k) (local.get $kEnd)))
            (local.set $acc (f64x2.add (local.get $acc)
              (f64x2.mul (f64x2.splat (f64.load (local.get $ap))) (v128.load (local.get $bp)))))
            (local.set $ap (i32.add (local.get $ap) (i32.const 8)))
            (local.set $bp (i32.add (local.get $bp) (local.get $bstride)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $kloop)))
        (local.set $cp (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))))
        (v128.store64_lane offset=0 0 (local.get $cp)
                  (f32x4.demote_f64x2_zero (f64x2.add (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $cp))) (local.get $acc))))
        (local.set $j (i32.add (local.get $j) (i32.const 2)))
        (br $j2loop)))
    (if (i32.lt_u (local.get $j) (local.get $N))
      (then
        (local.set $s (f64.const 0))
        (local.set $ap (i32.add (local.get $arow) (i32.shl (local.get $k0) (i32.const 3))))
        (local.set $bp (i32.add (local.get $pb)
          (i32.add (i32.mul (local.get $k0) (local.get $bstride)) (i32.shl (local.get $j) (i32.const 3)))))
        (local.set $k (local.get $k0))
        (block $kdone
          (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $k) (local.get $kEnd)))
            (local.set $s (f64.add (local.get $s) (f64.mul (f64.load (local.get $ap)) (f64.load (local.get $bp)))))
            (local.set $ap (i32.add (local.get $ap) (i32.const 8)))
            (local.set $bp (i32.add (local.get $bp) (local.get $bstride)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $kloop)))
        (local.set $cp (i32.add (local.get $crow) (i32.shl (local.get $j) (i32.const 2))))
        (f32.store (local.get $cp) (f32.demote_f64 (f64.add (f64.promote_f32 (f32.load (local.get $cp))) (local.get $s)))))))

  ;; One Adam update of n float32 elements (reference.ts adamRef), every op rounded to float32:
  ;;   m' = b1*m + o1*g;  v' = b2*v + o2*(g*g);  w' = w - lr*((m'/c1) / (sqrt(v'/c2) + eps))
  ;; Byte offsets of w, m, v, g and of the outputs ow, om, ov; n in elements.
  (func (export "adam")
    (param $w i32) (param $m i32) (param $v i32) (param $g i32) (param $ow i32) (param $om i32) (param $ov i32) (param $n i32)
    (param $b1 f32) (param $b2 f32) (param $o1 f32) (param $o2 f32) (param $lr f32) (param $eps f32) (param $c1 f32) (param $c2 f32)
    (local $off i32) (local $end i32) (local $end4 i32)
    (local $B1 v128) (local $B2 v128) (local $O1 v128) (local $O2 v128) (local $LR v128) (local $EPS v128) (local $C1 v128) (local $C2 v128)
    (local $gv v128) (local $mv v128) (local $vv v128)
    (local $gs f32) (local $ms f32) (local $vs f32)
    (local.set $B1 (f32x4.splat (local.get $b1)))
    (local.set $B2 (f32x4.splat (local.get $b2)))
    (local.set $O1 (f32x4.splat (local.get $o1)))
    (local.set $O2 (f32x4.splat (local.get $o2)))
    (local.set $LR (f32x4.splat (local.get $lr)))
    (local.set $EPS (f32x4.splat (local.get $eps)))
    (local.set $C1 (f32x4.splat (local.get $c1)))
    (local.set $C2 (f32x4.splat (local.get $c2)))
    (local.set $end (i32.shl (local.get $n) (i32.const 2)))
    (local.set $end4 (i32.and (local.get $end) (i32.const -16)))
    (block $done4
      (loop $loop4
        (br_if $done4 (i32.ge_u (local.get $off) (local.get $end4)))
        (local.set $gv (v128.load (i32.add (local.get $g) (local.get $off))))
        (local.set $mv (f32x4.add
          (f32x4.mul (local.get $B1) (v128.load (i32.add (local.get $m) (local.get $off))))
          (f32x4.mul (local.get $O1) (local.get $gv))))
        (local.set $vv (f32x4.add
          (f32x4.mul (local.get $B2) (v128.load (i32.add (local.get $v) (local.get $off))))
          (f32x4.mul (local.get $O2) (f32x4.mul (local.get $gv) (local.get $gv)))))
        (v128.store (i32.add (local.get $ow) (local.get $off))
          (f32x4.sub (v128.load (i32.add (local.get $w) (local.get $off)))
            (f32x4.mul (local.get $LR)
              (f32x4.div (f32x4.div (local.get $mv) (local.get $C1))
                (f32x4.add (f32x4.sqrt (f32x4.div (local.get $vv) (local.get $C2))) (local.get $EPS))))))
        (v128.store (i32.add (local.get $om) (local.get $off)) (local.get $mv))
        (v128.store (i32.add (local.get $ov) (local.get $off)) (local.get $vv))
        (local.set $off (i32.add (local.get $off) (i32.const 16)))
        (br $loop4)))
    (block $done1
      (loop $loop1
        (br_if $done1 (i32.ge_u (local.get $off) (local.get $end)))
        (local.set $gs (f32.load (i32.add (local.get $g) (local.get $off))))
        (local.set $ms (f32.add
          (f32.mul (local.get $b1) (f32.load (i32.add (local.get $m) (local.get $off))))
          (f32.mul (local.get $o1) (local.get $gs))))
        (local.set $vs (f32.add
          (f32.mul (local.get $b2) (f32.load (i32.add (local.get $v) (local.get $off))))
          (f32.mul (local.get $o2) (f32.mul (local.get $gs) (local.get $gs)))))
        (f32.store (i32.add (local.get $ow) (local.get $off))
          (f32.sub (f32.load (i32.add (local.get $w) (local.get $off)))
            (f32.mul (local.get $lr)
              (f32.div (f32.div (local.get $ms) (local.get $c1))
                (f32.add (f32.sqrt (f32.div (local.get $vs) (local.get $c2))) (local.get $eps))))))
        (f32.store (i32.add (local.get $om) (local.get $off)) (local.get $ms))
        (f32.store (i32.add (local.get $ov) (local.get $off)) (local.get $vs))
        (local.set $off (i32.add (local.get $off) (i32.const 4)))
        (br $loop1))))
)
