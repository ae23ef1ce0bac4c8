;; Freivalds inner loops in WebAssembly SIMD128: the float64 matrix-vector products of
;; verifier/src/checks/freivalds.ts (rowDots, colDots), with exactly its summation order, so the
;; residuals and bounds are the bits of the JS loops (test/checks/freivalds-wasm.test.ts). No relaxed
;; SIMD, no FMA. Built by `node scripts/build-kernels.ts` into freivalds.wasm (committed).
;;
;; Memory is owned by the caller (checks/freivalds-wasm.ts), which copies operands in and results out.
;; Matrices are float32, row-major; vectors and results float64. Byte offsets, sizes in elements.
(module
  (memory (export "memory") 1)

  ;; For a rows x cols matrix M and k interleaved vectors v (v[j*k + t]), with w[cols] weights:
  ;;   out[i*k + t] = sum_j M[i,j] * v[j*k + t]      absOut[i] = sum_j |M[i,j]| * w[j]
  ;; INVARIANT: every sum starts at +0.0 and adds its terms with j ascending, one rounding per add
  ;; and per product, as the JS loop does. Lanes are rows (i, i+1), accumulators vectors (t, t+1):
  ;; neither changes any sum's order. v must have one readable float64 past its end (the caller pads
  ;; it) because an odd last vector is computed alongside a dummy one; w = ones for |M| 1 (|x| * 1.0
  ;; is |x| exactly). When rows is odd, the last row rides in both lanes and only lane 0 is stored.
  (func (export "rowdots")
    (param $m i32) (param $rows i32) (param $cols i32) (param $v i32) (param $k i32) (param $w i32) (param $out i32) (param $abs i32)
    (local $i i32) (local $g i32) (local $j i32) (local $r0 i32) (local $r1 i32) (local $two i32)
    (local $vp i32) (local $vstride i32) (local $rowBytes i32) (local $o i32)
    (local $xv v128) (local $a0 v128) (local $a1 v128) (local $s v128)
    (local.set $rowBytes (i32.shl (local.get $cols) (i32.const 2)))
    (local.set $vstride (i32.shl (local.get $k) (i32.const 3)))
    (block $idone
      (loop $iloop
        (br_if $idone (i32.ge_u (local.get $i) (local.get $rows)))
        (local.set $r0 (i32.add (local.get $m) (i32.mul (local.get $i) (local.get $rowBytes))))
        (local.set $two (i32.lt_u (i32.add (local.get $i) (i32.const 1)) (local.get $rows)))
        (local.set $r1 (select (i32.add (local.get $r0) (local.get $rowBytes)) (local.get $r0) (local.get $two)))
        (local.set $g (i32.const 0))
        (block $gdone
          (loop $gloop
            (br_if $gdone (i32.ge_u (local.get $g) (local.get $k)))
            (local.set $a0 (v128.const i64x2 0 0))
            (local.set $a1 (v128.const i64x2 0 0))
            (local.set $s (v128.const i64x2 0 0))
            (local.set $vp (i32.add (local.get $v) (i32.shl (local.get $g) (i32.const 3))))
            (local.set $j (i32.const 0))
            (block $jdone
              (loop $jloop
                (br_if $jdone (i32.ge_u (local.get $j) (local.get $cols)))
                (local.set $xv
                  (f64x2.replace_lane 1
                    (f64x2.splat (f64.promote_f32 (f32.load (i32.add (local.get $r0) (i32.shl (local.get $j) (i32.const 2))))))
                    (f64.promote_f32 (f32.load (i32.add (local.get $r1) (i32.shl (local.get $j) (i32.const 2)))))))
                (local.set $a0 (f64x2.add (local.get $a0) (f64x2.mul (local.get $xv) (v128.load64_splat offset=0 (local.get $vp)))))
                (local.set $a1 (f64x2.add (local.get $a1) (f64x2.mul (local.get $xv) (v128.load64_splat offset=8 (local.get $vp)))))
                (local.set $s (f64x2.add (local.get $s)
                  (f64x2.mul (f64x2.abs (local.get $xv)) (v128.load64_splat (i32.add (local.get $w) (i32.shl (local.get $j) (i32.const 3)))))))
                (local.set $vp (i32.add (local.get $vp) (local.get $vstride)))
                (local.set $j (i32.add (local.get $j) (i32.const 1)))
                (br $jloop)))
            ;; out[i*k + g] (and g+1), then the same for row i+1
            (local.set $o (i32.add (local.get $out) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $k)) (local.get $g)) (i32.const 3))))
            (f64.store (local.get $o) (f64x2.extract_lane 0 (local.get $a0)))
            (if (i32.lt_u (i32.add (local.get $g) (i32.const 1)) (local.get $k))
              (then (f64.store offset=8 (local.get $o) (f64x2.extract_lane 0 (local.get $a1)))))
            (if (local.get $two)
              (then
                (local.set $o (i32.add (local.get $o) (local.get $vstride)))
                (f64.store (local.get $o) (f64x2.extract_lane 1 (local.get $a0)))
                (if (i32.lt_u (i32.add (local.get $g) (i32.const 1)) (local.get $k))
                  (then (f64.store offset=8 (local.get $o) (f64x2.extract_lane 1 (local.get $a1)))))))
            (if (i32.eqz (local.get $g))
              (then
                (local.set $o (i32.add (local.get $abs) (i32.shl (local.get $i) (i32.const 3))))
                (f64.store (local.get $o) (f64x2.extract_lane 0 (local.get $s)))
                (if (local.get $two) (then (f64.store offset=8 (local.get $o) (f64x2.extract_lane 1 (local.get $s)))))))
            (local.set $g (i32.add (local.get $g) (i32.const 2)))
            (br $gloop)))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $iloop))))

  ;; The transpose of a stored rows x cols matrix S (used as cols x rows), axpy form:
  ;;   out[l*k + t] = sum_j S[j,l] * v[j*k + t]      absOut[l] = sum_j |S[j,l]| * w[j]
  ;; out and absOut must arrive zeroed. INVARIANT: each sum adds its terms with j ascending (one pass
  ;; over S per j row), as the JS loop; lanes are vectors (t, t+1) of one l, so no order changes.
  (func (export "coldots")
    (param $m i32) (param $rows i32) (param $cols i32) (param $v i32) (param $k i32) (param $w i32) (param $out i32) (param $abs i32)
    (local $j i32) (local $l i32) (local $t i32) (local $row i32) (local $vj i32) (local $op i32) (local $ap i32)
    (local $x f64) (local $xs v128) (local $wj f64) (local $k2 i32) (local $vstride i32)
    (local.set $vstride (i32.shl (local.get $k) (i32.const 3)))
    (local.set $k2 (i32.and (local.get $k) (i32.const -2)))
    (block $jdone
      (loop $jloop
        (br_if $jdone (i32.ge_u (local.get $j) (local.get $rows)))
        (local.set $row (i32.add (local.get $m) (i32.shl (i32.mul (local.get $j) (local.get $cols)) (i32.const 2))))
        (local.set $vj (i32.add (local.get $v) (i32.mul (local.get $j) (local.get $vstride))))
        (local.set $wj (f64.load (i32.add (local.get $w) (i32.shl (local.get $j) (i32.const 3)))))
        (local.set $op (local.get $out))
        (local.set $ap (local.get $abs))
        (local.set $l (i32.const 0))
        (block $ldone
          (loop $lloop
            (br_if $ldone (i32.ge_u (local.get $l) (local.get $cols)))
            (local.set $x (f64.promote_f32 (f32.load (i32.add (local.get $row) (i32.shl (local.get $l) (i32.const 2))))))
            (local.set $xs (f64x2.splat (local.get $x)))
            (local.set $t (i32.const 0))
            (block $tdone
              (loop $tloop
                (br_if $tdone (i32.ge_u (local.get $t) (local.get $k2)))
                (v128.store (i32.add (local.get $op) (i32.shl (local.get $t) (i32.const 3)))
                  (f64x2.add (v128.load (i32.add (local.get $op) (i32.shl (local.get $t) (i32.const 3))))
                    (f64x2.mul (local.get $xs) (v128.load (i32.add (local.get $vj) (i32.shl (local.get $t) (i32.const 3)))))))
                (local.set $t (i32.add (local.get $t) (i32.const 2)))
                (br $tloop)))
            (if (i32.lt_u (local.get $t) (local.get $k))
              (then
                (f64.store (i32.add (local.get $op) (i32.shl (local.get $t) (i32.const 3)))
                  (f64.add (f64.load (i32.add (local.get $op) (i32.shl (local.get $t) (i32.const 3))))
                    (f64.mul (local.get $x) (f64.load (i32.add (local.get $vj) (i32.shl (local.get $t) (i32.const 3)))))))))
            (f64.store (local.get $ap) (f64.add (f64.load (local.get $ap)) (f64.mul (f64.abs (local.get $x)) (local.get $wj))))
            (local.set $op (i32.add (local.get $op) (local.get $vstride)))
            (local.set $ap (i32.add (local.get $ap) (i32.const 8)))
            (local.set $l (i32.add (local.get $l) (i32.const 1)))
            (br $lloop)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $jloop))))
)
