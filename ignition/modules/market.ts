/**
 * Shared builder of the market contract set for the Ignition modules in this folder: StakeVault,
 * AuditorRegistry and JobMarket, the generated Groth16 step verifier (contracts/verifiers/StepVerifier.sol) and
 * DisputeGame, ProviderRegistry and DataRegistry (registries.ts; set in JobMarket with `setRegistries`).
 *
 * Admin (docs/governance.md): none. The deployer (`m.getAccount(0)`) is each contract's one-shot wirer and
 * nobody ever holds DEFAULT_ADMIN_ROLE. The module wires every role once and so ends the wiring of all three
 * contracts: StakeVault.wire(JobMarket, nobody) (MARKET_ROLE: lock, unlock, timeout slashes; DisputeGame slashes
 * through JobMarket.settleProviderFault, so no SLASHER_ROLE), AuditorRegistry.wire(DisputeGame) (panel
 * forfeits), and, after setRegistries, JobMarket.wire(DisputeGame, evaluator) (freeze, settle; improvement
 * weights). After deployment the deployer cannot grant, revoke, lock, slash, forfeit or set anything.
 *
 * Parameters (per module id): unbondingDelaySeconds, minAuditorBond, auditorExitDelaySeconds (default 14 days; must
 * cover seed delay + commit + reveal windows + 1 day, DisputeGame checks), auditorActivationDelaySeconds (default 1
 * hour: a bond counts for panel snapshots that long after it is posted; must exceed seedDelayBlocks * 12 s), evaluator
 * (the one account that may ever record improvement weights; default the zero address: nobody), and the dispute
 * parameters minChallengerBond, panelErrorBps, panelSize, seedDelayBlocks, commitWindowSeconds,
 * revealWindowSeconds, panelForfeit, panelFee (IDisputeGame.Params; see docs/disputes.md for how to size them).
 * panelFee defaults to 0.05 token per member (0.15 token per challenge with 3 members, next to the 1-token bond floor).
 *
 * Proving (docs/zk.md "Deploying with a ceremony key"): `proving` is the step verifier and its vkey hash. PoUW.ts (the
 * local chain) deploys the committed development verifier (`developmentVerifier`) with vkey hash 0; DisputeGame
 * enables it on chain 31337 only. PoUWWithToken.ts takes the parameters `stepVerifier` (a ceremony's verifier,
 * deployed beforehand) and `stepVkeyHash` (its vkey hash, verifier/src/zk/vkey.ts), both defaulting to zero: no
 * verifier, proving disabled, every dispute goes to the panel. DisputeGame emits ProvingConfigured(verifier, vkeyHash,
 * mode) and `proving()` reads it back.
 */
import type { ContractFuture, IgnitionModuleBuilder, ModuleParameterRuntimeValue } from "@nomicfoundation/ignition-core";
import { keccak256, parseEther, toHex, zeroAddress, zeroHash } from "viem";
import { buildRegistries } from "./registries.ts";

export const MARKET_ROLE = keccak256(toHex("MARKET_ROLE"));
export const DISPUTE_ROLE = keccak256(toHex("DISPUTE_ROLE"));

type Address = ContractFuture<string> | ModuleParameterRuntimeValue<string>;
export type ProvingArgs = { verifier: Address | string; vkeyHash: ModuleParameterRuntimeValue<string> | string };

/** The committed development step verifier (contracts/verifiers/StepVerifier.sol), vkey hash 0. */
export function developmentVerifier(m: IgnitionModuleBuilder) {
  const stepVerifier = m.contract("contracts/verifiers/StepVerifier.sol:Groth16Verifier", [], { id: "StepVerifier" });
  return { stepVerifier, proving: { verifier: stepVerifier, vkeyHash: zeroHash } };
}

/** A ceremony verifier from the module parameters stepVerifier / stepVkeyHash (default none: proving disabled). */
export function parameterVerifier(m: IgnitionModuleBuilder): ProvingArgs {
  return { verifier: m.getParameter<string>("stepVerifier", zeroAddress), vkeyHash: m.getParameter<string>("stepVkeyHash", zeroHash) };
}

export function buildMarket(m: IgnitionModuleBuilder, token: Address, proving: ProvingArgs) {
  const deployer = m.getAccount(0);
  const unbondingDelaySeconds = m.getParameter("unbondingDelaySeconds", 7n * 24n * 3600n);
  const minAuditorBond = m.getParameter("minAuditorBond", parseEther("100"));
  const auditorExitDelaySeconds = m.getParameter("auditorExitDelaySeconds", 14n * 24n * 3600n);
  const auditorActivationDelaySeconds = m.getParameter("auditorActivationDelaySeconds", 3600n);
  const evaluator = m.getParameter<string>("evaluator", zeroAddress);

  const stakeVault = m.contract("StakeVault", [token, unbondingDelaySeconds, deployer]);
  const auditorRegistry = m.contract("AuditorRegistry", [token, minAuditorBond, auditorExitDelaySeconds, auditorActivationDelaySeconds, deployer]);
  const jobMarket = m.contract("JobMarket", [stakeVault, deployer]);
  // ownerless: audit receipts and provenance of JobMarket's jobs, read from the market it names (deployMarket does too)
  const jobRecords = m.contract("JobRecords", [jobMarket]);
  m.call(stakeVault, "wire", [jobMarket, zeroAddress], { id: "StakeVault_wire_JobMarket" });

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
  const disputeGame = m.contract("DisputeGame", [jobMarket, auditorRegistry, proving.verifier, proving.vkeyHash, token, disputeParams]);
  // ProviderRegistry and DataRegistry, set in JobMarket once (registries.ts), before JobMarket's wiring ends; the
  // ProviderRegistry's forfeit role is wired before AuditorRegistry.wire ends that registry's wiring.
  const { providerRegistry, dataRegistry, setRegistries, wireAttestation } = buildRegistries(m, jobMarket, auditorRegistry);
  m.call(auditorRegistry, "wire", [disputeGame], { id: "AuditorRegistry_wire_DisputeGame", after: [wireAttestation] });
  m.call(jobMarket, "wire", [disputeGame, evaluator], { id: "JobMarket_wire_DisputeGame", after: [setRegistries] });
  // ownerless, event-only: where parties announce their IPFS nodes (docs/content.md), as deployMarket does
  const peerDirectory = m.contract("PeerDirectory", []);
  return { stakeVault, auditorRegistry, jobMarket, jobRecords, disputeGame, providerRegistry, dataRegistry, peerDirectory };
}
