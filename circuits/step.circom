pragma circom 2.1.0;

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";

// LinearStep: one SGD step of a fixed-point linear model tile (the circuit-provable model class).
//
// Model: prediction = X · W, loss = |X·W - Y|^2 / (2B), update W' = W - lr · Xᵀ(X·W - Y) / B.
// All values are signed integers in fixed point with FRAC fraction bits (value = integer / 2^FRAC);
// in the field a negative integer v is the element p + v.
//
// What is proven (for the public signals [commitW, commitWNext, commitBatch, lr]):
//   there exist integer matrices W (IN x OUT), X (B x IN), Y (B x OUT), W' (IN x OUT) with
//   - every entry of W, X, Y, W' in [-2^(VB-1), 2^(VB-1)) and lr in [0, 2^VB),
//   - commitW = Commit(W), commitWNext = Commit(W'), commitBatch = Commit(X ‖ Y) (definition below),
//   - for every (i, j), with E = X·W - Y·2^FRAC (exact, scale 2^(2·FRAC)) and G = Xᵀ·E (exact,
//     scale 2^(3·FRAC)):
//         W'[i][j] = W[i][j] - floor((lr · G[i][j] + 2^(S-1)) / 2^S),   S = 3·FRAC + log2(B),
//     i.e. the exact rational update rounded to the nearest multiple of 2^-FRAC, ties toward +inf.
//     The only rounding in the step is this one (no rounding of X·W or of the gradient).
//
// Soundness of the integer semantics (no field wrap-around): every witness value is range
// checked, and LinearStep asserts at compile time that its parameters keep every intermediate value
// below 2^252 (the bounds are derived next to the asserts), so for the default parameters (IN = B = 8, FRAC = 16, VB = 32) |X·W| <= 2^65,
// |E| < 2^66, |G| < 2^100 and |lr·G| < 2^132, far below p/2 ≈ 2^253. The equation
// r = lr·G + 2^(S-1) - (W - W')·2^S with r range checked to [0, 2^S) therefore holds over the
// integers, which is exactly floor division; |W - W'| < 2^VB keeps the quotient term small too.
//
// Commit(values): each value v is mapped to v + 2^(VB-1) (in [0, 2^VB), guaranteed by the range
// check), PACK = floor(253 / VB) consecutive values are packed little-endian into one field element
// (first value in the lowest bits; the last element may hold fewer), and the packed elements are
// hashed with circomlib Poseidon of that width. The packing is injective because of the range checks.
// X is flattened row-major (B rows of IN), then Y row-major (B rows of OUT); W row-major (IN rows
// of OUT). verifier/src/zk/ implements the same encoding with circomlibjs.
//
// The caller (DisputeGame or anyone relying on a proof) must enforce:
//   - commitW is the committed pre-step state of the disputed step (e.g. the weights commitment
//     inside the provider's leaf h(s-1)) and commitWNext the committed post-step state in h(s);
//   - commitBatch is the commitment of the batch the manifest's data order assigns to that step
//     (the circuit cannot know which batch is the right one);
//   - lr equals the manifest's learning rate in the same fixed point (lr · 2^FRAC, an integer);
//   - the verifying key belongs to this exact circuit and these template parameters.
// Inputs outside the ranges above have no proof: the TypeScript reference rejects them first.
template PackedCommit(N, VB) {
    signal input values[N];
    signal output out;

    var PACK = 253 \ VB;
    var NE = (N + PACK - 1) \ PACK;
    // circomlib's Poseidon takes 1 to 16 inputs (its round constants stop there).
    assert(NE >= 1 && NE <= 16);
    component h = Poseidon(NE);
    for (var e = 0; e < NE; e++) {
        var acc = 0;
        var shift = 1;
        for (var k = 0; k < PACK; k++) {
            var idx = e * PACK + k;
            if (idx < N) {
                acc += (values[idx] + (1 << (VB - 1))) * shift;
                shift = shift * (1 << VB);
            }
        }
        h.inputs[e] <== acc;
    }
    out <== h.out;
}

// Asserts -2^(VB-1) <= v < 2^(VB-1) for a signed value v.
template SignedRange(VB) {
    signal input in;
    component bits = Num2Bits(VB);
    bits.in <== in + (1 << (VB - 1));
}

template LinearStep(IN, OUT, B, LOG2B, FRAC, VB) {
    // Parameter bounds, checked when the circuit is compiled (no constraints). Each one is what keeps a field
    // equation an integer equation (header, "Soundness"); a parameter set that breaks one does not compile.
    assert(IN >= 1 && OUT >= 1 && LOG2B >= 0 && FRAC >= 1 && VB >= 2);
    assert(B == 1 << LOG2B);
    var S = 3 * FRAC + LOG2B;
    // Num2Bits(n) is a unique decomposition only for n <= 253 (2^254 > p would let a value alias): the remainder
    // check Num2Bits(S) and the range checks Num2Bits(VB) need S < 254 and VB < 254.
    assert(S < 254);
    assert(VB < 254);
    // LOG2IN = ceil(log2(IN)), so IN <= 2^LOG2IN.
    var LOG2IN = 0;
    while ((1 << LOG2IN) < IN) {
        LOG2IN++;
    }
    // No wrap-around: with |w|, |x|, |y| <= 2^(VB-1) and lr < 2^VB,
    //   |X·W| <= 2^(2VB-2+LOG2IN), |Y·2^FRAC| <= 2^(VB-1+FRAC), so |E| < 2^EB with EB = max(2VB-2+LOG2IN, VB-1+FRAC) + 1;
    //   |lr·G| < 2^(VB + LOG2B + VB-1 + EB)  (G sums B products x·e);
    //   the remainder r = lr·G + 2^(S-1) - (W - W')·2^S, with |W - W'| < 2^VB, has |r| < 2^(max(VB+LOG2B+VB-1+EB, VB+S) + 2).
    // Num2Bits(S) on r's field element implies 0 <= r < 2^S over the integers when |r| < p - 2^S, and
    // p - 2^S >= p - 2^253 > 2^252 (p ≈ 2^253.6), so |r| < 2^252 is enough: max(...) + 2 <= 252.
    // For the default parameters EB = 66, the products need 2·32+3-1+66 = 132 bits and VB+S = 83: far inside.
    // In the issue's shorthand: 4·VB + log2(IN) + log2(B) < 253 (up to the constant), the product term when
    // 2VB-2+LOG2IN >= VB-1+FRAC.
    var EB = 2 * VB - 2 + LOG2IN;
    if (VB - 1 + FRAC > EB) {
        EB = VB - 1 + FRAC;
    }
    EB = EB + 1;
    var RB = VB + LOG2B + VB - 1 + EB;
    if (VB + S > RB) {
        RB = VB + S;
    }
    assert(RB + 2 <= 252);
    // A packed commitment element holds PACK = floor(253 / VB) values of VB bits: < 2^253 < p, so packing is injective.
    assert((253 \ VB) * VB <= 253);

    signal output commitW;
    signal output commitWNext;
    signal output commitBatch;
    signal input lr;

    signal input w[IN][OUT];
    signal input x[B][IN];
    signal input y[B][OUT];
    signal input wNext[IN][OUT];

    // Range checks: every entry of W, X, Y, W' is a VB-bit signed integer, lr a VB-bit unsigned one.
    component rw[IN][OUT];
    component rwn[IN][OUT];
    component rx[B][IN];
    component ry[B][OUT];
    for (var i = 0; i < IN; i++) {
        for (var j = 0; j < OUT; j++) {
            rw[i][j] = SignedRange(VB);
            rw[i][j].in <== w[i][j];
            rwn[i][j] = SignedRange(VB);
            rwn[i][j].in <== wNext[i][j];
        }
    }
    for (var b = 0; b < B; b++) {
        for (var i = 0; i < IN; i++) {
            rx[b][i] = SignedRange(VB);
            rx[b][i].in <== x[b][i];
        }
        for (var j = 0; j < OUT; j++) {
            ry[b][j] = SignedRange(VB);
            ry[b][j].in <== y[b][j];
        }
    }
    component rlr = Num2Bits(VB);
    rlr.in <== lr;

    // Forward products X[b][i] * W[i][j] (scale 2^(2·FRAC)); E = X·W - Y·2^FRAC stays a linear combination.
    signal xw[B][OUT][IN];
    var e[B][OUT];
    for (var b = 0; b < B; b++) {
        for (var j = 0; j < OUT; j++) {
            var acc = 0;
            for (var i = 0; i < IN; i++) {
                xw[b][j][i] <== x[b][i] * w[i][j];
                acc += xw[b][j][i];
            }
            e[b][j] = acc - y[b][j] * (1 << FRAC);
        }
    }

    // Gradient G = Xᵀ·E (scale 2^(3·FRAC)), scaled by lr (scale 2^(4·FRAC)).
    signal xe[IN][OUT][B];
    signal lrg[IN][OUT];
    component rr[IN][OUT];
    for (var i = 0; i < IN; i++) {
        for (var j = 0; j < OUT; j++) {
            var g = 0;
            for (var b = 0; b < B; b++) {
                xe[i][j][b] <== x[b][i] * e[b][j];
                g += xe[i][j][b];
            }
            lrg[i][j] <== lr * g;
            // Rounding: delta = floor((lr·G + 2^(S-1)) / 2^S) and W' = W - delta, so the remainder
            // r = lr·G + 2^(S-1) - delta·2^S must lie in [0, 2^S).
            rr[i][j] = Num2Bits(S);
            rr[i][j].in <== lrg[i][j] + (1 << (S - 1)) - (w[i][j] - wNext[i][j]) * (1 << S);
        }
    }

    // Commitments.
    component cw = PackedCommit(IN * OUT, VB);
    component cwn = PackedCommit(IN * OUT, VB);
    component cb = PackedCommit(B * IN + B * OUT, VB);
    for (var i = 0; i < IN; i++) {
        for (var j = 0; j < OUT; j++) {
            cw.values[i * OUT + j] <== w[i][j];
            cwn.values[i * OUT + j] <== wNext[i][j];
        }
    }
    for (var b = 0; b < B; b++) {
        for (var i = 0; i < IN; i++) {
            cb.values[b * IN + i] <== x[b][i];
        }
        for (var j = 0; j < OUT; j++) {
            cb.values[B * IN + b * OUT + j] <== y[b][j];
        }
    }
    commitW <== cw.out;
    commitWNext <== cwn.out;
    commitBatch <== cb.out;
}

// 8 inputs x 4 outputs, batch 8 (log2 = 3), 16 fraction bits, 32-bit signed values.
component main {public [lr]} = LinearStep(8, 4, 8, 3, 16, 32);
