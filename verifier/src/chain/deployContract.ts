/**
 * Deploys one contract from committed bytecode: signed once locally, broadcast (retried with the same
 * bytes) and waited for. Shared by deployMarket and deployDisputeGame.
 *
 * @example
 *   const { address } = await deployContract(clients, stakeVaultAbi, stakeVaultBytecode, [token, delay, wirer]);
 */
import { encodeDeployData, keccak256, type Abi, type Address, type Hex } from "viem";
import type { ChainClients } from "./clients.ts";
import { ChainError } from "./errors.ts";
import { withRetry } from "./retry.ts";
import { broadcastAndWait } from "./send.ts";

export type DeployContractReturnType = { address: Address; block: bigint; gasUsed: bigint; hash: Hex };

export async function deployContract(clients: ChainClients, abi: Abi, bytecode: Hex, args: readonly unknown[]): Promise<DeployContractReturnType> {
  const data = encodeDeployData({ abi, bytecode, args } as never);
  const account = clients.account;
  const request = await withRetry(() => clients.wallet.prepareTransactionRequest({ account, data, chain: clients.wallet.chain }), { what: "prepare deploy" });
  if (!account.signTransaction) throw new ChainError("account cannot sign transactions locally");
  const raw = await account.signTransaction(request as never);
  const r = await broadcastAndWait(clients, { raw, hash: keccak256(raw), nonce: request.nonce!, from: account.address }, "deploy");
  if (!r.receipt.contractAddress) throw new ChainError(`deployment ${r.hash} created no contract`);
  return { address: r.receipt.contractAddress, block: r.receipt.blockNumber, gasUsed: r.gasUsed, hash: r.hash };
}
