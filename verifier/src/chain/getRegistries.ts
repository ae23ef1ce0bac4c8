/**
 * The registries JobMarket was wired to (JobMarket.registries(): AuditorRegistry, ProviderRegistry, DataRegistry), each
 * undefined when the market has none (the zero address: deployed with `--no-registries`).
 *
 * @example
 *   const { data } = await getRegistries(clients.public, { jobMarket });
 */
import { zeroAddress, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { withRetry } from "./retry.ts";

export type GetRegistriesParameters = { jobMarket: Address };
export type Registries = { auditors: Address | undefined; providers: Address | undefined; data: Address | undefined };

export async function getRegistries(client: PublicClient<Transport, Chain>, p: GetRegistriesParameters): Promise<Registries> {
  const [auditors, providers, data] = await withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "registries" }), { what: "JobMarket.registries" });
  const set = (a: Address) => (a === zeroAddress ? undefined : a);
  return { auditors: set(auditors), providers: set(providers), data: set(data) };
}
