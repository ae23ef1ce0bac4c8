/**
 * Register a corpus in DataRegistry: the caller becomes its owner; `payout` receives the corpus's data
 * shares at finalize. One corpus per content digest (the CID's sha2-256 digest). Returns the new corpus
 * id from the CorpusRegistered event.
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
