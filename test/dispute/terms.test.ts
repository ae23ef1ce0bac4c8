import { expect } from "chai";
import { pad } from "viem";
import { CIRCUIT_MANIFEST_TYPEHASH, circuitManifestHash } from "../../verifier/src/dispute/index.ts";

// Fixed vector shared with contracts/DisputeGame.t.sol (test_circuitManifestHash_vector): the same preimage there is
// hashed by DisputeGame.circuitManifestHash and by an inline abi.encode, so the two sides are checked against each other.
describe("dispute/terms: the circuit manifest hash equals DisputeGame's", () => {
  it("hashes (body 1, lr 3277, batch root 2) to the Solidity vector", () => {
    expect(CIRCUIT_MANIFEST_TYPEHASH).to.equal("0x75f0d14ea6034262f8540f9917c02687e3c59e498f233e5f885b700c4fd2f9ca");
    expect(circuitManifestHash(pad("0x01"), { lr: 3277n, batchRoot: pad("0x02") })).to.equal(
      "0x097296e57f0e1825ec2347aecce81ddf0280b801685dca3667f0cd518bffccb2",
    );
  });
});
