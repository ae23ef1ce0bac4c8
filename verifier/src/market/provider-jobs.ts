/**
 * The provider's accept and claim flows as `pouw provider accept` and `pouw provider claim` run them; the commands only
 * parse, call these and render.
 *
 * accept: the lock must pay the panel (JobMarket's JobMarketLockCannotPayPanel, said before sending), and the job's
 * manifest and a fine-tuning job's base must be readable and usable (provider/check-base.ts) before any stake is locked.
 * claim: finalize and anchor each job (provider/finalize-anchor.ts), then claim the whole JobMarket credit once.
 *
 * @example
 *   const { tx, job } = await acceptProviderJob(ctx, 1n);
 *   const { jobs, claimed, claim } = await claimProviderJobs(ctx, [1n, 2n]);
 */
import type { ChainClients } from "../chain/clients.ts";
import type { Deployment } from "../chain/deployment.ts";
import { acceptJob, claimPayment, getAcceptTerms, getJob, getMarketCredit, requireJob, type GetJobReturnType } from "../chain/index.ts";
import { txRef, type TxRef } from "../chain/send.ts";
import { InputError } from "../errors/index.ts";
import { lockPaysPanel } from "../policy/index.ts";
import { DEFAULT_MAX_DATA_SHARE_BPS } from "./data-share.ts";
import type { PeerDiscovery } from "../store/ipfs-peers.ts";
import { ContentNotFoundError, type ContentStore } from "../store/index.ts";
import type { FinalizeAndAnchorResult } from "../provider/finalize-anchor.ts";
import type { SegmentBoard } from "./segment-traces.ts";

export type ProviderJobsContext = { clients: ChainClients; deployment: Deployment; store: ContentStore; board: SegmentBoard; stateDir: string };

/** How a refusal prints amounts: wei as a decimal token amount, and the token's symbol. */
export type AmountText = { fmt: (wei: bigint) => string; symbol: string };

/**
 * Accepts `jobId` after the checks a provider must pass before its stake is locked; `peers` (with --ipfs) dials the
 * buyer's announced node first, where the manifest and base come from. A job whose data terms give its corpora more
 * than `maxDataShareBps` of the payment (default DEFAULT_MAX_DATA_SHARE_BPS) is refused: that share is not paid to
 * the provider, and a buyer that owns the corpus gets it back.
 */
export async function acceptProviderJob(
  ctx: ProviderJobsContext,
  jobId: bigint,
  o: { peers?: PeerDiscovery | undefined; amounts: AmountText; maxDataShareBps?: number | undefined },
): Promise<{ tx: TxRef; job: GetJobReturnType; providerPayWei: bigint; dataShareBps: number }> {
  const { jobMarket } = ctx.deployment;
  const open = await requireJob(ctx.clients.public, { jobMarket, jobId });
  const terms = await getAcceptTerms(ctx.clients.public, { jobMarket, jobId, provider: ctx.clients.account.address });
  const pays = lockPaysPanel({ lockWei: terms.stakeWei, challengerBps: open.policy.challengerBps, panelFeesWei: terms.panelFeesWei });
  // the contract's rule (JobMarketLockCannotPayPanel), said before sending
  if (!pays.ok) {
    throw new InputError(
      `job ${jobId}: your lock of ${o.amounts.fmt(terms.stakeWei)} ${o.amounts.symbol} (tier ${terms.tier}) pays a challenger share of ${o.amounts.fmt(pays.rewardWei)}, below the panel's fees ${o.amounts.fmt(pays.panelFeesWei)}, so JobMarket refuses it (nobody could catch a cheat on it without a loss); the job needs requiredStake raised by its buyer`,
    );
  }
  const maxShare = o.maxDataShareBps ?? DEFAULT_MAX_DATA_SHARE_BPS;
  const corpora = (open.payment * BigInt(terms.dataShareBps)) / 10_000n;
  if (terms.dataShareBps > maxShare) {
    throw new InputError(
      `job ${jobId} not accepted (no stake locked): its data terms credit ${terms.dataShareBps / 100}% of the payment (${o.amounts.fmt(corpora)} of ${o.amounts.fmt(open.payment)} ${o.amounts.symbol}) to its corpora, above your limit of ${maxShare / 100}%; you would be paid ${o.amounts.fmt(open.payment - corpora)} ${o.amounts.symbol}. Accept with --max-data-share-bps ${terms.dataShareBps} if that pay is what you want`,
    );
  }
  // the job's manifest, and a fine-tuning job's base (missing, not decodable, non-finite: BaseCheckpointError), before
  // any stake is locked (provider/check-base.ts)
  const { checkJobBeforeAccept } = await import("../provider/check-base.ts"); // the engine loads here, not for every command
  if (o.peers) await o.peers.dial([open.buyer]);
  try {
    // an evaluate or generate job is checked by its kind (kinds/market.ts), a training job by its dry run
    if (!(await (await import("../kinds/market.ts")).checkKindJobBeforeAccept(ctx, jobId))) {
      const manifest = await checkJobBeforeAccept(ctx, jobId);
      // a training job on a generated dataset: its chain to the finalized generate job, before the stake is locked
      await (await import("./create-job.ts")).checkGeneratedData(ctx, manifest, `job ${jobId} not accepted (no stake locked)`);
    }
  } catch (err) {
    if (!(err instanceof ContentNotFoundError)) throw err;
    throw new InputError(
      `job ${jobId} not accepted (no stake locked): content a provider reads before accepting (the manifest, or a fine-tuning job's base) is in no store or source you gave: ${err.message}. Give --ipfs to fetch it from the buyer's announced node, or --source URL`,
      { cause: err },
    );
  }
  const tx = txRef("acceptJob", await acceptJob(ctx.clients, { jobMarket, jobId }));
  const job = await getJob(ctx.clients.public, { jobMarket, jobId });
  // the pay for the segments this tenure trains (a re-opened job pays a new provider from its next segment on), less the
  // data share: JobMarket's finalize split (DataShares.split) up to rounding
  const providerPayWei = ((open.payment - corpora) * BigInt(job.policy.segments - job.nextSegment)) / BigInt(job.policy.segments);
  return { tx, job, providerPayWei, dataShareBps: terms.dataShareBps };
}

export type ClaimedJob = FinalizeAndAnchorResult & { jobId: bigint };

/** Finalizes and anchors each job (every id checked to exist first), then claims the account's whole JobMarket credit. */
export async function claimProviderJobs(ctx: ProviderJobsContext, ids: readonly bigint[]): Promise<{ jobs: ClaimedJob[]; claimed: bigint; claim: TxRef | undefined }> {
  const { jobMarket, token } = ctx.deployment;
  for (const jobId of ids) await requireJob(ctx.clients.public, { jobMarket, jobId });
  const { finalizeAndAnchor } = await import("../provider/finalize-anchor.ts");
  const jobs: ClaimedJob[] = [];
  for (const jobId of ids) jobs.push({ ...(await finalizeAndAnchor(ctx, jobId)), jobId });
  const claimed = await getMarketCredit(ctx.clients.public, { jobMarket, account: ctx.clients.account.address, token });
  const claim = claimed === 0n ? undefined : txRef("claimPayment", await claimPayment(ctx.clients, { jobMarket, token }));
  return { jobs, claimed, claim };
}
