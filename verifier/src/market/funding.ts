/**
 * Token funding before a payment, bond or fee: the account must hold `amount` of the deployment's token and have
 * approved `spender` for it. On a dev-token deployment with `mint`, the shortfall is minted first (local chains only).
 * Shared by `pouw buyer create`, `pouw auditor bond`, `pouw attest request` (cli/context.ts ensureFunds) and planned jobs.
 *
 * Browser-safe: chain actions only.
 *
 * @example
 *   const txs = await ensureTokenFunds(clients, deployment, deployment.jobMarket, payment, { mint: true });
 */
import { formatEther, type Address } from "viem";
import { approveToken } from "../chain/approveToken.ts";
import type { ChainClients } from "../chain/clients.ts";
import type { Deployment } from "../chain/deployment.ts";
import { getTokenAllowance, getTokenBalance } from "../chain/getTokenBalance.ts";
import { mintTestToken } from "../chain/mintTestToken.ts";
import { txRef, type TxRef } from "../chain/send.ts";
import { InputError } from "../errors/index.ts";

/** The account's token balance is below what it must pay, and nothing may mint the rest. CLI exit 2. */
export class TokenFundsError extends InputError {
  override name = "TokenFundsError";
  override readonly code: string = "TOKEN_FUNDS";
  readonly balance: bigint;
  readonly need: bigint;

  constructor(balance: bigint, need: bigint, devToken: boolean) {
    super(`token balance ${formatEther(balance)} is below ${formatEther(need)}${devToken ? " (pass --mint on the dev chain)" : ""}`);
    this.balance = balance;
    this.need = need;
  }
}

/** Mints the shortfall (with `mint`, dev token only) and approves `spender` when the allowance is short; returns the transactions sent. */
export async function ensureTokenFunds(clients: ChainClients, d: Pick<Deployment, "token" | "devToken">, spender: Address, amount: bigint, opts: { mint?: boolean } = {}): Promise<TxRef[]> {
  const txs: TxRef[] = [];
  const me = clients.account.address;
  const balance = await getTokenBalance(clients.public, { token: d.token, account: me });
  if (balance < amount) {
    if (!opts.mint || !d.devToken) throw new TokenFundsError(balance, amount, d.devToken);
    txs.push(txRef("mint", await mintTestToken(clients, { token: d.token, to: me, amount: amount - balance })));
  }
  const allowance = await getTokenAllowance(clients.public, { token: d.token, owner: me, spender });
  if (allowance < amount) txs.push(txRef("approve", await approveToken(clients, { token: d.token, spender, amount })));
  return txs;
}
