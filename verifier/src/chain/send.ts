/**
 * The one write path under every action: encode, estimate (a revert surfaces here, decoded by error
 * name), sign locally, hand the signed transaction to `onSigned` (the bot persists it as an intent
 * BEFORE it leaves the process), broadcast, and wait for the receipt and confirmations.
 *
 * Because the transaction is signed once and its hash is known before broadcast, every retry
 * rebroadcasts the identical bytes: a retried or restarted send can never become a second transaction.
 */
import {
  encodeFunctionData,
  formatEther,
  keccak256,
  type Abi,
  type Address,
  type ContractFunctionArgs,
  type ContractFunctionName,
  type Hex,
  type TransactionReceipt,
} from "viem";
import { logger } from "../log/index.ts";
import type { ChainClients } from "./clients.ts";
import { ChainError, ContractRevertError, GasFundsError, toChainError, TxDroppedError, TxRevertedError } from "./errors.ts";
import { withRetry } from "./retry.ts";

const log = logger("chain");

export type SignedTx = { hash: Hex; raw: Hex; nonce: number; from: Address };

export type SendOptions = {
  /** Called with the signed transaction before broadcast; persist it to resume without duplicates. */
  onSigned?: (tx: SignedTx) => void | Promise<void>;
  /** Fixed nonce (default: the account's pending nonce). */
  nonce?: number;
};

export type SendResult = { hash: Hex; receipt: TransactionReceipt; gasUsed: bigint };

/** A mined transaction as a command reports it: what it did, its hash and its block. */
export type TxRef = { what: string; hash: Hex; blockNumber: bigint };

export const txRef = (what: string, r: SendResult): TxRef => ({ what, hash: r.hash, blockNumber: r.receipt.blockNumber });

export async function sendContractTx<
  const abi extends Abi,
  fn extends ContractFunctionName<abi, "nonpayable" | "payable">,
>(
  clients: ChainClients,
  call: { address: Address; abi: abi; functionName: fn; args: ContractFunctionArgs<abi, "nonpayable" | "payable", fn> },
  options: SendOptions = {},
): Promise<SendResult> {
  const data = encodeFunctionData({ abi: call.abi, functionName: call.functionName, args: call.args } as never);
  if (clients.account.type === "json-rpc") return sendThroughWallet(clients, call.address, data, String(call.functionName), options);
  const signed = await signTx(clients, call.address, data, options.nonce);
  log.debug({ fn: call.functionName, hash: signed.hash, nonce: signed.nonce }, "signed");
  await options.onSigned?.(signed);
  return broadcastAndWait(clients, signed, String(call.functionName));
}

/**
 * The write path of an account the wallet holds (an injected EIP-1193 wallet in the dApp, viem's json-rpc account):
 * the same estimate (a revert is decoded by name before the wallet is asked), then eth_sendTransaction, which signs
 * and broadcasts in one step, then the same receipt wait.
 *
 * NOTE: the signed bytes never reach this process, so there is no intent to persist: `onSigned` callers (the bot)
 * must sign locally, and passing `onSigned` or `nonce` with a wallet account is refused rather than ignored.
 */
async function sendThroughWallet(clients: ChainClients, to: Address, data: Hex, what: string, options: SendOptions): Promise<SendResult> {
  if (options.onSigned || options.nonce !== undefined) throw new ChainError(`${what}: a wallet account signs and broadcasts in one step; onSigned and a fixed nonce need a local account`);
  const account = clients.account;
  const request = await withRetry(() => clients.wallet.prepareTransactionRequest({ account, to, data, chain: clients.wallet.chain }), { what: "prepare" }).catch((err: unknown) =>
    gasFundsNamed(clients, err),
  );
  let hash: Hex;
  try {
    hash = await clients.wallet.sendTransaction(request as never);
  } catch (err) {
    throw toChainError(err);
  }
  log.debug({ fn: what, hash }, "sent through the wallet");
  const receipt = await waitForReceipt(clients, hash);
  if (receipt.status !== "success") throw new TxRevertedError(what, hash, receipt.blockNumber);
  log.info({ fn: what, hash, gasUsed: receipt.gasUsed.toString() }, "confirmed");
  return { hash, receipt, gasUsed: receipt.gasUsed };
}

/** Estimates gas (decoding a revert) and signs; nothing is broadcast. */
export async function signTx(clients: ChainClients, to: Address, data: Hex, nonce?: number): Promise<SignedTx> {
  const account = clients.account;
  const request = await withRetry(
    () =>
      clients.wallet.prepareTransactionRequest({
        account,
        to,
        data,
        chain: clients.wallet.chain,
        ...(nonce === undefined ? {} : { nonce }),
      }),
    { what: "prepare" },
  ).catch((err: unknown) => gasFundsNamed(clients, err));
  if (!account.signTransaction) throw new ChainError("account cannot sign transactions locally");
  const raw = await account.signTransaction(request as never);
  return { hash: keccak256(raw), raw, nonce: request.nonce!, from: account.address };
}

/** Rethrows `err`; a GasFundsError first gets the account and its ETH balance in its message (the fix: send it ETH). */
async function gasFundsNamed(clients: ChainClients, err: unknown): Promise<never> {
  if (!(err instanceof GasFundsError)) throw err;
  const address = clients.account.address;
  const balance = await clients.public.getBalance({ address }).catch(() => undefined);
  throw new GasFundsError(
    // NOTE: "not enough ETH for gas" first: the bot's intent table and its tests read the cause from the start
    balance === 0n || balance === undefined ? `not enough ETH for gas: the account ${address} has no ETH` : `not enough ETH for gas: the account ${address} has ${formatEther(balance)} ETH, short of gas x fee`,
    { cause: err },
  );
}

/**
 * Broadcasts a signed transaction (idempotently) and waits for its receipt. Throws TxRevertedError on a reverted
 * receipt, and the node's refusal as a typed error (NonceTooLowError, GasFundsError, ReplacementUnderpricedError,
 * FeeTooLowError; errors.ts) so that the caller can tell what a later attempt needs.
 */
export async function broadcastAndWait(clients: ChainClients, signed: SignedTx, what = "tx"): Promise<SendResult> {
  await withRetry(
    async () => {
      try {
        await clients.public.sendRawTransaction({ serializedTransaction: signed.raw });
      } catch (err) {
        // Already in the pool or already mined (a rebroadcast after a lost response): fine.
        if (await clients.public.getTransaction({ hash: signed.hash }).catch(() => null)) return;
        throw err;
      }
    },
    { what: `broadcast ${what}` },
  ).catch((err: unknown) => gasFundsNamed(clients, err));
  const receipt = await waitForReceipt(clients, signed.hash);
  if (receipt.status !== "success") throw new TxRevertedError(what, signed.hash, receipt.blockNumber);
  log.info({ fn: what, hash: signed.hash, gasUsed: receipt.gasUsed.toString() }, "confirmed");
  return { hash: signed.hash, receipt, gasUsed: receipt.gasUsed };
}

/** Waits for the receipt of `hash` and `clients.confirmations` blocks, polling with retries. */
export async function waitForReceipt(clients: ChainClients, hash: Hex, timeoutMs = 120_000): Promise<TransactionReceipt> {
  const started = Date.now();
  for (;;) {
    const receipt = await withRetry(() => clients.public.getTransactionReceipt({ hash }).catch((err: unknown) => {
      const e = toChainError(err);
      if (e instanceof ChainError && e.code === "CHAIN_ERROR") return null; // not found yet
      throw e;
    }), { what: "receipt" });
    if (receipt) {
      const head = await withRetry(() => clients.public.getBlockNumber({ cacheTime: 0 }), { what: "blockNumber" });
      if (head - receipt.blockNumber + 1n >= BigInt(clients.confirmations)) return receipt;
    }
    if (Date.now() - started > timeoutMs) throw new TxDroppedError(`no receipt for ${hash} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, Math.min(clients.pollingIntervalMs, 500)));
  }
}

export { ContractRevertError };
