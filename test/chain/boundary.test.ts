/**
 * The chain/ boundary: nothing outside verifier/src/chain reads, watches or encodes a contract call, and no module
 * carries a hand-written ABI (every ABI is generated into verifier/src/chain/abi by `npm run abi`). A read that the
 * CLI, the bot or the dApp needs becomes an action in verifier/src/chain (one per file), so that retries, decoded
 * reverts and typed results live in one place.
 */
import { expect } from "chai";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;
const CALLS = /\.(readContract|getContractEvents|watchContractEvent|simulateContract|writeContract|multicall)\(|\bencodeFunctionData\(|\bparseAbi(Item)?\(/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : /\.ts$/.test(name) ? [p] : [];
  });
}

/** Whether a source line calls, watches or encodes a contract function, or builds an ABI by hand (comments excluded). */
const callsContract = (line: string) => CALLS.test(line) && !/^\s*(\*|\/\/)/.test(line);

/** `file:line: text` of every line that calls a contract directly. */
function boundaryViolations(files: string[]): string[] {
  return files.flatMap((f) =>
    readFileSync(f, "utf8")
      .split("\n")
      .flatMap((line, i) => (callsContract(line) ? [`${relative(ROOT, f)}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe("chain/ boundary", () => {
  it("no module of verifier/src outside chain/, and no dApp module, calls or encodes a contract function itself", () => {
    const files = [...sources(join(ROOT, "verifier/src")), ...sources(join(ROOT, "dapp/src"))].filter((f) => !f.startsWith(join(ROOT, "verifier/src/chain/")));
    expect(files.length).to.be.greaterThan(100);
    expect(boundaryViolations(files)).to.deep.equal([]);
  });

  it("finds a direct read, an encode and a hand-written ABI (the check is not vacuous)", () => {
    const dir = join(ROOT, "verifier/src/chain");
    // chain/ itself is where these live: every action file matches
    const inChain = boundaryViolations(sources(dir).filter((f) => !f.includes("/abi/")));
    expect(inChain.some((l) => l.includes("readContract("))).to.equal(true);
    expect(inChain.some((l) => l.includes("encodeFunctionData("))).to.equal(true);
    expect(inChain.some((l) => l.includes("watchContractEvent("))).to.equal(true);
    expect(callsContract('const abi = parseAbi(["function creditOf(address) view returns (uint256)"]);')).to.equal(true);
    expect(callsContract("  // client.readContract({ ... }) in a comment")).to.equal(false);
  });
});
