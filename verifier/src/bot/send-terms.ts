/**
 * Whether what the bot's auditor found can be acted on chain, read before anything is sent: a linear-tile job's
 * circuit terms still hold, a challenge's reward pays the panel's fees, and a receipt can be anchored. A "no" is an
 * error line a person sees (the finding is recorded, nothing sent), never a silent skip.
 */
import { getAddress, type Address } from "viem";
import { getAuditorActive, getDisputeParams, getJob, getLockedStake, getRegistries, type DisputeParams } from "../chain/index.ts";
import { isCircuitClass, type Run } from "../checks/index.ts";
import { circuitTermsOfRun } from "../dispute/circuit.ts";
import { checkCircuitTerms, CircuitTermsMismatchError, type CircuitTerms } from "../dispute/terms.ts";
import { challengeReward } from "../policy/challenge.ts";
import { tokens, type BotContext } from "./context.ts";

export class SendTerms {
  private readonly ctx: BotContext;
  /** A linear-tile job's expected circuit terms, computed once per job. */
  private readonly circuitTerms = new Map<string, CircuitTerms>();
  /** The DisputeGame's parameters (fixed at deployment), read once for challengePays. */
  private disputeParams: DisputeParams | undefined;

  constructor(ctx: BotContext) {
    this.ctx = ctx;
  }

  /**
   * Before a challenge of a linear-tile job: its on-chain manifest hash and registered terms must still be the
   * document's (checkCircuitTerms). False (with an error line) when they are not: the finding is recorded, nothing sent.
   */
  async circuitTermsHold(run: Run | undefined, jobId: bigint): Promise<boolean> {
    const game = this.ctx.deployment.disputeGame;
    if (!run || !isCircuitClass(run) || !game) return true;
    let expected = this.circuitTerms.get(jobId.toString());
    if (!expected) {
      expected = (await circuitTermsOfRun(run)).terms;
      this.circuitTerms.set(jobId.toString(), expected);
    }
    try {
      await checkCircuitTerms(this.ctx.clients.public, { disputeGame: game, jobMarket: this.ctx.deployment.jobMarket, jobId, manifestBody: run.manifestHash, expected });
      return true;
    } catch (err) {
      if (!(err instanceof CircuitTermsMismatchError)) throw err;
      this.ctx.log.error({ jobId: jobId.toString(), err: err.shortMessage }, `CANNOT CHALLENGE job ${jobId}: ${err.shortMessage}`);
      return false;
    }
  }

  /**
   * Before a challenge of job `jobId`: the fault's challenger share lam L of the provider's lock must pay the panel's
   * fees n f (policy/challenge.ts challengeReward), else catching the cheat costs this bot n f - lam L plus gas.
   * JobMarket.acceptJob refuses a lock below that floor (JobMarketLockCannotPayPanel), but a lock can shrink after it:
   * the dispute role may slash part of it directly (a TimedOut job keeps its whole lock until its window closed). The job's own buyer challenges anyway: a fault refunds its escrow.
   * False (with an error line): the finding is recorded, nothing sent.
   */
  async challengePays(jobId: bigint): Promise<boolean> {
    const { clients, deployment } = this.ctx;
    const game = deployment.disputeGame;
    if (!game) return true;
    const job = await getJob(clients.public, { jobMarket: deployment.jobMarket, jobId });
    if (getAddress(job.buyer) === this.ctx.me) return true;
    this.disputeParams ??= await getDisputeParams(clients.public, { disputeGame: game });
    const lockWei = await getLockedStake(clients.public, { stakeVault: deployment.stakeVault, provider: job.provider as Address, jobId });
    const r = challengeReward({ lockWei, challengerBps: job.policy.challengerBps, panelSize: this.disputeParams.panelSize, panelFeeWei: this.disputeParams.panelFee });
    if (r.netWei >= 0n) return true;
    this.ctx.log.error(
      { event: "challenge-at-a-loss", jobId: jobId.toString(), lock: tokens(lockWei), reward: tokens(r.rewardWei), panelFees: tokens(r.panelFeesWei) },
      `NOT CHALLENGING job ${jobId}: the provider's lock ${tokens(lockWei)} pays a challenger share of ${tokens(r.rewardWei)}, below the panel's fees ${tokens(r.panelFeesWei)}, so a challenge would cost this auditor ${tokens(-r.netWei)}; the job's buyer can challenge it`,
    );
    return false;
  }
  /**
   * Whether recordReceipt can anchor this bot's receipts: JobMarket has its registries (they never change
   * once set) and this auditor is active (bonded) in AuditorRegistry.
   */
  async canAnchor(): Promise<boolean> {
    const { clients, deployment } = this.ctx;
    if (this.ctx.db.getMeta("registriesSet") !== "1") {
      if ((await getRegistries(clients.public, { jobMarket: deployment.jobMarket })).auditors === undefined) return false;
      this.ctx.db.setMeta("registriesSet", "1");
    }
    return getAuditorActive(clients.public, { auditorRegistry: deployment.auditorRegistry, auditor: this.ctx.me });
  }}
