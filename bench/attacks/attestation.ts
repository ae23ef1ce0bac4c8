/**
 * The attestation rows of bench/attacks.ts: a cheating provider against ProviderRegistry's committees, device ledger
 * and statement disputes, and against the evidence checks the honest committee members run (attest/index.ts
 * attestRequest: each member verifies the bundle itself, with its own device ledger in its own directory, and signs
 * what it verified; attest/dispute.ts judgeStatement: a dispute panel member re-verifies at the statement's time).
 *
 * Every row ends with no tier the evidence does not support standing on chain: either the committee records the tier
 * the evidence supports (capped, or tier 4 with the reason), or the step is refused by a named revert, or a recorded
 * false statement is disputed by the honest challenger, revoked, and its signers forfeit their bonds.
 *
 * Pool: 12 bonded auditors (H1..H5, S1..S5 honest; sybilA, sybilB the attacker's) unless a row says otherwise;
 * deployment attestation defaults (committee 3, quorum 2, 1-token request fee, 24 h request window); bonds 20,
 * minimum bond (the statement dispute bond) 10. NVIDIA and SEV-SNP evidence is made with the test roots of
 * test/checks/nras-fixture.ts and snp-fixture.ts (docs/checks.md: which fields are checked only against test keys).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAddress, keccak256, maxUint256, type Address, type Hex, type LocalAccount } from "viem";
import { attestRequest, deviceIdHash, prepareAttestation } from "../../verifier/src/attest/index.ts";
import { judgeStatement } from "../../verifier/src/attest/dispute.ts";
import {
  acceptJob,
  approveToken,
  claimAttestationCredit,
  disputeStatement,
  drawAttestationCommittee,
  drawStatementDisputePanel,
  getAcceptTerms,
  getAttestationRequest,
  getAuditor,
  getCommitter,
  getLockedStake,
  getProviderAttestation,
  getRequestFee,
  getStatementDispute,
  providerRegistryAbi,
  recordAttestation,
  requestAttestation,
  retier,
  settleStatementDispute,
  voteStatementDispute,
} from "../../verifier/src/chain/index.ts";
import { evidenceNonce, GPU_ONLY_TIER, parseDer, type EvidenceTrust, type SevSnpPolicy } from "../../verifier/src/checks/attestation/index.ts";
import { providerRegistryDomain, signAttestationVerified, type AttestationVerified } from "../../verifier/src/receipts/index.ts";
import { makeNras, newSessionKey, nvidiaBundle, sessionProof } from "../../test/checks/nras-fixture.ts";
import { makeSnpChain, snpReport, type Tcb } from "../../test/checks/snp-fixture.ts";
import { AttackSucceeded, everyone, measure, newWorld, postGameJob, refused, snapshot, tokens, type Actor, type ActorName, type Row, type World } from "./world.ts";

const NO_TRACE = "-";
const HONEST: readonly ActorName[] = ["H1", "H2", "H3", "H4", "H5", "S1", "S2", "S3", "S4", "S5"];
const SYBILS: readonly ActorName[] = ["sybilA", "sybilB"];
/** Requests the sybil rows buy at most before giving up (p = 10/220 per request: 200 misses are ~1e-4). */
const MAX_REQUESTS = 200;
const TIER1_STAKE_FACTOR = 0.5;
const SNP_TCB: Tcb = { bl: 3, tee: 0, snp: 8, ucode: 115 };
const DAY = 86_400;

const dirs: string[] = [];
const workDir = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `pouw-bench-attest-${tag}-`));
  dirs.push(d);
  return d;
};
function cleanup() {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

async function attestWorld(auditors: readonly ActorName[] = [...HONEST, ...SYBILS]): Promise<World> {
  const w = await newWorld({ auditors });
  for (const n of ["provider", "contributor", "honestChallenger", "squatter"] as const) await approveToken(w.a[n].c, { token: w.d.token, spender: w.d.providerRegistry, amount: maxUint256 });
  return w;
}

const nameOf = (w: World, a: Address) => Object.values(w.a).find((x) => x.address === getAddress(a))?.name ?? a;
const actorAt = (w: World, a: Address): Actor => {
  const x = Object.values(w.a).find((y) => y.address === getAddress(a));
  if (!x) throw new Error(`${a} is not a bench actor`);
  return x;
};
const chainDate = async (w: World) => new Date(Number(await w.now()) * 1000);

/** Draws request `requestId`'s committee once its seed block is mined. */
async function draw(w: World, requestId: bigint): Promise<Address[]> {
  const q = await getAttestationRequest(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, requestId });
  const head = await w.a.buyer.c.public.getBlockNumber({ cacheTime: 0 });
  if (head <= q.seedBlock) await w.mine(Number(q.seedBlock - head) + 1);
  await drawAttestationCommittee(w.a.buyer.c, { providerRegistry: w.d.providerRegistry, requestId });
  const drawn = await getAttestationRequest(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, requestId });
  return (drawn.committee ?? []).map((x) => getAddress(x));
}

/**
 * The attacker buys requests for garbage evidence until both its auditors sit on one committee (each miss: the
 * request window passes, the next request burns another fee). Returns the landed request and the count bought.
 */
async function landSybilCommittee(w: World, garbage: Uint8Array): Promise<{ requestId: bigint; requests: number; committee: Address[] }> {
  const sybils = SYBILS.map((n) => w.a[n].address);
  for (let i = 1; i <= MAX_REQUESTS; i++) {
    await w.mine(1);
    const r = await requestAttestation(w.a.provider.c, { providerRegistry: w.d.providerRegistry, evidenceHash: keccak256(garbage), sessionKey: w.a.provider.address });
    const committee = await draw(w, r.requestId);
    if (sybils.every((s) => committee.includes(s))) return { requestId: r.requestId, requests: i, committee };
    await w.warpTo(r.deadline + 1n);
  }
  throw new Error(`the sybils landed no committee in ${MAX_REQUESTS} requests`);
}

/** The sybils sign and record tier 1 band 90 for `requestId` (what a colluding quorum can always do). */
async function recordForgery(w: World, requestId: bigint, evidenceHash: Hex): Promise<void> {
  const now = await w.now();
  const att: AttestationVerified = { provider: w.a.provider.address, requestId, tier: 1, band: 90, evidenceHash, expiresAt: now + 7n * BigInt(DAY), issuedAt: now };
  const domain = providerRegistryDomain(BigInt(w.d.chainId), w.d.providerRegistry);
  const signers = SYBILS.map((n) => w.a[n]).sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));
  const signatures = await Promise.all(signers.map(async (x) => ({ signer: x.address, signature: await signAttestationVerified(x.c.account as LocalAccount, domain, att) })));
  await recordAttestation(w.a.provider.c, { providerRegistry: w.d.providerRegistry, attestation: att, signatures });
  const a = await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address });
  if (a.effectiveTier !== 1) throw new Error(`the forged record did not stand (effective tier ${a.effectiveTier})`);
}

/**
 * The honest challenger disputes the provider's standing statement; the panel (drawn without the signers) re-verifies
 * the bundle with judgeStatement and votes until the dispute settles. Returns the outcome, the false/true votes and
 * the panel's names.
 */
async function playStatementDispute(w: World, bundle: Uint8Array, trust: EvidenceTrust, challenger: Actor, currentTrust?: EvidenceTrust): Promise<{ outcome: string; votes: string; panel: string }> {
  const reg = w.d.providerRegistry;
  const { disputeId, seedBlock } = await disputeStatement(challenger.c, { providerRegistry: reg, provider: w.a.provider.address, bundle });
  const head = await w.a.buyer.c.public.getBlockNumber({ cacheTime: 0 });
  if (head <= seedBlock) await w.mine(Number(seedBlock - head) + 1);
  const { panel } = await drawStatementDisputePanel(w.a.buyer.c, { providerRegistry: reg, disputeId });
  for (const m of panel) {
    const d = await getStatementDispute(w.a.buyer.c.public, { providerRegistry: reg, disputeId });
    if (d.outcome !== "open") break;
    const member = actorAt(w, m);
    if (!HONEST.includes(member.name as ActorName)) throw new AttackSucceeded(`${member.name} (the attacker's) sits on the panel of its own statement`);
    const j = await judgeStatement(member.c.public, { providerRegistry: reg, disputeId, bundle, trust, currentTrust });
    await voteStatementDispute(member.c, { providerRegistry: reg, disputeId, statementFalse: j.statementFalse, revokedSince: j.revokedSince });
  }
  const d = await getStatementDispute(w.a.buyer.c.public, { providerRegistry: reg, disputeId });
  // the challenger's bond comes back as a ProviderRegistry credit whatever the outcome but "rejected" (burned)
  if (d.outcome !== "rejected") await claimAttestationCredit(challenger.c, { providerRegistry: reg });
  return { outcome: d.outcome, votes: `${d.falseVotes}-${d.trueVotes}`, panel: panel.map((x) => nameOf(w, x)).join(", ") };
}

async function bondsOf(w: World, names: readonly ActorName[]): Promise<bigint> {
  let sum = 0n;
  for (const n of names) sum += (await getAuditor(w.a.buyer.c.public, { auditorRegistry: w.d.auditorRegistry, auditor: w.a[n].address })).bond;
  return sum;
}

const garbageBundle = () => Buffer.from(JSON.stringify({ version: 1, evidence: { format: "nvidia-eat", eat: "nothing" } }));

/** Sybil committee: 2 attacker auditors of 12 buy requests until they make a committee's quorum, record tier 1 for garbage, and are disputed. */
export async function sybilCommittee(): Promise<Row> {
  const w = await attestWorld();
  try {
    const nras = await makeNras();
    const s = { side: [w.a.provider, ...SYBILS.map((n) => w.a[n])], challenger: w.a.honestChallenger, honest: HONEST.map((n) => w.a[n]) };
    const before = await snapshot(w, everyone(s));
    const fee = await getRequestFee(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry });
    const bondsBefore = await bondsOf(w, SYBILS);
    const garbage = garbageBundle();
    const landed = await landSybilCommittee(w, garbage);
    await recordForgery(w, landed.requestId, keccak256(garbage));
    const d = await playStatementDispute(w, garbage, { nvidia: nras.policy }, w.a.honestChallenger);
    const after = await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address });
    const forfeited = bondsBefore - (await bondsOf(w, SYBILS));
    if (d.outcome !== "upheld" || after.effectiveTier !== 4 || forfeited !== bondsBefore) throw new AttackSucceeded(`the forged tier 1 survived its dispute (${d.outcome}, effective tier ${after.effectiveTier}, forfeited ${tokens(forfeited)})`);
    const fees = fee * BigInt(landed.requests);
    const cost = fees + forfeited;
    const saves = Number(cost) / 1e18 / (1 - TIER1_STAKE_FACTOR);
    return measure(
      w,
      s,
      before,
      "attestation: sybil committee (2 of 12)",
      `${landed.requests} requests bought (${tokens(fees)} fees burned) until [${landed.committee.map((x) => nameOf(w, x)).join(", ")}]; tier 1 recorded on garbage; ` +
        `disputed, panel [${d.panel}] voted false ${d.votes}: ${d.outcome}, tier 4, signers forfeit ${tokens(forfeited)}; ` +
        `cost ${tokens(cost)} vs tier 1's 50% stake saving: pays only on more than ${saves} of requiredStake before the dispute`,
      NO_TRACE,
    );
  } finally {
    cleanup();
  }
}

/** Sham statement dispute: the attacker's accomplice disputes its own forged statement and never lets it decide. */
export async function shamStatementDispute(): Promise<Row> {
  const w = await attestWorld();
  try {
    const nras = await makeNras();
    const s = { side: [w.a.provider, w.a.squatter, ...SYBILS.map((n) => w.a[n])], challenger: w.a.honestChallenger, honest: HONEST.map((n) => w.a[n]) };
    const before = await snapshot(w, everyone(s));
    const garbage = garbageBundle();
    const landed = await landSybilCommittee(w, garbage);
    await recordForgery(w, landed.requestId, keccak256(garbage));
    // the accomplice (squatter) opens a dispute of the forged statement and never draws its panel
    const sham = await disputeStatement(w.a.squatter.c, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address, bundle: garbage });
    const e1 = await refused("a second dispute while the sham one is live", disputeStatement(w.a.honestChallenger.c, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address, bundle: garbage }), "ProviderRegistryAlreadyDisputed");
    // its seed block leaves blockhash range undrawn: the sham dispute has lapsed
    await w.mine(260);
    const bonds = await bondsOf(w, SYBILS);
    const d = await playStatementDispute(w, garbage, { nvidia: nras.policy }, w.a.honestChallenger);
    const shamAfter = await getStatementDispute(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, disputeId: sham.disputeId });
    // half the lapsed dispute's bond is credited back to the accomplice
    await claimAttestationCredit(w.a.squatter.c, { providerRegistry: w.d.providerRegistry });
    const after = await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address });
    const forfeited = bonds - (await bondsOf(w, SYBILS));
    if (shamAfter.outcome !== "undecided" || d.outcome !== "upheld" || after.effectiveTier !== 4 || forfeited !== bonds) throw new AttackSucceeded(`the sham dispute shielded the statement (sham ${shamAfter.outcome}, real ${d.outcome}, tier ${after.effectiveTier})`);
    return measure(
      w,
      s,
      before,
      "attestation: sham statement dispute",
      `accomplice's dispute live: a second refused ${e1}; 260 blocks later it lapsed (settled ${shamAfter.outcome}: half its bond burned) and the honest dispute opened; ` +
        `panel [${d.panel}] voted false ${d.votes}: ${d.outcome}, tier 4, signers forfeit ${tokens(forfeited)} (${landed.requests} requests bought)`,
      NO_TRACE,
    );
  } finally {
    cleanup();
  }
}

/**
 * Statement dispute stalled on a silent seat: the sybils' forged tier 1 is disputed by the honest challenger; of its
 * drawn panel the first member plays the provider's own auditor (votes "statement true"), the second re-verifies and
 * votes "false", the third never votes. No quorum by the deadline: the dispute settles undecided, the silent member
 * forfeits half the dispute bond (burned) and the honest challenger's bond comes back whole. The statement stays
 * disputable; a second dispute before an answering panel revokes it and its signers forfeit.
 */
export async function silentSeatStatementDispute(): Promise<Row> {
  const w = await attestWorld();
  try {
    const nras = await makeNras();
    const trust: EvidenceTrust = { nvidia: nras.policy };
    const reg = w.d.providerRegistry;
    const before = await snapshot(w, Object.values(w.a).map((x) => x.address));
    const garbage = garbageBundle();
    const landed = await landSybilCommittee(w, garbage);
    await recordForgery(w, landed.requestId, keccak256(garbage));
    const { disputeId, seedBlock } = await disputeStatement(w.a.honestChallenger.c, { providerRegistry: reg, provider: w.a.provider.address, bundle: garbage });
    const head = await w.a.buyer.c.public.getBlockNumber({ cacheTime: 0 });
    if (head <= seedBlock) await w.mine(Number(seedBlock - head) + 1);
    const { panel } = await drawStatementDisputePanel(w.a.buyer.c, { providerRegistry: reg, disputeId });
    const [owned, voter, silent] = panel.map((x) => actorAt(w, x)) as [Actor, Actor, Actor];
    await voteStatementDispute(owned.c, { providerRegistry: reg, disputeId, statementFalse: false });
    const j = await judgeStatement(voter.c.public, { providerRegistry: reg, disputeId, bundle: garbage, trust });
    await voteStatementDispute(voter.c, { providerRegistry: reg, disputeId, statementFalse: j.statementFalse });
    const silentBond = (await getAuditor(w.a.buyer.c.public, { auditorRegistry: w.d.auditorRegistry, auditor: silent.address })).bond;
    const open = await getStatementDispute(w.a.buyer.c.public, { providerRegistry: reg, disputeId });
    await w.warpTo(open.deadline + 1n);
    await settleStatementDispute(w.a.buyer.c, { providerRegistry: reg, disputeId });
    const first = await getStatementDispute(w.a.buyer.c.public, { providerRegistry: reg, disputeId });
    const credit = await w.a.buyer.c.public.readContract({ address: reg, abi: providerRegistryAbi, functionName: "creditOf", args: [w.a.honestChallenger.address] });
    const forfeit = silentBond - (await getAuditor(w.a.buyer.c.public, { auditorRegistry: w.d.auditorRegistry, auditor: silent.address })).bond;
    if (first.outcome !== "undecided") throw new Error(`the stalled dispute ended ${first.outcome}`);
    if (credit !== first.bond) throw new AttackSucceeded(`the stalled dispute cost the honest challenger ${tokens(first.bond - credit)} of its bond`);
    if (forfeit !== first.bond / 2n) throw new AttackSucceeded(`the silent member forfeited ${tokens(forfeit)}, not half the dispute bond`);
    await claimAttestationCredit(w.a.honestChallenger.c, { providerRegistry: reg });
    // the statement is disputable again: a panel that answers revokes it
    const bonds = await bondsOf(w, SYBILS);
    const d = await playStatementDispute(w, garbage, trust, w.a.honestChallenger);
    const after = await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: reg, provider: w.a.provider.address });
    const forfeited = bonds - (await bondsOf(w, SYBILS));
    if (d.outcome !== "upheld" || after.effectiveTier !== 4 || forfeited !== bonds) throw new AttackSucceeded(`the stalled dispute shielded the statement (second dispute ${d.outcome}, tier ${after.effectiveTier})`);
    // the silent member failed its seat: neither side's (its forfeit is in the outcome); the provider owns the first seat
    const s = {
      side: [w.a.provider, owned, ...SYBILS.map((n) => w.a[n])],
      challenger: w.a.honestChallenger,
      honest: HONEST.filter((n) => n !== owned.name && n !== silent.name).map((n) => w.a[n]),
    };
    return measure(
      w,
      s,
      before,
      "attestation: statement dispute stalled by a provider seat and a silent member",
      `panel [${owned.name} (the provider's seat) voted true, ${voter.name} false, ${silent.name} silent]: ${first.outcome} at the deadline, the challenger's bond back whole, ${silent.name} forfeits ${tokens(forfeit)}; ` +
        `disputed again, panel [${d.panel}] voted false ${d.votes}: ${d.outcome}, tier 4, signers forfeit ${tokens(forfeited)}`,
      NO_TRACE,
    );
  } finally {
    cleanup();
  }
}

/** Runs the committee of `requestId` through attestRequest, each member with its own device ledger, until recorded. */
async function honestCommittee(w: World, requestId: bigint, committee: readonly Address[], bundle: Uint8Array, trust: EvidenceTrust, statementsDir: string) {
  const results = [];
  for (const m of committee) {
    const member = actorAt(w, m);
    const r = await attestRequest(member.c, { providerRegistry: w.d.providerRegistry, requestId, bundle, trust, statementsDir, deviceLedgerPath: join(workDir(`ledger-${member.name}`), "attested-devices.json") });
    results.push(r);
    if (r.recorded) return { recorded: r, results };
  }
  throw new Error(`request ${requestId}: the committee recorded nothing`);
}

/** The provider `who` prepares a request with a fresh session key, builds its bundle with `make`, and requests. */
async function requestWith(w: World, who: Actor, make: (binding: Hex, key: LocalAccount) => Promise<{ bundle: Buffer; devices: string[] }>) {
  const key = newSessionKey();
  await w.mine(1);
  const prep = await prepareAttestation(who.c, { providerRegistry: w.d.providerRegistry, sessionKey: key.address });
  const { bundle, devices } = await make(prep.binding, key);
  const p = { providerRegistry: w.d.providerRegistry, evidenceHash: keccak256(bundle), challengeBlock: prep.challengeBlock, deviceIds: devices.map(deviceIdHash), sessionKey: key.address };
  return { bundle, devices, p, key };
}

/** Device reuse: one GPU attests for two of the attacker's provider addresses; auditors keep separate ledgers. */
export async function deviceReuse(): Promise<Row> {
  const w = await attestWorld(HONEST);
  try {
    const nras = await makeNras();
    const trust: EvidenceTrust = { nvidia: nras.policy };
    const ueid = BigInt(keccak256(randomBytes(32))).toString().slice(0, 48);
    // NRAS tokens are issued at the chain's time (the auditors verify at the chain head's)
    const gpu = async (who: Actor, binding: Hex, key: LocalAccount) => ({ bundle: await nvidiaBundle(nras, who.c.account as LocalAccount, binding, { sessionKey: key, gpus: [{ ueid }], iat: await chainDate(w) }), devices: [`nvidia-ueid:${ueid}`] });
    const s = { side: [w.a.provider, w.a.contributor], honest: HONEST.map((n) => w.a[n]) };
    const before = await snapshot(w, everyone(s));
    // provider 1 attests the GPU (supported: tier 2, GPU evidence alone)
    const one = await requestWith(w, w.a.provider, (b, k) => gpu(w.a.provider, b, k));
    const r1 = await requestAttestation(w.a.provider.c, one.p);
    const c1 = await draw(w, r1.requestId);
    await honestCommittee(w, r1.requestId, c1, one.bundle, trust, workDir("statements-1"));
    const t1 = (await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address })).effectiveTier;
    // provider 2 (the attacker's other address) declares the same GPU
    const two = await requestWith(w, w.a.contributor, (b, k) => gpu(w.a.contributor, b, k));
    const e1 = await refused("provider 2's request naming the bound GPU", requestAttestation(w.a.contributor.c, two.p), "ProviderRegistryDeviceBound");
    // ... or leaves it out: committee members (each on its own ledger) sign tier 4
    const three = await requestWith(w, w.a.contributor, (b, k) => gpu(w.a.contributor, b, k));
    const r3 = await requestAttestation(w.a.contributor.c, { ...three.p, deviceIds: [] });
    const c3 = await draw(w, r3.requestId);
    const h = await honestCommittee(w, r3.requestId, c3, three.bundle, trust, workDir("statements-3"));
    const t2 = (await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, provider: w.a.contributor.address })).effectiveTier;
    if (t1 !== GPU_ONLY_TIER || t2 !== 4) throw new AttackSucceeded(`one GPU attests for two providers (tiers ${t1}, ${t2})`);
    return measure(w, s, before, "attestation: device reuse across two providers", `impossible: ${e1} (provider 1 holds the GPU at tier ${t1}); declaring no device instead: committee [${c3.map((x) => nameOf(w, x)).join(", ")}] on separate ledgers signed tier 4 (${h.results.map((x) => x.reason).join(", ")})`, NO_TRACE);
  } finally {
    cleanup();
  }
}

/**
 * The attacker's SEV-SNP evidence for its session key: a report signed by a VCEK of the test ARK chain made at `at`
 * (its ASK CRL runs from at - 1 day to at + 3 days), for platform `tcb`.
 */
async function snpEvidence(at: Date, tcb: Tcb = SNP_TCB) {
  const chain = await makeSnpChain("Milan", at);
  const chip = randomBytes(64);
  const v = await chain.vcek(chip, tcb);
  const raw = (c: { rawData: ArrayBuffer }) => new Uint8Array(c.rawData);
  const b64 = (x: Uint8Array) => Buffer.from(x).toString("base64");
  const crl = await chain.crl([]);
  const policy: SevSnpPolicy = { arks: [parseDer(Buffer.from(raw(chain.ark)), "ARK")] };
  const make = async (who: Actor, binding: Hex, key: LocalAccount) => {
    const nonce = Buffer.from(evidenceNonce(binding, key.address).slice(2), "hex");
    const report = await snpReport({ reportData: Buffer.concat([nonce, Buffer.alloc(32)]), chipId: chip, tcb }, v.key);
    const evidence = { format: "amd-sev-snp", report: report.toString("hex"), vcek: b64(raw(v.cert)), ask: b64(raw(chain.ask)), ark: b64(raw(chain.ark)), crl: Buffer.from(raw(crl)).toString("hex") };
    return { bundle: Buffer.from(JSON.stringify({ version: 1, ...(await sessionProof(who.c.account as LocalAccount, key, binding)), evidence })), devices: [`amd-chip:0x${chip.toString("hex")}`] };
  };
  return { policy, make };
}

/** An honest-committee row: the provider requests with SNP evidence, the committee verifies and records what it supports. */
async function snpRow(attack: string, at: (now: Date) => Date, trustOf: (p: SevSnpPolicy) => EvidenceTrust, expectTier: number, tcb?: Tcb): Promise<Row> {
  const w = await attestWorld(HONEST);
  try {
    const s = { side: [w.a.provider], honest: HONEST.map((n) => w.a[n]) };
    const before = await snapshot(w, everyone(s));
    const ev = await snpEvidence(at(await chainDate(w)), tcb);
    const req = await requestWith(w, w.a.provider, (b, k) => ev.make(w.a.provider, b, k));
    const r = await requestAttestation(w.a.provider.c, req.p);
    const committee = await draw(w, r.requestId);
    const h = await honestCommittee(w, r.requestId, committee, req.bundle, trustOf(ev.policy), workDir("statements"));
    const a = await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address });
    if (a.effectiveTier !== expectTier) throw new AttackSucceeded(`${attack}: recorded tier ${a.effectiveTier}, the evidence supports ${expectTier}`);
    const first = h.results[0]!;
    const why = first.verdict ? `verdict tier ${first.verdict.tier} band ${first.verdict.band}${first.verdict.details?.tierCap ? ` (cap: ${String(first.verdict.details.tierCap)})` : ""}` : `evidence rejected (${first.reason})`;
    return measure(w, s, before, attack, `committee [${committee.map((x) => nameOf(w, x)).join(", ")}] recorded tier ${a.tier} band ${a.band}: ${why}; the request fee burned`, NO_TRACE);
  } finally {
    cleanup();
  }
}

/** CVM-only evidence for tier 2: an SEV-SNP report (the provider's CVM) with no GPU evidence: tier 3 at most. */
export const cvmOnlyTier2 = () => snpRow("attestation: CVM-only evidence for tier 2", (now) => now, (p) => ({ amdSevSnp: p }), 3);

/** Stale CRL: the ASK CRL stapled is inside its dates but 3.5 days old (default maximum age 2 days). */
export const staleCrl = () => snpRow("attestation: stale CRL", (now) => new Date(now.getTime() - 2.5 * DAY * 1000), (p) => ({ amdSevSnp: p }), 4);

/**
 * OutOfDate platform: SEV-SNP firmware below the auditors' minimum TCB (SNP SPL 8 under a minimum of 9, AMD's
 * bulletin figure of the trust file). A TDX OutOfDate quote with Intel-signed collateral is not available offline;
 * that status is refused by default (intelTdx.refusedTcbStatuses), unit-tested in test/checks/attestation-formats.test.ts.
 */
export const outOfDatePlatform = () => snpRow("attestation: OutOfDate platform (SNP TCB below minTcb)", (now) => now, (p) => ({ amdSevSnp: { ...p, minTcb: { snp: SNP_TCB.snp + 1 } } }), 4);

/**
 * Never-patched SNP firmware: REPORTED_TCB all zero (bootloader, TEE, SNP firmware, microcode at level 0) under a trust
 * file that states no minTcb: the default floor (DEFAULT_SNP_MIN_TCB) refuses it, so it gets tier 4, not tier 3's band.
 */
export const zeroSnpTcb = () => snpRow("attestation: all-zero SNP TCB without a configured minimum", (now) => now, (p) => ({ amdSevSnp: p }), 4, { bl: 0, tee: 0, snp: 0, ucode: 0 });

/**
 * TCB revoked after the statement: an honest tier-3 SEV-SNP record (SNP SPL 8) stands; then AMD's bulletin raises the
 * minimum to 9 (public TCB data). Anyone disputes the statement: the panel finds it held at its time but not under
 * today's data and votes "revoked since": the record goes to tier 4 at once, nobody forfeits, the challenger's bond
 * comes back. Without it the record stood until its expiry.
 */
export async function revokedAfterStatement(): Promise<Row> {
  const attack = "attestation: platform TCB revoked after the statement (anyone downgrades)";
  const w = await attestWorld(HONEST);
  try {
    const s = { side: [w.a.provider], challenger: w.a.honestChallenger, honest: HONEST.map((n) => w.a[n]) };
    const before = await snapshot(w, everyone(s));
    const ev = await snpEvidence(await chainDate(w));
    const trust: EvidenceTrust = { amdSevSnp: ev.policy };
    const req = await requestWith(w, w.a.provider, (b, k) => ev.make(w.a.provider, b, k));
    const r = await requestAttestation(w.a.provider.c, req.p);
    const committee = await draw(w, r.requestId);
    await honestCommittee(w, r.requestId, committee, req.bundle, trust, workDir("statements"));
    const reg = w.d.providerRegistry;
    const t0 = (await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: reg, provider: w.a.provider.address })).effectiveTier;
    if (t0 !== 3) throw new Error(`the honest SNP record is tier ${t0}, expected 3`);
    const current: EvidenceTrust = { amdSevSnp: { ...ev.policy, minTcb: { snp: SNP_TCB.snp + 1 } } };
    const d = await playStatementDispute(w, req.bundle, trust, w.a.honestChallenger, current);
    const t1 = (await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: reg, provider: w.a.provider.address })).effectiveTier;
    if (d.outcome !== "revoked" || t1 !== 4) throw new AttackSucceeded(`${attack}: outcome ${d.outcome}, the revoked platform keeps tier ${t1}`);
    return measure(w, s, before, attack, `tier ${t0} recorded; minTcb raised; panel [${d.panel}] voted revoked since: tier ${t1} at once, no signer forfeits, the challenger's bond back`, NO_TRACE);
  } finally {
    cleanup();
  }
}

/** Single-member veto: one attacker auditor on the committee signs tier 4 first; the honest quorum records tier 2 (GPU evidence). */
export async function singleMemberVeto(): Promise<Row> {
  const w = await attestWorld(["H1", "H2", "H3", "H4", "H5", "sybilA"]);
  try {
    const nras = await makeNras();
    const trust: EvidenceTrust = { nvidia: nras.policy };
    for (let i = 1; i <= MAX_REQUESTS; i++) {
      const req = await requestWith(w, w.a.provider, async (b, k) => {
        const ueid = BigInt(keccak256(randomBytes(32))).toString().slice(0, 40);
        return { bundle: await nvidiaBundle(nras, w.a.provider.c.account as LocalAccount, b, { sessionKey: k, gpus: [{ ueid }], iat: await chainDate(w) }), devices: [`nvidia-ueid:${ueid}`] };
      });
      const r = await requestAttestation(w.a.provider.c, req.p);
      const committee = await draw(w, r.requestId);
      if (!committee.includes(w.a.sybilA.address)) {
        await w.warpTo(r.deadline + 1n);
        continue;
      }
      // counted from the draw: the honest provider's request fees are its purchase
      const s = { side: [w.a.sybilA], honest: [w.a.provider, w.a.H1, w.a.H2, w.a.H3, w.a.H4, w.a.H5] };
      const before = await snapshot(w, everyone(s));
      const dir = workDir("statements");
      // the dissenter verifies under a trust file that trusts nothing, proposes and signs tier 4 first
      const veto = await attestRequest(w.a.sybilA.c, { providerRegistry: w.d.providerRegistry, requestId: r.requestId, bundle: req.bundle, trust: {}, statementsDir: dir, record: false });
      const e1 = await refused("record the dissenter's tier 4 on its own signature", recordAttestation(w.a.sybilA.c, { providerRegistry: w.d.providerRegistry, attestation: veto.statement, signatures: veto.signatures }), "ProviderRegistryBelowQuorum");
      const honest = committee.filter((x) => x !== w.a.sybilA.address);
      const h = await honestCommittee(w, r.requestId, honest, req.bundle, trust, dir);
      const a = await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address });
      if (a.effectiveTier !== GPU_ONLY_TIER) throw new AttackSucceeded(`one member blocked the quorum's tier ${GPU_ONLY_TIER} (recorded tier ${a.effectiveTier})`);
      return measure(w, s, before, "attestation: single-member veto", `impossible: ${e1} (sybilA's tier 4 alone, ${veto.reason}); [${honest.map((x) => nameOf(w, x)).join(", ")}] did not co-sign it (${h.recorded.dissent.length} dissent) and recorded tier ${a.tier} band ${a.band} (committee drawn at request ${i})`, NO_TRACE);
    }
    throw new Error(`sybilA sat on no committee in ${MAX_REQUESTS} requests`);
  } finally {
    cleanup();
  }
}

/**
 * Tier revoked mid-job: the provider accepts a job at its honest tier-3 SEV-SNP record (75% of the stake, its session
 * key bound), then the platform's TCB is revoked (minTcb raised) and the statement is downgraded to tier 4 by a
 * "revoked since" dispute while the tenure runs. Anyone calls retier: the provider, which has the free stake, ends
 * with the full tier-4 lock and no session key. Without retier the tenure kept the 75% lock and the key to its end.
 */
export async function tierRevokedMidJob(): Promise<Row> {
  const attack = "attestation: tier revoked mid-job";
  const w = await attestWorld(HONEST);
  try {
    const s = { side: [w.a.provider], challenger: w.a.honestChallenger, honest: HONEST.map((n) => w.a[n]) };
    const before = await snapshot(w, everyone(s));
    const ev = await snpEvidence(await chainDate(w));
    const trust: EvidenceTrust = { amdSevSnp: ev.policy };
    const req = await requestWith(w, w.a.provider, (b, k) => ev.make(w.a.provider, b, k));
    const r = await requestAttestation(w.a.provider.c, req.p);
    const committee = await draw(w, r.requestId);
    await honestCommittee(w, r.requestId, committee, req.bundle, trust, workDir("statements-midjob"));
    const jobId = await postGameJob(w);
    await acceptJob(w.a.provider.c, { jobMarket: w.d.jobMarket, jobId });
    const lockAt = await getLockedStake(w.a.buyer.c.public, { stakeVault: w.d.stakeVault, provider: w.a.provider.address, jobId });
    const keyAt = await getCommitter(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
    const current: EvidenceTrust = { amdSevSnp: { ...ev.policy, minTcb: { snp: SNP_TCB.snp + 1 } } };
    const d = await playStatementDispute(w, req.bundle, trust, w.a.honestChallenger, current);
    const terms = await getAcceptTerms(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId, provider: w.a.provider.address });
    if (d.outcome !== "revoked" || terms.tier !== 4) throw new Error(`the statement was not downgraded (${d.outcome}, tier ${terms.tier})`);
    await retier(w.a.honestChallenger.c, { jobMarket: w.d.jobMarket, jobId });
    const lock = await getLockedStake(w.a.buyer.c.public, { stakeVault: w.d.stakeVault, provider: w.a.provider.address, jobId });
    const key = await getCommitter(w.a.buyer.c.public, { jobMarket: w.d.jobMarket, jobId });
    if (lock < terms.stakeWei || key !== undefined) throw new AttackSucceeded(`${attack}: the tenure keeps a ${tokens(lock)} lock (tier 4 needs ${tokens(terms.stakeWei)}) and committer ${key}`);
    const again = await refused("a second retier", retier(w.a.honestChallenger.c, { jobMarket: w.d.jobMarket, jobId }), "JobMarketRetierNotNeeded");
    return measure(w, s, before, attack, `accepted at tier 3 (lock ${tokens(lockAt)}, key ${keyAt === undefined ? "none" : "bound"}); revoked since mid-job; retier by anyone: lock ${tokens(lock)} (the full tier-4 stake from free stake), commits from the provider; ${again}`, NO_TRACE);
  } finally {
    cleanup();
  }
}

/** The rows, in the order bench/attacks.ts prints them. */
/**
 * Keyless tier: genuine GPU evidence (tier 2 on its own) bound to a session key, requested WITHOUT declaring the key,
 * so that the job's commits would come from the provider's own address on any machine. Two members of the committee
 * signing tier 2 anyway cannot record it (ProviderRegistryTierNeedsSessionKey); the honest committee signs tier 4
 * (session-key-undeclared).
 */
export async function keylessTier(): Promise<Row> {
  const w = await attestWorld(HONEST);
  try {
    const nras = await makeNras();
    const trust: EvidenceTrust = { nvidia: nras.policy };
    const ueid = BigInt(keccak256(randomBytes(32))).toString().slice(0, 48);
    const s = { side: [w.a.provider], honest: HONEST.map((n) => w.a[n]) };
    const before = await snapshot(w, everyone(s));
    const req = await requestWith(w, w.a.provider, async (b, k) => ({ bundle: await nvidiaBundle(nras, w.a.provider.c.account as LocalAccount, b, { sessionKey: k, gpus: [{ ueid }], iat: await chainDate(w) }), devices: [`nvidia-ueid:${ueid}`] }));
    const r = await requestAttestation(w.a.provider.c, { ...req.p, sessionKey: undefined });
    const c = await draw(w, r.requestId);
    const now = await w.now();
    const att: AttestationVerified = { provider: w.a.provider.address, requestId: r.requestId, tier: GPU_ONLY_TIER, band: 70, evidenceHash: req.p.evidenceHash, expiresAt: now + BigInt(DAY), issuedAt: now };
    const domain = providerRegistryDomain(BigInt(w.d.chainId), w.d.providerRegistry);
    const signers = [...c].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)).slice(0, 2).map((m) => actorAt(w, m));
    const signatures = await Promise.all(signers.map(async (x) => ({ signer: x.address, signature: await signAttestationVerified(x.c.account as LocalAccount, domain, att) })));
    const e = await refused("record tier 2 on the keyless request", recordAttestation(w.a.provider.c, { providerRegistry: w.d.providerRegistry, attestation: att, signatures }), "ProviderRegistryTierNeedsSessionKey");
    const h = await honestCommittee(w, r.requestId, c, req.bundle, trust, workDir("statements-keyless"));
    const t = (await getProviderAttestation(w.a.buyer.c.public, { providerRegistry: w.d.providerRegistry, provider: w.a.provider.address })).effectiveTier;
    if (t !== 4) throw new AttackSucceeded(`a request that declared no session key recorded tier ${t}`);
    return measure(w, s, before, "attestation: tier 2 on a request that declared no session key", `impossible: ${e}; the committee [${c.map((x) => nameOf(w, x)).join(", ")}] signed tier 4 (${[...new Set(h.results.map((x) => x.reason))].join(", ")})`, NO_TRACE);
  } finally {
    cleanup();
  }
}

export const ATTESTATION_ROWS: { attack: string; run: () => Promise<Row> }[] = [
  { attack: "attestation: sybil committee (2 of 12)", run: sybilCommittee },
  { attack: "attestation: device reuse across two providers", run: deviceReuse },
  { attack: "attestation: CVM-only evidence for tier 2", run: cvmOnlyTier2 },
  { attack: "attestation: stale CRL", run: staleCrl },
  { attack: "attestation: all-zero SNP TCB without a configured minimum", run: zeroSnpTcb },
  { attack: "attestation: OutOfDate platform (SNP TCB below minTcb)", run: outOfDatePlatform },
  { attack: "attestation: single-member veto", run: singleMemberVeto },
  { attack: "attestation: tier 2 on a request that declared no session key", run: keylessTier },
  { attack: "attestation: platform TCB revoked after the statement (anyone downgrades)", run: revokedAfterStatement },
  { attack: "attestation: tier revoked mid-job", run: tierRevokedMidJob },
  { attack: "attestation: sham statement dispute", run: shamStatementDispute },
  { attack: "attestation: statement dispute stalled by a provider seat and a silent member", run: silentSeatStatementDispute },
];
