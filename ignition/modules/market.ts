/**
 * Shared builder of the market contract set for the Ignition modules in this folder: StakeVault,
 * AuditorRegistry and JobMarket, with JobMarket given StakeVault's MARKET_ROLE (lock, unlock, timeout
 * slashes). The admin (deployer by default) keeps DEFAULT_ADMIN_ROLE on all three and grants the dispute
 * roles (StakeVault.SLASHER_ROLE, JobMarket.DISPUTE_ROLE, AuditorRegistry.DISPUTE_ROLE) to the
 * DisputeGame when that contract exists (a later issue); until then nobody holds them.
 *
 * Parameters (per module id): unbondingDelaySeconds, minAuditorBond, auditorExitDelaySeconds.
 */
import type { ContractFuture, IgnitionModuleBuilder, ModuleParameterRuntimeValue } from "@nomicfoundation/ignition-core";
import { keccak256, parseEther, toHex } from "viem";

export const MARKET_ROLE = keccak256(toHex("MARKET_ROLE"));

export function buildMarket(m: IgnitionModuleBuilder, token: ContractFuture<string> | ModuleParameterRuntimeValue<string>) {
  const admin = m.getAccount(0);
  const unbondingDelaySeconds = m.getParameter("unbondingDelaySeconds", 7n * 24n * 3600n);
  const minAuditorBond = m.getParameter("minAuditorBond", parseEther("100"));
  const auditorExitDelaySeconds = m.getParameter("auditorExitDelaySeconds", 14n * 24n * 3600n);

  const stakeVault = m.contract("StakeVault", [token, unbondingDelaySeconds, admin]);
  const auditorRegistry = m.contract("AuditorRegistry", [token, minAuditorBond, auditorExitDelaySeconds, admin]);
  const jobMarket = m.contract("JobMarket", [stakeVault, admin]);
  m.call(stakeVault, "grantRole", [MARKET_ROLE, jobMarket], { id: "StakeVault_grant_MARKET_ROLE_to_JobMarket" });
  return { stakeVault, auditorRegistry, jobMarket };
}
