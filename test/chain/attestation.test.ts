/**
 * The attestation request flow through the chain actions (requestAttestation, getAttestationRequest,
 * drawAttestationCommittee, recordAttestation) on a fresh in-process network deployed by deployMarket: the committee
 * is drawn from the AuditorRegistry snapshot at the request, the provider's own freshly bonded auditors are refused
 * by name, and a record counts only while a quorum of its signers stays bonded.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { erc20Abi, getAddress, keccak256, maxUint256, parseEther, toHex, type Address, type Hex, type LocalAccount } from "viem";
import {
  approveToken,
  ContractRevertError,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  DEFAULT_ATTESTATION_PARAMS,
  deployMarket,
  devAccount,
  drawAttestationCommittee,
  getAttestationRequest,
  mintTestToken,
  postBond,
  providerClients,
  providerRegistryAbi,
  recordAttestation,
  requestAttestation,
  requestExit,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { providerRegistryDomain, signAttestationVerified, type AttestationVerified } from "../../verifier/src/receipts/index.ts";
import { attestationBinding } from "../../verifier/src/checks/attestation/index.ts";

async function expectRevert(p: Promise<unknown>, errorName: string): Promise<ContractRevertError> {
  try {
    await p;
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(ContractRevertError);
    expect((err as ContractRevertError).errorName).to.equal(errorName);
    return err as ContractRevertError;
  }
  expect.fail(`expected ${errorName}`);
}

describe("chain: attestation committees (ProviderRegistry)", () => {
  let admin: ChainClients, provider: ChainClients, other: ChainClients;
  let honest: ChainClients[], own: ChainClients[];
  let registry: Address, providers: Address, token: Address, chainId: bigint;
  let mine: (n: number) => Promise<void>;
  let increase: (s: number) => Promise<void>;
  let latest: () => Promise<bigint>;

  before(async () => {
    const conn = await network.create();
    mine = async (n) => {
      await conn.networkHelpers.mine(n);
    };
    increase = async (s) => {
      await conn.networkHelpers.time.increase(s);
    };
    latest = async () => BigInt(await conn.networkHelpers.time.latest());
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    [admin, provider, other] = [mk(0), mk(1), mk(2)];
    honest = [3, 4, 5, 6].map(mk);
    own = [7, 8].map(mk);
    // the exit delay must cover the 1-day request window
    const d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    registry = d.auditorRegistry;
    providers = d.providerRegistry!;
    chainId = BigInt(d.chainId);
    for (const a of [...honest, ...own]) {
      await mintTestToken(a, { token: d.token, to: a.account.address, amount: parseEther("10") });
      await approveToken(a, { token: d.token, spender: registry, amount: maxUint256 });
    }
    for (const a of honest) await postBond(a, { auditorRegistry: registry, amount: parseEther("1") });
    // every request burns the registry's fee (1 token by default): the providers fund and approve it
    token = d.token;
    for (const a of [provider, other]) {
      await mintTestToken(a, { token: d.token, to: a.account.address, amount: parseEther("10") });
      await approveToken(a, { token: d.token, spender: providers, amount: maxUint256 });
    }
    await increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
  });

  const evidence = (who: ChainClients): Hex => keccak256(toHex(`evidence ${who.account.address}`));

  async function statement(requestId: bigint, who: ChainClients, tier: number, band: number): Promise<AttestationVerified> {
    return { provider: who.account.address, requestId, tier, band, evidenceHash: evidence(who), expiresAt: (await latest()) + 7n * 86_400n, issuedAt: await latest() };
  }

  async function sign(att: AttestationVerified, signers: ChainClients[]) {
    const domain = providerRegistryDomain(chainId, providers);
    return Promise.all(signers.map(async (s) => ({ signer: s.account.address, signature: await signAttestationVerified(s.account as LocalAccount, domain, att) })));
  }

  it("draws the committee from the snapshot at the request and records a quorum of it", async () => {
    // tiers 1-2 need a declared session key (ProviderRegistryTierNeedsSessionKey): the provider's own address here
    const r = await requestAttestation(provider, { providerRegistry: providers, evidenceHash: evidence(provider), sessionKey: provider.account.address });
    expect(r.seedBlock).to.equal(r.receipt.blockNumber + BigInt(DEFAULT_ATTESTATION_PARAMS.attestationSeedDelayBlocks));
    // the binding the evidence must carry: TypeScript and the contract agree (challenge = blockhash of the block before)
    const cb = await provider.public.getBlock({ blockNumber: r.receipt.blockNumber - 1n });
    const q0 = await getAttestationRequest(provider.public, { providerRegistry: providers, requestId: r.requestId });
    expect(q0.challenge).to.equal(cb.hash);
    expect(attestationBinding({ provider: provider.account.address, chainId, registry: providers, challenge: cb.hash })).to.equal(r.binding).and.to.equal(q0.binding);
    const before = await getAttestationRequest(provider.public, { providerRegistry: providers, requestId: r.requestId });
    expect(before.committee).to.equal(undefined);
    expect(before.committeeUnavailable).to.equal("ProviderRegistrySeedNotReady");
    await mine(3);
    const preview = await getAttestationRequest(provider.public, { providerRegistry: providers, requestId: r.requestId });
    expect(preview.committee).to.have.length(3);
    await drawAttestationCommittee(other, { providerRegistry: providers, requestId: r.requestId });
    const q = await getAttestationRequest(provider.public, { providerRegistry: providers, requestId: r.requestId });
    expect(q.drawn).to.equal(true);
    expect(q.committee).to.deep.equal(preview.committee);
    const committee = q.committee!.map((a) => getAddress(a));
    const members = honest.filter((a) => committee.includes(getAddress(a.account.address)));
    expect(members).to.have.length(3);
    const att = await statement(r.requestId, provider, 2, 80);
    // signatures in any order: the action sorts them by signer
    await recordAttestation(other, { providerRegistry: providers, attestation: att, signatures: (await sign(att, members.slice(0, 2))).reverse() });
    expect(await provider.public.readContract({ address: providers, abi: providerRegistryAbi, functionName: "effectiveTier", args: [provider.account.address] })).to.equal(2);
    // one request per window: the provider cannot re-roll its committee at once
    await expectRevert(requestAttestation(provider, { providerRegistry: providers, evidenceHash: evidence(provider) }), "ProviderRegistryRequestOpen");
    // the record counts only while a quorum of its signers keeps its bond in the registry
    const signers = await provider.public.readContract({ address: providers, abi: providerRegistryAbi, functionName: "signersOf", args: [provider.account.address] });
    const leaver = honest.find((a) => getAddress(a.account.address) === getAddress(signers[0]!))!;
    await requestExit(leaver, { auditorRegistry: registry });
    expect(await provider.public.readContract({ address: providers, abi: providerRegistryAbi, functionName: "effectiveTier", args: [provider.account.address] })).to.equal(4);
  });

  it("burns the request fee, and refuses a request without it with ProviderRegistryFeeNotApproved", async () => {
    const fee = await admin.public.readContract({ address: providers, abi: providerRegistryAbi, functionName: "requestFee" });
    expect(fee).to.equal(DEFAULT_ATTESTATION_PARAMS.attestationRequestFee);
    const burn = await admin.public.readContract({ address: providers, abi: providerRegistryAbi, functionName: "BURN_ADDRESS" });
    const burned = async () => admin.public.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [burn] });
    const before = await burned();
    const e = await expectRevert(requestAttestation(admin, { providerRegistry: providers, evidenceHash: evidence(admin) }), "ProviderRegistryFeeNotApproved");
    expect(e.args).to.deep.equal([admin.account.address, 0n, fee]);
    const stranger = honest[0]!; // funded, has not approved the registry
    await approveToken(stranger, { token, spender: providers, amount: fee });
    await requestAttestation(stranger, { providerRegistry: providers, evidenceHash: evidence(stranger) });
    expect((await burned()) - before).to.equal(fee);
  });

  it("refuses the provider's own auditors, bonded after the fact, with ProviderRegistryNotCommitteeMember", async () => {
    // `other` plays the self-attesting provider: it bonds two auditors of its own, then requests at once
    for (const a of own) await postBond(a, { auditorRegistry: registry, amount: parseEther("1") });
    const r = await requestAttestation(other, { providerRegistry: providers, evidenceHash: evidence(other), sessionKey: other.account.address });
    await mine(3);
    const q = await getAttestationRequest(other.public, { providerRegistry: providers, requestId: r.requestId });
    for (const a of own) expect(q.committee!.map((x) => getAddress(x))).to.not.include(getAddress(a.account.address));
    const att = await statement(r.requestId, other, 1, 100);
    const e = await expectRevert(recordAttestation(other, { providerRegistry: providers, attestation: att, signatures: await sign(att, own) }), "ProviderRegistryNotCommitteeMember");
    expect(e.args[0]).to.equal(r.requestId);
    expect(await other.public.readContract({ address: providers, abi: providerRegistryAbi, functionName: "effectiveTier", args: [other.account.address] })).to.equal(4);
  });
});
