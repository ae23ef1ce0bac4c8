/**
 * The deployment record `pouw deploy` writes and every other command reads: chain id, contract
 * addresses and the block to start event scans from.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { getAddress, isAddress, type Address } from "viem";
import { z } from "zod";
import { InputError } from "../errors/index.ts";

const address = z.string().refine((s) => isAddress(s), "not an address").transform((s) => getAddress(s));

export const Deployment = z.strictObject({
  format: z.literal("pouw-deployment-1"),
  chainId: z.number().int().positive(),
  /** Payment and stake token (the dev TestToken on a local chain). */
  token: address,
  jobMarket: address,
  /** Audit receipts and provenance records of JobMarket's jobs (JobRecords; the receipts' EIP-712 verifyingContract). */
  jobRecords: address,
  stakeVault: address,
  auditorRegistry: address,
  /** Set once the dispute contract is deployed. */
  disputeGame: address.optional(),
  /** Set when JobMarket's registries were deployed with it (setRegistries). */
  providerRegistry: address.optional(),
  dataRegistry: address.optional(),
  /** Where parties announce their IPFS nodes (docs/content.md); absent in deployments made before it existed. */
  peerDirectory: address.optional(),
  /** StateOpenings beside the market (state openings of committed steps), when deployed: panel members decide a
   * challenge of a withheld opening with it, so a bot samples steps only through the one named here. */
  stateOpenings: address.optional(),
  /** KindRecords beside the market (results of finalized evaluate and generate jobs), when deployed: a training job on a
   * generated dataset is checked against the record naming it. */
  kindRecords: address.optional(),
  /** Block of the first deployment transaction: event scans start here. */
  startBlock: z.string().regex(/^[0-9]+$/),
  /** Whether `token` is the mintable dev TestToken. */
  devToken: z.boolean(),
});

export type Deployment = Omit<z.infer<typeof Deployment>, "token" | "jobMarket" | "jobRecords" | "stakeVault" | "auditorRegistry" | "disputeGame" | "providerRegistry" | "dataRegistry" | "peerDirectory" | "stateOpenings" | "kindRecords"> & {
  token: Address;
  jobMarket: Address;
  jobRecords: Address;
  stakeVault: Address;
  auditorRegistry: Address;
  disputeGame?: Address;
  providerRegistry?: Address;
  dataRegistry?: Address;
  peerDirectory?: Address;
  stateOpenings?: Address;
  kindRecords?: Address;
};

export class DeploymentFileError extends InputError {
  override name = "DeploymentFileError";
  override readonly code: string = "DEPLOYMENT_FILE";
}

export async function readDeployment(path: string, expectChainId?: number): Promise<Deployment> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new DeploymentFileError(`no deployment file at ${path} (run \`pouw deploy\` first or pass --deployment)`, { cause: err });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new DeploymentFileError(`${path} is not valid JSON`, { cause: err });
  }
  const r = Deployment.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new DeploymentFileError(`${path} field ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  if (expectChainId !== undefined && r.data.chainId !== expectChainId) {
    throw new DeploymentFileError(`${path} is a deployment on chain ${r.data.chainId}, but the RPC is chain ${expectChainId}`);
  }
  return r.data as Deployment;
}

export async function writeDeployment(path: string, d: Deployment): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, JSON.stringify(d, null, 2) + "\n");
}
