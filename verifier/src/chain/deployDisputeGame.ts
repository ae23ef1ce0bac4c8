/**
 * Deploy the step verifier (contracts/verifiers/StepVerifier.sol, generated) and DisputeGame for a market deployment,
 * and give DisputeGame the dispute roles it uses: JobMarket.DISPUTE_ROLE (freeze, settle; stake is slashed through
 * JobMarket.settleProviderFault) and AuditorRegistry.DISPUTE_ROLE (panel forfeits). The caller must hold
 * DEFAULT_ADMIN_ROLE on both (the market deployer). Same wiring as ignition/modules/market.ts.
 *
 * @example
 *   const { disputeGame } = await deployDisputeGame(clients, { deployment, params: DEFAULT_DISPUTE_PARAMS });
 */
import { encodeDeployData, keccak256, type Abi, type Address, type Hex } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { disputeGameAbi, disputeGameBytecode } from "./abi/DisputeGame.ts";
import { groth16VerifierAbi, groth16VerifierBytecode } from "./abi/Groth16Verifier.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { ChainClients } from "./clients.ts";
import type { Deployment } from "./deployment.ts";
import { deployContract } from "./deployContract.ts";
import { ChainError } from "./errors.ts";
import { withRetry } from "./retry.ts";
import { broadcastAndWait, sendContractTx } from "./send.ts";

/** IDisputeGame.Params. */
export type DisputeParams = {
  minChallengerBond: bigint;
  panelErrorBps: number;
  panelSize: number;
  seedDelayBlocks: number;
  commitWindowSeconds: number;
  revealWindowSeconds: number;
  panelForfeit: bigint;
  /** Tokens per panel member the challenger deposits at `challenge`; a member earns it by revealing on the winning
   * side (any reveal on NoDecision), the rest goes back to the challenger (docs/disputes.md). > 0. */
  panelFee: bigint;
};

/** Defaults of the Ignition module (ignition/modules/market.ts) for an 18-decimal token. */
export const DEFAULT_DISPUTE_PARAMS: DisputeParams = {
  minChallengerBond: 10n ** 18n,
  panelErrorBps: 300,
  panelSize: 3,
  seedDelayBlocks: 2,
  commitWindowSeconds: 24 * 3600,
  revealWindowSeconds: 24 * 3600,
  panelForfeit: 20n * 10n ** 18n,
  // 0.05 token per member (0.15 per challenge with k = 3): pays one step's recompute and the vote's two transactions,
  // and stays small next to the 1-token bond floor (docs/disputes.md, "panel fee").
  panelFee: 5n * 10n ** 16n,
};

/** PanelTiming.MAX_SECONDS_PER_BLOCK: the seconds one block is assumed to take at most (Ethereum's slot). */
export const MAX_SECONDS_PER_BLOCK = 12n;
/** PanelTiming.RESOLVE_MARGIN_SECONDS: time after the reveal deadline in which resolve still finds the panel bonded. */
export const RESOLVE_MARGIN_SECONDS = 86_400n;

/**
 * The shortest AuditorRegistry exit delay a DisputeGame with `params` accepts (its constructor reverts with
 * DisputeGameExitDelayTooShort below it): seed delay (blocks * 12 s) + commit window + reveal window + 1 day.
 * The registry's activation delay must also exceed seedDelayBlocks * 12 s (DisputeGameActivationDelayTooShort).
 */
export function minAuditorExitDelaySeconds(params: Pick<DisputeParams, "seedDelayBlocks" | "commitWindowSeconds" | "revealWindowSeconds">): bigint {
  return BigInt(params.seedDelayBlocks) * MAX_SECONDS_PER_BLOCK + BigInt(params.commitWindowSeconds) + BigInt(params.revealWindowSeconds) + RESOLVE_MARGIN_SECONDS;
}

export type DeployDisputeGameParameters = { deployment: Deployment; params?: DisputeParams };
export type DeployDisputeGameReturnType = { disputeGame: Address; stepVerifier: Address; gasUsed: bigint };


export async function deployDisputeGame(clients: ChainClients, p: DeployDisputeGameParameters): Promise<DeployDisputeGameReturnType> {
  const d = p.deployment;
  const params = p.params ?? DEFAULT_DISPUTE_PARAMS;
  const verifier = await deployContract(clients, groth16VerifierAbi, groth16VerifierBytecode, []);
  const game = await deployContract(clients, disputeGameAbi, disputeGameBytecode, [d.jobMarket, d.auditorRegistry, verifier.address, d.token, params]);
  let gasUsed = verifier.gasUsed + game.gasUsed;
  const marketRole = await clients.public.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "DISPUTE_ROLE" });
  gasUsed += (await sendContractTx(clients, { address: d.jobMarket, abi: jobMarketAbi, functionName: "grantRole", args: [marketRole, game.address] })).gasUsed;
  const registryRole = await clients.public.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "DISPUTE_ROLE" });
  gasUsed += (await sendContractTx(clients, { address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "grantRole", args: [registryRole, game.address] })).gasUsed;
  return { disputeGame: game.address, stepVerifier: verifier.address, gasUsed };
}
