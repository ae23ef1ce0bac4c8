/**
 * Read who can still do what to a deployment (docs/governance.md): each contract's `wirer()` (the deployer
 * until it wires; zero once wiring ended, after which nobody holds any power over the contract, because
 * nobody ever holds DEFAULT_ADMIN_ROLE and grantRole/revokeRole/renounceRole always revert), the one holder
 * of each fund-moving role (`roleHolder`), JobMarket's registries, and the cross-links the roles must agree
 * with (JobMarket.vault(), DisputeGame.market()/registry()). `wiringProblems` lists every way a deployment
 * differs from the standard wiring, so a user (and `pouw deploy`) can refuse one that is not sealed.
 *
 * @example
 *   const w = await getWiring(clients.public, { deployment });
 *   if (wiringProblems(w, deployment).length) throw new DeploymentWiringError(...);
 */
import { getAddress, keccak256, toHex, zeroAddress, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { stakeVaultAbi } from "./abi/StakeVault.ts";
import type { Deployment } from "./deployment.ts";
import { ChainError } from "./errors.ts";
import { withRetry } from "./retry.ts";

/** AccessControl role ids of the market contracts (the `*_ROLE` constants). */
export const ROLE_IDS = {
  market: keccak256(toHex("MARKET_ROLE")),
  slasher: keccak256(toHex("SLASHER_ROLE")),
  dispute: keccak256(toHex("DISPUTE_ROLE")),
  evaluator: keccak256(toHex("EVALUATOR_ROLE")),
  /** Held by nobody, ever. */
  defaultAdmin: `0x${"00".repeat(32)}` as `0x${string}`,
} as const;

export type GetWiringParameters = { deployment: Pick<Deployment, "stakeVault" | "auditorRegistry" | "jobMarket" | "disputeGame"> };

/** Addresses are checksummed; `null` means nobody (the zero address on chain). */
export type Wiring = {
  /** Who may still call `wire` (and JobMarket.setRegistries); null once wiring ended. */
  wirers: { stakeVault: Address | null; auditorRegistry: Address | null; jobMarket: Address | null };
  roles: {
    /** StakeVault.MARKET_ROLE: lock, unlock, slash (timeouts and settlements). */
    stakeVaultMarket: Address | null;
    /** StakeVault.SLASHER_ROLE: slash (nobody in the standard deployment). */
    stakeVaultSlasher: Address | null;
    /** AuditorRegistry.DISPUTE_ROLE: forfeit bonds. */
    auditorRegistryDispute: Address | null;
    /** JobMarket.DISPUTE_ROLE: freeze, settle (which slashes stake and refunds escrow). */
    jobMarketDispute: Address | null;
    /** JobMarket.EVALUATOR_ROLE: improvement weights (nobody unless `--evaluator`). */
    jobMarketEvaluator: Address | null;
  };
  /** JobMarket.registries(): null when not set. */
  registries: { auditors: Address; providers: Address; data: Address } | null;
  /** The vault JobMarket locks stake in, and the market and registry DisputeGame calls (when deployed). */
  links: { jobMarketVault: Address; disputeGameMarket: Address | null; disputeGameRegistry: Address | null };
  /** Whether wiring ended on all three contracts: no account has any power left over them. */
  sealed: boolean;
};

/** The deployment's wiring is not the standard one (`pouw deploy`, Ignition); `problems` says how. */
export class DeploymentWiringError extends ChainError {
  override name = "DeploymentWiringError";
  override readonly code: string = "DEPLOYMENT_WIRING";
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(`deployment is not wired as pouw deploy wires it: ${problems.join("; ")}`);
    this.problems = problems;
  }
}

const orNull = (a: Address): Address | null => (a === zeroAddress ? null : getAddress(a));

export async function getWiring(client: PublicClient<Transport, Chain>, p: GetWiringParameters): Promise<Wiring> {
  const d = p.deployment;
  const read = <T>(what: string, f: () => Promise<T>) => withRetry(f, { what });
  const [vaultWirer, registryWirer, marketWirer] = await Promise.all([
    read("StakeVault.wirer", () => client.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "wirer" })),
    read("AuditorRegistry.wirer", () => client.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "wirer" })),
    read("JobMarket.wirer", () => client.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "wirer" })),
  ]);
  const [stakeVaultMarket, stakeVaultSlasher, auditorRegistryDispute, jobMarketDispute, jobMarketEvaluator] = await Promise.all([
    read("StakeVault.roleHolder", () => client.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "roleHolder", args: [ROLE_IDS.market] })),
    read("StakeVault.roleHolder", () => client.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "roleHolder", args: [ROLE_IDS.slasher] })),
    read("AuditorRegistry.roleHolder", () => client.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "roleHolder", args: [ROLE_IDS.dispute] })),
    read("JobMarket.roleHolder", () => client.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "roleHolder", args: [ROLE_IDS.dispute] })),
    read("JobMarket.roleHolder", () => client.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "roleHolder", args: [ROLE_IDS.evaluator] })),
  ]);
  const [auditors, providers, data] = await read("JobMarket.registries", () => client.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "registries" }));
  const jobMarketVault = await read("JobMarket.vault", () => client.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "vault" }));
  let disputeGameMarket: Address | null = null;
  let disputeGameRegistry: Address | null = null;
  if (d.disputeGame) {
    const game = d.disputeGame;
    disputeGameMarket = getAddress(await read("DisputeGame.market", () => client.readContract({ address: game, abi: disputeGameAbi, functionName: "market" })));
    disputeGameRegistry = getAddress(await read("DisputeGame.registry", () => client.readContract({ address: game, abi: disputeGameAbi, functionName: "registry" })));
  }
  const wirers = { stakeVault: orNull(vaultWirer), auditorRegistry: orNull(registryWirer), jobMarket: orNull(marketWirer) };
  return {
    wirers,
    roles: {
      stakeVaultMarket: orNull(stakeVaultMarket),
      stakeVaultSlasher: orNull(stakeVaultSlasher),
      auditorRegistryDispute: orNull(auditorRegistryDispute),
      jobMarketDispute: orNull(jobMarketDispute),
      jobMarketEvaluator: orNull(jobMarketEvaluator),
    },
    registries: auditors === zeroAddress ? null : { auditors: getAddress(auditors), providers: getAddress(providers), data: getAddress(data) },
    links: { jobMarketVault: getAddress(jobMarketVault), disputeGameMarket, disputeGameRegistry },
    sealed: wirers.stakeVault === null && wirers.auditorRegistry === null && wirers.jobMarket === null,
  };
}

/**
 * Every way `w` differs from the standard wiring of `d` (empty: standard): wiring not ended, a fund-moving
 * role held by anything but the deployment's own contracts, or contracts that do not point at each other.
 * The evaluator is reported by the caller (any address, or none, is a deployment choice).
 */
export function wiringProblems(w: Wiring, d: Pick<Deployment, "stakeVault" | "auditorRegistry" | "jobMarket" | "disputeGame">): string[] {
  const out: string[] = [];
  const same = (a: Address | null, b: Address | undefined) => a !== null && b !== undefined && getAddress(a) === getAddress(b);
  for (const [name, wirer] of Object.entries(w.wirers)) if (wirer !== null) out.push(`${name} can still be wired by ${wirer}`);
  if (!same(w.roles.stakeVaultMarket, d.jobMarket)) out.push(`StakeVault.MARKET_ROLE is held by ${w.roles.stakeVaultMarket ?? "nobody"}, not JobMarket ${d.jobMarket}`);
  if (w.roles.stakeVaultSlasher !== null) out.push(`StakeVault.SLASHER_ROLE is held by ${w.roles.stakeVaultSlasher} (the standard deployment slashes only through JobMarket)`);
  if (!same(w.links.jobMarketVault, d.stakeVault)) out.push(`JobMarket locks stake in ${w.links.jobMarketVault}, not StakeVault ${d.stakeVault}`);
  if (!d.disputeGame) {
    out.push("no DisputeGame in the deployment");
  } else {
    if (!same(w.roles.jobMarketDispute, d.disputeGame)) out.push(`JobMarket.DISPUTE_ROLE is held by ${w.roles.jobMarketDispute ?? "nobody"}, not DisputeGame ${d.disputeGame}`);
    if (!same(w.roles.auditorRegistryDispute, d.disputeGame)) out.push(`AuditorRegistry.DISPUTE_ROLE is held by ${w.roles.auditorRegistryDispute ?? "nobody"}, not DisputeGame ${d.disputeGame}`);
    if (!same(w.links.disputeGameMarket, d.jobMarket)) out.push(`DisputeGame settles on ${w.links.disputeGameMarket}, not JobMarket ${d.jobMarket}`);
    if (!same(w.links.disputeGameRegistry, d.auditorRegistry)) out.push(`DisputeGame draws from ${w.links.disputeGameRegistry}, not AuditorRegistry ${d.auditorRegistry}`);
  }
  if (w.registries !== null && !same(w.registries.auditors, d.auditorRegistry)) out.push(`JobMarket's auditor registry is ${w.registries.auditors}, not AuditorRegistry ${d.auditorRegistry}`);
  return out;
}
