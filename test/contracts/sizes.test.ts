/**
 * Every deployable contract keeps at least 10% headroom under the EIP-170 limit of 24,576 bytes of runtime code, so the
 * next feature still deploys (the deployables and their sizes: test/contracts/sizes.ts).
 */
import { expect } from "chai";
import { deployables, EIP170_LIMIT, MAX_RUNTIME_BYTES, runtimeBytes } from "./sizes.ts";

describe("contract sizes", () => {
  it("finds the deployables by listing contracts/", () => {
    const names = deployables().map(([, n]) => n);
    // a fixed expectation, so a listing that silently finds nothing cannot pass
    for (const n of ["JobMarket", "JobRecords", "DisputeGame", "DisputeSettlement", "StakeVault", "AuditorRegistry", "ProviderRegistry", "DataRegistry", "PeerDirectory", "Groth16Verifier"]) {
      expect(names, n).to.include(n);
    }
    expect(names).to.not.include("TestToken");
  });

  it(`keeps every deployable at or under 90% of ${EIP170_LIMIT} bytes (${MAX_RUNTIME_BYTES})`, () => {
    const over = deployables()
      .map(([source, name]) => ({ name, bytes: runtimeBytes(source, name) }))
      .filter((c) => c.bytes > MAX_RUNTIME_BYTES)
      .map((c) => `${c.name} ${c.bytes} bytes (${((100 * c.bytes) / EIP170_LIMIT).toFixed(1)}%)`);
    expect(over, `over ${MAX_RUNTIME_BYTES} bytes: ${over.join(", ")}`).to.deep.equal([]);
  });
});
