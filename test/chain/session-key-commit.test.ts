/**
 * A provider whose attested tier bound a session key commits its job's segments from that key only, through the chain
 * actions on a fresh in-process network deployed by deployMarket: requestAttestation declares the key, a committee
 * quorum records tier 1, acceptJob binds the key to the tenure (getCommitter), commitSegment from the provider's own
 * address reverts JobMarketNotSessionKey (with the readable revert text), and the same commit from the key's clients
 * lands.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { getAddress, keccak256, maxUint256, parseEther, toHex, type Address, type Hex, type LocalAccount } from "viem";
import {
  acceptJob,
  approveToken,
  commitSegment,
  ContractRevertError,
  createJob,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  deployMarket,
  devAccount,
  getAttestationRequest,
  getCommitter,
  getJob,
  mintTestToken,
  postBond,
  providerClients,
  providerRegistryAbi,
  rebindCommitter,
  recordAttestation,
  requestAttestation,
  stakeDeposit,
  type ChainClients,
  type JobPolicy,
} from "../../verifier/src/chain/index.ts";
import { providerRegistryDomain, signAttestationVerified } from "../../verifier/src/receipts/index.ts";
import { segmentHashes } from "../contracts/fixture.ts";

const policy: JobPolicy = {
  segments: 2,
  stepsPerSegment: 4,
  requiredStake: parseEther("5"),
  segmentTimeout: 3600,
  challengeWindow: 600,
  challengerBps: 5000,
  buyerBps: 3000,
  burnBps: 2000,
  timeoutSlashBps: 1000,
};

describe("chain: commits of a session-key-bound tenure (JobMarket.committerOf)", () => {
  let admin: ChainClients, buyer: ChainClients, provider: ChainClients, session: ChainClients, session2: ChainClients;
  let auditors: ChainClients[];
  let d: Awaited<ReturnType<typeof deployMarket>>;
  let conn: Awaited<ReturnType<typeof network.create>>;

  /** The provider requests attestation declaring `key`; two of its committee record tier 1 for 7 days. */
  async function attestTier1(key: Address, label: string) {
    const evidenceHash = keccak256(toHex(label));
    const r = await requestAttestation(provider, { providerRegistry: d.providerRegistry!, evidenceHash, sessionKey: key });
    await conn.networkHelpers.mine(3);
    const q = await getAttestationRequest(provider.public, { providerRegistry: d.providerRegistry!, requestId: r.requestId });
    const committee = q.committee!.map((a) => getAddress(a));
    const members = auditors.filter((a) => committee.includes(getAddress(a.account.address)));
    const now = BigInt(await conn.networkHelpers.time.latest());
    const att = { provider: provider.account.address, requestId: r.requestId, tier: 1, band: 90, evidenceHash, expiresAt: now + 7n * 86_400n, issuedAt: now };
    const domain = providerRegistryDomain(BigInt(d.chainId), d.providerRegistry!);
    const signatures = await Promise.all(members.slice(0, 2).map(async (s) => ({ signer: s.account.address as Address, signature: (await signAttestationVerified(s.account as LocalAccount, domain, att)) as Hex })));
    await recordAttestation(admin, { providerRegistry: d.providerRegistry!, attestation: att, signatures });
  }

  before(async () => {
    conn = await network.create();
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    [admin, buyer, provider, session, session2] = [mk(0), mk(1), mk(2), mk(9), mk(8)];
    auditors = [3, 4, 5, 6].map(mk);
    d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    for (const a of auditors) {
      await mintTestToken(a, { token: d.token, to: a.account.address, amount: parseEther("10") });
      await approveToken(a, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
      await postBond(a, { auditorRegistry: d.auditorRegistry, amount: parseEther("1") });
    }
    for (const c of [buyer, provider]) {
      await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("1000") });
      for (const spender of [d.jobMarket, d.stakeVault, d.providerRegistry!]) await approveToken(c, { token: d.token, spender, amount: maxUint256 });
    }
    await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("10") });
    await conn.networkHelpers.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
    // the provider's request declares the session key its (here: stand-in) evidence binds; a quorum records tier 1
    await attestTier1(session.account.address, "evidence bound to the session key");
    const [tier, key] = await provider.public.readContract({ address: d.providerRegistry!, abi: providerRegistryAbi, functionName: "tierAndSessionKey", args: [provider.account.address] });
    expect([tier, getAddress(key)]).to.deep.equal([1, getAddress(session.account.address)]);
  });

  it("binds the key at acceptJob; the provider's own commit is refused by name, the key's commit lands", async () => {
    const { jobId } = await createJob(buyer, { jobMarket: d.jobMarket, manifestHash: keccak256(toHex("m")), manifestUri: "cid:m", token: d.token, payment: parseEther("1"), policy });
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    expect(await getCommitter(buyer.public, { jobMarket: d.jobMarket, jobId })).to.equal(getAddress(session.account.address));
    const args = { jobMarket: d.jobMarket, jobId, segment: 0, stateHashes: segmentHashes(jobId, 0, 4).hashes, lossE6: 1n, checkpointCid: "cid:start" };
    let refused: unknown;
    try {
      await commitSegment(provider, args);
    } catch (err) {
      refused = err;
    }
    expect(refused, "the provider's own commit must revert").to.be.instanceOf(ContractRevertError);
    const e = refused as ContractRevertError;
    expect(e.errorName).to.equal("JobMarketNotSessionKey");
    expect(e.args).to.deep.equal([jobId, provider.account.address, getAddress(session.account.address)]);
    expect(e.message).to.include(`is not the session key ${getAddress(session.account.address)}`);
    await commitSegment(session, args);
    expect((await getJob(buyer.public, { jobMarket: d.jobMarket, jobId })).nextSegment).to.equal(1);
  });

  it("rebinds a running tenure to the re-attested key (rebindCommitter); a stranger's rebind is refused by name", async () => {
    const long = { ...policy, segmentTimeout: 3 * 86_400 };
    const { jobId } = await createJob(buyer, { jobMarket: d.jobMarket, manifestHash: keccak256(toHex("m2")), manifestUri: "cid:m2", token: d.token, payment: parseEther("1"), policy: long });
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    expect(await getCommitter(buyer.public, { jobMarket: d.jobMarket, jobId })).to.equal(getAddress(session.account.address));
    // the machine restarts: past the request window the provider re-attests with its new key
    await conn.networkHelpers.time.increase(2 * 86_400);
    await attestTier1(session2.account.address, "evidence bound to the new session key");
    let refused: unknown;
    try {
      await rebindCommitter(buyer, { jobMarket: d.jobMarket, jobId });
    } catch (err) {
      refused = err;
    }
    expect(refused, "a stranger's rebind must revert").to.be.instanceOf(ContractRevertError);
    expect((refused as ContractRevertError).errorName).to.equal("JobMarketNotProvider");
    await rebindCommitter(provider, { jobMarket: d.jobMarket, jobId });
    expect(await getCommitter(buyer.public, { jobMarket: d.jobMarket, jobId })).to.equal(getAddress(session2.account.address));
    await commitSegment(session2, { jobMarket: d.jobMarket, jobId, segment: 0, stateHashes: segmentHashes(jobId, 0, 4).hashes, lossE6: 1n, checkpointCid: "cid:start" });
    expect((await getJob(buyer.public, { jobMarket: d.jobMarket, jobId })).nextSegment).to.equal(1);
  });
});
