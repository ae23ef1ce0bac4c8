/**
 * ProviderRegistry (attestation tiers on a quorum of a committee drawn from AuditorRegistry snapshots per request) and DataRegistry (corpora),
 * wired into JobMarket with `setRegistries` (once, by the deployer, before JobMarket.wire ends its wiring).
 * Used by buildMarket (market.ts), which passes the returned `setRegistries` future as a dependency of
 * JobMarket.wire. EVALUATOR_ROLE is fixed by that `wire` (market.ts parameter `evaluator`, default nobody).
 *
 * Parameters (per module id): attestationCommitteeSize (default 3), attestationQuorum (default 2, a strict majority of
 * the committee), attestationMaxValiditySeconds (default 30 days), attestationSeedDelayBlocks (default 2),
 * attestationRequestWindowSeconds (default 1 day; at most the auditor exit delay), attestationRequestFee (wei of the
 * auditor token burned per request, > 0; default 1 token). See docs/panels.md.
 */
import type { CallableContractFuture, IgnitionModuleBuilder } from "@nomicfoundation/ignition-core";

export function buildRegistries(m: IgnitionModuleBuilder, jobMarket: CallableContractFuture<"JobMarket">, auditorRegistry: CallableContractFuture<"AuditorRegistry">) {
  const attestationCommitteeSize = m.getParameter("attestationCommitteeSize", 3n);
  const attestationQuorum = m.getParameter("attestationQuorum", 2n);
  const attestationMaxValiditySeconds = m.getParameter("attestationMaxValiditySeconds", 30n * 24n * 3600n);
  const attestationSeedDelayBlocks = m.getParameter("attestationSeedDelayBlocks", 2);
  const attestationRequestWindowSeconds = m.getParameter("attestationRequestWindowSeconds", 24n * 3600n);
  const attestationRequestFee = m.getParameter("attestationRequestFee", 10n ** 18n);
  const providerRegistry = m.contract("ProviderRegistry", [
    auditorRegistry,
    attestationCommitteeSize,
    attestationQuorum,
    attestationMaxValiditySeconds,
    attestationSeedDelayBlocks,
    attestationRequestWindowSeconds,
    attestationRequestFee,
  ]);
  // ProviderRegistry forfeits the signers of a statement a dispute found false (before AuditorRegistry.wire ends wiring)
  const wireAttestation = m.call(auditorRegistry, "wireAttestation", [providerRegistry], { id: "AuditorRegistry_wireAttestation" });
  const dataRegistry = m.contract("DataRegistry", []);
  const setRegistries = m.call(jobMarket, "setRegistries", [auditorRegistry, providerRegistry, dataRegistry], { id: "JobMarket_setRegistries" });
  return { providerRegistry, dataRegistry, setRegistries, wireAttestation };
}
