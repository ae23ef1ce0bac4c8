/**
 * Credits: challenger bonds and rewards (DisputeGame) and panel forfeits (AuditorRegistry) become claim intents,
 * one open at a time per kind, superseded when the credit is already zero.
 */
import type { Address } from "viem";
import { claimBondCreditCall, claimDisputeCreditCall, encodeCall, getBondCredit, getDisputeCredit } from "../../chain/index.ts";
import type { DisputeContext, Game } from "./types.ts";

/** Whether a claim intent is done on chain (nothing left to claim); undefined for other kinds. */
export async function claimDone(g: Game, kind: string, me: Address): Promise<boolean | undefined> {
  if (kind === "claimDispute") return (await getDisputeCredit(g.pub, { disputeGame: g.game, account: me })) === 0n;
  if (kind === "claimForfeit") return (await getBondCredit(g.pub, { auditorRegistry: g.deployment.auditorRegistry, account: me })) === 0n;
  return undefined;
}

/** Records a claim intent for each credit this bot holds and has no claim open for. */
export async function claimCredits(g: Game, ctx: DisputeContext): Promise<void> {
  for (const [kind, claim, creditOf] of [
    ["claimDispute", encodeCall(claimDisputeCreditCall({ disputeGame: g.game })), () => getDisputeCredit(g.pub, { disputeGame: g.game, account: ctx.me })],
    ["claimForfeit", encodeCall(claimBondCreditCall({ auditorRegistry: g.deployment.auditorRegistry })), () => getBondCredit(g.pub, { auditorRegistry: g.deployment.auditorRegistry, account: ctx.me })],
  ] as const) {
    if (ctx.db.openIntents().some((i) => i.kind === kind)) continue;
    const credit = await creditOf();
    if (credit === 0n) continue;
    const n = ctx.db.allIntents().filter((i) => i.kind === kind).length;
    ctx.db.addIntent({ key: `${kind}:${n}`, kind, payload: claim });
  }
}
