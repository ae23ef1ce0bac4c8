/**
 * Whether the market could decide a dispute now: DisputeGame draws `panelSize` members from the auditors eligible at
 * the challenge (bonded and past the activation delay) and never the challenger, so a market needs panelSize + 1
 * eligible auditors or every dispute ends NoDecision (the bot warns the same, per auditor: bot.ts panelShortfall).
 * `pouw jobs` and `pouw buyer create` print the warning on stderr and put the pool in --json.
 */
import { formatEther, type Chain, type PublicClient, type Transport } from "viem";
import { getPanelPool, type Deployment } from "../chain/index.ts";

export type PanelPoolCheck = { eligible: number; panelSize: number; needed: number; enough: boolean; warning: string | undefined };

export async function panelPoolCheck(client: PublicClient<Transport, Chain>, d: Deployment): Promise<PanelPoolCheck | undefined> {
  if (!d.disputeGame) return undefined;
  const pool = await getPanelPool(client as PublicClient, { deployment: { ...d, disputeGame: d.disputeGame } });
  const n = pool.eligible.length;
  const needed = pool.panelSize + 1;
  const enough = n >= needed;
  const warning = enough
    ? undefined
    : `warning: the market has ${n} auditor${n === 1 ? "" : "s"} eligible for a dispute panel (bonded and past the ${pool.activationDelaySeconds} s activation delay); ` +
      `deciding a dispute needs ${needed} (a panel of ${pool.panelSize} never includes the challenger), so a challenge now would end NoDecision and no cheater would be slashed; ` +
      `fix: ${needed - n} more account${needed - n === 1 ? "" : "s"}: pouw auditor bond ${formatEther(pool.minBond)}${d.devToken ? " --mint" : ""}, then wait ${pool.activationDelaySeconds} s`;
  return { eligible: n, panelSize: pool.panelSize, needed, enough, warning };
}

/** The check as --json carries it. */
export const panelPoolJson = (c: PanelPoolCheck | undefined) => (c === undefined ? null : { eligible: c.eligible, panelSize: c.panelSize, needed: c.needed, enough: c.enough });
