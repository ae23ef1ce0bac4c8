/**
 * The state hash and CIDs the buyer dApp computes are the CLI's, bit for bit, on real trained checkpoints.
 *
 * The modules the page uses to check a result (provenance/weights.ts weightsStateHash, store cidOf, the
 * trace/sha256.ts back end) are bundled exactly as dapp/build.ts bundles the page (platform browser, `node:*`
 * replaced by stand-ins that throw), then the bundle is loaded here: it must pick the JavaScript sha256, pull
 * in no tfjs, and give the same h(T) as the trainer committed (trace.json, written by `pouw train` on
 * node:crypto) for examples/tiny.json under both state digests (keccak256, sha256-v1). The Chromium test
 * (dapp-lifecycle.test.ts) runs the same bundle code in the browser against a job a CLI provider trained.
 */
import { expect } from "chai";
import * as esbuild from "esbuild";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { browserShims } from "../../dapp/build.ts";
import { parseManifest, readTraceFile, type Manifest } from "../../verifier/src/ml/index.ts";
import { weightsStateHash } from "../../verifier/src/provenance/index.ts";
import { cidOf } from "../../verifier/src/store/index.ts";
import { SHA256_BACKEND, sha256Chunks, sha256ChunksPortable } from "../../verifier/src/trace/sha256.ts";
import { runPouw } from "../cli/in-process.ts";
import { ROOT } from "../e2e/helpers.ts";

type BrowserSide = {
  weightsStateHash: typeof weightsStateHash;
  cidOf: typeof cidOf;
  SHA256_BACKEND: string;
};

describe("dapp: the browser bundle's state hash and CIDs equal the CLI's", function () {
  this.timeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), "pouw-browser-hash-"));
  let browser: BrowserSide;
  let inputs: string[];

  before(async () => {
    const src = (p: string) => JSON.stringify(join(ROOT, p));
    const r = await esbuild.build({
      stdin: {
        contents: [
          `export { weightsStateHash } from ${src("verifier/src/provenance/weights.ts")};`,
          `export { cidOf } from ${src("verifier/src/store/index.ts")};`,
          `export { SHA256_BACKEND } from ${src("verifier/src/trace/sha256.ts")};`,
        ].join("\n"),
        resolveDir: ROOT,
        loader: "ts",
      },
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      write: false,
      metafile: true,
      logLevel: "silent",
      plugins: [browserShims],
    });
    inputs = Object.keys(r.metafile.inputs);
    const file = join(dir, "browser-side.mjs");
    writeFileSync(file, r.outputFiles[0]!.contents);
    browser = (await import(pathToFileURL(file).href)) as BrowserSide;
  });

  it("bundles without tfjs or a node built-in, and runs the JavaScript sha256", () => {
    expect(inputs.filter((i) => /tensorflow|tfjs/.test(i))).to.deep.equal([]);
    expect(inputs.filter((i) => i.startsWith("node:"))).to.deep.equal([]);
    expect(inputs).to.include("dapp/src/shims/node.ts");
    expect(browser.SHA256_BACKEND).to.equal("javascript");
    expect(SHA256_BACKEND).to.equal("node:crypto");
  });

  it("the JavaScript sha256 equals node:crypto's over chunks (and a fixed vector)", () => {
    const chunks = [new Uint8Array(0), new TextEncoder().encode("abc"), Uint8Array.from({ length: 100_003 }, (_, i) => (i * 31) & 0xff)];
    expect(Buffer.from(sha256ChunksPortable(chunks)).toString("hex")).to.equal(Buffer.from(sha256Chunks(chunks)).toString("hex"));
    // FIPS 180-2 appendix B.1
    expect(Buffer.from(sha256ChunksPortable([new TextEncoder().encode("abc")])).toString("hex")).to.equal("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  for (const digest of ["keccak256", "sha256-v1"] as const) {
    it(`h(T) of a checkpoint trained by pouw train (${digest}): the bundle's = the trainer's = the CLI's`, async () => {
      const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")) as Record<string, unknown>;
      const manifestPath = join(dir, `${digest}.json`);
      writeFileSync(manifestPath, JSON.stringify(digest === "keccak256" ? tiny : { ...tiny, stateDigest: digest }));
      const out = join(dir, digest);
      const r = await runPouw(["train", "--manifest", manifestPath, "--out", out]);
      expect(r.code, r.stderr).to.equal(0);
      const manifest: Manifest = parseManifest(JSON.parse(readFileSync(manifestPath, "utf8")));
      const trace = await readTraceFile(join(out, "trace.json"));
      const bytes = new Uint8Array(readFileSync(join(out, "final.safetensors")));
      const steps = manifest.training.steps;
      const jobId = BigInt(trace.jobId);
      const trained = trace.stateHashes[steps]!;
      expect(browser.weightsStateHash(manifest, jobId, bytes, steps)).to.equal(trained);
      expect(weightsStateHash(manifest, jobId, bytes, steps)).to.equal(trained);
      expect(browser.cidOf(bytes)).to.equal(cidOf(bytes));
      // one flipped byte of a weight changes the bundle's h(T)
      const tampered = bytes.slice();
      tampered[tampered.length - 3]! ^= 0x01;
      expect(browser.weightsStateHash(manifest, jobId, tampered, steps)).to.not.equal(trained);
    });
  }
});
