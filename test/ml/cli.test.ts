import { expect } from "chai";
import { writeFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { runPouw } from "../helpers/cli.ts";
import { exampleJson, ROOT, tempDir } from "./helpers.ts";

// In-process through main(argv) (test/helpers/cli.ts): the train family's spawned smoke case is test/checks/audit-cli's
// `pouw train`, so these cases do not pay ~3.5 s of module loading each in a child process.

describe("cli: pouw train exits 2 with a one-line reason on bad input", () => {
  let dir: string;
  before(async () => {
    dir = await tempDir("cli");
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const writeManifest = async (name: string, edit: (m: Record<string, any>) => void): Promise<string> => {
    const m = structuredClone(exampleJson("tiny.json")) as Record<string, any>;
    edit(m);
    const path = join(dir, name);
    await writeFile(path, JSON.stringify(m));
    return path;
  };
  const expectExit2 = async (args: string[], message: string | RegExp) => {
    const r = await runPouw(args);
    expect(r.code, r.stderr).to.equal(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines, r.stderr).to.have.length(1);
    if (typeof message === "string") expect(lines[0]).to.contain(message);
    else expect(lines[0]).to.match(message);
    expect(r.stdout).to.equal("");
  };

  it("malformed manifest: names the field", async () => {
    const bad = await writeManifest("bad-batch.json", (m) => (m.training.batchSize = 0));
    await expectExit2(["train", "--manifest", bad, "--out", join(dir, "o1")], "pouw: manifest field training.batchSize");
  });

  it("manifest that is not JSON, or missing", async () => {
    const path = join(dir, "broken.json");
    await writeFile(path, "{ not json");
    await expectExit2(["train", "--manifest", path, "--out", join(dir, "o2")], "pouw: manifest is not valid JSON");
    await expectExit2(["train", "--manifest", join(dir, "absent.json"), "--out", join(dir, "o2")], /cannot read manifest .*ENOENT/);
  });

  it("missing data package", async () => {
    const bad = await writeManifest("no-pkg.json", (m) => (m.corpora[0].package = "mnist-not-installed-anywhere"));
    await expectExit2(["train", "--manifest", bad, "--out", join(dir, "o3")], "pouw: data package 'mnist-not-installed-anywhere' is not installed");
  });

  it("corpus whose content id does not match the package's data", async () => {
    const bad = await writeManifest("bad-cid.json", (m) => (m.corpora[0].contentId = "bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am"));
    await expectExit2(["train", "--manifest", bad, "--out", join(dir, "o4")], "content id mismatch");
  });

  it("unwritable output dir", async () => {
    // a path below a regular file cannot be created, even by root
    await expectExit2(["train", "--manifest", join(ROOT, "examples/tiny.json"), "--out", join(ROOT, "package.json", "out")], /output dir .* is not writable \(ENOTDIR\)/);
  });

  it("bad strategy, bad job id, bad salt flags, a version-1 manifest", async () => {
    const m = join(ROOT, "examples/tiny.json");
    await expectExit2(["train", "--manifest", m, "--out", join(dir, "o5"), "--strategy", "skip:2"], "--strategy \"skip:2\"");
    await expectExit2(["train", "--manifest", m, "--out", join(dir, "o5"), "--job-id", "-3"], "--job-id must be a uint256");
    await expectExit2(["train", "--manifest", m, "--out", join(dir, "o5"), "--job-id", "3", "--market", "0x5FbDB2315678afecb367f032d93F642f64180aa3"], "--chain-id and --market go together");
    const v1 = await writeManifest("v1.json", (x) => (x.version = 1));
    await expectExit2(["train", "--manifest", v1, "--out", join(dir, "o5")], /^pouw: manifest field version: 1 is the unsalted data order of the engine before job salts; this engine trains version 2/);
  });

  it("trains and prints a summary on success", async () => {
    const r = await runPouw(["train", "--manifest", join(ROOT, "examples/tiny.json"), "--out", join(dir, "ok"), "--strategy", "quarter-batch"]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/12 steps in 3 segments/);
    expect(r.stdout).to.match(/compute saved 75\.0%/);
    expect(r.stdout).to.match(/test accuracy \d+\.\d+%/);
    // not a TTY: plain progress lines, no bar
    expect(r.stderr).to.match(/train: step 12\/12/);
  });
});
