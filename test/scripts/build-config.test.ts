/**
 * hardhat.config.ts's Solidity paths keep `hardhat build` incremental: with `splitTestsCompilation` the tests scope
 * takes every .sol file under `paths.tests.solidity` as a test root, beside the `.t.sol` files under the sources. A
 * tests path holding the contracts compiled them twice, and the two scopes' compile-cache entries for the same files
 * overwrote each other, so every build (and so every `npm test`) recompiled everything.
 */
import { expect } from "chai";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import hre from "hardhat";

describe("hardhat.config: the Solidity tests path holds no contract", () => {
  it("no .sol file under paths.tests.solidity, and the .t.sol tests live under the sources", () => {
    const testsPath = hre.config.paths.tests.solidity;
    const sol = existsSync(testsPath) ? (readdirSync(testsPath, { recursive: true }) as string[]).filter((f) => f.endsWith(".sol")) : [];
    expect(sol, `${testsPath}: .sol files here become test roots of the split tests compilation`).to.deep.equal([]);
    expect(hre.config.solidity.splitTestsCompilation).to.equal(true);
    const sources = hre.config.paths.sources.solidity;
    const tests = sources.flatMap((dir) => (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".t.sol")).map((f) => join(dir, f)));
    expect(tests.length, "the Foundry-style tests beside the contracts").to.be.greaterThan(0);
  });
});
