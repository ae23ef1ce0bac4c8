/**
 * Statement disputes from the off-chain side (docs/panels.md, "Statement disputes"): a panel member re-verifies the
 * evidence bundle of a disputed statement exactly as the committee did, at the statement's issuedAt (so the verdict
 * is a function of the bytes the dispute carries, the auditor's trust configuration and that time), and votes that the
 * statement is false when the evidence does not support it: rejected outright, another tier, or a lower band than
 * signed. A later expiry of the verdict is no support for a shorter record, and an earlier one no refutation: the
 * statement's validity is capped by the registry, not judged here.
 *
 * Revoked since: given `currentTrust` (today's public revocation and TCB data: CRLs published since, e.g.
 * `amdSevSnp.currentCrls`, raised minimum TCBs or TCB evaluation numbers, refused statuses), a statement that holds under `trust` but whose evidence, re-verified at the same
 * issuedAt under `currentTrust`, no longer supports its tier and band is `revokedSince`: the member votes
 * ProviderRegistry.voteRevoked, which downgrades the record without forfeiting the signers' bonds.
 *
 * The bundle is on chain: ProviderRegistry.disputeStatement takes it and its StatementEvidence event carries it
 * (statementDisputeBundle reads it back), so a panel member never depends on the provider or the challenger for it.
 *
 * @example
 *   const j = await judgeStatement(clients.public, { providerRegistry, disputeId, trust }); // bundle from the event
 *   await voteStatementDispute(clients, { providerRegistry, disputeId, statementFalse: j.statementFalse });
 */
import { getAddress, keccak256, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { AttestationError, verifyEvidenceBundle, type AttestationReason, type BundleVerdict, type EvidenceTrust } from "../checks/attestation/index.ts";
import {
  disputeStatement,
  getAttestationRequest,
  getProviderAttestation,
  getSeedDelayBlocks,
  getStatementDispute,
  getStatementEvidence,
  txRef,
  voteStatementDispute,
  type ChainClients,
  type Deployment,
  type DisputeStatementReturnType,
  type GetStatementDisputeReturnType,
  type TxRef,
} from "../chain/index.ts";
import { InputError } from "../errors/index.ts";
import { ensureTokenFunds } from "../market/funding.ts";
import { AttestCommitteeError } from "./index.ts";

export type JudgeStatementParameters = {
  providerRegistry: `0x${string}`;
  disputeId: bigint;
  /** The statement's evidence bundle (its keccak256 must be the request's evidence hash); absent: the one the dispute's
   * StatementEvidence event carries (statementDisputeBundle). */
  bundle?: Uint8Array;
  /** The trust configuration the statement was signed under. */
  trust: EvidenceTrust;
  /** Today's trust configuration (public revocation and TCB data published since, e.g. newer CRLs); absent: not judged.
   * One unusable for the bundle (`policy-invalid`) throws AttestCommitteeError rather than vote. */
  currentTrust?: EvidenceTrust;
};

export type JudgeStatementReturnType = {
  disputeId: bigint;
  provider: `0x${string}`;
  requestId: bigint;
  /** What the statement says. */
  recorded: { tier: number; band: number; issuedAt: bigint };
  /** The re-verification at issuedAt, or undefined when the evidence is rejected (then `reason`). */
  verdict: BundleVerdict | undefined;
  reason: AttestationReason | undefined;
  /** true: the evidence does not support the statement. */
  statementFalse: boolean;
  /** true: the statement held at its time, but under `currentTrust` its evidence no longer supports it (`revokedReason`:
   * why it is rejected now; undefined when it now verifies at a weaker tier or band). */
  revokedSince: boolean;
  revokedReason: AttestationReason | undefined;
};

/** Re-verifies dispute `disputeId`'s statement; throws AttestCommitteeError for a wrong file or a settled dispute. */
export async function judgeStatement(client: PublicClient<Transport, Chain>, p: JudgeStatementParameters): Promise<JudgeStatementReturnType> {
  const d = await getStatementDispute(client, { providerRegistry: p.providerRegistry, disputeId: p.disputeId });
  if (d.provider === "0x0000000000000000000000000000000000000000") throw new AttestCommitteeError(`statement dispute ${p.disputeId} does not exist`);
  if (d.outcome !== "open") throw new AttestCommitteeError(`statement dispute ${p.disputeId} is already settled (${d.outcome})`);
  const q = await getAttestationRequest(client, { providerRegistry: p.providerRegistry, requestId: d.requestId });
  const bundle = p.bundle ?? (await statementDisputeBundle(client, { providerRegistry: p.providerRegistry, disputeId: p.disputeId, seedBlock: d.seedBlock }));
  const evidenceHash = keccak256(bundle);
  if (evidenceHash !== q.evidenceHash) throw new AttestCommitteeError(`the bundle's keccak256 ${evidenceHash} is not request ${d.requestId}'s evidence hash ${q.evidenceHash}: wrong file`);
  const a = await getProviderAttestation(client, { providerRegistry: p.providerRegistry, provider: d.provider });
  // NOTE: only the standing record's tier, band and issuedAt are readable by view; when a newer record replaced the
  // disputed one, its fields are in its AttestationRecorded event, which this function does not read (it refuses)
  if (a.requestId !== d.requestId) throw new AttestCommitteeError(`provider ${getAddress(d.provider)}'s record is now request ${a.requestId}'s, not the disputed request ${d.requestId}'s: judge it from its AttestationRecorded event`);
  const challengeBlock = await client.getBlock({ blockHash: q.challenge });
  const at = { request: q, challengeIssuedAt: new Date(Number(challengeBlock.timestamp) * 1000), now: new Date(Number(a.issuedAt) * 1000) };
  const judge = async (trust: EvidenceTrust) => {
    try {
      return { verdict: await verifyEvidenceBundle(bundle, { trust, ...at }), reason: undefined, message: undefined };
    } catch (err) {
      if (!(err instanceof AttestationError)) throw err;
      return { verdict: undefined, reason: err.reason, message: err.shortMessage };
    }
  };
  const supports = (v: BundleVerdict | undefined) => v !== undefined && v.tier === a.tier && v.band >= a.band;
  const { verdict, reason } = await judge(p.trust);
  // INVARIANT: a statement stands only if the evidence, re-verified at its time, supports its tier and at least its band
  const statementFalse = !supports(verdict);
  // INVARIANT: "revoked since" only for a statement that held at its time: a false one is voted false (its signers forfeit)
  const now = !statementFalse && p.currentTrust !== undefined ? await judge(p.currentTrust) : undefined;
  // INVARIANT: an unusable current trust configuration (an undecodable CRL, a missing pin) is no evidence of a
  // revocation: it is refused, never voted "revoked since"
  if (now?.reason === "policy-invalid") throw new AttestCommitteeError(`the current trust configuration is unusable for this bundle: ${now.message}`);
  const revokedSince = now !== undefined && !supports(now.verdict);
  return { disputeId: p.disputeId, provider: getAddress(d.provider), requestId: d.requestId, recorded: { tier: a.tier, band: a.band, issuedAt: a.issuedAt }, verdict, reason, statementFalse, revokedSince, revokedReason: revokedSince ? now?.reason : undefined };
}

/**
 * The evidence bundle statement dispute `disputeId` carries: the `bundle` of its StatementEvidence event, read from the
 * one block the dispute was opened in (its seed block less the registry's seed delay). Throws AttestCommitteeError when
 * no such event is found (an unknown dispute, or a node that pruned the block's logs).
 */
export async function statementDisputeBundle(
  client: PublicClient<Transport, Chain>, p: { providerRegistry: Address; disputeId: bigint; seedBlock?: bigint },
): Promise<Uint8Array> {
  const seedBlock = p.seedBlock ?? (await getStatementDispute(client, { providerRegistry: p.providerRegistry, disputeId: p.disputeId })).seedBlock;
  const opened = seedBlock - (await getSeedDelayBlocks(client, { providerRegistry: p.providerRegistry }));
  const bundle = await getStatementEvidence(client, { providerRegistry: p.providerRegistry, disputeId: p.disputeId, openedBlock: opened });
  if (bundle === undefined) throw new AttestCommitteeError(`no StatementEvidence event of statement dispute ${p.disputeId} in block ${opened}: cannot read its evidence bundle (pass the bundle file)`);
  return bundle;
}

/**
 * Opens a statement dispute against `provider`'s standing statement (`pouw auditor attest-dispute open`) with its
 * evidence bundle, which the dispute puts on chain for the panel: the challenger's bond is funded (minted on a dev chain
 * with `mint`) and approved, then ProviderRegistry.disputeStatement. InputError when the statement is already disputed
 * or the bundle's keccak256 is not the statement's evidence hash (nothing is sent).
 */
export async function openStatementDispute(
  clients: ChainClients, d: Deployment, p: { providerRegistry: Address; provider: Address; bundle: Uint8Array; mint: boolean },
): Promise<DisputeStatementReturnType & { txs: TxRef[] }> {
  const a = await getProviderAttestation(clients.public, { providerRegistry: p.providerRegistry, provider: p.provider });
  if (a.disputeId !== 0n) throw new InputError(`provider ${p.provider}'s statement (request ${a.requestId}) is already disputed: dispute ${a.disputeId}`);
  const evidenceHash = keccak256(p.bundle);
  if (evidenceHash !== a.evidenceHash) throw new InputError(`the bundle's keccak256 ${evidenceHash} is not provider ${p.provider}'s statement evidence hash ${a.evidenceHash} (request ${a.requestId}): wrong file`);
  const txs = await ensureTokenFunds(clients, d, p.providerRegistry, a.disputeBond, { mint: p.mint });
  const r = await disputeStatement(clients, { providerRegistry: p.providerRegistry, provider: p.provider, bundle: p.bundle });
  txs.push(txRef("disputeStatement", r));
  return { ...r, txs };
}

/**
 * A drawn panel member's vote (`pouw auditor attest-dispute vote`): judgeStatement, then voteRevoked when the statement
 * held at its time but not under `currentTrust`, voteDispute otherwise; the judgement, the vote's transaction and the
 * dispute as it stands after.
 */
export async function voteOnStatementDispute(
  clients: ChainClients, p: JudgeStatementParameters,
): Promise<{ judgement: JudgeStatementReturnType; tx: TxRef; dispute: GetStatementDisputeReturnType }> {
  const j = await judgeStatement(clients.public, p);
  const r = await voteStatementDispute(clients, { providerRegistry: p.providerRegistry, disputeId: p.disputeId, statementFalse: j.statementFalse, revokedSince: j.revokedSince });
  const tx = txRef(j.revokedSince ? "voteRevoked" : "voteDispute", r);
  return { judgement: j, tx, dispute: await getStatementDispute(clients.public, { providerRegistry: p.providerRegistry, disputeId: p.disputeId }) };
}
