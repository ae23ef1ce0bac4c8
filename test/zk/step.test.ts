import { expect } from "chai";
import { InputError } from "../../verifier/src/errors/index.ts";
import {
  FIELD_ORDER,
  FixedPointRangeError,
  STEP_PARAMS,
  TileShapeError,
  VALUE_MAX,
  VALUE_MIN,
  commitBatch,
  commitWeights,
  fromField,
  packValues,
  referenceStep,
  toField,
  toFixed,
  witnessInput,
  type StepInput,
} from "../../verifier/src/zk/index.ts";
import { randomTile, witnessOf, witnessRejection, withEntry, zeros } from "./helpers.ts";

const { inputs, outputs, batch } = STEP_PARAMS;
const ONE = 1n << BigInt(STEP_PARAMS.fracBits);

/** Witness layout: [1, commitW, commitWNext, commitBatch, lr, ...]. */
async function expectCircuitMatchesReference(input: StepInput): Promise<bigint[][]> {
  const wNext = referenceStep(input);
  const witness = await witnessOf(witnessInput(input, wNext));
  expect(witness[0]).to.equal(1n);
  expect(witness[1]).to.equal(await commitWeights(input.w));
  expect(witness[2]).to.equal(await commitWeights(wNext));
  expect(witness[3]).to.equal(await commitBatch(input.x, input.y));
  expect(witness[4]).to.equal(input.lr);
  return wNext;
}

/**
 * A tile with a single active example x[0][0] = 1.0 and lr = 1.0: the update of W[0][j] is exactly
 * (W[0][j] - Y[0][j]) / 8 units of 2^-16, so W - Y = ±4 lands on a tie (±0.5 units).
 */
function tieTile(diffs: readonly bigint[]): StepInput {
  const w = zeros(inputs, outputs);
  const y = zeros(batch, outputs);
  diffs.forEach((d, j) => {
    w[0]![j] = 1000n + d;
    y[0]![j] = 1000n;
  });
  return { w, x: withEntry(zeros(batch, inputs), 0, 0, ONE), y, lr: ONE };
}

describe("zk: fixed-point reference step", () => {
  it("encodes signed values as field elements and back", () => {
    expect(toField(-1n)).to.equal((FIELD_ORDER - 1n).toString());
    expect(toField(5n)).to.equal("5");
    expect(fromField(FIELD_ORDER - 7n)).to.equal(-7n);
    expect(fromField(toField(VALUE_MIN))).to.equal(VALUE_MIN);
    expect(toFixed(0.5)).to.equal(ONE / 2n);
    expect(toFixed(-1.5 / 65536)).to.equal(-2n); // ties away from zero
  });

  it("packs 7 offset values per field element, first value lowest", () => {
    const packed = packValues([-(1n << 31n), 0n, 1n, 2n, 3n, 4n, 5n, -1n]);
    expect(packed).to.have.length(2);
    expect(packed[0]! & 0xffffffffn).to.equal(0n);
    expect((packed[0]! >> 32n) & 0xffffffffn).to.equal(1n << 31n);
    expect(packed[1]).to.equal((1n << 31n) - 1n);
  });

  it("matches a fixed commitment vector", async () => {
    const w = Array.from({ length: inputs }, (_, i) => Array.from({ length: outputs }, (_, j) => BigInt(i * outputs + j - 16)));
    expect(await commitWeights(w)).to.equal(
      13107191241147140510899384133215360473267906830740319477629606499579117055698n,
    );
  });

  it("rounds ties toward +infinity and everything else to nearest", () => {
    // update = d/8 units: d = 4 -> 0.5 -> 1; d = -4 -> -0.5 -> 0; d = 3 -> 0.375 -> 0; d = -5 -> -0.625 -> -1
    const t = tieTile([4n, -4n, 3n, -5n]);
    const wNext = referenceStep(t);
    expect(wNext[0]!.map((v, j) => t.w[0]![j]! - v)).to.deep.equal([1n, 0n, 0n, -1n]);
  });

  it("rejects out-of-range values, bad shapes and overflowing steps with typed errors", () => {
    const ok = randomTile(1, 65536, toFixed(0.01));
    expect(() => referenceStep({ ...ok, w: withEntry(ok.w, 2, 3, VALUE_MAX + 1n) })).to.throw(FixedPointRangeError, /W\[2\]\[3\]/);
    expect(() => referenceStep({ ...ok, x: withEntry(ok.x, 0, 0, VALUE_MIN - 1n) })).to.throw(FixedPointRangeError, /X\[0\]\[0\]/);
    expect(() => referenceStep({ ...ok, lr: -1n })).to.throw(FixedPointRangeError, /lr/);
    expect(() => referenceStep({ ...ok, y: ok.y.slice(1) })).to.throw(TileShapeError, /Y must have 8 rows/);
    expect(() => referenceStep({ ...ok, w: [[1, 2, 3, 4]] as unknown as bigint[][] })).to.throw(TileShapeError);
    expect(() => toFixed(Number.NaN)).to.throw(FixedPointRangeError);
    // Large inputs with lr = 1.0 push W' past 2^31: the step has no proof and says so.
    const big = randomTile(2, 2 ** 30, ONE);
    expect(() => referenceStep(big)).to.throw(FixedPointRangeError, /overflows/).and.be.instanceOf(InputError);
  });
});

describe("zk: circuit witness equals the TypeScript reference", () => {
  it("on random tiles with negative values", async () => {
    for (const [seed, bound, lr] of [
      [11, 65536, toFixed(0.05)],
      [12, 4 * 65536, toFixed(0.001)],
      [13, 1000, toFixed(1)],
      [14, 2 ** 20, 3n],
    ] as const) {
      const tile = randomTile(seed, bound, lr);
      const wNext = await expectCircuitMatchesReference(tile);
      expect(wNext.flat().some((v) => v < 0n)).to.equal(true);
    }
  });

  it("on rounding ties and a zero learning rate", async () => {
    await expectCircuitMatchesReference(tieTile([4n, -4n, 3n, -5n]));
    const still = randomTile(15, 65536, 0n);
    expect(await expectCircuitMatchesReference(still)).to.deep.equal(still.w);
  });

  it("at the ends of the value ranges", async () => {
    // Extreme weights sit in rows whose input column is zero; extreme inputs meet small weights.
    let w = randomTile(16, 100, 0n).w;
    w = withEntry(withEntry(w, 7, 0, VALUE_MIN), 7, 3, VALUE_MAX);
    let x = zeros(batch, inputs);
    x = withEntry(withEntry(x, 0, 0, VALUE_MIN), 1, 1, VALUE_MAX);
    const y = zeros(batch, outputs).map((row, b) => row.map((_, j) => ((b + j) % 2 === 0 ? VALUE_MAX : VALUE_MIN)));
    const wNext = await expectCircuitMatchesReference({ w, x, y, lr: 1n });
    expect(wNext[7]![0]).to.equal(VALUE_MIN);
  });

  it("the circuit rejects a W' one unit off at a rounding tie, in either direction", async () => {
    const t = tieTile([4n, -4n, 3n, -5n]);
    const wNext = referenceStep(t);
    for (const j of [0, 1]) {
      for (const off of [1n, -1n]) {
        const bad = withEntry(wNext, 0, j, wNext[0]![j]! + off);
        const err = await witnessRejection(witnessInput(t, bad));
        expect(err.message, `W'[0][${j}] ${off > 0n ? "+" : "-"}1`).to.match(/Assert Failed/);
      }
    }
  });

  it("the circuit rejects an out-of-range weight even when the update relation holds", async () => {
    // Column 0 of X is zero, so row 0 of W gets no update: W' = W satisfies the relation.
    const t = { ...tieTile([0n, 0n, 0n, 0n]), x: zeros(batch, inputs) };
    const w = withEntry(t.w, 0, 0, VALUE_MAX + 1n);
    const raw = { ...witnessInput(t, t.w), w: w.map((r) => r.map(toField)), wNext: w.map((r) => r.map(toField)) };
    expect((await witnessRejection(raw)).message).to.match(/Assert Failed/);
    // Same input with an in-range weight goes through (the failure above is the range check).
    await witnessOf(witnessInput(t, t.w));
  });
});
