/**
 * One account's standing as a provider or an auditor, and claiming what it is owed: what `pouw provider status`,
 * `pouw auditor status` and `pouw auditor claim` (cli/account-status.ts, cli/commands/auditor.ts) print and do, and
 * what the dApp's provider and auditor pages show and claim through the wallet. Chain reads and writes go through
 * chain/ actions; nothing here formats text.
 */
import { getAddress, type Address, type Chain, type PublicClient, type Transport } from "viem";
import {
  claimBondCredit,
  claimDisputeCredit,
  claimPayment,
  claimStakeCredit,
  getAccountStatus,
  getCredits,
  getJobs,
  type ChainClients,
  type Deployment,
  type GetAccountStatusReturnType,
  type GetJobReturnType,
} from "../chain/index.ts";
import { txRef, type TxRef } from "../chain/send.ts";
import { panelPoolCheck, type PanelPoolCheck } from "./panel-pool.ts";

type Reader = PublicClient<Transport, Chain>;

export type ProviderStanding = GetAccountStatusReturnType & { jobs: GetJobReturnType[] };
export type AuditorStanding = GetAccountStatusReturnType & { panel: PanelPoolCheck | undefined };

/** Stake, credits, token balance and the jobs `account` accepted (as provider of record). */
export async function providerStanding(client: Reader, d: Deployment, account: Address): Promise<ProviderStanding> {
  const me = getAddress(account);
  const [status, { jobs }] = await Promise.all([
    getAccountStatus(client, { deployment: d, account: me }),
    getJobs(client, { jobMarket: d.jobMarket, limit: Number.MAX_SAFE_INTEGER }),
  ]);
  return { ...status, jobs: jobs.filter((j) => getAddress(j.provider) === me) };
}

/** Bond, status, credits, token balance, and whether the market's panel pool could decide a dispute now. */
export async function auditorStanding(client: Reader, d: Deployment, account: Address): Promise<AuditorStanding> {
  const [status, panel] = await Promise.all([getAccountStatus(client, { deployment: d, account: getAddress(account) }), panelPoolCheck(client, d)]);
  return { ...status, panel };
}

export type ClaimedCredits = { disputeGame: bigint; stakeVault: bigint; auditorRegistry: bigint; jobMarket: bigint; total: bigint; txs: TxRef[] };

/**
 * Claims every non-zero credit of the caller among `from` (one transaction per contract; nothing sent when all are
 * zero). An auditor's are DisputeGame (deposits back, challenger rewards, panel fees), StakeVault (slash shares) and
 * AuditorRegistry (forfeited bonds); a provider's JobMarket (payments) and StakeVault; a buyer's JobMarket (refunds) and
 * StakeVault (its share of a slash).
 */
export async function claimCredits(clients: ChainClients, d: Deployment, from: readonly (keyof Omit<ClaimedCredits, "total" | "txs">)[]): Promise<ClaimedCredits> {
  const c = await getCredits(clients.public, { deployment: d, account: clients.account.address });
  const take = (k: keyof typeof c) => (from.includes(k) ? c[k] : 0n);
  const out: ClaimedCredits = { disputeGame: take("disputeGame"), stakeVault: take("stakeVault"), auditorRegistry: take("auditorRegistry"), jobMarket: take("jobMarket"), total: 0n, txs: [] };
  out.total = out.disputeGame + out.stakeVault + out.auditorRegistry + out.jobMarket;
  if (out.disputeGame > 0n) out.txs.push(txRef("claim DisputeGame", await claimDisputeCredit(clients, { disputeGame: d.disputeGame! })));
  if (out.stakeVault > 0n) out.txs.push(txRef("claim StakeVault", await claimStakeCredit(clients, { stakeVault: d.stakeVault })));
  if (out.auditorRegistry > 0n) out.txs.push(txRef("claim AuditorRegistry", await claimBondCredit(clients, { auditorRegistry: d.auditorRegistry })));
  if (out.jobMarket > 0n) out.txs.push(txRef("claimPayment", await claimPayment(clients, { jobMarket: d.jobMarket, token: d.token })));
  return out;
}

/** What `pouw auditor claim` claims. */
export const AUDITOR_CREDITS = ["disputeGame", "stakeVault", "auditorRegistry"] as const;
/** What `pouw buyer claim` and the dApp's buyer page claim: refunds (JobMarket) and slash shares (StakeVault). */
export const BUYER_CREDITS = ["jobMarket", "stakeVault"] as const;
/** What the dApp's provider page claims: the payment credit (as `pouw provider claim` does after finalize) and slash shares. */
export const PROVIDER_CREDITS = ["jobMarket", "stakeVault"] as const;
