/**
 * Deploy the step verifier (contracts/verifiers/StepVerifier.sol, generated) and DisputeGame for a market deployment,
 * then finish the deployment's one-shot wiring (docs/governance.md): AuditorRegistry.wire(DisputeGame) (panel
 * forfeits) and JobMarket.wire(DisputeGame, evaluator) (freeze, settle; stake is slashed through
 * JobMarket.settleProviderFault; improvement weights only by `evaluator`, default nobody). Each `wire` ends that
 * contract's wiring, so afterwards the caller (the market deployer, their wirer) has no power left over any of
 * them; the wiring is read back from chain and returned. Same wiring as ignition/modules/market.ts.
 *
 * Proving (docs/zk.md "Deploying with the result"): by default the committed development verifier is deployed on
 * the local dev chain (31337) and nothing on any other chain, where DisputeGame then refuses every proof
 * (DisputeGameProvingDisabled; the panel decides every dispute). `stepVerifier` names a ceremony verifier already
 * deployed and its verification key: the key's hash is fixed in DisputeGame, after checking here that the verifier's
 * code holds that key and that it is not the development key. The mode DisputeGame settled on is read back from chain
 * and returned (`proving`).
 *
 * @example
 *   const { disputeGame, wiring } = await deployDisputeGame(clients, { deployment, params: DEFAULT_DISPUTE_PARAMS });
 *   wiring.sealed; // true
 */
import { zeroAddress, zeroHash, type Address, type Hex } from "viem";
import type { VerificationKey } from "snarkjs";
import { vkeyHash as hashVkey, verifierCodeHasVkey } from "../zk/vkey.ts";
import { InputError } from "../errors/index.ts";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { disputeGameAbi, disputeGameBytecode } from "./abi/DisputeGame.ts";
import { groth16VerifierAbi, groth16VerifierBytecode } from "./abi/Groth16Verifier.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import type { ChainClients } from "./clients.ts";
import type { Deployment } from "./deployment.ts";
import { deployContract } from "./deployContract.ts";
import { getProving, type Proving } from "./getProving.ts";
import { getWiring, type Wiring } from "./getWiring.ts";
import { sendContractTx, txRef, type TxRef } from "./send.ts";

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

/** DisputeGame.MAX_ROUNDS: a split Fault is appealed to a larger panel, at most this many rounds per dispute. */
export const MAX_DISPUTE_ROUNDS = 3n;

/**
 * The shortest AuditorRegistry exit delay a DisputeGame with `params` accepts (its constructor reverts with
 * DisputeGameExitDelayTooShort below it): MAX_ROUNDS * (seed delay (blocks * 12 s) + commit window + reveal window)
 * + commit window (the provider's appeal window of a unanimous first-round Fault) + 1 day, so that every member of every
 * round stays forfeitable until the dispute's last round settles.
 * The registry's activation delay must also exceed seedDelayBlocks * 12 s (DisputeGameActivationDelayTooShort).
 */
export function minAuditorExitDelaySeconds(params: Pick<DisputeParams, "seedDelayBlocks" | "commitWindowSeconds" | "revealWindowSeconds">): bigint {
  const round = BigInt(params.seedDelayBlocks) * MAX_SECONDS_PER_BLOCK + BigInt(params.commitWindowSeconds) + BigInt(params.revealWindowSeconds);
  return MAX_DISPUTE_ROUNDS * round + BigInt(params.commitWindowSeconds) + RESOLVE_MARGIN_SECONDS;
}

/** PoUW's local development chain (Hardhat, Anvil): DisputeGame.DEV_CHAIN_ID. */
export const DEV_CHAIN_ID = 31337;
/** DisputeGame.DEV_VKEY_HASH: the vkey hash of the committed development setup (circuits/keys/step.vkey.json). */
export const DEV_VKEY_HASH: Hex = "0x851b95ddd267b95c19364ccc66025f731fe7597762668c56559f0d89f422f11d";


/** The verifier and vkey a deployment names; refused (InputError) when they do not belong together. */
export class StepVerifierMismatchError extends InputError {
  override name = "StepVerifierMismatchError";
  override readonly code: string = "STEP_VERIFIER_MISMATCH";
}

export type DeployDisputeGameParameters = {
  deployment: Deployment;
  params?: DisputeParams;
  /** A ceremony's Groth16 verifier (deployed already) and its verification key; default: the development verifier
   * on the dev chain, none elsewhere (proving disabled). */
  stepVerifier?: { address: Address; vkey: VerificationKey };
  /** The one account that may ever record improvement weights (JobMarket.EVALUATOR_ROLE); default: nobody. */
  evaluator?: Address;
  /** Called with each transaction once mined, in the order sent (the development verifier's deployment when there is one, DisputeGame, the two wire calls). */
  onTx?: (tx: TxRef) => void;
};
export type DeployDisputeGameReturnType = { disputeGame: Address; stepVerifier: Address; proving: Proving; gasUsed: bigint; wiring: Wiring };

/** One line for a deploy report: which setup may settle disputes with proofs on this deployment. */
export function provingLine(p: Proving, chainId: number): string {
  if (p.mode === "Development") return `Development: the committed development setup (verifier ${p.verifier}), allowed on the local dev chain ${chainId} only; never for real value`;
  if (p.mode === "Ceremony") return `Ceremony: verifier ${p.verifier}, vkey hash ${p.vkeyHash}`;
  const why = p.verifier === zeroAddress ? "no step verifier" : `the development verifier ${p.verifier} on chain ${chainId}`;
  return `Disabled: ${why}; every dispute goes to the panel (redeploy with a ceremony verifier and vkey to enable proofs)`;
}

/** The verifier address and vkey hash to deploy DisputeGame with (chain id `chainId`). */
async function chooseVerifier(clients: ChainClients, chainId: number, v: DeployDisputeGameParameters["stepVerifier"]): Promise<{ address: Address; vkeyHash: Hex; gasUsed: bigint; tx?: TxRef }> {
  if (!v) {
    if (chainId !== DEV_CHAIN_ID) return { address: zeroAddress, vkeyHash: zeroHash, gasUsed: 0n };
    const dev = await deployContract(clients, groth16VerifierAbi, groth16VerifierBytecode, []);
    return { address: dev.address, vkeyHash: zeroHash, gasUsed: dev.gasUsed, tx: { what: "deploy Groth16Verifier (development)", hash: dev.hash, blockNumber: dev.block } };
  }
  const vkeyHash = hashVkey(v.vkey);
  if (vkeyHash === DEV_VKEY_HASH) throw new StepVerifierMismatchError("the given vkey is the committed development key, not a ceremony's", { details: "DisputeGame would disable proving on any chain but 31337; see docs/zk.md for the ceremony" });
  const code = await clients.public.getCode({ address: v.address });
  if (!code || code === "0x") throw new StepVerifierMismatchError(`no contract at step verifier ${v.address}`);
  if (!verifierCodeHasVkey(code, v.vkey)) throw new StepVerifierMismatchError(`the code at ${v.address} is not the verifier of the given vkey (${vkeyHash})`, { details: "export the verifier from the ceremony's final zkey (snarkjs zkey export solidityverifier) and deploy that" });
  return { address: v.address, vkeyHash, gasUsed: 0n };
}


export async function deployDisputeGame(clients: ChainClients, p: DeployDisputeGameParameters): Promise<DeployDisputeGameReturnType> {
  const d = p.deployment;
  const params = p.params ?? DEFAULT_DISPUTE_PARAMS;
  const verifier = await chooseVerifier(clients, await clients.public.getChainId(), p.stepVerifier);
  const game = await deployContract(clients, disputeGameAbi, disputeGameBytecode, [d.jobMarket, d.auditorRegistry, verifier.address, verifier.vkeyHash, d.token, params]);
  if (verifier.tx) p.onTx?.(verifier.tx);
  p.onTx?.({ what: "deploy DisputeGame", hash: game.hash, blockNumber: game.block });
  // INVARIANT: the roles that forfeit bonds and settle (slash) jobs go to DisputeGame, once; wiring then ends.
  const wireRegistry = await sendContractTx(clients, { address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "wire", args: [game.address] });
  p.onTx?.(txRef("AuditorRegistry.wire", wireRegistry));
  const wireMarket = await sendContractTx(clients, { address: d.jobMarket, abi: jobMarketAbi, functionName: "wire", args: [game.address, p.evaluator ?? zeroAddress] });
  p.onTx?.(txRef("JobMarket.wire", wireMarket));
  const gasUsed = verifier.gasUsed + game.gasUsed + wireRegistry.gasUsed + wireMarket.gasUsed;
  const wiring = await getWiring(clients.public, { deployment: { ...d, disputeGame: game.address } });
  const proving = await getProving(clients.public, { disputeGame: game.address });
  return { disputeGame: game.address, stepVerifier: verifier.address, proving, gasUsed, wiring };
}
