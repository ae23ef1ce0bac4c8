/**
 * ignition/modules/PoUW.ts deploys DisputeGame and the step verifier and wires the dispute roles, once; the proving
 * mode it gets is Development on the dev chain. PoUWWithToken.ts deploys no verifier of its own: without the
 * stepVerifier / stepVkeyHash parameters proving is disabled.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { keccak256, toHex, zeroAddress } from "viem";
import PoUWModule from "../../ignition/modules/PoUW.ts";
import PoUWWithTokenModule from "../../ignition/modules/PoUWWithToken.ts";

describe("dispute: Ignition module", () => {
  it("deploys DisputeGame with the verifier and gives it the dispute roles of JobMarket and AuditorRegistry", async () => {
    const { ignition } = await network.create();
    const c = await ignition.deploy(PoUWModule);
    const role = keccak256(toHex("DISPUTE_ROLE"));
    expect(await c.jobMarket.read.hasRole([role, c.disputeGame.address])).to.equal(true);
    expect(await c.auditorRegistry.read.hasRole([role, c.disputeGame.address])).to.equal(true);
    expect((await c.disputeGame.read.verifier()).toLowerCase()).to.equal(c.stepVerifier.address.toLowerCase());
    expect((await c.disputeGame.read.bondToken()).toLowerCase()).to.equal(c.token.address.toLowerCase());
    expect((await c.disputeGame.read.params()).panelSize).to.equal(3);
    // panel fee default: 0.05 token per member, so a challenge deposits the bond plus 0.15 token
    expect((await c.disputeGame.read.params()).panelFee).to.equal(5n * 10n ** 16n);
    // No one holds the vault's SLASHER_ROLE: DisputeGame slashes through JobMarket.settleProviderFault.
    expect(await c.stakeVault.read.hasRole([keccak256(toHex("SLASHER_ROLE")), c.disputeGame.address])).to.equal(false);
    expect(await c.stakeVault.read.roleHolder([keccak256(toHex("SLASHER_ROLE"))])).to.equal(zeroAddress);
    // The dispute roles are wired once, to DisputeGame alone, and nobody can change them: wiring has ended.
    expect((await c.jobMarket.read.roleHolder([role])).toLowerCase()).to.equal(c.disputeGame.address.toLowerCase());
    expect((await c.auditorRegistry.read.roleHolder([role])).toLowerCase()).to.equal(c.disputeGame.address.toLowerCase());
    for (const w of [c.stakeVault, c.auditorRegistry, c.jobMarket]) expect(await w.read.wirer()).to.equal(zeroAddress);
  });

  it("PoUW.ts: the development verifier, mode Development on the dev chain", async () => {
    const { ignition } = await network.create();
    const c = await ignition.deploy(PoUWModule);
    const [verifier, vkeyHash, mode] = await c.disputeGame.read.proving();
    expect(verifier.toLowerCase()).to.equal(c.stepVerifier.address.toLowerCase());
    expect(vkeyHash).to.equal(`0x${"0".repeat(64)}`);
    expect(mode).to.equal(1); // Development
  });

  it("PoUWWithToken.ts on a live chain without a ceremony verifier: no verifier, proving disabled", async () => {
    const { ignition, viem } = await network.create({ override: { chainId: 1 } });
    const token = await viem.deployContract("TestToken", ["Test", "TST"]);
    const c = await ignition.deploy(PoUWWithTokenModule, { parameters: { PoUWWithToken: { token: token.address } } });
    const [verifier, , mode] = await c.disputeGame.read.proving();
    expect(verifier).to.equal(zeroAddress);
    expect(mode).to.equal(0); // Disabled
    expect("stepVerifier" in c).to.equal(false);
  });
});
