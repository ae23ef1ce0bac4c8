/**
 * An auditor's money before it audits: the AuditorRegistry bond that makes it eligible for dispute panels and
 * attestation committees (`pouw auditor bond`), and the tokens its challenges lock as deposits (`pouw auditor fund`).
 *
 * @example
 *   const b = await postAuditorBond(clients, deployment, parseEther("100"), { mint: true });
 *   const f = await fundChallengeDeposits(clients, deployment, { disputes: 3n, mint: true });
 */
import { formatEther, type Address } from "viem";
import { getAuditor, getAuditorFunds, getOpenJobIds, mintTestToken, postBond, txRef, type ChainClients, type Deployment, type TxRef } from "../chain/index.ts";
import { InputError, PouwError } from "../errors/index.ts";
import { ensureTokenFunds } from "./funding.ts";

export type PostAuditorBondReturnType = { account: Address; bond: bigint; active: boolean; eligibleFrom: Date; txs: TxRef[] };

/** Tops up the token balance (minting on a dev chain with `mint`), approves and posts `amount` as bond; the bond as it stands after. */
export async function postAuditorBond(clients: ChainClients, d: Deployment, amount: bigint, o: { mint: boolean }): Promise<PostAuditorBondReturnType> {
  const txs = await ensureTokenFunds(clients, d, d.auditorRegistry, amount, { mint: o.mint });
  txs.push(txRef("postBond", await postBond(clients, { auditorRegistry: d.auditorRegistry, amount })));
  const a = await getAuditor(clients.public, { auditorRegistry: d.auditorRegistry, auditor: clients.account.address });
  return { account: clients.account.address, bond: a.bond, active: a.status === 1, eligibleFrom: new Date(Number(a.eligibleFrom) * 1000), txs };
}

export type FundChallengeDepositsReturnType = {
  account: Address;
  /** The token balance after any mint. */
  tokenBalance: bigint;
  /** One challenge deposit now: the largest open job's, or the floor when no job is open. */
  deposit: bigint;
  /** The job whose deposit that is (undefined: the floor). */
  depositJobId: bigint | undefined;
  /** Open jobs the deposit was taken over. */
  openJobs: number;
  ethBalance: bigint;
  challengeGasCost: bigint;
  txs: TxRef[];
};

/**
 * Brings the token balance to `amount`, or to `disputes` challenge deposits (the largest open job's deposit each),
 * minting on a dev chain with `mint`; PouwError naming the shortfall and the fix otherwise. The bot approves
 * DisputeGame for each deposit itself, so nothing is approved here.
 */
export async function fundChallengeDeposits(clients: ChainClients, d: Deployment, o: { amount?: bigint; disputes: bigint; mint: boolean }): Promise<FundChallengeDepositsReturnType> {
  const me = clients.account.address;
  if (!d.disputeGame) throw new InputError("the deployment has no DisputeGame: there is no challenge deposit to fund");
  const jobIds = await getOpenJobIds(clients.public, { jobMarket: d.jobMarket });
  const before = await getAuditorFunds(clients.public, { deployment: d, account: me, jobIds });
  const deposit = before.deposit!;
  const target = o.amount ?? deposit.amount * o.disputes;
  let balance = before.tokenBalance;
  const txs: TxRef[] = [];
  if (balance < target) {
    if (!o.mint || !d.devToken) {
      throw new PouwError(`token balance ${formatEther(balance)} < ${formatEther(target)}: transfer ${formatEther(target - balance)} tokens (${d.token}) to ${me}${d.devToken ? " or pass --mint on the dev chain" : ""}`);
    }
    txs.push(txRef("mint", await mintTestToken(clients, { token: d.token, to: me, amount: target - balance })));
    balance = target;
  }
  return {
    account: me,
    tokenBalance: balance,
    deposit: deposit.amount,
    depositJobId: deposit.jobId,
    openJobs: jobIds.length,
    ethBalance: before.ethBalance,
    challengeGasCost: before.challengeGasCost,
    txs,
  };
}
