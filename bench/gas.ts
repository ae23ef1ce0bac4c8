/**
 * Gas of every external state-changing function of the market contracts on the happy path, and of whole
 * job lifecycles (createJob + acceptJob + N x commitSegment + finalize + the provider's claim) for
 * N = 1, 10, 100 segments, on a market wired to ProviderRegistry and DataRegistry (so acceptJob pays the
 * tier lookup), plus a 10-segment lifecycle with terms (createJobWithTerms with two corpora and a 20%
 * data share, a tier-1 provider, finalize crediting both corpora). Prints a table and writes bench/results/gas.json,
 * which also lists every deployable contract's runtime code size in bytes (`runtimeBytes.<Contract>`, from the artifacts;
 * test/contracts/sizes.test.ts keeps each <= 90% of the EIP-170 limit of 24,576).
 *
 * Run: npm run bench:gas   (hardhat run bench/gas.ts; fresh in-process network)
 *
 * Role-gated functions (lock, unlock, slash, forfeit, freeze, settle*) are measured from an EOA holding
 * the role, so the figures exclude any caller contract's own overhead. Gas is the receipt's gasUsed
 * (including the 21,000 intrinsic gas and calldata).
 */
import { writeFileSync, mkdirSync } from "node:fs";
import { network } from "hardhat";
import { segmentHashes } from "../test/contracts/fixture.ts";
import { deployables, runtimeBytes } from "../test/contracts/sizes.ts";
import { keccak256, maxUint256, parseEther, toHex, type Hash } from "viem";
import { SegmentTree } from "../verifier/src/trace/index.ts";

const CID = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi"; // a CIDv1 (59 chars)
const MANIFEST_URI = `ipfs://${CID}`;
const HOUR = 3600;
const DAY = 86400;

const { viem, networkHelpers } = await network.create();
const publicClient = await viem.getPublicClient();
const wallets = await viem.getWalletClients();
const wallet = (i: number) => {
  const w = wallets[i];
  if (!w) throw new Error(`need at least ${i + 1} accounts`);
  return w;
};
type W = ReturnType<typeof wallet>;
const [admin, buyer, provider, challenger, auditor, auditor2, auditor3, contributor, auditor4] = [0, 1, 2, 3, 4, 5, 6, 7, 8].map(wallet) as [W, W, W, W, W, W, W, W, W];

const token = await viem.deployContract("TestToken", ["Test", "TST"]);
const vault = await viem.deployContract("StakeVault", [token.address, BigInt(7 * DAY), admin.account.address]);
const registry = await viem.deployContract("AuditorRegistry", [token.address, parseEther("100"), BigInt(14 * DAY), 3600n, admin.account.address]);
const market = await viem.deployContract("JobMarket", [vault.address, admin.account.address]);
const records = await viem.deployContract("JobRecords", [market.address]);
// committees of 3, quorum 2, 2-block seed, 1-day request window, 1-token request fee (the deployment defaults)
const providers = await viem.deployContract("ProviderRegistry", [registry.address, 3n, 2n, BigInt(30 * DAY), 2, BigInt(DAY), parseEther("1")]);
const data = await viem.deployContract("DataRegistry", []);
// Roles are wired once (no admin afterwards); here `admin` stands in for DisputeGame (slasher, dispute roles) so
// the role-gated calls can be measured directly.
await vault.write.wire([market.address, admin.account.address]);
await registry.write.wire([admin.account.address]);
for (const w of [buyer, provider, challenger, auditor, auditor2, auditor3, auditor4]) {
  await token.write.mint([w.account.address, parseEther("1000000000")]);
  for (const spender of [market.address, vault.address, registry.address, providers.address]) {
    await token.write.approve([spender, maxUint256], { account: w.account });
  }
}

async function gas(tx: Promise<Hash>): Promise<number> {
  const receipt = await publicClient.waitForTransactionReceipt({ hash: await tx });
  if (receipt.status !== "success") throw new Error("transaction reverted");
  return Number(receipt.gasUsed);
}

/** Steps per segment of the measured jobs: each commit carries K+1 state hashes in calldata. */
const K = 32;
const policy = (segments: number, k = K) => ({
  segments,
  stepsPerSegment: k,
  requiredStake: parseEther("10"),
  segmentTimeout: HOUR,
  challengeWindow: DAY,
  challengerBps: 5_000,
  buyerBps: 3_000,
  burnBps: 2_000,
  timeoutSlashBps: 1_000,
});
let jobs = 0n;
async function createJob(segments: number, k = K): Promise<{ id: bigint; gas: number }> {
  const g = await gas(
    market.write.createJob([keccak256(toHex(`manifest-${jobs}`)), MANIFEST_URI, token.address, parseEther("50"), policy(segments, k)], {
      account: buyer.account,
    }),
  );
  jobs += 1n;
  return { id: jobs, gas: g };
}
const commit = (id: bigint, s: number, k = K) =>
  gas(
    market.write.commitSegment([id, BigInt(s), segmentHashes(id, s, k).hashes, 2_302_585n, CID], {
      account: provider.account,
    }),
  );

const results: Record<string, number> = {};

// Wiring as the Ignition module does it; every lifecycle below runs against the wired market (acceptJob
// reads the provider's tier from the ProviderRegistry).
results["JobMarket.setRegistries"] = await gas(market.write.setRegistries([registry.address, providers.address, data.address]));
await market.write.wire([admin.account.address, admin.account.address]);

// StakeVault (the first deposit creates the provider's account; a second one is a top-up).
results["StakeVault.deposit"] = await gas(vault.write.deposit([parseEther("1000")], { account: provider.account }));
results["StakeVault.requestWithdrawal"] = await gas(vault.write.requestWithdrawal([parseEther("1")], { account: provider.account }));
await networkHelpers.time.increase(7 * DAY);
results["StakeVault.withdraw"] = await gas(vault.write.withdraw({ account: provider.account }));

// Lifecycles: create + accept + N commits + finalize + provider claim.
for (const n of [1, 10, 100]) {
  const created = await createJob(n);
  let total = created.gas;
  total += await gas(market.write.acceptJob([created.id], { account: provider.account }));
  const commits: number[] = [];
  for (let s = 0; s < n; s++) commits.push(await commit(created.id, s));
  total += commits.reduce((a, b) => a + b, 0);
  await networkHelpers.time.increase(DAY + 1);
  const fin = await gas(market.write.finalize([created.id], { account: buyer.account }));
  total += fin;
  const claim = await gas(market.write.claim([token.address], { account: provider.account }));
  total += claim;
  results[`lifecycle.segments=${n}`] = total;
  if (n === 10) {
    results["JobMarket.createJob"] = created.gas;
    results["JobMarket.commitSegment"] = commits[1]!;
    results["JobMarket.commitSegment(first)"] = commits[0]!;
    results["JobMarket.commitSegment(last)"] = commits[n - 1]!;
    results["JobMarket.finalize"] = fin;
    results["JobMarket.claim"] = claim;
  }
}
{
  const { id } = await createJob(3);
  results["JobMarket.acceptJob"] = await gas(market.write.acceptJob([id], { account: provider.account }));
  await commit(id, 0);
  await networkHelpers.time.increase(HOUR + 1);
  // segment 0 was committed in this tenure: the timeout leaves the job TimedOut for a challenge window
  results["JobMarket.reportTimeout"] = await gas(market.write.reportTimeout([id], { account: challenger.account }));
  await networkHelpers.time.increase(DAY + 1);
  results["JobMarket.reopenJob"] = await gas(market.write.reopenJob([id], { account: challenger.account }));
  results["JobMarket.acceptJob(re-opened)"] = await gas(market.write.acceptJob([id], { account: provider.account }));
  results["JobMarket.freeze"] = await gas(market.write.freeze([id]));
  results["JobMarket.settleNoFault"] = await gas(market.write.settleNoFault([id, false]));
  await market.write.freeze([id]);
  results["JobMarket.settleProviderFault"] = await gas(market.write.settleProviderFault([id]));
}
// commitSegment against K (the K+1 state hashes travel in calldata; the market hashes them into the segment root and
// stores one slot): a steady-state commit (segment 1) at K = 4, 32, 50, 128, 512, with the EIP-7623 calldata floor of
// each transaction (21,000 + 10 gas per calldata token, a non-zero byte 4 tokens): the receipt's gas is the larger of
// the standard price and the floor. Per step: the least-squares slope over K = 4, 32, 50 (where the standard price
// binds), and the slope from K = 128 to 512 (where the floor binds: 32 non-zero bytes a leaf, 1,280 gas).
{
  const ks = [4, 32, 50, 128, 512];
  const byK: number[] = [];
  for (const k of ks) {
    const { id } = await createJob(2, k);
    await market.write.acceptJob([id], { account: provider.account });
    await commit(id, 0, k);
    const hash = await market.write.commitSegment([id, 1n, segmentHashes(id, 1, k).hashes, 2_302_585n, CID], { account: provider.account });
    const g = await gas(Promise.resolve(hash));
    const tx = await publicClient.getTransaction({ hash });
    const bytes = Buffer.from(tx.input.slice(2), "hex");
    const tokens = bytes.reduce((n, b) => n + (b === 0 ? 1 : 4), 0);
    results[`JobMarket.commitSegment(K=${k})`] = g;
    results[`JobMarket.commitSegment(K=${k}).calldataFloor`] = 21_000 + 10 * tokens;
    byK.push(g);
  }
  const fit = [0, 1, 2].map((i) => ({ x: ks[i]! + 1, y: byK[i]! }));
  const mx = fit.reduce((a, p) => a + p.x, 0) / fit.length;
  const my = fit.reduce((a, p) => a + p.y, 0) / fit.length;
  const slope = fit.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / fit.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  results["JobMarket.commitSegment.perStep"] = Math.round(slope);
  results["JobMarket.commitSegment.fixed"] = Math.round(my - slope * mx);
  results["JobMarket.commitSegment.perStep(K>=128)"] = Math.round((byK[4]! - byK[3]!) / (ks[4]! - ks[3]!));
}
{
  const { id } = await createJob(1);
  results["JobMarket.cancelJob"] = await gas(market.write.cancelJob([id], { account: buyer.account }));
}
// the fault slash credited the challenger share to the dispute role (admin here) and the buyer share to the buyer
results["StakeVault.claim"] = await gas(vault.write.claim({ account: admin.account }));

// StakeVault role-gated functions, called directly by role holders (the market's address impersonated: its
// MARKET_ROLE cannot be granted to anyone else).
await networkHelpers.impersonateAccount(market.address);
await networkHelpers.setBalance(market.address, parseEther("1"));
results["StakeVault.lock"] = await gas(vault.write.lock([provider.account.address, 999n, parseEther("5")], { account: market.address }));
results["StakeVault.slash"] = await gas(
  vault.write.slash([provider.account.address, 999n, parseEther("2"), [challenger.account.address, buyer.account.address], [parseEther("1"), parseEther("1")]]),
);
results["StakeVault.unlock"] = await gas(vault.write.unlock([provider.account.address, 999n], { account: market.address }));

// AuditorRegistry.
results["AuditorRegistry.postBond"] = await gas(registry.write.postBond([parseEther("150")], { account: auditor.account }));
results["AuditorRegistry.forfeit"] = await gas(registry.write.forfeit([auditor.account.address, parseEther("10"), challenger.account.address]));
results["AuditorRegistry.claim"] = await gas(registry.write.claim({ account: challenger.account }));
results["AuditorRegistry.requestExit"] = await gas(registry.write.requestExit({ account: auditor.account }));
await networkHelpers.time.increase(14 * DAY);
results["AuditorRegistry.leave"] = await gas(registry.write.leave({ account: auditor.account }));

// Terms: attestation tiers, corpora, data shares, receipts, provenance.
{
  // Three auditors bond (the whole committee of 3, drawn after the activation delay); two of them sign an
  // AttestationVerified for the provider's request (tier 1), ascending by address.
  for (const a of [auditor2, auditor3, auditor4]) await registry.write.postBond([parseEther("100")], { account: a.account });
  await networkHelpers.time.increase(3600);
  const evidenceHash = keccak256(toHex("evidence"));
  results["ProviderRegistry.requestAttestation"] = await gas(providers.write.requestAttestation([evidenceHash, (await publicClient.getBlockNumber()), [], provider.account.address], { account: provider.account }));
  const requestId = await providers.read.lastRequestOf([provider.account.address]);
  await networkHelpers.mine(3);
  results["ProviderRegistry.drawCommittee(3 of 3)"] = await gas(providers.write.drawCommittee([requestId], { account: challenger.account }));
  const signers = [auditor2, auditor3].sort((a, b) => (BigInt(a.account.address) < BigInt(b.account.address) ? -1 : 1));
  const chainId = BigInt(await publicClient.getChainId());
  const att = {
    provider: provider.account.address,
    requestId,
    tier: 1,
    band: 100,
    evidenceHash,
    expiresAt: BigInt(await networkHelpers.time.latest()) + BigInt(7 * DAY),
    issuedAt: BigInt(await networkHelpers.time.latest()),
  };
  const attDomain = { name: "PoUW ProviderRegistry", version: "1", chainId, verifyingContract: providers.address };
  const attTypes = { AttestationVerified: [{ name: "provider", type: "address" }, { name: "requestId", type: "uint256" }, { name: "tier", type: "uint8" }, { name: "band", type: "uint8" }, { name: "evidenceHash", type: "bytes32" }, { name: "expiresAt", type: "uint64" }, { name: "issuedAt", type: "uint64" }] } as const;
  const sigs = await Promise.all(signers.map((a) => a.signTypedData({ account: a.account, domain: attDomain, types: attTypes, primaryType: "AttestationVerified", message: att })));
  results["ProviderRegistry.record(quorum 2 of a drawn 3)"] = await gas(providers.write.record([att, sigs], { account: challenger.account }));

  results["DataRegistry.register"] = await gas(
    data.write.register([keccak256(toHex("corpus-1")), CID, "CC-BY-4.0", contributor.account.address, keccak256(toHex("terms"))], { account: contributor.account }),
  );
  await data.write.register([keccak256(toHex("corpus-2")), CID, "CC0-1.0", challenger.account.address, keccak256(toHex("terms"))], { account: contributor.account });
  // Only the payout address moves its payout: corpus 2 pays the challenger, who moves it to the contributor.
  results["DataRegistry.setPayout"] = await gas(data.write.setPayout([2n, contributor.account.address], { account: challenger.account }));

  // A 10-segment lifecycle with two corpora and a 20% data share, accepted by the tier-1 provider.
  const terms = { minTier: 1, dataShareBps: 2_000, corpora: [{ corpusId: 1n, tokens: 1_000_000n }, { corpusId: 2n, tokens: 3_000_000n }] };
  const createG = await gas(
    market.write.createJobWithTerms([keccak256(toHex("manifest-terms")), MANIFEST_URI, token.address, parseEther("50"), policy(10), terms], { account: buyer.account }),
  );
  jobs += 1n;
  const id = jobs;
  results["JobMarket.createJobWithTerms(corpora=2)"] = createG;
  results["JobMarket.recordImprovement"] = await gas(market.write.recordImprovement([id, 2n, 500_000]));
  const acceptG = await gas(market.write.acceptJob([id], { account: provider.account }));
  results["JobMarket.acceptJob(tier=1)"] = acceptG;
  let commits = 0;
  for (let s = 0; s < 10; s++) commits += await commit(id, s);
  const receipt = { jobId: id, segment: 0, traceRoot: segmentHashes(id, 0, K).root, checks: 5, sampledSteps: 32, verdict: 0 };
  const rDomain = { name: "PoUW JobMarket", version: "1", chainId, verifyingContract: records.address };
  const rTypes = { AuditReceipt: [{ name: "jobId", type: "uint256" }, { name: "segment", type: "uint32" }, { name: "traceRoot", type: "bytes32" }, { name: "checks", type: "uint32" }, { name: "sampledSteps", type: "uint32" }, { name: "verdict", type: "uint8" }] } as const;
  const rSig = await auditor2.signTypedData({ account: auditor2.account, domain: rDomain, types: rTypes, primaryType: "AuditReceipt", message: receipt });
  results["JobRecords.recordReceipt"] = await gas(records.write.recordReceipt([receipt, segmentHashes(id, 0, K).end, rSig], { account: challenger.account }));
  await networkHelpers.time.increase(DAY + 1);
  const fin = await gas(market.write.finalize([id], { account: buyer.account }));
  results["JobMarket.finalize(corpora=2)"] = fin;
  const claim = await gas(market.write.claim([token.address], { account: provider.account }));
  results["lifecycle.segments=10,corpora=2"] = createG + acceptG + commits + fin + claim;
  results["JobRecords.anchorProvenance"] = await gas(
    records.write.anchorProvenance([id, keccak256(toHex("provenance")), CID], { account: provider.account }),
  );
  results["DataRegistry.retire"] = await gas(data.write.retire([2n], { account: contributor.account }));
}

/**
 * Panel draws against the number of listed auditors: for n = 10, 100, 1,000 and 10,000 a fresh AuditorRegistry with
 * n bonded auditors (contracts, bonded in batches by mocks/AuditorCrowd.sol), three non-member addresses excluded
 * (DisputeGame excludes provider, challenger and buyer). The gas is that of the drawPanel call made from a contract
 * (AuditorCrowd.measureDraw: what DisputeGame pays inside its own transaction, cold storage included), at k = 3, 7
 * and every eligible auditor where that fits a block; "quiet" draws at a snapshot nothing changed after, "after
 * exits" draws at the same snapshot once every 10th auditor has requested exit (each exit adds a checkpoint to the
 * tree nodes over its slot, which a draw at the older snapshot searches). Also requestExit of slot 1 (the most tree
 * nodes) and a postBond at each n.
 */
async function drawRows(): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  const others = [buyer, provider, challenger].map((w) => w.account.address);
  const BOND = parseEther("100");
  const BATCH = 40;
  for (const n of [10, 100, 1_000, 10_000]) {
    const reg = await viem.deployContract("AuditorRegistry", [token.address, BOND, BigInt(14 * DAY), 3600n, admin.account.address]);
    const crowd = await viem.deployContract("AuditorCrowd", [token.address, reg.address]);
    for (let done = 0; done < n; done += BATCH) await crowd.write.bond([BigInt(Math.min(BATCH, n - done)), BOND]);
    await networkHelpers.time.increase(HOUR + 10);
    const asOf = BigInt(await networkHelpers.time.latest()) - 1n;
    const have = Number(await reg.read.poolSize([asOf, others]));
    if (have !== n) throw new Error(`pool ${have}, expected ${n}`);
    const draw = async (k: number, label: string) => {
      await crowd.write.measureDraw([keccak256(toHex(`draw-${n}-${k}`)), BigInt(k), others, asOf]);
      rows[`AuditorRegistry.drawPanel(n=${n},k=${label})`] = Number(await crowd.read.lastDrawGas());
    };
    await draw(3, "3");
    await draw(7, "7");
    // every eligible auditor (k = n): n seats of O(log n) reads each; at 10,000 it would not fit a test block
    if (n <= 1_000) await draw(n, "all");
    // every 10th auditor exits after the snapshot (slot 1 first, measured alone: its exit updates the most nodes)
    await token.write.mint([admin.account.address, BOND]);
    await token.write.approve([reg.address, maxUint256]);
    rows[`AuditorRegistry.postBond(n=${n})`] = await gas(reg.write.postBond([BOND]));
    rows[`AuditorRegistry.requestExit(slot 1 of n=${n}, via AuditorCrowd)`] = await gas(crowd.write.exitEvery([0n, BigInt(n), 1n]));
    for (let first = 10; first < n; first += 10 * 100) await crowd.write.exitEvery([BigInt(first), 10n, 100n]);
    await draw(3, "3,after exits");
    await draw(7, "7,after exits");
  }
  return rows;
}
// StateOpenings (the deploy defaults: 6-hour answer window, 10 minutes per queued opening): a bonded auditor (auditor2,
// bonded above) asks for state 60 of segment 1 of a committed K = 50 job; the provider answers with the CID and the
// leaf's proof.
{
  const openings = await viem.deployContract("StateOpenings", [market.address, BigInt(6 * HOUR), 600n]);
  const k = 50;
  const { id } = await createJob(2, k);
  await market.write.acceptJob([id], { account: provider.account });
  await commit(id, 0, k);
  await commit(id, 1, k);
  results["StateOpenings.requestOpening"] = await gas(openings.write.requestOpening([id, 1n, 60n], { account: auditor2.account }));
  const seg = segmentHashes(id, 1, k);
  const tree = new SegmentTree(k, seg.hashes);
  results["StateOpenings.answerOpening(K=50)"] = await gas(
    openings.write.answerOpening([id, 60n, CID, seg.root, seg.end, seg.hashes[10]!, tree.proof(60)], { account: provider.account }),
  );
}
Object.assign(results, await drawRows());
for (const [source, name] of deployables()) results[`runtimeBytes.${name}`] = runtimeBytes(source, name);

const sorted = Object.fromEntries(Object.entries(results).sort(([a], [b]) => a.localeCompare(b)));
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(new URL("./results/gas.json", import.meta.url), JSON.stringify(sorted, null, 2) + "\n");

// Targets, as the leaves travel in calldata: a commit costs a fixed part plus a part per step (calldata
// 16 gas/byte, the SegmentCommitted event's copy 8 gas/byte, the leaf and tree hashing in assembly), so the targets are
// per step, at K <= 50 (above it the EIP-7623 calldata floor, 1,280 gas a leaf, binds: docs/eip4844.md); a 10-segment
// lifecycle at K = 32 gets the old 1,000,000 plus 10 x 33 steps at the per-step target.
const PER_STEP_TARGET = 1_000;
const targets: Record<string, number> = {
  "JobMarket.commitSegment.fixed": 70_000,
  "JobMarket.commitSegment.perStep": PER_STEP_TARGET,
  "lifecycle.segments=10": 1_000_000 + 10 * (K + 1) * PER_STEP_TARGET,
};
const width = Math.max(...Object.keys(sorted).map((k) => k.length));
console.log(`${"function".padEnd(width)}  ${"gas".padStart(10)}  target`);
for (const [k, v] of Object.entries(sorted)) {
  const t = targets[k];
  const mark = t === undefined ? "" : `<= ${t.toLocaleString("en-US")} ${v <= t ? "ok" : "OVER"}`;
  console.log(`${k.padEnd(width)}  ${v.toLocaleString("en-US").padStart(10)}  ${mark}`);
}
console.log("wrote bench/results/gas.json");
