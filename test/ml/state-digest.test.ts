import { expect } from "chai";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { concat, keccak256, numberToHex, sha256 } from "viem";
import { createRun, manifestHash, offlineSalt, parseManifest, readTraceFile, stateDigestOf, train, type Manifest, type Run, type TrainState } from "../../verifier/src/ml/index.ts";
import { ManifestError } from "../../verifier/src/ml/errors.ts";
import { weightsStateHash } from "../../verifier/src/provenance/weights.ts";
import { SegmentTree, SHA256_V1_TAG } from "../../verifier/src/trace/index.ts";
import { runPouw } from "../cli/in-process.ts";
import { exampleJson, tempDir } from "./helpers.ts";
import fixed from "./tiny-keccak-vectors.json" with { type: "json" };

const word = (x: bigint | number) => numberToHex(BigInt(x), { size: 32 });
const sha256Tiny = (): Manifest => parseManifest({ ...exampleJson("tiny.json"), stateDigest: "sha256-v1" });

function trainSteps(run: Run, steps: number): TrainState[] {
  const states = [run.initState()];
  for (let t = 1; t <= steps; t++) states.push(run.step(states[t - 1]!, t).state);
  return states;
}

describe("ml/state-digest: the manifest's stateDigest selects how h(t) hashes a state; old manifests keep their bits", () => {
  it("keeps examples/tiny.json's manifest hash, state hashes and roots exactly as before the field existed (pouw and cpu engines)", async () => {
    const m = parseManifest(exampleJson("tiny.json"));
    expect("stateDigest" in m, "no default key is filled in (it would change the manifest hash)").to.equal(false);
    expect(stateDigestOf(m)).to.equal("keccak256");
    expect(manifestHash(m)).to.equal(fixed.manifestHash);
    for (const backend of ["pouw", "cpu"] as const) {
      const run = await createRun(m, { jobId: BigInt(fixed.jobId), salt: offlineSalt(BigInt(fixed.jobId)), backend });
      expect(run.stateDigest).to.equal("keccak256");
      const hs = trainSteps(run, 12).map((s) => run.stateHashOf(s));
      expect(hs, backend).to.deep.equal(fixed.stateHashes);
      expect([0, 1, 2].map((i) => new SegmentTree(4 * i, hs.slice(4 * i, 4 * i + 5)).root), backend).to.deep.equal(fixed.traceRoots);
    }
  });

  it("keeps the keccak256 example manifests (fixed vectors) on keccak256; the sha256 ones use the NaN-canonical sha256-v2", () => {
    for (const f of ["tiny.json", "mnist.json", "demo-mnist.json", "walkthrough.json", "sotu.json"]) {
      expect(stateDigestOf(parseManifest(exampleJson(f))), f).to.equal("keccak256");
    }
    for (const f of ["mnist-fast.json", "sotu-v2.json", "gpt-sotu.json", "diverging.json"]) {
      expect(stateDigestOf(parseManifest(exampleJson(f))), f).to.equal("sha256-v2");
    }
    const fast = parseManifest(exampleJson("mnist-fast.json"));
    const { stateDigest: _, ...rest } = fast;
    expect(rest).to.deep.equal(parseManifest(exampleJson("mnist.json")));
    expect(manifestHash(fast)).to.not.equal(manifestHash(parseManifest(exampleJson("mnist.json"))));
  });

  it("refuses a written-out keccak256 (it would change the manifest hash) and an unknown digest with ManifestError", () => {
    expect(() => parseManifest({ ...exampleJson("tiny.json"), stateDigest: "keccak256" })).to.throw(ManifestError, /manifest field stateDigest: omit the field/);
    expect(() => parseManifest({ ...exampleJson("tiny.json"), stateDigest: "blake3" })).to.throw(ManifestError, /manifest field stateDigest: must be "sha256-v1" or "sha256-v2"/);
  });

  it("trains the same states under sha256-v1 and hashes each as keccak256(abi.encode(TAG, jobId, t, sha256(W), sha256(O))), checked with viem", async () => {
    const jobId = 5n;
    const kec = await createRun(parseManifest(exampleJson("tiny.json")), { jobId, salt: offlineSalt(jobId) });
    const sha = await createRun(sha256Tiny(), { jobId, salt: offlineSalt(jobId) });
    expect(sha.stateDigest).to.equal("sha256-v1");
    const a = trainSteps(kec, 6), b = trainSteps(sha, 6);
    for (let t = 0; t <= 6; t++) {
      // the digest changes nothing of the training: same bytes, other hash
      expect(Buffer.from(sha.weightsBytes(b[t]!)).equals(Buffer.from(kec.weightsBytes(a[t]!))), `weights ${t}`).to.equal(true);
      expect(Buffer.from(sha.optimizerStateBytes(b[t]!)).equals(Buffer.from(kec.optimizerStateBytes(a[t]!))), `optimizer ${t}`).to.equal(true);
      const byHand = keccak256(concat([SHA256_V1_TAG, word(jobId), word(t), sha256(sha.weightsBytes(b[t]!)), sha256(sha.optimizerStateBytes(b[t]!))]));
      expect(sha.stateHashOf(b[t]!), `h(${t})`).to.equal(byHand);
      expect(sha.stateHashOf(b[t]!)).to.not.equal(kec.stateHashOf(a[t]!));
    }
    // weights provenance (the buyer's and finalizeAndAnchor's check of a weights file) uses the same scheme
    expect(weightsStateHash(sha.manifest, jobId, sha.checkpointBytes(b[6]!), 6)).to.equal(sha.stateHashOf(b[6]!));
    expect(weightsStateHash(kec.manifest, jobId, kec.checkpointBytes(a[6]!), 6)).to.equal(kec.stateHashOf(a[6]!));
  });

  describe("train and audit of a sha256-v1 manifest through the CLI (in-process)", () => {
    let dir: string;
    let manifestPath: string;
    before(async () => {
      dir = await tempDir("digest");
      await mkdir(dir, { recursive: true });
      manifestPath = join(dir, "tiny-sha256.json");
      await writeFile(manifestPath, JSON.stringify({ ...exampleJson("tiny.json"), stateDigest: "sha256-v1" }));
    });
    after(async () => rm(dir, { recursive: true, force: true }));

    it("writes a trace whose hashes are the sha256-v1 ones, and recompute and Freivalds accept every segment", async () => {
      const out = join(dir, "out");
      const r = await runPouw(["train", "--manifest", manifestPath, "--out", out, "--job-id", "3"]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/engine pouw {2}state digest sha256-v1/);
      const trace = await readTraceFile(join(out, "trace.json"));
      const run = await createRun(sha256Tiny(), { jobId: 3n, salt: offlineSalt(3n) });
      expect(trace.stateHashes).to.deep.equal(trainSteps(run, 12).map((s) => run.stateHashOf(s)));
      const audit = await runPouw(["audit", "--manifest", manifestPath, "--trace", out, "--segments", "all", "--checks", "recompute,freivalds"]);
      expect(audit.code, audit.stdout + audit.stderr).to.equal(0);
      // the same trace audited as a keccak256 manifest is another manifest: refused before any step runs
      const keccak = await runPouw(["audit", "--manifest", "examples/tiny.json", "--trace", out, "--segments", "0"]);
      expect(keccak.code).to.equal(2);
    });

    it("catches a cheat under sha256-v1 as under keccak256 (quarter-batch fails the recompute of segment 0)", async () => {
      const out = join(dir, "cheat");
      expect((await runPouw(["train", "--manifest", manifestPath, "--out", out, "--strategy", "quarter-batch"])).code).to.equal(0);
      const audit = await runPouw(["audit", "--manifest", manifestPath, "--trace", out, "--segments", "0", "--checks", "recompute"]);
      expect(audit.code, audit.stdout + audit.stderr).to.equal(1);
    });
  });

  it("uses the same scheme in train() as in stateHashOf (segment roots of the trace are roots of sha256-v1 hashes)", async () => {
    const out = await tempDir("digest-train");
    try {
      const run = await createRun(sha256Tiny(), { jobId: 1n, salt: offlineSalt(1n) });
      const { trace } = await train(run, { outDir: out, strategy: { kind: "honest" }, evaluate: false });
      const hs = trainSteps(run, 12).map((s) => run.stateHashOf(s));
      expect(trace.stateHashes).to.deep.equal(hs);
      for (const s of trace.segments) expect(s.traceRoot).to.equal(new SegmentTree(s.firstStep, hs.slice(s.firstStep, s.lastStep + 1)).root);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
