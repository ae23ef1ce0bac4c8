/**
 * What a job's parties see of it: where its money went (the buyer's slash share and refund, the provider's pay, the
 * challengers' share and the burn, with the reason of each slash) and how much independent checking stands behind
 * its result (segments audited, by how many distinct auditors, receipts, disputes and their outcomes, against the audit
 * rate its manifest promised). `pouw buyer status`, `pouw buyer fetch`, `pouw provider status` and the dApp's job view
 * render these; nothing here formats amounts.
 */
import { getAddress, type Address, type Chain, type Hex, type PublicClient, type Transport } from "viem";
import {
  getDispute,
  getJobCreated,
  getJobDisputes,
  getJobOutcome,
  getReceiptsRecorded,
  type Deployment,
  type DisputeOutcomeName,
  type GetJobOutcomeReturnType,
  type JobStatusName,
} from "../chain/index.ts";
import type { ContentStore } from "../store/index.ts";
import { fetchManifest } from "./manifest-store.ts";

type Reader = PublicClient<Transport, Chain>;

/** One StakeSlashed of the job's lock, split by who received it. */
export type SlashSplit = {
  /** "fault": a dispute found a wrong step (ProviderFaultSettled); "timeout": the provider missed a segment deadline. */
  reason: "fault" | "timeout";
  amount: bigint;
  toChallengers: bigint;
  toBuyer: bigint;
  burned: bigint;
  transactionHash: Hex;
};

export type JobMoney = {
  status: JobStatusName;
  payment: bigint;
  slashes: SlashSplit[];
  /** Sum of every slash's buyer share: a StakeVault credit of the buyer (`pouw buyer claim` collects it). */
  buyerSlashShare: bigint;
  /** Escrow credited back to the buyer in the JobMarket: the whole payment on a fault or a cancel, the unearned part at finalize. */
  buyerRefund: bigint;
  /** The provider's pay at finalize (0 unless Finalized). */
  providerPay: bigint;
};

export type DisputeLine = { disputeId: bigint; segment: number; step: number; challenger: Address; outcome: DisputeOutcomeName };

export type JobCoverage = {
  segments: number;
  committed: number;
  /** Distinct segments with at least one anchored receipt or one dispute (a challenge is an audit that found a wrong step). */
  auditedSegments: number;
  /** Distinct auditors that anchored a receipt on this job or challenged one of its steps. */
  auditors: number;
  /** Per audited segment, how many distinct auditors anchored a receipt for it or challenged it. */
  auditorsPerSegment: { segment: number; auditors: number }[];
  receipts: number;
  faultReceipts: number;
  disputes: DisputeLine[];
  /** The manifest's policy.auditRate; undefined when the manifest could not be fetched. */
  auditRate: number | undefined;
  /** Segments the audit rate promised to check: floor(auditRate x committed segments); undefined without the rate. */
  promisedSegments: number | undefined;
  /** A plain sentence when the job ended (or stands) with less checking than promised; undefined otherwise. */
  warning: string | undefined;
};

/**
 * Splits each slash of `o` by recipient: the fault slash (the StakeSlashed in ProviderFaultSettled's transaction) goes
 * to the challengers (`toChallengers`), the buyer and the burn; a timeout slash goes to the buyer whole (JobMarket's
 * reportTimeout), less any burn.
 */
export function jobMoney(o: GetJobOutcomeReturnType): JobMoney {
  const slashes: SlashSplit[] = o.slashes.map((s) => {
    const fault = o.fault !== undefined && s.transactionHash === o.fault.transactionHash;
    const toChallengers = fault ? o.fault!.toChallengers : 0n;
    return { reason: fault ? "fault" : "timeout", amount: s.amount, toChallengers, toBuyer: s.amount - s.burned - toChallengers, burned: s.burned, transactionHash: s.transactionHash };
  });
  return {
    status: o.job.status,
    payment: o.job.payment,
    slashes,
    buyerSlashShare: slashes.reduce((t, s) => t + s.toBuyer, 0n),
    buyerRefund: (o.fault?.refund ?? 0n) + (o.finalized?.buyerRefund ?? 0n) + (o.cancelled?.refund ?? 0n),
    providerPay: o.finalized?.providerPay ?? 0n,
  };
}

/**
 * The coverage of `jobId` from its receipts and disputes on chain, against the audit rate of its manifest (fetched
 * from `store` and checked against the anchored hash; a manifest that cannot be had leaves the rate undefined, and
 * the warning then says so when nothing was audited).
 */
export async function jobCoverage(client: Reader, d: Deployment, store: ContentStore | undefined, o: GetJobOutcomeReturnType): Promise<JobCoverage> {
  const jobId = o.job.jobId;
  const fromBlock = BigInt(d.startBlock);
  const [receipts, opened, auditRate] = await Promise.all([
    getReceiptsRecorded(client, { jobRecords: d.jobRecords, jobId, fromBlock }),
    d.disputeGame ? getJobDisputes(client, { disputeGame: d.disputeGame, jobId, fromBlock }) : Promise.resolve([]),
    manifestAuditRate(client, d, store, jobId),
  ]);
  const disputes = await Promise.all(
    opened.map(async (x) => ({ disputeId: x.disputeId, segment: x.segment, step: x.step, challenger: getAddress(x.challenger), outcome: (await getDispute(client, { disputeGame: d.disputeGame!, disputeId: x.disputeId })).outcome })),
  );
  // a segment counts as audited when an auditor anchored a receipt for it or challenged a step of it: a challenge is
  // an audit that found a wrong step (the bot signs no receipt for a segment it disputes)
  const bySegment = new Map<number, Set<string>>();
  const checked = [...receipts.map((r) => ({ segment: r.segment, auditor: getAddress(r.auditor) })), ...disputes.map((x) => ({ segment: x.segment, auditor: x.challenger }))];
  for (const c of checked) {
    const set = bySegment.get(c.segment) ?? new Set<string>();
    set.add(c.auditor);
    bySegment.set(c.segment, set);
  }
  const auditorsPerSegment = [...bySegment.entries()].sort(([a], [b]) => a - b).map(([segment, s]) => ({ segment, auditors: s.size }));
  const segments = o.job.policy.segments;
  const committed = o.job.nextSegment;
  const cov: Omit<JobCoverage, "warning"> = {
    segments,
    committed,
    auditedSegments: bySegment.size,
    auditors: new Set(checked.map((c) => c.auditor)).size,
    auditorsPerSegment,
    receipts: receipts.length,
    faultReceipts: receipts.filter((r) => r.verdict !== 0).length,
    disputes,
    auditRate,
    promisedSegments: auditRate === undefined ? undefined : Math.floor(auditRate * committed + 1e-9),
  };
  return { ...cov, warning: coverageWarning(o.job.status, cov) };
}

/**
 * The warning a result carries when less checking stands behind it than promised: a job with committed segments and
 * no audit receipt and no dispute decided against the provider, or fewer audited segments than its audit rate
 * promised. A job a dispute faulted carries none (the check that mattered happened).
 */
export function coverageWarning(status: JobStatusName, c: Omit<JobCoverage, "warning">): string | undefined {
  if (c.committed === 0 || status === "Refunded") return undefined;
  const rate = c.auditRate === undefined ? "" : ` (its policy's audit rate ${c.auditRate} promised ${c.promisedSegments})`;
  const shown = `${c.auditedSegments} of ${c.committed} committed segment${c.committed === 1 ? "" : "s"} audited${rate}`;
  if (c.auditedSegments === 0) return `WARNING: ${shown}: nobody independently checked this result; it rests on the provider's stake alone`;
  if (c.promisedSegments !== undefined && c.auditedSegments < c.promisedSegments) return `WARNING: only ${shown}: less independent checking than promised`;
  return undefined;
}

async function manifestAuditRate(client: Reader, d: Deployment, store: ContentStore | undefined, jobId: bigint): Promise<number | undefined> {
  if (store === undefined) return undefined;
  try {
    const created = await getJobCreated(client, { jobMarket: d.jobMarket, jobId, fromBlock: BigInt(d.startBlock) });
    const m = await fetchManifest(store, created.manifestUri, created.manifestHash);
    return m.policy.auditRate;
  } catch {
    // NOTE: a manifest nobody serves leaves the promise unknown; the coverage still counts what was checked
    return undefined;
  }
}

export type JobReport = { outcome: GetJobOutcomeReturnType; money: JobMoney; coverage: JobCoverage };

/** Money and coverage of `jobId` in one read. */
export async function jobReport(client: Reader, d: Deployment, store: ContentStore | undefined, jobId: bigint): Promise<JobReport> {
  const outcome = await getJobOutcome(client, { deployment: d, jobId });
  return { outcome, money: jobMoney(outcome), coverage: await jobCoverage(client, d, store, outcome) };
}

/** The job's money in sentences for a person: slashed how much, why, to whom; refunded how much; paid how much. */
export function moneySentences(m: JobMoney, amount: (x: bigint) => string): string[] {
  const out: string[] = [];
  for (const s of m.slashes) {
    const why = s.reason === "fault" ? "a dispute proved a wrong training step" : "it missed a segment deadline";
    const parts = [s.toChallengers > 0n ? `${amount(s.toChallengers)} to the challengers` : "", s.toBuyer > 0n ? `${amount(s.toBuyer)} to the buyer` : "", s.burned > 0n ? `${amount(s.burned)} burned` : ""].filter(Boolean);
    out.push(`the provider was slashed ${amount(s.amount)} of its stake because ${why}: ${parts.join(", ")}`);
  }
  if (m.buyerRefund > 0n) out.push(`the buyer was refunded ${amount(m.buyerRefund)} of the ${amount(m.payment)} escrowed`);
  if (m.status === "Finalized") out.push(`the provider was paid ${amount(m.providerPay)}`);
  return out;
}

/** The coverage in one line: segments audited, by how many auditors, receipts, disputes and outcomes. */
export function coverageLine(c: JobCoverage): string {
  const minAud = c.auditorsPerSegment.length === 0 ? 0 : Math.min(...c.auditorsPerSegment.map((x) => x.auditors));
  const by = c.auditedSegments === 0 ? "" : `, each by at least ${minAud} of ${c.auditors} distinct auditor${c.auditors === 1 ? "" : "s"}`;
  const disputes = c.disputes.length === 0 ? "no disputes" : `${c.disputes.length} dispute${c.disputes.length === 1 ? "" : "s"} (${c.disputes.map((x) => `${x.disputeId} on step ${x.step}: ${x.outcome}`).join(", ")})`;
  return `audit coverage: ${c.auditedSegments} of ${c.committed} committed segments audited${by}; ${c.receipts} receipt${c.receipts === 1 ? "" : "s"}${c.faultReceipts ? ` (${c.faultReceipts} fault)` : ""}; ${disputes}`;
}
