/**
 * What an auditor can pay for: its bond in AuditorRegistry, its bond-token balance and allowance to DisputeGame, its ETH,
 * and what one challenge costs: the deposit `DisputeGame.requiredDeposit(jobId)` (challenger bond plus panelSize * panelFee,
 * pulled in one transfer by `challenge`) and the gas of the approve + challenge pair at the current fee.
 * The challenger bot reads it at start-up, in its heartbeat and before each challenge; `pouw auditor fund` reads it too.
 *
 * @example
 *   const f = await getAuditorFunds(clients.public, { deployment, account, jobIds: [1n, 2n] });
 *   if (f.tokenBalance < f.deposit!.amount) console.log(`short ${f.deposit!.amount - f.tokenBalance}`);
 */
import type { Address, Chain, PublicClient, Transport } from "viem";
import { auditorRegistryAbi } from "./abi/AuditorRegistry.ts";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { testTokenAbi } from "./abi/TestToken.ts";
import type { Deployment } from "./deployment.ts";
import { JOB_STATUS } from "./getJob.ts";
import { withRetry } from "./retry.ts";

/**
 * Gas units the bot reserves per challenge: the ERC-20 approve (~46k measured on the dev token) and the challenge
 * itself (~0.33M measured in test/bot with a 4-step segment: two Merkle proofs, the dispute record, freeze, the
 * transfer), each with headroom. Proofs grow by one hash per doubling of the segment length.
 */
export const CHALLENGE_GAS_UNITS = { approve: 70_000n, challenge: 450_000n } as const;

export type GetAuditorFundsParameters = {
  deployment: Pick<Deployment, "token" | "auditorRegistry" | "disputeGame">;
  account: Address;
  /** Jobs the auditor may challenge: `deposit` is the largest requiredDeposit among them (default: none, the floor). */
  jobIds?: readonly bigint[];
};

export type AuditorFunds = {
  account: Address;
  ethBalance: bigint;
  tokenBalance: bigint;
  /** Allowance to DisputeGame (0 without one). */
  allowance: bigint;
  bond: bigint;
  minBond: bigint;
  /** Active in AuditorRegistry: receipts can be anchored, panels can draw it. */
  active: boolean;
  /** Fee cap a transaction sent now would carry (wei per gas). */
  maxFeePerGas: bigint;
  /** ETH for one approve + challenge at that fee. */
  challengeGasCost: bigint;
  /**
   * The deposit one challenge takes: the largest requiredDeposit among `jobIds` (with that job), or the floor
   * minChallengerBond + panelSize * panelFee when no job is given. Undefined without a DisputeGame.
   */
  deposit: { amount: bigint; jobId: bigint | undefined } | undefined;
};

/** DisputeGame.requiredDeposit(jobId): the challenger bond of the job plus panelSize * panelFee. */
export async function getRequiredDeposit(client: PublicClient<Transport, Chain>, p: { disputeGame: Address; jobId: bigint }): Promise<bigint> {
  return withRetry(() => client.readContract({ address: p.disputeGame, abi: disputeGameAbi, functionName: "requiredDeposit", args: [p.jobId] }), { what: "requiredDeposit" });
}

/** The fee cap (wei per gas) of a transaction prepared now: EIP-1559 maxFeePerGas, else the legacy gas price. */
export async function getMaxFeePerGas(client: PublicClient<Transport, Chain>): Promise<bigint> {
  return withRetry(async () => {
    try {
      return (await client.estimateFeesPerGas()).maxFeePerGas;
    } catch {
      return client.getGasPrice();
    }
  }, { what: "fees" });
}

export async function getAuditorFunds(client: PublicClient<Transport, Chain>, p: GetAuditorFundsParameters): Promise<AuditorFunds> {
  const { deployment: d, account } = p;
  const read = <T>(what: string, f: () => Promise<T>) => withRetry(f, { what });
  const [ethBalance, tokenBalance, allowance, auditor, active, minBond, maxFeePerGas] = await Promise.all([
    read("getBalance", () => client.getBalance({ address: account })),
    read("balanceOf", () => client.readContract({ address: d.token, abi: testTokenAbi, functionName: "balanceOf", args: [account] })),
    d.disputeGame ? read("allowance", () => client.readContract({ address: d.token, abi: testTokenAbi, functionName: "allowance", args: [account, d.disputeGame!] })) : Promise.resolve(0n),
    read("auditorOf", () => client.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "auditorOf", args: [account] })),
    read("isActive", () => client.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "isActive", args: [account] })),
    read("minBond", () => client.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "minBond" })),
    getMaxFeePerGas(client),
  ]);
  let deposit: AuditorFunds["deposit"];
  if (d.disputeGame) {
    if (p.jobIds && p.jobIds.length > 0) {
      for (const jobId of p.jobIds) {
        const amount = await getRequiredDeposit(client, { disputeGame: d.disputeGame, jobId });
        if (!deposit || amount > deposit.amount) deposit = { amount, jobId };
      }
    } else {
      const params = await read("DisputeGame.params", () => client.readContract({ address: d.disputeGame!, abi: disputeGameAbi, functionName: "params" }));
      deposit = { amount: params.minChallengerBond + params.panelFee * BigInt(params.panelSize), jobId: undefined };
    }
  }
  return {
    account,
    ethBalance,
    tokenBalance,
    allowance,
    bond: auditor.bond,
    minBond,
    active,
    maxFeePerGas,
    challengeGasCost: (CHALLENGE_GAS_UNITS.approve + CHALLENGE_GAS_UNITS.challenge) * maxFeePerGas,
    deposit,
  };
}

/** The deployment's contracts that have no code at the RPC (a stale deployment file, or --rpc on another chain). */
export async function getMissingContracts(client: PublicClient<Transport, Chain>, d: Pick<Deployment, "token" | "jobMarket" | "stakeVault" | "auditorRegistry" | "disputeGame">): Promise<string[]> {
  const named = Object.entries({ token: d.token, jobMarket: d.jobMarket, stakeVault: d.stakeVault, auditorRegistry: d.auditorRegistry, disputeGame: d.disputeGame }).filter(
    (e): e is [string, Address] => e[1] !== undefined,
  );
  const missing: string[] = [];
  for (const [name, address] of named) {
    const code = await withRetry(() => client.getCode({ address }), { what: "getCode" });
    if (!code || code === "0x") missing.push(`${name} ${address}`);
  }
  return missing;
}

/** Ids of the most recent jobs (at most `limit`, default 100) that can still be challenged or accepted: Open, Active or Committed. */
export async function getOpenJobIds(client: PublicClient<Transport, Chain>, p: { jobMarket: Address; limit?: number }): Promise<bigint[]> {
  const count = await withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "jobCount" }), { what: "jobCount" });
  const ids: bigint[] = [];
  for (let id = count; id >= 1n && ids.length < (p.limit ?? 100); id--) {
    const status = JOB_STATUS[(await withRetry(() => client.readContract({ address: p.jobMarket, abi: jobMarketAbi, functionName: "getJob", args: [id] }), { what: "getJob" })).status];
    if (status === "Open" || status === "Active" || status === "Committed" || status === "TimedOut") ids.push(id);
  }
  return ids;
}
