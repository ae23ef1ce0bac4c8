import { expect } from "chai";
import { createRun, offlineSalt, CheckpointError, decodeCheckpoint, float32Bytes, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { hashBytes } from "../../verifier/src/trace/index.ts";
import { tinyManifest } from "./helpers.ts";

describe("ml/checkpoint: safetensors layout, round trip and typed errors", () => {
  let run: Run;
  let state: TrainState;
  let bytes: Uint8Array;

  before(async () => {
    run = await createRun(tinyManifest(), { jobId: 5n, salt: offlineSalt(5n) });
    state = run.initState();
    for (let t = 1; t <= 3; t++) state = run.step(state, t).state;
    bytes = run.checkpointBytes(state);
  });

  const headerOf = (b: Uint8Array) => {
    const n = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
    return { n, json: JSON.parse(new TextDecoder().decode(b.subarray(8, 8 + n))) as Record<string, any> };
  };
  const withHeader = (edit: (h: Record<string, any>) => void): Uint8Array => {
    const { n, json } = headerOf(bytes);
    edit(json);
    const head = new TextEncoder().encode(JSON.stringify(json));
    const out = new Uint8Array(8 + head.length + bytes.length - 8 - n);
    new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
    out.set(head, 8);
    out.set(bytes.subarray(8 + n), 8 + head.length);
    return out;
  };
  const expectCheckpointError = (b: Uint8Array, pattern: RegExp) => {
    expect(() => run.loadCheckpoint(b), pattern.source).to.throw(CheckpointError, pattern);
  };

  it("round-trips the state bit for bit and keeps the state hash", () => {
    const loaded = run.loadCheckpoint(bytes, { step: 3 });
    expect(loaded.step).to.equal(3);
    expect(run.stateHashOf(loaded)).to.equal(run.stateHashOf(state));
    expect(Buffer.from(float32Bytes(loaded.opt)).equals(Buffer.from(float32Bytes(state.opt)))).to.equal(true);
  });

  it("writes a safetensors header: F32 tensors in fixed order, aligned data, metadata", () => {
    const { n, json } = headerOf(bytes);
    expect(n % 8).to.equal(0);
    const names = Object.keys(json).filter((k) => k !== "__metadata__");
    expect(names.slice(0, 4)).to.deep.equal(["param.W1", "param.b1", "param.W2", "param.b2"]);
    expect(names.at(-1)).to.equal("opt.adam.beta2Power");
    expect(json["param.W1"]).to.deep.equal({ dtype: "F32", shape: [784, 16], data_offsets: [0, 784 * 16 * 4] });
    expect(json.__metadata__).to.include({ step: "3", jobId: "5", manifestHash: run.manifestHash, model: "mnist-mlp", optimizer: "adam" });
    // the data section is weightsBytes || optimizerStateBytes
    const data = bytes.subarray(8 + n);
    expect(hashBytes(data.subarray(0, run.weightsBytes(state).length))).to.equal(hashBytes(run.weightsBytes(state)));
  });

  it("rejects truncated files at every kind of cut", () => {
    const { n } = headerOf(bytes);
    for (const len of [0, 5, 8, 8 + Math.floor(n / 2), 8 + n, 8 + n + 100, bytes.length - 1]) {
      expect(() => run.loadCheckpoint(bytes.subarray(0, len)), `length ${len}`).to.throw(CheckpointError);
    }
  });

  it("rejects trailing bytes, a wrong shape, dtype, offsets, metadata, manifest or step", () => {
    const longer = new Uint8Array(bytes.length + 4);
    longer.set(bytes);
    expectCheckpointError(longer, /trailing bytes/);
    expectCheckpointError(withHeader((h) => (h["param.W1"].shape = [16, 784])), /shape/);
    expectCheckpointError(withHeader((h) => (h["param.b1"].dtype = "F16")), /dtype/);
    expectCheckpointError(withHeader((h) => (h["param.b1"].data_offsets = [0, 64])), /data_offsets/);
    expectCheckpointError(withHeader((h) => delete h["param.b2"]), /tensors|lacks/);
    expectCheckpointError(withHeader((h) => delete h.__metadata__), /__metadata__/);
    expectCheckpointError(withHeader((h) => (h.__metadata__.manifestHash = "0x" + "00".repeat(32))), /manifest/);
    expectCheckpointError(withHeader((h) => (h.__metadata__.jobId = "6")), /job 6/);
    expectCheckpointError(withHeader((h) => (h.__metadata__.step = "-1")), /decimal/);
    expect(() => run.loadCheckpoint(bytes, { step: 4 })).to.throw(CheckpointError, /step 3, expected 4/);
    const badLen = bytes.slice();
    new DataView(badLen.buffer).setBigUint64(0, 1n << 62n, true);
    expectCheckpointError(badLen, /header length/);
    const badJson = bytes.slice();
    badJson[9] = 0xff;
    expectCheckpointError(badJson, /JSON/);
  });

  it("a tampered data byte decodes to a different state hash (the CID and trace catch it)", () => {
    const tampered = bytes.slice();
    tampered[tampered.length - 100]! ^= 0x40;
    const loaded = run.loadCheckpoint(tampered);
    expect(run.stateHashOf(loaded)).to.not.equal(run.stateHashOf(state));
  });

  it("rejects a checkpoint of another model", () => {
    const specs = [{ name: "W", shape: [2, 2] }];
    expect(() => decodeCheckpoint(bytes, specs, [])).to.throw(CheckpointError, /tensors/);
  });
});
