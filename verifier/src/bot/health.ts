/**
 * Whether a challenger bot can act now (GET /healthz, `pouw auditor run --metrics-port`): read from the chain and the
 * bot's database, each failing condition a reason with its numbers and, where there is one, the fix.
 */
import { type Address } from "viem";
import { getAuditorFunds, toChainError, type AuditorFunds } from "../chain/index.ts";
import { ethDown, ethUp, fundingFix, tokens, type BotContext } from "./context.ts";

/** Why a bot cannot act now (health()); each with a message naming the numbers and, where there is one, the fix. */
export type HealthReasonKind = "rpc-down" | "rpc-stale" | "unbonded" | "unfunded" | "no-gas" | "indexer-behind" | "intent-stuck";

/** Whether the bot can act now: `canAct` iff `reasons` is empty (GET /healthz 200, else 503 with the reasons). */
export type BotHealth = {
  canAct: boolean;
  reasons: { kind: HealthReasonKind; message: string }[];
  auditor: Address;
  /** Challenge deposits the token balance covers now (floor(balance / deposit)); null without a DisputeGame. */
  depositsFunded: number | null;
  /** This bot's own deposits out in its open disputes (returned or forfeited at resolution). */
  depositsHeld: number;
  /** The latest block the RPC reported and the indexer's cursor (the last block whose events are stored). */
  head: string | null;
  cursor: string | null;
  /** Milliseconds since the last successful scan (null: none yet). */
  lastScanAgeMs: number | null;
};

/**
 * Whether the bot can act now: the RPC answers and a scan succeeded within `staleAfterMs`; the auditor is bonded;
 * its tokens cover at least one challenge deposit (DisputeGame.requiredDeposit of the largest followed job) and its
 * ETH the gas of one; the indexer's cursor is within `maxIndexLagBlocks` of the confirmed head; no intent has been
 * open longer than `intentDeadlineMs`. Each failing condition is a reason (GET /healthz answers 503 with them).
 */
export async function botHealth(ctx: BotContext, s: { held: number; lastScanAt: number | undefined; jobLimit: number }): Promise<BotHealth> {
  const { clients, deployment, options, db } = ctx;
  const now = ctx.now();
  const reasons: BotHealth["reasons"] = [];
  const held = s.held;
  const cursor = db.getMeta("cursor") ?? null;
  const base = { auditor: ctx.me, depositsHeld: held, cursor, lastScanAgeMs: s.lastScanAt === undefined ? null : now - s.lastScanAt };
  const jobIds = db.jobsWithStatus("Open", "Active", "Committed", "TimedOut").map((j) => j.jobId).sort((a, b) => (b > a ? 1 : b < a ? -1 : 0)).slice(0, s.jobLimit);
  let head: bigint;
  let funds: AuditorFunds;
  try {
    [head, funds] = await Promise.all([clients.public.getBlockNumber({ cacheTime: 0 }), getAuditorFunds(clients.public, { deployment, account: ctx.me, jobIds })]);
  } catch (err) {
    reasons.push({ kind: "rpc-down", message: `the RPC does not answer: ${toChainError(err).shortMessage}` });
    return { canAct: false, reasons, ...base, depositsFunded: null, head: null };
  }
  const staleMs = options.staleAfterMs ?? Math.max(60_000, 5 * clients.pollingIntervalMs);
  if (s.lastScanAt === undefined) reasons.push({ kind: "rpc-stale", message: "no scan of the chain has succeeded yet" });
  else if (now - s.lastScanAt > staleMs) reasons.push({ kind: "rpc-stale", message: `the last successful scan was ${Math.round((now - s.lastScanAt) / 1000)} s ago (stale after ${Math.round(staleMs / 1000)} s)` });
  if (!funds.active) {
    const need = funds.minBond > funds.bond ? funds.minBond - funds.bond : funds.minBond;
    reasons.push({ kind: "unbonded", message: `auditor ${ctx.me} is not bonded (bond ${tokens(funds.bond)}, minimum ${tokens(funds.minBond)}); fix: pouw auditor bond ${tokens(need)}${deployment.devToken ? " --mint" : ""}` });
  }
  let depositsFunded: number | null = null;
  if (deployment.disputeGame && funds.deposit) {
    const d = funds.deposit.amount;
    depositsFunded = d === 0n ? 0 : Number(funds.tokenBalance / d);
    if (depositsFunded === 0) {
      const heldNote = held > 0 ? `; ${held} deposit${held === 1 ? " is" : "s are"} held in this bot's open dispute${held === 1 ? "" : "s"}, returned at resolution` : "";
      reasons.push({ kind: "unfunded", message: `token balance ${tokens(funds.tokenBalance)} < one challenge deposit ${tokens(d)} (short ${tokens(d - funds.tokenBalance)})${heldNote}; fix: ${fundingFix(ctx, d, funds)}` });
    }
  }
  if (funds.ethBalance < funds.challengeGasCost) {
    reasons.push({ kind: "no-gas", message: `ETH ${ethDown(funds.ethBalance)} < ~${ethUp(funds.challengeGasCost)} for the gas of one challenge; fix: send at least ${ethUp(funds.challengeGasCost - funds.ethBalance)} ETH to ${ctx.me}` });
  }
  const safe = head - BigInt(clients.confirmations - 1);
  const lag = cursor === null ? safe - (BigInt(deployment.startBlock) - 1n) : safe - BigInt(cursor);
  const maxLag = BigInt(options.maxIndexLagBlocks ?? 10);
  if (lag > maxLag) reasons.push({ kind: "indexer-behind", message: `the indexer's cursor ${cursor ?? "(none)"} is ${lag} blocks behind the confirmed head ${safe} (more than ${maxLag})` });
  const deadline = options.intentDeadlineMs ?? 15 * 60_000;
  const stuck = db.openIntents().filter((i) => Date.now() - i.created_at > deadline);
  if (stuck.length > 0) {
    reasons.push({
      kind: "intent-stuck",
      message: `${stuck.length} intent${stuck.length === 1 ? "" : "s"} open longer than ${Math.round(deadline / 1000)} s: ${stuck.slice(0, 5).map((i) => `${i.key} (${i.status}${i.error ? `: ${i.error}` : ""})`).join("; ")}`,
    });
  }
  return { canAct: reasons.length === 0, reasons, ...base, depositsFunded, head: head.toString() };
}
