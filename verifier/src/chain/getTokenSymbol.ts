/**
 * The ERC-20's symbol, for amounts a person reads ("1.5 POUW"); undefined when the token has none or the read fails
 * (a display nicety must never fail a command).
 *
 * @example
 *   const symbol = (await getTokenSymbol(client, { token: deployment.token })) ?? "tokens";
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { testTokenAbi } from "./abi/TestToken.ts";

export type GetTokenSymbolParameters = { token: Address };
export type GetTokenSymbolReturnType = string | undefined;

export async function getTokenSymbol(client: PublicClient<Transport, Chain>, p: GetTokenSymbolParameters): Promise<GetTokenSymbolReturnType> {
  try {
    const s = await client.readContract({ address: p.token, abi: testTokenAbi, functionName: "symbol" });
    return /^[\x21-\x7e]{1,16}$/.test(s) ? s : undefined;
  } catch {
    return undefined;
  }
}
