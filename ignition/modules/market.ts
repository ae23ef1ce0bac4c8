/**
 * Shared builder of the market contract set for the Ignition modules in this folder: StakeVault,
 * AuditorRegistry and JobMarket, with JobMarket given StakeVault's MARKET_ROLE (lock, unlock, timeout
 * slashes); the generated Groth16 step verifier (contracts/verifiers/StepVerifier.sol) and DisputeGame, given
 * JobMarket.DISPUTE_ROLE (freeze, settle) and AuditorRegistry.DISPUTE_ROLE (panel forfeits). DisputeGame slashes
 * through JobMarket.settleProviderFault, so StakeVault.SLASHER_ROLE is granted to nobody. ProviderRegistry and
 * DataRegistry are deployed and set in JobMarket (registries.ts; parameters attestationQuorum,
 * attestationMaxValiditySeconds). The admin (deployer by default) keeps DEFAULT_ADMIN_ROLE on all three.
 *
 * Parameters (per module id): unbondingDelaySeconds, minAuditorBond, auditorExitDelaySeconds (default 14 days; must
 * cover seed delay + commit + reveal windows + 1 day, DisputeGame checks), auditorActivationDelaySeconds (default 1
 * hour: a bond counts for panel snapshots that long after it is posted; must exceed seedDelayBlocks * 12 s), and the dispute
 * parameters minChallengerBond, panelErrorBps, panelSize, seedDelayBlocks, commitWindowSeconds,
 * revealWindowSeconds, panelForfeit, panelFee (IDisputeGame.Params; see docs/disputes.md for how to size them).
 * panelFee defaults to 0.05 token per member (0.15 token per challenge with 3 members, next to the 1-token bond floor).
 */
import type { ContractFuture, IgnitionModuleBuilder, ModuleParameterRuntimeValue } from "@nomicfoundation/ignition-core";
import { keccak256, parseEther, toHex } from "viem";
import { buildRegistries } from "./registries.ts";

export const MARKET_ROLE = keccak256(toHex("MARKET_ROLE"));
export const DISPUTE_ROLE = keccak256(toHex("DISPUTE_ROLE"));

export function buildMarket(m: IgnitionModuleBuilder, token: ContractFuture<string> | ModuleParameterRuntimeValue<string>) {
  const admin = m.getAccount(0);
  const unbondingDelaySeconds = m.getParameter("unbondingDelaySeconds", 7n * 24n * 3600n);
  const minAuditorBond = m.getParameter("minAuditorBond", parseEther("100"));
  const auditorExitDelaySeconds = m.getParameter("auditorExitDelaySeconds", 14n * 24n * 3600n);
  const auditorActivationDelaySeconds = m.getParameter("auditorActivationDelaySeconds", 3600n);

  const stakeVault = m.contract("StakeVault", [token, unbondingDelaySeconds, admin]);
  const auditorRegistry = m.contract("AuditorRegistry", [token, minAuditorBond, auditorExitDelaySeconds, auditorActivationDelaySeconds, admin]);
  const jobMarket = m.contract("JobMarket", [stakeVault, admin]);
  m.call(stakeVault, "grantRole", [MARKET_ROLE, jobMarket], { id: "StakeVault_grant_MARKET_ROLE_to_JobMarket" });

  const disputeParams = {
    minChallengerBond: m.getParameter("minChallengerBond", parseEther("1")),
    panelErrorBps: m.getParameter("panelErrorBps", 300),
    panelSize: m.getParameter("panelSize", 3),
    seedDelayBlocks: m.getParameter("seedDelayBlocks", 2),
    commitWindowSeconds: m.getParameter("commitWindowSeconds", 24 * 3600),
    revealWindowSeconds: m.getParameter("revealWindowSeconds", 24 * 3600),
    panelForfeit: m.getParameter("panelForfeit", parseEther("20")),
    panelFee: m.getParameter("panelFee", parseEther("0.05")),
  };
  const stepVerifier = m.contract("contracts/verifiers/StepVerifier.sol:Groth16Verifier", [], { id: "StepVerifier" });
  const disputeGame = m.contract("DisputeGame", [jobMarket, auditorRegistry, stepVerifier, token, disputeParams]);
  m.call(jobMarket, "grantRole", [DISPUTE_ROLE, disputeGame], { id: "JobMarket_grant_DISPUTE_ROLE_to_DisputeGame" });
  m.call(auditorRegistry, "grantRole", [DISPUTE_ROLE, disputeGame], { id: "AuditorRegistry_grant_DISPUTE_ROLE_to_DisputeGame" });
  // ProviderRegistry and DataRegistry, set in JobMarket once (registries.ts).
  const { providerRegistry, dataRegistry } = buildRegistries(m, jobMarket, auditorRegistry);
  return { stakeVault, auditorRegistry, jobMarket, stepVerifier, disputeGame, providerRegistry, dataRegistry };
}
