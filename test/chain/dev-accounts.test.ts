import { expect } from "chai";
import { devAccount } from "../../verifier/src/chain/index.ts";

describe("chain/devAccount: Hardhat's default accounts, derived once per index", () => {
  it("gives Hardhat's well-known addresses (fixed vectors), the same account on a second call", () => {
    expect(devAccount(0).address).to.equal("0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266");
    expect(devAccount(1).address).to.equal("0x70997970C51812dc3A010C7d01b50e0d17dc79C8");
    expect(devAccount(2).address).to.equal("0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC");
    expect(devAccount(1)).to.equal(devAccount(1));
    expect(devAccount(2)).to.not.equal(devAccount(1));
  });
});
