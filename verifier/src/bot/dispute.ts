/**
 * The dispute step of the challenger bot, as functions it calls: open a challenge for a bad segment,
 * serve on panels it is drawn for (commit, then reveal), and claim what disputes credited it.
 * DisputeGame (contracts/DisputeGame.sol, verifier/src/dispute) provides the real implementation;
 * without a DisputeGame in the deployment the bot records the finding and opens nothing.
 */
import type { Address, Hex } from "viem";
import type { StepClaim } from "./checks.ts";

export type Finding = { market: Address; jobId: bigint; segment: number; traceRoot: Hex; claim: StepClaim | null; kind: string };

export type DisputeHooks = {
  /** Whether challenges can be opened (a DisputeGame is deployed). */
  readonly available: boolean;
  /**
   * The transaction request for a challenge of `finding` (sent by the bot through its intent table),
   * or null when the finding cannot be challenged (no step claim).
   */
  challengeCall(finding: Finding): { address: Address; data: Hex; value?: bigint } | null;
  /** Whether the challenge for this finding already exists on chain (reconciliation after a restart). */
  challengeExists(finding: Finding): Promise<boolean>;
};

export const noDisputeGame: DisputeHooks = {
  available: false,
  challengeCall: () => null,
  challengeExists: async () => false,
};
