/**
 * A restarted provider on a local chain: its tenure was accepted at tier 1 with session key A bound (getCommitter); the
 * machine restarts, key A is gone, and the provider re-attests with key B. `runProviderJob` with B's clients
 * (`pouw provider run --session-key-file`) rebinds the tenure (JobMarket.rebindCommitter) and commits every segment
 * from B. Re-attested at a lower tier (3), the rebind is refused and the run stops before training with one line that
 * names the reason (JobMarketRebindTierTooLow), nothing committed.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAddress, keccak256, maxUint256, toHex, type Address, type Hex, type LocalAccount } from "viem";
import {
  acceptJob,
  approveToken,
  devAccount,
  getAttestationRequest,
  getCommitter,
  getJob,
  getSegmentCommits,
  recordAttestation,
  requestAttestation,
} from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { parseManifest, parseStrategy } from "../../verifier/src/ml/index.ts";
import { ProviderJobError, runProviderJob } from "../../verifier/src/provider/run-job.ts";
import { providerRegistryDomain, signAttestationVerified } from "../../verifier/src/receipts/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { botMarketPerFile } from "../bot/fixture.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
const caught = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe("provider: a restarted provider rebinds its tenure to its re-attested session key", function () {
  this.timeout(300_000);
  const market = botMarketPerFile(600);

  /** The provider's running tenure (tier 1, key A) and, after the request window, an open request declaring key B. */
  async function restarted(tag: string) {
    const { conn, mk, buyer, cheat: provider, auditors, d } = market();
    const registry = d.providerRegistry!;
    const [keyA, keyB] = [mk(10), mk(11)];
    await approveToken(provider, { token: d.token, spender: registry, amount: maxUint256 });
    const request = async (key: Address, label: string) => {
      const evidenceHash = keccak256(toHex(label));
      const r = await requestAttestation(provider, { providerRegistry: registry, evidenceHash, sessionKey: key });
      await conn.networkHelpers.mine(3);
      return { requestId: r.requestId, evidenceHash, asOf: r.asOf };
    };
    /** Two of the request's committee sign `tier` for 7 days (stand-in evidence: the committee's checks are tested elsewhere). */
    const record = async (r: { requestId: bigint; evidenceHash: Hex }, tier: number, band: number) => {
      const q = await getAttestationRequest(provider.public, { providerRegistry: registry, requestId: r.requestId });
      const committee = q.committee!.map((a) => getAddress(a));
      const members = auditors.filter((a) => committee.includes(getAddress(a.account.address)));
      const now = BigInt(await conn.networkHelpers.time.latest());
      const att = { provider: provider.account.address, requestId: r.requestId, tier, band, evidenceHash: r.evidenceHash, expiresAt: now + 7n * 86_400n, issuedAt: now };
      const domain = providerRegistryDomain(BigInt(d.chainId), registry);
      const signatures = await Promise.all(members.slice(0, 2).map(async (s) => ({ signer: s.account.address as Address, signature: (await signAttestationVerified(s.account as LocalAccount, domain, att)) as Hex })));
      await recordAttestation(provider, { providerRegistry: registry, attestation: att, signatures });
    };
    await record(await request(keyA.account.address, `${tag}: evidence bound to key A`), 1, 90);
    // the next request needs the request window to pass; it is opened before the job so the tenure stays young
    await conn.networkHelpers.time.increase(2 * 86_400);
    const second = await request(keyB.account.address, `${tag}: evidence bound to key B, after the restart`);
    const dir = mkdtempSync(join(tmpdir(), `pouw-rebind-${tag}-`));
    const store = new LocalDirStore(join(dir, "store"));
    const board = new SegmentBoard(join(dir, "board"), store);
    const m = parseManifest(tiny);
    const quoted = await jobPolicyFor(m, {});
    const { jobId } = await postJob(buyer, d, store, m, quoted.policy, quoted.payment);
    await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
    expect(await getCommitter(buyer.public, { jobMarket: d.jobMarket, jobId })).to.equal(getAddress(keyA.account.address));
    const ctx = { clients: provider, deployment: d, store, board, stateDir: join(dir, "state"), sessionClients: keyB };
    return { ...market(), ctx, jobId, keyB, second, record, segments: quoted.policy.segments };
  }

  it("re-attested at the tenure's tier: runProviderJob rebinds to key B and commits every segment from it", async () => {
    const { ctx, jobId, keyB, second, record, admin, d, segments } = await restarted("same-tier");
    await record(second, 1, 90);
    const r = await runProviderJob(ctx, jobId, { strategy: parseStrategy("honest") });
    expect(r.committed).to.deep.equal([...Array(segments).keys()]);
    expect(await getCommitter(admin.public, { jobMarket: d.jobMarket, jobId })).to.equal(getAddress(keyB.account.address));
    expect((await getJob(admin.public, { jobMarket: d.jobMarket, jobId })).nextSegment).to.equal(segments);
    const senders = await Promise.all(r.txs.map(async (t) => getAddress((await admin.public.getTransaction({ hash: t.hash })).from)));
    expect(new Set(senders)).to.deep.equal(new Set([getAddress(keyB.account.address)]));
  });

  it("re-attested at a lower tier (3): the rebind is refused, one line names JobMarketRebindTierTooLow, nothing is committed", async () => {
    const { ctx, jobId, second, record, admin, d, cheat } = await restarted("lower-tier");
    await record(second, 3, 69);
    const err = await caught(runProviderJob(ctx, jobId, { strategy: parseStrategy("honest") }));
    expect(err).to.be.instanceOf(ProviderJobError);
    const msg = (err as ProviderJobError).message;
    expect(msg.split("\n"), msg).to.have.length(1);
    expect(msg).to.match(new RegExp(`^job ${jobId} is bound to session key 0x[0-9a-fA-F]{40}, not this provider's ${getAddress(ctx.sessionClients.account.address)}, and the rebind was refused: `));
    expect(msg).to.include(`provider ${getAddress(cheat.account.address)}'s current record counts as tier 3 for job ${jobId}, weaker than the tier 1 its tenure was accepted at: no rebind [JobMarketRebindTierTooLow]`);
    expect(await getSegmentCommits(admin.public, { jobMarket: d.jobMarket, jobId, fromBlock: BigInt(d.startBlock) })).to.deep.equal([]);
  });
});
