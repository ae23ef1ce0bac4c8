/**
 * What every part of the market page shares: the page's state (deployment, wallet, account, the quoted job), its URL
 * parameters, element lookup and escaping, the error box, and the wallet checks the writes need.
 */
import type { Address, EIP1193Provider } from "viem";
import { ContractRevertError, WalletRejectedError } from "../../verifier/src/chain/errors.ts";
import type { ChainClients } from "../../verifier/src/chain/clients.ts";
import type { Deployment } from "../../verifier/src/chain/deployment.ts";
import type { GetJobReturnType } from "../../verifier/src/chain/getJob.ts";
import { PouwError } from "../../verifier/src/errors/index.ts";
import type { DataTermsDecision } from "../../verifier/src/market/data-terms.ts";
import type { DerivedPolicy } from "../../verifier/src/market/job-policy.ts";
import type { Manifest } from "../../verifier/src/ml/manifest.ts";
import type { DetectionMatrix } from "../../verifier/src/policy/detection.ts";

export type Ethereum = EIP1193Provider & { on?: (event: string, fn: (...a: unknown[]) => void) => void };

export const $ = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (!el) throw new Error(`page has no #${id}`);
  return el as T;
};
export const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
export const params = new URLSearchParams(location.search);
export const POLL_MS = Number(params.get("poll") ?? 1_000);
export const SOURCE = params.get("source") ?? location.origin;

export const state: {
  deployment?: Deployment;
  symbol: string;
  ethereum?: Ethereum;
  account?: Address;
  walletChainId?: number;
  clients?: ChainClients;
  detection?: { path: string; matrix: DetectionMatrix };
  manifest?: Manifest;
  derived?: DerivedPolicy;
  terms?: DataTermsDecision;
  jobId?: bigint;
  job?: GetJobReturnType;
  busy: boolean;
  listening: boolean;
} = { symbol: "tokens", busy: false, listening: false };


/** One line a buyer can act on, by error class (never by message text). */
export function describeError(err: unknown): string {
  if (err instanceof WalletRejectedError) return "You rejected the request in your wallet: nothing was signed or sent.";
  if (err instanceof ContractRevertError) return `The contract refused: ${err.shortMessage}`;
  if (err instanceof PouwError) return err.shortMessage;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Shows `err`; a second error in the same run of queued work goes on its own line (none is hidden by a later one). */
export function showError(err: unknown): void {
  console.error(err);
  const box = $("error");
  const line = typeof err === "string" ? err : describeError(err);
  box.textContent = box.textContent ? `${box.textContent}\n${line}` : line;
  box.classList.remove("hidden");
}
export function clearError(): void {
  $("error").classList.add("hidden");
  $("error").textContent = "";
}

export function wrongChain(): string | undefined {
  const d = state.deployment;
  if (!d || state.walletChainId === undefined || state.walletChainId === d.chainId) return undefined;
  return `Wrong chain: the wallet is on chain ${state.walletChainId}, but this deployment is on chain ${d.chainId}. Switch the wallet's network.`;
}

export function needWallet(): ChainClients {
  if (!state.clients || !state.account) throw new Error("Connect the wallet first.");
  const wrong = wrongChain();
  if (wrong) throw new Error(wrong);
  return state.clients;
}
