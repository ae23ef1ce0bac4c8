/**
 * The dApp's production build (dapp/build.ts `buildDapp`) made once per source tree and shared by the test files
 * that serve it: each test/dapp file used to bundle it on its own (esbuild, ~2 CPU s a build here, in esbuild's
 * service process, so outside the per-file CPU figures of bench/tests), five bundles of the same bytes per run.
 *
 * INVARIANT: the cached build is the one buildDapp would write now: its directory is named by a hash of every input
 * the bundle reads (dapp/ but dist/, verifier/src, the detection matrix, package-lock.json for the dependencies), so
 * an edited source gets a new build. The directory is read only (loadDappFiles); a build is written to a temporary
 * directory and renamed into place, so a worker running beside this one sees a whole build or none.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { buildDapp } from "../../dapp/build.ts";

const ROOT = join(import.meta.dirname, "../..");
const INPUTS = ["dapp", "verifier/src", "bench/results/detection.json", "package-lock.json"];

/** sha256 over the path and bytes of every input file, in a fixed order. */
export function dappSourceHash(root: string = ROOT): string {
  const h = createHash("sha256");
  const files: string[] = [];
  for (const input of INPUTS) {
    const p = join(root, input);
    if (!existsSync(p)) continue;
    if (!p.endsWith(".json")) for (const f of readdirSync(p, { recursive: true }) as string[]) files.push(join(p, f));
    else files.push(p);
  }
  for (const f of files.filter((f) => !relative(root, f).startsWith("dapp/dist") && !f.endsWith("/")).sort()) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(f);
    } catch {
      continue; // a directory (readdirSync lists them too)
    }
    h.update(relative(root, f)).update("\0").update(bytes).update("\0");
  }
  return h.digest("hex");
}

/** The directory of the dApp build for the current sources, built now if no earlier test file built it. */
export async function dappBuildOnce(): Promise<{ outdir: string }> {
  const outdir = join(tmpdir(), `pouw-dapp-build-${dappSourceHash().slice(0, 24)}`);
  if (existsSync(join(outdir, "app.js"))) return { outdir };
  const staging = mkdtempSync(join(tmpdir(), "pouw-dapp-staging-"));
  await buildDapp({ outdir: staging });
  try {
    renameSync(staging, outdir);
  } catch (err) {
    // NOTE: another worker renamed its build there first; the two are the same bytes, keep theirs
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(outdir, "app.js"))) throw err;
  }
  return { outdir };
}
