;; PoUW kernels in WebAssembly SIMD128 (no relaxed SIMD, no FMA: every result is the IEEE-rounded
;; one the spec fixes, the same on x86-64 and arm64). The bits are defined by the plain-JS
;; reference, verifier/src/ml/kernels/reference.ts; test/ml/kernels.test.ts checks this module
;; against it bit for bit. Built by `node scripts/build-kernels.ts` (wabt's wat2wasm) into
;; kernels.wasm, which is committed; the test rebuilds it and compares the bytes.
;;
;; Memory is owned by the caller (kernels/wasm.ts), which places operands and reads results.
(module
  (memory (export "memory") 1)

  ;; A [M,K] as float64, row-major: dst[r*cols + c] = f64(src[r*rs + c*cs]) (strides in elements); returns
  ;; how many elements are not +-0 (NaN counts as nonzero). Widening float32 -> float64 is exact, so packing
  ;; changes no value, only the layout. Contiguous rows (cs = 1) widen four elements per f32x4 load (two
  ;; f64x2.promote_low_f32x4), the rest one by one.
  (func $pack (param $src i32) (param $dst i32) (param $rows i32) (param $cols i32) (param $rs i32) (param $cs i32) (result i32)
    (local $r i32) (local $c i32) (local $row i32) (local $c4 i32) (local $v v128) (local $f f32) (local $nz i32) (local $nzv v128)
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
            ;; f32x4.ne gives -1 in each nonzero lane
            (local.set $nzv (i32x4.sub (local.get $nzv) (f32x4.ne (local.get $v) (v128.const f32x4 0 0 0 0))))
            (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
            (local.set $c (i32.add (local.get $c) (i32.const 4)))
            (br $vloop)))
        (block $cdone
          (loop $cloop
            (br_if $cdone (i32.ge_u (local.get $c) (local.get $cols)))
            (local.set $f (f32.load (i32.add (local.get $row) (i32.shl (i32.mul (local.get $c) (local.get $cs)) (i32.const 2)))))
            (f64.store (local.get $dst) (f64.promote_f32 (local.get $f)))
            (local.set $nz (i32.add (local.get $nz) (f32.ne (local.get $f) (f32.const 0))))
            (local.set $dst (i32.add (local.get $dst) (i32.const 8)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $cloop)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rloop)))
    (i32.add (local.get $nz)
      (i32.add (i32.add (i32x4.extract_lane 0 (local.get $nzv)) (i32x4.extract_lane 1 (local.get $nzv)))
               (i32.add (i32x4.extract_lane 2 (local.get $nzv)) (i32x4.extract_lane 3 (local.get $nzv))))))

  ;; B [K,N] (B[k,j] = src[k*bInner + j*bCol], float32) as float64 panels, so that a register tile reads its B
  ;; values sequentially: for each 48-block of k (k0 = 0, 48, ..; L = min(48, K - k0) rows) at byte k0*G*64,
  ;; for each group g of 8 columns (G = ceil(N/8)) at g*L*64 further, the block's L rows of the group's 8
  ;; columns (64 bytes each, k ascending). Columns N..8G-1 are +0 (they only feed C's padding columns).
  ;; Returns 1 when every element of B is finite (no +-Inf, no NaN), else 0.
  ;; Row-major B at 1 KiB per row (N = 128) put a tile's 48 k rows into 4 of L1's 64 sets, more than its
  ;; 8 ways, so a tile re-read its B rows from L2 (docs/engine.md "Kernel layer" profile).
  (func $packB (param $src i32) (param $dst i32) (param $K i32) (param $N i32) (param $bInner i32) (param $bCol i32) (result i32)
    (local $G i32) (local $k0 i32) (local $L i32) (local $k i32) (local $g i32) (local $j i32) (local $jj i32)
    (local $row i32) (local $p i32) (local $glen i32) (local $v v128) (local $f f32) (local $bad v128) (local $badS i32)
    (local.set $G (i32.shr_u (i32.add (local.get $N) (i32.const 7)) (i32.const 3)))
    (block $kbdone
      (loop $kbloop
        (br_if $kbdone (i32.ge_u (local.get $k0) (local.get $K)))
        (local.set $L (i32.sub (local.get $K) (local.get $k0)))
        (if (i32.gt_u (local.get $L) (i32.const 48)) (then (local.set $L (i32.const 48))))
        (local.set $glen (i32.shl (local.get $L) (i32.const 6)))
        (local.set $k (i32.const 0))
        (block $kdone
          (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $k) (local.get $L)))
            (local.set $row (i32.add (local.get $src)
              (i32.shl (i32.mul (i32.add (local.get $k0) (local.get $k)) (local.get $bInner)) (i32.const 2))))
            (local.set $p (i32.add (local.get $dst)
              (i32.shl (i32.add (i32.mul (local.get $k0) (local.get $G)) (local.get $k)) (i32.const 6))))
            (local.set $g (i32.const 0))
            (block $gdone
              (loop $gloop
                (br_if $gdone (i32.ge_u (local.get $g) (local.get $G)))
                (local.set $j (i32.shl (local.get $g) (i32.const 3)))
                (if (i32.and (i32.eq (local.get $bCol) (i32.const 1)) (i32.le_u (i32.add (local.get $j) (i32.const 8)) (local.get $N)))
                  (then
                    (local.set $v (v128.load offset=0 (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2)))))
                    (local.set $bad (v128.or (local.get $bad) (i32x4.eq (v128.and (local.get $v) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000)) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000))))
                    (v128.store offset=0 (local.get $p) (f64x2.promote_low_f32x4 (local.get $v)))
                    (v128.store offset=16 (local.get $p)
                      (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v))))
                    (local.set $v (v128.load offset=16 (i32.add (local.get $row) (i32.shl (local.get $j) (i32.const 2)))))
                    (local.set $bad (v128.or (local.get $bad) (i32x4.eq (v128.and (local.get $v) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000)) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000))))
                    (v128.store offset=32 (local.get $p) (f64x2.promote_low_f32x4 (local.get $v)))
                    (v128.store offset=48 (local.get $p)
                      (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v)))))
                  (else
                    (local.set $jj (i32.const 0))
                    (block $jdone
                      (loop $jloop
                        (br_if $jdone (i32.ge_u (local.get $jj) (i32.const 8)))
                        (local.set $f (f32.const 0))
                        (if (i32.lt_u (i32.add (local.get $j) (local.get $jj)) (local.get $N))
                          (then (local.set $f (f32.load (i32.add (local.get $row)
                            (i32.shl (i32.mul (i32.add (local.get $j) (local.get $jj)) (local.get $bCol)) (i32.const 2)))))))
                        (if (i32.eq (i32.and (i32.reinterpret_f32 (local.get $f)) (i32.const 0x7f800000)) (i32.const 0x7f800000))
                          (then (local.set $badS (i32.const 1))))
                        (f64.store (i32.add (local.get $p) (i32.shl (local.get $jj) (i32.const 3))) (f64.promote_f32 (local.get $f)))
                        (local.set $jj (i32.add (local.get $jj) (i32.const 1)))
                        (br $jloop)))))
                (local.set $p (i32.add (local.get $p) (local.get $glen)))
                (local.set $g (i32.add (local.get $g) (i32.const 1)))
                (br $gloop)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $kloop)))
        (local.set $k0 (i32.add (local.get $k0) (i32.const 48)))
        (br $kbloop)))
    (i32.and (i32.eqz (local.get $badS)) (i32.eqz (v128.any_true (local.get $bad)))))

  ;; C = A . B in tfjs-cpu's order (reference.ts matmulRef), into C [M, 8G]; returns 1 when it took the sparse
  ;; path ($sparse: A less than half nonzero, B finite), 0 for the dense one (G = ceil(N/8); row stride 8G
  ;; float32, so columns N..8G-1 of each row are padding the caller drops). K >= 1 (the caller zero-fills C
  ;; when K = 0). A[i,k] = a[i*aRow + k*aInner], B[k,j] = b[k*bInner + j*bCol] (float32, strides in elements).
  ;; pa, pb: scratch for A as float64 [M,K] and B as float64 panels ($packB, 8*K*8G bytes), 16-byte aligned;
  ;; ls: 1 KiB of scratch for $sparse.
  ;; INVARIANT: per element C[i,j], for each 48-block of k in ascending order: a float64 sum from +0.0 over
  ;; the block's k ascending, then C[i,j] = f32(f64(C[i,j]) + sum), C[i,j] = +0 before the first block (the
  ;; first block adds its sum to +0 instead of reading C, so C need not arrive zeroed). Each f64x2 lane is one
  ;; output column and each accumulator one (row, column pair), so the register tiling (2 rows x 8 columns,
  ;; then 1 x 8 for an odd last row), the two k steps per loop pass and the order in which a k block visits
  ;; the elements (8-group column chunks, then row pairs) change no element's arithmetic.
  (func (export "matmul")
    (param $a i32) (param $b i32) (param $c i32) (param $M i32) (param $K i32) (param $N i32)
    (param $aRow i32) (param $aInner i32) (param $bInner i32) (param $bCol i32) (param $pa i32) (param $pb i32) (param $ls i32) (result i32)
    (local $G i32) (local $k0 i32) (local $L i32) (local $i i32) (local $gc i32) (local $gcEnd i32)
    (local $astride i32) (local $cstride i32) (local $panel i32) (local $first i32) (local $nnz i32) (local $finite i32)
    (local.set $nnz (call $pack (local.get $a) (local.get $pa) (local.get $M) (local.get $K) (local.get $aRow) (local.get $aInner)))
    (local.set $finite (call $packB (local.get $b) (local.get $pb) (local.get $K) (local.get $N) (local.get $bInner) (local.get $bCol)))
    (local.set $G (i32.shr_u (i32.add (local.get $N) (i32.const 7)) (i32.const 3)))
    ;; a mostly-zero A (the MNIST pixels of X in fwd1 and bwdW1: ~80% zeros) against a finite B: skip the zeros
    (if (i32.and (local.get $finite) (i32.lt_u (i32.shl (local.get $nnz) (i32.const 1)) (i32.mul (local.get $M) (local.get $K))))
      (then
        (call $sparse (local.get $pa) (local.get $c) (local.get $M) (local.get $K) (local.get $G) (local.get $pb) (local.get $ls))
        (return (i32.const 1))))
    (local.set $astride (i32.shl (local.get $K) (i32.const 3)))
    (local.set $cstride (i32.shl (local.get $G) (i32.const 5)))
    (block $k0done
      (loop $k0loop
        (br_if $k0done (i32.ge_u (local.get $k0) (local.get $K)))
        (local.set $L (i32.sub (local.get $K) (local.get $k0)))
        (if (i32.gt_u (local.get $L) (i32.const 48)) (then (local.set $L (i32.const 48))))
        (local.set $panel (i32.add (local.get $pb) (i32.shl (i32.mul (local.get $k0) (local.get $G)) (i32.const 6))))
        (local.set $first (i32.eqz (local.get $k0)))
        ;; column chunks of 8 groups (8 x 8 columns: the chunk's panels, L x 512 bytes, stay in L1 while every
        ;; row pair of A passes over them)
        (local.set $gc (i32.const 0))
        (block $gcdone
          (loop $gcloop
            (br_if $gcdone (i32.ge_u (local.get $gc) (local.get $G)))
            (local.set $gcEnd (i32.add (local.get $gc) (i32.const 8)))
            (if (i32.gt_u (local.get $gcEnd) (local.get $G)) (then (local.set $gcEnd (local.get $G))))
            (local.set $i (i32.const 0))
            (block $idone
              (loop $iloop
                (br_if $idone (i32.gt_u (i32.add (local.get $i) (i32.const 2)) (local.get $M)))
                (call $rows2x8
                  (i32.add (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $astride))) (i32.shl (local.get $k0) (i32.const 3)))
                  (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $cstride)))
                  (local.get $astride) (local.get $cstride) (local.get $panel) (local.get $L)
                  (local.get $gc) (local.get $gcEnd) (local.get $first))
                (local.set $i (i32.add (local.get $i) (i32.const 2)))
                (br $iloop)))
            (if (i32.lt_u (local.get $i) (local.get $M))
              (then
                (call $row1x8
                  (i32.add (i32.add (local.get $pa) (i32.mul (local.get $i) (local.get $astride))) (i32.shl (local.get $k0) (i32.const 3)))
                  (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $cstride)))
                  (local.get $astride) (local.get $cstride) (local.get $panel) (local.get $L)
                  (local.get $gc) (local.get $gcEnd) (local.get $first))))
            (local.set $gc (local.get $gcEnd))
            (br $gcloop)))
        (local.set $k0 (i32.add (local.get $k0) (i32.const 48)))
        (br $k0loop)))
    (i32.const 0))

;; The sparse path of matmul, for an A with many +-0 elements and a B with none that is not finite: the same
  ;; bits as the dense path, because a skipped term is a product +-0 * (finite b) = +-0, and adding +-0 to a sum
  ;; that is not -0 leaves it unchanged bit for bit (x + +-0 = x for x != -0; NaN stays NaN). The sums are never
  ;; -0: each starts at +0, and in round-to-nearest a + b is -0 only when a and b are both -0 (a float64 sum of
  ;; float32 products never underflows to zero). C can be -0: a block sum that is a tiny negative float64 rounds
  ;; to -0 in float32. A block with no nonzero term adds its sum +0 to C, so C[i,j] = f32(C[i,j] + +0): C itself,
  ;; except that -0 becomes +0; so such a block writes +0 over every +-0 of C's row and leaves the rest (the
  ;; first block writes C's +0). The kept terms keep their ascending k order.
  ;; Per row i and k block: the block's nonzero A[i,k] (float64) at ls + 8n and their panel row offsets
  ;; (k - k0)*64 at ls + 512 + 8n, then 1 x 16 register tiles (two 8-column groups, eight f64x2 accumulators)
  ;; over the list, and a 1 x 8 tile for an odd last group.
  (func $sparse (param $pa i32) (param $c i32) (param $M i32) (param $K i32) (param $G i32) (param $pb i32) (param $ls i32)
    (local $k0 i32) (local $L i32) (local $i i32) (local $arow i32) (local $crow i32) (local $panel i32) (local $first i32)
    (local $n i32) (local $kk i32) (local $x f64) (local $g i32) (local $glen i32) (local $z i32) (local $zEnd i32) (local $cv v128)
    (block $k0done
      (loop $k0loop
        (br_if $k0done (i32.ge_u (local.get $k0) (local.get $K)))
        (local.set $L (i32.sub (local.get $K) (local.get $k0)))
        (if (i32.gt_u (local.get $L) (i32.const 48)) (then (local.set $L (i32.const 48))))
        (local.set $glen (i32.shl (local.get $L) (i32.const 6)))
        (local.set $panel (i32.add (local.get $pb) (i32.shl (i32.mul (local.get $k0) (local.get $G)) (i32.const 6))))
        (local.set $first (i32.eqz (local.get $k0)))
        (local.set $i (i32.const 0))
        (block $idone
          (loop $iloop
            (br_if $idone (i32.ge_u (local.get $i) (local.get $M)))
            (local.set $arow (i32.add (local.get $pa) (i32.shl (i32.add (i32.mul (local.get $i) (local.get $K)) (local.get $k0)) (i32.const 3))))
            (local.set $crow (i32.add (local.get $c) (i32.shl (i32.mul (local.get $i) (local.get $G)) (i32.const 5))))
            ;; the block's nonzero terms of row i, k ascending
            (local.set $n (i32.const 0))
            (local.set $kk (i32.const 0))
            (block $kdone
              (loop $kloop
                (br_if $kdone (i32.ge_u (local.get $kk) (local.get $L)))
                ;; branch-free: every term is written at position n, and n moves on only past a nonzero one
                (local.set $x (f64.load (i32.add (local.get $arow) (i32.shl (local.get $kk) (i32.const 3)))))
                (f64.store (i32.add (local.get $ls) (i32.shl (local.get $n) (i32.const 3))) (local.get $x))
                (i32.store offset=512 (i32.add (local.get $ls) (i32.shl (local.get $n) (i32.const 3))) (i32.shl (local.get $kk) (i32.const 6)))
                (local.set $n (i32.add (local.get $n) (f64.ne (local.get $x) (f64.const 0))))
                (local.set $kk (i32.add (local.get $kk) (i32.const 1)))
                (br $kloop)))
            (if (local.get $n)
              (then
                (local.set $g (i32.const 0))
                (block $gdone
                  (loop $gloop
                    (br_if $gdone (i32.gt_u (i32.add (local.get $g) (i32.const 2)) (local.get $G)))
                    (call $sp16 (local.get $ls) (local.get $n) (i32.add (local.get $panel) (i32.mul (local.get $g) (local.get $glen)))
                      (local.get $glen) (i32.add (local.get $crow) (i32.shl (local.get $g) (i32.const 5))) (local.get $first))
                    (local.set $g (i32.add (local.get $g) (i32.const 2)))
                    (br $gloop)))
                (if (i32.lt_u (local.get $g) (local.get $G))
                  (then
                    (call $sp8 (local.get $ls) (local.get $n) (i32.add (local.get $panel) (i32.mul (local.get $g) (local.get $glen)))
                      (local.get $glen) (i32.add (local.get $crow) (i32.shl (local.get $g) (i32.const 5))) (local.get $first)))))
              (else
                ;; no nonzero term: C = f32(C + +0), i.e. every +-0 of the row becomes +0 and every other value
                ;; stays bit for bit (a lane mask, no float op); the first block writes +0 everywhere
                (local.set $z (local.get $crow))
                (local.set $zEnd (i32.add (local.get $crow) (i32.shl (local.get $G) (i32.const 5))))
                (block $zdone
                  (loop $zloop
                    (br_if $zdone (i32.ge_u (local.get $z) (local.get $zEnd)))
                    (if (local.get $first)
                      (then
                        (v128.store offset=0 (local.get $z) (v128.const i64x2 0 0))
                        (v128.store offset=16 (local.get $z) (v128.const i64x2 0 0)))
                      (else
                        (local.set $cv (v128.load offset=0 (local.get $z)))
                        (v128.store offset=0 (local.get $z)
                          (v128.andnot (local.get $cv) (f32x4.eq (local.get $cv) (v128.const f32x4 0 0 0 0))))
                        (local.set $cv (v128.load offset=16 (local.get $z)))
                        (v128.store offset=16 (local.get $z)
                          (v128.andnot (local.get $cv) (f32x4.eq (local.get $cv) (v128.const f32x4 0 0 0 0))))))
                    (local.set $z (i32.add (local.get $z) (i32.const 32)))
                    (br $zloop)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $iloop)))
        (local.set $k0 (i32.add (local.get $k0) (i32.const 48)))
        (br $k0loop))))

  ;; Groups g and g+1 of one row over the list of n terms: bp is group g's panel, glen its length (group g+1's
  ;; panel follows), cp the row's C at column 8g.
  (func $sp16 (param $ls i32) (param $n i32) (param $bp i32) (param $glen i32) (param $cp i32) (param $first i32)
    (local $e i32) (local $b i32) (local $x v128) (local $bv v128) (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128) (local $p4 v128) (local $p5 v128) (local $p6 v128) (local $p7 v128)
    (local.set $e (i32.add (local.get $ls) (i32.shl (local.get $n) (i32.const 3))))
    (block $done
      (loop $loop
        (br_if $done (i32.ge_u (local.get $ls) (local.get $e)))
        (local.set $x (v128.load64_splat (local.get $ls)))
        (local.set $b (i32.add (local.get $bp) (i32.load offset=512 (local.get $ls))))
        (local.set $bv (v128.load offset=0 (local.get $b)))
        (local.set $p0 (f64x2.add (local.get $p0) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=16 (local.get $b)))
        (local.set $p1 (f64x2.add (local.get $p1) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=32 (local.get $b)))
        (local.set $p2 (f64x2.add (local.get $p2) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=48 (local.get $b)))
        (local.set $p3 (f64x2.add (local.get $p3) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $b (i32.add (local.get $b) (local.get $glen)))
        (local.set $bv (v128.load offset=0 (local.get $b)))
        (local.set $p4 (f64x2.add (local.get $p4) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=16 (local.get $b)))
        (local.set $p5 (f64x2.add (local.get $p5) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=32 (local.get $b)))
        (local.set $p6 (f64x2.add (local.get $p6) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=48 (local.get $b)))
        (local.set $p7 (f64x2.add (local.get $p7) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $ls (i32.add (local.get $ls) (i32.const 8)))
        (br $loop)))
    (v128.store64_lane offset=0 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $cp))) (local.get $first))
        (local.get $p0))))
    (v128.store64_lane offset=8 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $cp))) (local.get $first))
        (local.get $p1))))
    (v128.store64_lane offset=16 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 (local.get $cp))) (local.get $first))
        (local.get $p2))))
    (v128.store64_lane offset=24 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 (local.get $cp))) (local.get $first))
        (local.get $p3))))
    (v128.store64_lane offset=32 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=32 (local.get $cp))) (local.get $first))
        (local.get $p4))))
    (v128.store64_lane offset=40 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=40 (local.get $cp))) (local.get $first))
        (local.get $p5))))
    (v128.store64_lane offset=48 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=48 (local.get $cp))) (local.get $first))
        (local.get $p6))))
    (v128.store64_lane offset=56 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=56 (local.get $cp))) (local.get $first))
        (local.get $p7)))))

  ;; One group (8 columns) of one row over the list (glen unused).
  (func $sp8 (param $ls i32) (param $n i32) (param $bp i32) (param $glen i32) (param $cp i32) (param $first i32)
    (local $e i32) (local $b i32) (local $x v128) (local $bv v128) (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128)
    (local.set $e (i32.add (local.get $ls) (i32.shl (local.get $n) (i32.const 3))))
    (block $done
      (loop $loop
        (br_if $done (i32.ge_u (local.get $ls) (local.get $e)))
        (local.set $x (v128.load64_splat (local.get $ls)))
        (local.set $b (i32.add (local.get $bp) (i32.load offset=512 (local.get $ls))))
        (local.set $bv (v128.load offset=0 (local.get $b)))
        (local.set $p0 (f64x2.add (local.get $p0) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=16 (local.get $b)))
        (local.set $p1 (f64x2.add (local.get $p1) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=32 (local.get $b)))
        (local.set $p2 (f64x2.add (local.get $p2) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $bv (v128.load offset=48 (local.get $b)))
        (local.set $p3 (f64x2.add (local.get $p3) (f64x2.mul (local.get $x) (local.get $bv))))
        (local.set $ls (i32.add (local.get $ls) (i32.const 8)))
        (br $loop)))
    (v128.store64_lane offset=0 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $cp))) (local.get $first))
        (local.get $p0))))
    (v128.store64_lane offset=8 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $cp))) (local.get $first))
        (local.get $p1))))
    (v128.store64_lane offset=16 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 (local.get $cp))) (local.get $first))
        (local.get $p2))))
    (v128.store64_lane offset=24 0 (local.get $cp)
      (f32x4.demote_f64x2_zero (f64x2.add
        (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 (local.get $cp))) (local.get $first))
        (local.get $p3)))))

  ;; Groups g..gEnd-1 (8 columns each) of rows i and i+1 for one k block of L rows: eight f64x2 accumulators,
  ;; each B vector shared by both rows. ap: row i of packed A at the block's first k; cp: row i of C; as, cs: row
  ;; strides in bytes; panel: the block's panels; first: the first k block (C not read).
  (func $rows2x8 (param $ap i32) (param $cp i32) (param $as i32) (param $cs i32) (param $panel i32) (param $L i32) (param $g i32) (param $gEnd i32) (param $first i32)
    (local $a0 i32) (local $a1 i32) (local $bp i32) (local $bEnd i32) (local $bEnd2 i32) (local $glen i32) (local $q i32)
    (local $x0 v128) (local $x1 v128) (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128) (local $q0 v128) (local $q1 v128) (local $q2 v128) (local $q3 v128)
    (local.set $glen (i32.shl (local.get $L) (i32.const 6)))
    (local.set $bp (i32.add (local.get $panel) (i32.mul (local.get $g) (local.get $glen))))
    (block $gdone
      (loop $gloop
        (br_if $gdone (i32.ge_u (local.get $g) (local.get $gEnd)))
        (local.set $p0 (v128.const i64x2 0 0)) (local.set $p1 (v128.const i64x2 0 0)) (local.set $p2 (v128.const i64x2 0 0)) (local.set $p3 (v128.const i64x2 0 0))
        (local.set $q0 (v128.const i64x2 0 0)) (local.set $q1 (v128.const i64x2 0 0)) (local.set $q2 (v128.const i64x2 0 0)) (local.set $q3 (v128.const i64x2 0 0))
        (local.set $a0 (local.get $ap))
        (local.set $a1 (i32.add (local.get $ap) (local.get $as)))
        (local.set $bEnd (i32.add (local.get $bp) (local.get $glen)))
        (block $kdone
          (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $bp) (local.get $bEnd)))
            (local.set $x0 (v128.load64_splat offset=0 (local.get $a0)))
            (local.set $x1 (v128.load64_splat offset=0 (local.get $a1)))
            (local.set $b0 (v128.load offset=0 (local.get $bp)))
            (local.set $p0 (f64x2.add (local.get $p0) (f64x2.mul (local.get $x0) (local.get $b0))))
            (local.set $q0 (f64x2.add (local.get $q0) (f64x2.mul (local.get $x1) (local.get $b0))))
            (local.set $b1 (v128.load offset=16 (local.get $bp)))
            (local.set $p1 (f64x2.add (local.get $p1) (f64x2.mul (local.get $x0) (local.get $b1))))
            (local.set $q1 (f64x2.add (local.get $q1) (f64x2.mul (local.get $x1) (local.get $b1))))
            (local.set $b2 (v128.load offset=32 (local.get $bp)))
            (local.set $p2 (f64x2.add (local.get $p2) (f64x2.mul (local.get $x0) (local.get $b2))))
            (local.set $q2 (f64x2.add (local.get $q2) (f64x2.mul (local.get $x1) (local.get $b2))))
            (local.set $b3 (v128.load offset=48 (local.get $bp)))
            (local.set $p3 (f64x2.add (local.get $p3) (f64x2.mul (local.get $x0) (local.get $b3))))
            (local.set $q3 (f64x2.add (local.get $q3) (f64x2.mul (local.get $x1) (local.get $b3))))
            (local.set $a0 (i32.add (local.get $a0) (i32.const 8)))
            (local.set $a1 (i32.add (local.get $a1) (i32.const 8)))
            (local.set $bp (i32.add (local.get $bp) (i32.const 64)))
            (br $kloop)))
        (local.set $q (i32.add (local.get $cp) (i32.shl (local.get $g) (i32.const 5))))
        (v128.store64_lane offset=0 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $q))) (local.get $first))
            (local.get $p0))))
        (v128.store64_lane offset=8 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $q))) (local.get $first))
            (local.get $p1))))
        (v128.store64_lane offset=16 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 (local.get $q))) (local.get $first))
            (local.get $p2))))
        (v128.store64_lane offset=24 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 (local.get $q))) (local.get $first))
            (local.get $p3))))
        (local.set $q (i32.add (local.get $q) (local.get $cs)))
        (v128.store64_lane offset=0 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $q))) (local.get $first))
            (local.get $q0))))
        (v128.store64_lane offset=8 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $q))) (local.get $first))
            (local.get $q1))))
        (v128.store64_lane offset=16 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 (local.get $q))) (local.get $first))
            (local.get $q2))))
        (v128.store64_lane offset=24 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 (local.get $q))) (local.get $first))
            (local.get $q3))))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $gloop))))

  ;; The same for one row (the last row when M is odd): four f64x2 accumulators ($as, $cs unused).
  (func $row1x8 (param $ap i32) (param $cp i32) (param $as i32) (param $cs i32) (param $panel i32) (param $L i32) (param $g i32) (param $gEnd i32) (param $first i32)
    (local $a0 i32) (local $a1 i32) (local $bp i32) (local $bEnd i32) (local $bEnd2 i32) (local $glen i32) (local $q i32)
    (local $x0 v128) (local $b0 v128) (local $b1 v128) (local $b2 v128) (local $b3 v128)
    (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128)
    (local.set $glen (i32.shl (local.get $L) (i32.const 6)))
    (local.set $bp (i32.add (local.get $panel) (i32.mul (local.get $g) (local.get $glen))))
    (block $gdone
      (loop $gloop
        (br_if $gdone (i32.ge_u (local.get $g) (local.get $gEnd)))
        (local.set $p0 (v128.const i64x2 0 0)) (local.set $p1 (v128.const i64x2 0 0)) (local.set $p2 (v128.const i64x2 0 0)) (local.set $p3 (v128.const i64x2 0 0))
        (local.set $a0 (local.get $ap))
        (local.set $bEnd (i32.add (local.get $bp) (local.get $glen)))
        (block $kdone
          (loop $kloop
            (br_if $kdone (i32.ge_u (local.get $bp) (local.get $bEnd)))
            (local.set $x0 (v128.load64_splat offset=0 (local.get $a0)))
            (local.set $b0 (v128.load offset=0 (local.get $bp)))
            (local.set $p0 (f64x2.add (local.get $p0) (f64x2.mul (local.get $x0) (local.get $b0))))
            (local.set $b1 (v128.load offset=16 (local.get $bp)))
            (local.set $p1 (f64x2.add (local.get $p1) (f64x2.mul (local.get $x0) (local.get $b1))))
            (local.set $b2 (v128.load offset=32 (local.get $bp)))
            (local.set $p2 (f64x2.add (local.get $p2) (f64x2.mul (local.get $x0) (local.get $b2))))
            (local.set $b3 (v128.load offset=48 (local.get $bp)))
            (local.set $p3 (f64x2.add (local.get $p3) (f64x2.mul (local.get $x0) (local.get $b3))))
            (local.set $a0 (i32.add (local.get $a0) (i32.const 8)))
            (local.set $bp (i32.add (local.get $bp) (i32.const 64)))
            (br $kloop)))
        (local.set $q (i32.add (local.get $cp) (i32.shl (local.get $g) (i32.const 5))))
        (v128.store64_lane offset=0 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=0 (local.get $q))) (local.get $first))
            (local.get $p0))))
        (v128.store64_lane offset=8 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=8 (local.get $q))) (local.get $first))
            (local.get $p1))))
        (v128.store64_lane offset=16 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=16 (local.get $q))) (local.get $first))
            (local.get $p2))))
        (v128.store64_lane offset=24 0 (local.get $q)
          (f32x4.demote_f64x2_zero (f64x2.add
            (select (v128.const i64x2 0 0) (f64x2.promote_low_f32x4 (v128.load64_zero offset=24 (local.get $q))) (local.get $first))
            (local.get $p3))))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $gloop))))

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
