/**
 * Check, once at start-up, that a deployment was built from the sources this side's ABIs were generated from: every
 * deployed contract reports a `VERSION` constant (`pouw-<Contract>-<n>`), and abi/versions.ts holds the one each
 * source declares (scripts/gen-abi.ts). A contract reporting another version, or none (built before versions existed,
 * or no contract at that address), would decode calls, events and errors wrongly, so the deployment is refused with a
 * DeploymentVersionError naming the contract, its address, the expected and the found version (or, where no contract
 * is deployed at all, the deployment file's field and the chain). DisputeSettlement and JobMarketExtension have no
 * address in the deployment file: they are read from DisputeGame.settlement() and JobMarket.extension().
 *
 * @example
 *   const d = await readDeployment(path, chainId);
 *   await checkDeploymentVersions(clients.public, { deployment: d }); // throws DeploymentVersionError
 */
import { BaseError, ContractFunctionRevertedError, ContractFunctionZeroDataError, parseAbi, type Address, type Chain, type PublicClient, type Transport } from "viem";
import { disputeGameAbi } from "./abi/DisputeGame.ts";
import { jobMarketAbi } from "./abi/JobMarket.ts";
import { contractVersions } from "./abi/versions.ts";
import { DeploymentFileError, type Deployment } from "./deployment.ts";
import { withRetry } from "./retry.ts";

export type ContractName = keyof typeof contractVersions;

/**
 * A deployed contract does not report the VERSION the off-chain side was built for (`found` null: no VERSION at all;
 * `hasCode` false: no contract at the address, a stale deployment file or another chain). Bad input (CLI exit 2).
 */
export class DeploymentVersionError extends DeploymentFileError {
  override name = "DeploymentVersionError";
  override readonly code: string = "DEPLOYMENT_VERSION";
  readonly contract: ContractName;
  readonly address: Address;
  readonly expected: string;
  readonly found: string | null;
  readonly hasCode: boolean;
  constructor(p: { contract: ContractName; field: string; address: Address; expected: string; found: string | null; hasCode: boolean; chainId: number }) {
    super(
      p.hasCode
        ? `${p.contract} at ${p.address} reports version ${p.found === null ? "none (no VERSION: built from older sources)" : JSON.stringify(p.found)}, but this pouw was built for ${JSON.stringify(p.expected)}: use a deployment of the same sources (redeploy, or a pouw built from the deployment's sources)`
        : `no contract code at ${p.field} ${p.address} on chain ${p.chainId}: the deployment file is stale (redeploy) or --rpc points at another chain`,
    );
    this.contract = p.contract;
    this.address = p.address;
    this.expected = p.expected;
    this.found = p.found;
    this.hasCode = p.hasCode;
  }
}

export type CheckDeploymentVersionsParameters = {
  deployment: Pick<Deployment, "jobMarket" | "jobRecords" | "stakeVault" | "auditorRegistry" | "disputeGame" | "providerRegistry" | "dataRegistry" | "peerDirectory" | "stateOpenings">;
};

/** What each checked contract reported: its name, address and VERSION (all equal to contractVersions on success). */
export type CheckDeploymentVersionsReturnType = { contract: ContractName; address: Address; version: string }[];

const versionAbi = parseAbi(["function VERSION() view returns (string)"]);

/** The contract's VERSION, or null when it has none (the call reverts or returns nothing). RPC failures are retried, then thrown. */
async function readVersion(client: PublicClient<Transport, Chain>, address: Address, what: string): Promise<string | null> {
  try {
    return await withRetry(() => client.readContract({ address, abi: versionAbi, functionName: "VERSION" }), { what });
  } catch (err) {
    const viem = err instanceof BaseError ? err : err instanceof Error && err.cause instanceof BaseError ? err.cause : undefined;
    if (viem?.walk((e) => e instanceof ContractFunctionRevertedError || e instanceof ContractFunctionZeroDataError)) return null;
    throw err;
  }
}

export async function checkDeploymentVersions(client: PublicClient<Transport, Chain>, p: CheckDeploymentVersionsParameters): Promise<CheckDeploymentVersionsReturnType> {
  const d = p.deployment;
  // [contract, its field in the deployment file, address]
  const named: [ContractName, string, Address | undefined][] = [
    ["JobMarket", "jobMarket", d.jobMarket],
    ["JobRecords", "jobRecords", d.jobRecords],
    ["StakeVault", "stakeVault", d.stakeVault],
    ["AuditorRegistry", "auditorRegistry", d.auditorRegistry],
    ["DisputeGame", "disputeGame", d.disputeGame],
    ["ProviderRegistry", "providerRegistry", d.providerRegistry],
    ["DataRegistry", "dataRegistry", d.dataRegistry],
    ["PeerDirectory", "peerDirectory", d.peerDirectory],
    ["StateOpenings", "stateOpenings", d.stateOpenings],
  ];
  const checked: CheckDeploymentVersionsReturnType = [];
  const check = async (contract: ContractName, field: string, address: Address) => {
    const expected = contractVersions[contract];
    const found = await readVersion(client, address, `${contract}.VERSION`);
    if (found !== expected) {
      const code = found === null ? await withRetry(() => client.getCode({ address }), { what: "getCode" }) : "0x01";
      throw new DeploymentVersionError({ contract, field, address, expected, found, hasCode: code !== undefined && code !== "0x", chainId: client.chain.id });
    }
    checked.push({ contract, address, version: found });
  };
  for (const [contract, field, address] of named) if (address !== undefined) await check(contract, field, address);
  // INVARIANT: DisputeGame's version is checked first, so settlement() is read from a DisputeGame of the expected build.
  if (d.disputeGame !== undefined) {
    const settlement = await withRetry(() => client.readContract({ address: d.disputeGame!, abi: disputeGameAbi, functionName: "settlement" }), { what: "DisputeGame.settlement" });
    await check("DisputeSettlement", "disputeGame.settlement()", settlement);
  }
  // INVARIANT: likewise JobMarket's version is checked first, so extension() is read from a JobMarket of the expected build.
  if (d.jobMarket !== undefined) {
    const extension = await withRetry(() => client.readContract({ address: d.jobMarket!, abi: jobMarketAbi, functionName: "extension" }), { what: "JobMarket.extension" });
    await check("JobMarketExtension", "jobMarket.extension()", extension);
  }
  return checked;
}
