/**
 * Keeps the rule "every custom error is triggered by at least one test" true: lists every custom error in
 * the ABIs of the deployable contracts and checks that each is asserted by name in a Mocha test
 * (test/contracts/*.test.ts, as the string "Name" passed to revertWithCustomError) or by selector in a Solidity test
 * (contracts/**\/*.t.sol, as Name.selector).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import hre from "hardhat";

const DEPLOYABLES = ["JobMarket", "JobRecords", "StakeVault", "AuditorRegistry", "DisputeGame", "ProviderRegistry", "DataRegistry", "StateOpenings"] as const;
/**
 * Errors that appear in an ABI but no input can trigger, with the reason. Keep this list short and
 * explained: everything else needs a test.
 */
const UNREACHABLE: Readonly<Record<string, string>> = {
  // OpenZeppelin EIP712 stores its name and version as ShortStrings; these errors need a string over 31
  // bytes, and JobMarket and ProviderRegistry pass the constant names of libraries/Receipts.sol.
  InvalidShortString: "OpenZeppelin ShortStrings via EIP712: constant short domain name and version",
  StringTooLong: "OpenZeppelin ShortStrings via EIP712: constant short domain name and version",
  // FixedRoles overrides renounceRole to always revert with FixedRolesImmutable, so AccessControl's own
  // confirmation check (the only place this error is raised) never runs.
  AccessControlBadConfirmation: "FixedRoles.renounceRole always reverts before AccessControl's confirmation check",
};
const root = new URL("../../", import.meta.url).pathname;

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(suffix))
    .map((f) => join(root, dir, f));
}

describe("custom error coverage", () => {
  it("every custom error of JobMarket, JobRecords, StakeVault, AuditorRegistry, DisputeGame, ProviderRegistry, DataRegistry and StateOpenings is asserted by some test", async () => {
    const mocha = filesUnder("test/contracts", ".test.ts")
      .filter((f) => !f.endsWith("errors-coverage.test.ts"))
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    const solidity = filesUnder("contracts", ".t.sol")
      .map((f) => readFileSync(f, "utf8"))
      .join("\n");
    const missing: string[] = [];
    let total = 0;
    for (const name of DEPLOYABLES) {
      const artifact = await hre.artifacts.readArtifact(name);
      for (const item of artifact.abi) {
        if (item.type !== "error" || UNREACHABLE[item.name] !== undefined) continue;
        total++;
        const byName = mocha.includes(`"${item.name}"`);
        const bySelector = solidity.includes(`${item.name}.selector`);
        if (!byName && !bySelector) missing.push(`${name}.${item.name}`);
      }
    }
    expect(total).to.be.greaterThan(40);
    expect(missing, `errors without a test: ${missing.join(", ")}`).to.deep.equal([]);
  });
});
