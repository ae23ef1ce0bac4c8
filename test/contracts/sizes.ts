/**
 * Runtime code sizes of the deployable contracts, read from the Hardhat artifacts (run `npx hardhat build` first):
 * what test/contracts/sizes.test.ts checks and bench/gas.ts writes into bench/results/gas.json. "Deployable" is every
 * contract defined in a .sol file of contracts/ and contracts/verifiers/ (not tests, mocks, libraries, interfaces or
 * test helpers), found by listing the folders, so a new contract is covered without anyone adding it here.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** EIP-170: the most runtime bytes a contract may have. */
export const EIP170_LIMIT = 24_576;
/** 90% of the limit, rounded down: the most runtime bytes any deployable may have. */
export const MAX_RUNTIME_BYTES = Math.floor(EIP170_LIMIT * 0.9);
const root = new URL("../../", import.meta.url).pathname;

/** [source path under contracts/, contract name] of every deployable. */
export function deployables(): [string, string][] {
  const out: [string, string][] = [];
  for (const dir of ["contracts", "contracts/verifiers"]) {
    for (const f of readdirSync(join(root, dir)).sort()) {
      if (!f.endsWith(".sol") || f.endsWith(".t.sol")) continue;
      const src = readFileSync(join(root, dir, f), "utf8");
      for (const m of src.matchAll(/^contract\s+([A-Za-z0-9_]+)/gm)) out.push([`${dir}/${f}`, m[1]!]);
    }
  }
  return out;
}

/** Runtime code size in bytes from the artifact's deployedBytecode. */
export function runtimeBytes(source: string, name: string): number {
  const path = join(root, "artifacts", source, `${name}.json`);
  if (!existsSync(path)) throw new Error(`no artifact ${path}: run npx hardhat build`);
  const a = JSON.parse(readFileSync(path, "utf8")) as { deployedBytecode: string };
  return (a.deployedBytecode.length - 2) / 2;
}
