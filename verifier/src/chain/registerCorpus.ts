/**
 * Register a corpus in DataRegistry: the caller becomes its registrant (it may retire it); `payout` receives
 * the corpus's data shares at finalize, and only `payout` itself can ever move them elsewhere (IDataRegistry,
 * payout rule). Anyone may register any content digest, once per registrant: buyers attach the registration
 * listed under the payout address their manifest names (findCorpus.ts), so registering someone else's bytes
 * with your own payout earns nothing from their buyers, and copying their registration pays them. Returns the
 * new corpus id from the CorpusRegistered event.
 *
 * @example
 *   const { corpusId } = await registerCorpus(clients, { dataRegistry, contentDigest, contentCid, licence, payout, termsHash });
 */
import { parseEventLogs, type Address, type Hex } from "viem";
import { dataRegistryAbi } from "./abi/DataRegistry.ts";
import type { ChainClients } from "./clients.ts";
import { ChainError } from "./errors.ts";
import { sendContractTx, type SendOptions, type SendResult } from "./send.ts";

export type RegisterCorpusParameters = SendOptions & {
  dataRegistry: Address;
  /** sha2-256 digest of the content id (contentDigestOf in provenance/chain.ts). */
  contentDigest: Hex;
  contentCid: string;
  licence: string;
  payout: Address;
  /** Hash of the contributor's terms document. */
  termsHash: Hex;
};

export type RegisterCorpusReturnType = SendResult & { corpusId: bigint };

export async function registerCorpus(clients: ChainClients, p: RegisterCorpusParameters): Promise<RegisterCorpusReturnType> {
  const r = await sendContractTx(
    clients,
    { address: p.dataRegistry, abi: dataRegistryAbi, functionName: "register", args: [p.contentDigest, p.contentCid, p.licence, p.payout, p.termsHash] },
    p,
  );
  const [registered] = parseEventLogs({ abi: dataRegistryAbi, logs: r.receipt.logs, eventName: "CorpusRegistered" });
  if (!registered) throw new ChainError(`register ${r.hash}: no CorpusRegistered event in the receipt`);
  return { ...r, corpusId: registered.args.corpusId };
}
