import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../../verifier/src/errors/index.ts";
import { enginesAllowed, parseEngine } from "../../verifier/src/ml/engines.ts";
import { createRun, offlineSalt, parseManifest, type Run } from "../../verifier/src/ml/index.ts";
import { jsTransformerKernelsV3, type TransformerKernels } from "../../verifier/src/ml/kernels/index.ts";
import { useSwiftShaderWhenNoIcd, WebGpuUnavailableError } from "../../verifier/src/ml/webgpu/device.ts";
import { webgpuTransformerKernelsV3, WebGpuMatmulV3 } from "../../verifier/src/ml/webgpu/sync-kernels.ts";
import { CLI, NODE, ROOT, runPouw } from "../helpers/cli.ts";
import { tempDir, tinyTransformerJson } from "./helpers.ts";

// The `webgpu` engine (ml/webgpu/sync-kernels.ts): the bitwise-v3 char-transformer trained with its matmuls on the
// adapter Dawn finds (SwiftShader without a GPU) must give the reference's state hashes. Tiny shapes: SwiftShader
// emulates the device on the CPU. The device cases skip, saying why, only when no adapter is found.

const STEPS = 3;
const v3Json = () => ({ ...tinyTransformerJson(), numerics: "bitwise-v3", stateDigest: "sha256-v2" });

function hashes(run: Run): string[] {
  let state = run.initState();
  const out: string[] = [];
  for (let t = 1; t <= STEPS; t++) {
    state = run.step(state, t).state;
    out.push(run.stateHashOf(state));
  }
  return out;
}

const runWith = (backend: "pouw" | "webgpu", transformerKernels?: TransformerKernels) =>
  createRun(parseManifest(v3Json()), { jobId: 32n, salt: offlineSalt(32n), backend, ...(transformerKernels ? { transformerKernels } : {}) });

describe("ml/webgpu engine: bitwise-v3 training with its matmuls on a WebGPU device", function () {
  this.timeout(900_000);

  it("is an engine of numerics bitwise-v3 only", () => {
    const v3 = parseManifest(v3Json());
    expect(parseEngine("webgpu", v3)).to.equal("webgpu");
    expect(enginesAllowed("bitwise-v3")).to.deep.equal(["pouw", "webgpu"]);
    for (const numerics of ["bitwise-v2", "bitwise", "tolerance"] as const) {
      expect(enginesAllowed(numerics), numerics).to.not.include("webgpu");
      expect(() => parseEngine("webgpu", { numerics }), numerics).to.throw(InputError, /--engine webgpu: .*bitwise-v3 only/);
    }
  });

  it("createRun refuses the webgpu engine without the webgpu kernels (no CPU run labelled webgpu)", async () => {
    let err: unknown;
    try {
      await runWith("webgpu", jsTransformerKernelsV3);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(InputError);
    expect((err as Error).message).to.match(/webgpu engine runs on the kernels of webgpu\/sync-kernels\.ts/);
  });

  it("pouw train --engine webgpu without an adapter: one clear error naming VK_ICD_FILENAMES, nothing trained", async () => {
    const dir = await tempDir("webgpu-noadapter");
    try {
      const manifest = join(dir, "m.json");
      await writeFile(manifest, JSON.stringify(v3Json()));
      const out = join(dir, "out");
      const r = spawnSync(NODE, [CLI, "train", "--manifest", manifest, "--out", out, "--engine", "webgpu"], {
        encoding: "utf8", cwd: ROOT, timeout: 300_000, env: { ...process.env, VK_ICD_FILENAMES: "/nonexistent/icd.json" },
      });
      expect(r.status, r.stderr).to.not.equal(0);
      expect(r.stderr).to.match(/no WebGPU adapter/);
      expect(r.stderr).to.include("VK_ICD_FILENAMES=/nonexistent/icd.json");
      expect(r.stderr).to.not.match(/\n\s+at .*(file:|node:)/); // a clear error, not a JavaScript stack trace (Dawn's own warnings name C++ frames)
      expect(existsSync(out), "no output directory").to.equal(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe("on the adapter Dawn finds", () => {
    let gpu: WebGpuMatmulV3 | null = null;

    before(async function () {
      useSwiftShaderWhenNoIcd();
      try {
        gpu = await WebGpuMatmulV3.open();
      } catch (err) {
        if (!(err instanceof WebGpuUnavailableError)) throw err;
        console.log(`      SKIPPED: no WebGPU adapter (${err.message}${err.details ? `: ${err.details}` : ""})`);
        this.skip();
      }
    });

    after(async () => gpu?.close());

    it(`${STEPS} steps of a tiny sotu bitwise-v3 transformer: webgpu, wasm and the JS reference give the same state hashes`, async () => {
      const reference = hashes(await runWith("pouw", jsTransformerKernelsV3));
      const wasm = hashes(await runWith("pouw"));
      const run = await runWith("webgpu", webgpuTransformerKernelsV3(gpu!));
      expect(run.backend).to.equal("webgpu");
      const before = gpu!.calls;
      const webgpu = hashes(run);
      expect(gpu!.calls - before, "matmuls run on the device").to.be.greaterThan(0);
      expect(wasm).to.deep.equal(reference);
      expect(webgpu).to.deep.equal(reference);
      expect(new Set(reference).size, "the steps change the state").to.equal(STEPS);
    });

    it("pouw train --engine webgpu writes the trace of --engine pouw (every state hash), with engine webgpu", async () => {
      const dir = await tempDir("webgpu-train");
      try {
        const manifest = join(dir, "m.json");
        await writeFile(manifest, JSON.stringify({ ...v3Json(), training: { batchSize: 2, steps: 2, stepsPerSegment: 2 } }));
        const traces: { backend: string; stateHashes: string[] }[] = [];
        for (const engine of ["webgpu", "pouw"]) {
          const out = join(dir, engine);
          const r = await runPouw(["train", "--manifest", manifest, "--out", out, "--engine", engine, "--no-evaluate"]);
          expect(r.code, r.stderr).to.equal(0);
          if (engine === "webgpu") expect(r.stdout).to.match(/engine webgpu \(.+, [1-9][0-9]* matmuls on the device\)/);
          traces.push(JSON.parse(await readFile(join(out, "trace.json"), "utf8")));
        }
        expect(traces[0]!.backend).to.equal("webgpu");
        expect(traces[0]!.stateHashes).to.have.length(3);
        expect(traces[0]!.stateHashes).to.deep.equal(traces[1]!.stateHashes);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
});
