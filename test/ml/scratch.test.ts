import { expect } from "chai";
import { fastestTransformerKernelsV3, jsTransformerKernelsV3, kernelOracle, transformerPass, type TransformerDims, type TransformerKernels } from "../../verifier/src/ml/kernels/index.ts";
import { scratchBytes, scratchF32, withScratch } from "../../verifier/src/ml/kernels/scratch.ts";

// random parameters in models/transformer.ts's order for `dims`, and a token batch
function fixture(dims: TransformerDims, seed: number): { params: Float32Array[]; tokens: Uint8Array } {
  let s = seed;
  const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const { d, F, V, L, T, B } = dims;
  const shapes = [V * d, T * d];
  for (let l = 0; l < L; l++) shapes.push(d, d, d * d, d * d, d * d, d * d, d, d, d * F, F, F * d, d);
  shapes.push(d, d, d * V, V);
  const params = shapes.map((n) => Float32Array.from({ length: n }, () => 0.3 * rnd()));
  const tokens = Uint8Array.from({ length: B * (T + 1) }, () => Math.floor(((rnd() + 1) / 2) * V));
  return { params, tokens };
}

const bits = (x: Float32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));

describe("ml/kernels/scratch: pass-scoped scratch memory changes no bit", () => {
  const dims: TransformerDims = { B: 2, T: 8, d: 16, H: 2, F: 64, V: 20, L: 2 };

  for (const [label, k] of [["js reference", jsTransformerKernelsV3], ["fastest (wasm)", fastestTransformerKernelsV3()]] as [string, TransformerKernels][]) {
    it(`${label}: a pass run again after another pass dirtied the scratch gives the same loss, logits and gradients`, () => {
      const a = fixture(dims, 1), other = fixture(dims, 2);
      const first = transformerPass(k, kernelOracle(k), a.params, a.tokens, dims, { grads: true });
      const firstGrads = first.grads!.map(bits), firstLogits = bits(first.logits);
      // INVARIANT under test: nothing reads a scratch element it did not write (scratch memory is not zeroed), and what
      // the pass returns is copied out of the scratch (the next pass overwrites it)
      transformerPass(k, kernelOracle(k), other.params, other.tokens, dims, { grads: true });
      expect(first.grads!.map(bits)).to.deep.equal(firstGrads);
      expect(bits(first.logits)).to.deep.equal(firstLogits);
      const again = transformerPass(k, kernelOracle(k), a.params, a.tokens, dims, { grads: true });
      expect(again.loss).to.equal(first.loss);
      expect(bits(again.logits)).to.deep.equal(firstLogits);
      expect(again.grads!.map(bits)).to.deep.equal(firstGrads);
    });
  }

  it("hands out views inside withScratch (recycled by the next outermost scope) and fresh zeroed arrays outside", () => {
    const outside = scratchF32(8);
    expect(outside.byteOffset).to.equal(0);
    expect(Array.from(outside)).to.deep.equal(new Array(8).fill(0));
    const first = withScratch(() => {
      const v = scratchF32(5).fill(7);
      const w = scratchF32(3);
      expect(w.buffer).to.equal(v.buffer);
      expect(w.byteOffset).to.equal(v.byteOffset + 64); // 64-byte aligned views
      return v;
    });
    const second = withScratch(() => scratchF32(5));
    expect(second.buffer).to.equal(first.buffer);
    expect(second.byteOffset).to.equal(first.byteOffset);
    expect(Array.from(second)).to.deep.equal([7, 7, 7, 7, 7]); // not zeroed: callers write before they read
    expect(scratchBytes()).to.be.greaterThan(0);
  });
});
