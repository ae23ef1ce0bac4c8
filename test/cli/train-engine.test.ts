import { expect } from "chai";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../../verifier/src/errors/index.ts";
import { checkEngine, enginesAllowed, parseEngine, parseManifest, readTraceFile } from "../../verifier/src/ml/index.ts";
import { exampleJson, ROOT, tempDir } from "../ml/helpers.ts";
import fixed from "../ml/tiny-keccak-vectors.json" with { type: "json" };
import { runPouw } from "./in-process.ts";

describe("pouw train --engine: pouw | cpu (| wasm for tolerance manifests), in-process", () => {
  const manifest = join(ROOT, "examples/tiny.json");
  let dir: string;
  before(async () => (dir = await tempDir("engine")));
  after(async () => rm(dir, { recursive: true, force: true }));

  for (const engine of [undefined, "pouw", "cpu"] as const) {
    it(`trains examples/tiny.json with ${engine ? `--engine ${engine}` : "the default engine (pouw)"} to the fixed state hashes`, async () => {
      const out = join(dir, engine ?? "default");
      const r = await runPouw(["train", "--manifest", manifest, "--out", out, ...(engine ? ["--engine", engine] : [])]);
      expect(r.code, r.stderr).to.equal(0);
      const trace = await readTraceFile(join(out, "trace.json"));
      expect(trace.backend).to.equal(engine ?? "pouw");
      expect(r.stdout).to.contain(`engine ${engine ?? "pouw"}  state digest keccak256`);
      expect(trace.stateHashes).to.deep.equal(fixed.stateHashes);
    });
  }

  it("--no-evaluate skips the held-out evaluation (no evaluation in trace.json, no held-out line) and keeps the state hashes", async () => {
    const out = join(dir, "no-evaluate");
    const r = await runPouw(["train", "--manifest", manifest, "--out", out, "--no-evaluate"]);
    expect(r.code, r.stderr).to.equal(0);
    const trace = await readTraceFile(join(out, "trace.json"));
    expect(trace.evaluation).to.equal(undefined);
    expect(r.stdout).to.not.contain("held-out loss");
    expect(trace.stateHashes).to.deep.equal(fixed.stateHashes);
    const withEval = await readTraceFile(join(dir, "default", "trace.json"));
    expect(withEval.evaluation?.examples, "the default run evaluates").to.equal(200);
  });

  it("refuses --engine wasm for a bitwise manifest with exit 2 and one line naming the engines it allows, before writing anything", async () => {
    const out = join(dir, "wasm");
    const r = await runPouw(["train", "--manifest", manifest, "--out", out, "--engine", "wasm"]);
    expect(r.code).to.equal(2);
    expect(r.stderr.trim().split("\n")).to.have.length(1);
    expect(r.stderr).to.match(/^pouw: --engine wasm: manifest numerics "bitwise" runs only on pouw or cpu/);
    expect(existsSync(out), "no out dir").to.equal(false);
  });

  it("refuses an unknown engine with exit 2", async () => {
    const r = await runPouw(["train", "--manifest", manifest, "--out", join(dir, "gpu"), "--engine", "gpu"]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/^pouw: --engine must be one of pouw, cpu, wasm, webgpu, got "gpu"/);
  });

  it("allows every tfjs engine for numerics tolerance and only the bitwise ones for bitwise (InputError otherwise)", () => {
    const tolerance = parseManifest({ ...exampleJson("tiny.json"), numerics: "tolerance" });
    const bitwise = parseManifest(exampleJson("tiny.json"));
    expect(enginesAllowed("bitwise")).to.deep.equal(["pouw", "cpu"]);
    expect(parseEngine("wasm", tolerance)).to.equal("wasm");
    expect(parseEngine("cpu", bitwise)).to.equal("cpu");
    expect(() => checkEngine(bitwise, "wasm")).to.throw(InputError, /engine wasm: manifest numerics "bitwise"/);
  });
});
