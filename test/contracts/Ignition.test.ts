/**
 * ignition/modules/PoUW.ts deploys ProviderRegistry and DataRegistry and sets them in JobMarket, once.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { zeroAddress } from "viem";
import PoUWModule from "../../ignition/modules/PoUW.ts";

describe("Ignition module: registries", () => {
  it("deploys ProviderRegistry (quorum 2 of committees of 3 drawn from the AuditorRegistry) and DataRegistry and wires them into JobMarket", async () => {
    const { ignition, viem } = await network.create();
    const c = await ignition.deploy(PoUWModule);
    const wired = (await c.jobMarket.read.registries()).map((a) => a.toLowerCase());
    expect(wired).to.deep.equal([c.auditorRegistry.address, c.providerRegistry.address, c.dataRegistry.address].map((a) => a.toLowerCase()));
    expect((await c.providerRegistry.read.auditors()).toLowerCase()).to.equal(c.auditorRegistry.address.toLowerCase());
    expect(await c.providerRegistry.read.quorum()).to.equal(2n);
    expect(await c.providerRegistry.read.maxValiditySeconds()).to.equal(30n * 24n * 3600n);
    expect(await c.providerRegistry.read.committeeSize()).to.equal(3n);
    expect(await c.providerRegistry.read.seedDelayBlocks()).to.equal(2);
    expect(await c.providerRegistry.read.requestWindowSeconds()).to.equal(24n * 3600n);
    expect(await c.providerRegistry.read.requestFee()).to.equal(10n ** 18n);
    expect((await c.providerRegistry.read.feeToken()).toLowerCase()).to.equal((await c.auditorRegistry.read.token()).toLowerCase());
    // bonds count for panels and committees an hour after they are posted; exits take 14 days
    expect(await c.auditorRegistry.read.activationDelaySeconds()).to.equal(3600n);
    expect(await c.auditorRegistry.read.exitDelaySeconds()).to.equal(14n * 24n * 3600n);
    expect(await c.dataRegistry.read.corpusCount()).to.equal(0n);
    // the PeerDirectory (IPFS node announcements, docs/content.md) is deployed too, with its caps
    expect(await c.peerDirectory.read.MAX_ADDRS()).to.equal(8n);
    // setRegistries ran before JobMarket.wire ended the wiring: nobody can set them again.
    expect(await c.jobMarket.read.wirer()).to.equal(zeroAddress);
    await viem.assertions.revertWithCustomError(c.jobMarket.write.setRegistries([c.auditorRegistry.address, c.providerRegistry.address, c.dataRegistry.address]), c.jobMarket, "FixedRolesNotWirer");
  });
});
