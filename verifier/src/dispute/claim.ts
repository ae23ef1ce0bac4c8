/**
 * Claim every credit an account holds after disputes: challenger bonds (DisputeGame), slash shares (StakeVault),
 * panel forfeits (AuditorRegistry) and refunds/payments (JobMarket, in the payment token).
 *
 * @example
 *   const claimed = await claimCredits(clients, { deployment });
 */
import type { Address } from "viem";
import { claimBondCredit } from "../chain/claimBondCredit.ts";
import { claimDisputeCredit } from "../chain/claimDisputeCredit.ts";
import { claimPayment } from "../chain/claimPayment.ts";
import { claimStakeCredit } from "../chain/claimStakeCredit.ts";
import type { ChainClients } from "../chain/clients.ts";
import type { Deployment } from "../chain/deployment.ts";
import { getCredits } from "../chain/getCredits.ts";
import { DisputeInputError } from "./errors.ts";

export type ClaimCreditsParameters = { deployment: Deployment; account?: Address };
export type ClaimCreditsReturnType = { disputeGame: bigint; stakeVault: bigint; auditorRegistry: bigint; jobMarket: bigint };

/** Credits of `account` in each contract (reads only). */
export async function creditsOf(clients: ChainClients, p: ClaimCreditsParameters): Promise<ClaimCreditsReturnType> {
  const d = p.deployment;
  if (!d.disputeGame) throw new DisputeInputError("the deployment has no DisputeGame (deploy it first)");
  return getCredits(clients.public, { deployment: d, account: p.account ?? clients.account.address });
}

/** Claims every non-zero credit of the caller; returns what was claimed per contract. */
export async function claimCredits(clients: ChainClients, p: ClaimCreditsParameters): Promise<ClaimCreditsReturnType> {
  const d = p.deployment;
  const c = await creditsOf(clients, { deployment: d });
  if (c.disputeGame > 0n) await claimDisputeCredit(clients, { disputeGame: d.disputeGame! });
  if (c.stakeVault > 0n) await claimStakeCredit(clients, { stakeVault: d.stakeVault });
  if (c.auditorRegistry > 0n) await claimBondCredit(clients, { auditorRegistry: d.auditorRegistry });
  if (c.jobMarket > 0n) await claimPayment(clients, { jobMarket: d.jobMarket, token: d.token });
  return c;
}
