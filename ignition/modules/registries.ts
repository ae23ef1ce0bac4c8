/**
 * ProviderRegistry (attestation tiers on a quorum of AuditorRegistry auditors) and DataRegistry (corpora),
 * wired into JobMarket with `setRegistries` (once, by the deployer, before JobMarket.wire ends its wiring).
 * Used by buildMarket (market.ts), which passes the returned `setRegistries` future as a dependency of
 * JobMarket.wire. EVALUATOR_ROLE is fixed by that `wire` (market.ts parameter `evaluator`, default nobody).
 *
 * Parameters (per module id): attestationQuorum (default 2), attestationMaxValiditySeconds (default 30 days).
 */
import type { CallableContractFuture, ContractFuture, IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

export function buildRegistries(m: IgnitionModuleBuilder, jobMarket: CallableContractFuture<"JobMarket">, auditorRegistry: ContractFuture<"AuditorRegistry">) {
  const attestationQuorum = m.getParameter("attestationQuorum", 2n);
  const attestationMaxValiditySeconds = m.getParameter("attestationMaxValiditySeconds", 30n * 24n * 3600n);
  const providerRegistry = m.contract("ProviderRegistry", [auditorRegistry, attestationQuorum, attestationMaxValiditySeconds]);
  const dataRegistry = m.contract("DataRegistry", []);
  const setRegistries = m.call(jobMarket, "setRegistries", [auditorRegistry, providerRegistry, dataRegistry], { id: "JobMarket_setRegistries" });
  return { providerRegistry, dataRegistry, setRegistries };
}
