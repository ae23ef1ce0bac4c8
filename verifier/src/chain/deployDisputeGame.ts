/**
 * Deploy the step verifier (contracts/verifiers/StepVerifier.sol, generated) and DisputeGame for a market deployment,
 * then finish the deployment's one-shot wiring (docs/governance.md): AuditorRegistry.wire(DisputeGame) (panel
 * forfeits) and JobMarket.wire(DisputeGame, evaluator) (freeze, settle; stake is slashed through
 * JobMarket.settleProviderFault; improvement weights only by `evaluator`, default nobody). Each `wire` ends that
 * contract's wiring, so afterwards the caller (the market deployer, their wirer) has no power left over any of
 * them; the wiring is read back from chain and returned. Same wiring as ignition/modules/market.ts.
 *
 * @example
 *   const { disputeGame, wiring } = await deployDisputeGame(clients, { deployment, params: DEFAULT_DISPUTE_PARAMS });
 *   wiring.sealed; // true
 */
import { zeroAddress, type Address } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { disputeGameAbi, disputeGameBytecode } from "./abi/DisputeGame.ts";
import { groth16VerifierAbi, groth16VerifierBytecode } from "./abi/Groth16Verifier.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { ChainClients } from "./clients.ts";
import type { Deployment } from "./deployment.ts";
import { deployContract } from "./deployContract.ts";
import { getWiring, type Wiring } from "./getWiring.ts";
import { sendContractTx } from "./send.ts";

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

export type DeployDisputeGameParameters = {
  deployment: Deployment;
  params?: DisputeParams;
  /** The one account that may ever record improvement weights (JobMarket.EVALUATOR_ROLE); default: nobody. */
  evaluator?: Address;
};
export type DeployDisputeGameReturnType = { disputeGame: Address; stepVerifier: Address; gasUsed: bigint; wiring: Wiring };


export async function deployDisputeGame(clients: ChainClients, p: DeployDisputeGameParameters): Promise<DeployDisputeGameReturnType> {
  const d = p.deployment;
  const params = p.params ?? DEFAULT_DISPUTE_PARAMS;
  const verifier = await deployContract(clients, groth16VerifierAbi, groth16VerifierBytecode, []);
  const game = await deployContract(clients, disputeGameAbi, disputeGameBytecode, [d.jobMarket, d.auditorRegistry, verifier.address, d.token, params]);
  let gasUsed = verifier.gasUsed + game.gasUsed;
  // INVARIANT: the roles that forfeit bonds and settle (slash) jobs go to DisputeGame, once; wiring then ends.
  gasUsed += (await sendContractTx(clients, { address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "wire", args: [game.address] })).gasUsed;
  gasUsed += (await sendContractTx(clients, { address: d.jobMarket, abi: jobMarketAbi, functionName: "wire", args: [game.address, p.evaluator ?? zeroAddress] })).gasUsed;
  const wiring = await getWiring(clients.public, { deployment: { ...d, disputeGame: game.address } });
  return { disputeGame: game.address, stepVerifier: verifier.address, gasUsed, wiring };
}
