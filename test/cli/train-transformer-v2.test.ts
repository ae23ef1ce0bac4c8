import { expect } from "chai";
import { writeFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { readTraceFile } from "../../verifier/src/ml/index.ts";
import { tempDir, tinyTransformerJson } from "../ml/helpers.ts";
import { runPouw } from "./in-process.ts";

describe("pouw train / pouw audit on a bitwise-v2 char-transformer manifest, in-process", function () {
  this.timeout(120_000);
  let dir: string;
  let manifest: string;
  before(async () => {
    dir = await tempDir("v2cli");
    manifest = join(dir, "tiny-v2.json");
    await writeFile(manifest, JSON.stringify({ ...tinyTransformerJson(), numerics: "bitwise-v2", stateDigest: "sha256-v1" }));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  it("trains on the pouw engine by default; recompute and Freivalds audits pass every segment", async () => {
    const out = join(dir, "out");
    const r = await runPouw(["train", "--manifest", manifest, "--out", out]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain("engine pouw");
    expect((await readTraceFile(join(out, "trace.json"))).backend).to.equal("pouw");
    for (const checks of ["recompute", "freivalds"]) {
      const a = await runPouw(["audit", "--manifest", manifest, "--trace", out, "--checks", checks, "--json"]);
      expect(a.code, `${checks}: ${a.stderr}${a.stdout}`).to.equal(0);
    }
  });

  it("a stale-gradient trace fails the Freivalds audit (exit 1)", async () => {
    const out = join(dir, "stale");
    expect((await runPouw(["train", "--manifest", manifest, "--out", out, "--strategy", "stale:2"])).code).to.equal(0);
    const a = await runPouw(["audit", "--manifest", manifest, "--trace", out, "--checks", "freivalds", "--json"]);
    expect(a.code, a.stdout).to.equal(1);
  });

  it("refuses --engine cpu for bitwise-v2 with exit 2 and one line naming the engine to use", async () => {
    const r = await runPouw(["train", "--manifest", manifest, "--out", join(dir, "cpu"), "--engine", "cpu"]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/^pouw: --engine cpu: manifest numerics "bitwise-v2" runs only on pouw/);
  });
});
