/**
 * Deploy and wire the market contracts (the same set and roles as ignition/modules/PoUW.ts and the
 * contract tests' fixture): a payment/stake token (the dev TestToken unless `token` is given),
 * StakeVault, AuditorRegistry, JobMarket and JobRecords (receipts and provenance; ownerless), with the caller as each contract's one-shot wirer (nobody ever
 * holds DEFAULT_ADMIN_ROLE; docs/governance.md). StakeVault is wired here, once: MARKET_ROLE to JobMarket,
 * no slasher, and its wiring ends. Unless `registries` is false, it also deploys ProviderRegistry
 * (attestation tiers; quorum and max validity as in ignition/modules/registries.ts) and DataRegistry and
 * calls JobMarket.setRegistries (once), which JobRecords.recordReceipt (bonded-auditor check), tiers and corpora need.
 * It always deploys the ownerless PeerDirectory (where parties announce their IPFS nodes, docs/content.md).
 *
 * IMPORTANT: JobMarket and AuditorRegistry stay wireable by the caller until deployDisputeGame.ts wires their
 * dispute roles to DisputeGame and ends their wiring; a deployment is not usable before that (getWiring).
 *
 * The AuditorRegistry counts a bond for panel and committee snapshots `activationDelaySeconds` after it is posted
 * (default 1 hour, DEFAULT_ACTIVATION_DELAY_SECONDS: local demos and tests advance time by it after bonding; a real
 * deployment may want longer). DisputeGame and ProviderRegistry refuse a registry whose activation delay is not
 * longer than their seed delay in seconds, or whose exit delay is too short for their windows (docs/panels.md).
 *
 * @example
 *   const d = await deployMarket(clients, { unbondingDelaySeconds: 604_800n, minBond: parseEther("100"), exitDelaySeconds: 1_209_600n });
 */
import { zeroAddress, type Address } from "viem";
import { auditorRegistryAbi, auditorRegistryBytecode } from "./abi/AuditorRegistry.ts";
import { dataRegistryAbi, dataRegistryBytecode } from "./abi/DataRegistry.ts";
import { peerDirectoryAbi, peerDirectoryBytecode } from "./abi/PeerDirectory.ts";
import { providerRegistryAbi, providerRegistryBytecode } from "./abi/ProviderRegistry.ts";
import { jobMarketAbi, jobMarketBytecode } from "./abi/JobMarket.ts";
import { jobRecordsAbi, jobRecordsBytecode } from "./abi/JobRecords.ts";
import { stakeVaultAbi, stakeVaultBytecode } from "./abi/StakeVault.ts";
import { testTokenAbi, testTokenBytecode } from "./abi/TestToken.ts";
import type { ChainClients } from "./clients.ts";
import type { Deployment } from "./deployment.ts";
import { deployContract } from "./deployContract.ts";
import { sendContractTx, txRef, type TxRef } from "./send.ts";

export type DeployMarketParameters = {
  /** An existing ERC-20 for payment and stake; default: deploy the mintable dev TestToken. */
  token?: Address;
  unbondingDelaySeconds: bigint;
  minBond: bigint;
  exitDelaySeconds: bigint;
  /** Seconds before a new bond counts for panel and committee snapshots (> 0); default DEFAULT_ACTIVATION_DELAY_SECONDS. */
  activationDelaySeconds?: bigint;
  /**
   * ProviderRegistry parameters, or false to leave JobMarket without registries (a caller that sets its own).
   * Default: DEFAULT_ATTESTATION_PARAMS (the Ignition defaults).
   */
  registries?: false | AttestationParams;
  /**
   * Called with each transaction once mined, in the order sent (`what`: "deploy StakeVault", "StakeVault.wire", ...):
   * what `pouw deploy` lists. A callback, not a field of the return, because callers spread the return as the
   * deployment record.
   */
  onTx?: (tx: TxRef) => void;
};

/** ProviderRegistry constructor parameters (IProviderRegistry: committee drawn per request, quorum of it). */
export type AttestationParams = {
  attestationCommitteeSize: bigint;
  /** A strict majority of the committee. */
  attestationQuorum: bigint;
  attestationMaxValiditySeconds: bigint;
  /** Blocks between a request and the block whose hash seeds its committee (1..200). */
  attestationSeedDelayBlocks: number;
  /** Seconds a request stays open to draw and record (<= the registry's exit delay); also the provider's re-request interval. */
  attestationRequestWindowSeconds: bigint;
  /**
   * Wei of the auditor token every attestation request burns (> 0): the price of one committee draw, paid whichever
   * address asks, so that drawing committees in parallel for many provider addresses is not free (docs/panels.md).
   */
  attestationRequestFee: bigint;
};

/** One hour: long enough that a bond cannot be timed against a seed (2 blocks here), short enough for local demos. */
export const DEFAULT_ACTIVATION_DELAY_SECONDS = 3_600n;

/** Defaults of ignition/modules/registries.ts: committees of 3, quorum 2, 30-day records, 2-block seed, 1-day window, 1-token fee. */
export const DEFAULT_ATTESTATION_PARAMS: AttestationParams = {
  attestationCommitteeSize: 3n,
  attestationQuorum: 2n,
  attestationMaxValiditySeconds: 30n * 24n * 3600n,
  attestationSeedDelayBlocks: 2,
  attestationRequestWindowSeconds: 24n * 3600n,
  attestationRequestFee: 10n ** 18n,
};

export type DeployMarketReturnType = Deployment & { gasUsed: bigint };


export async function deployMarket(clients: ChainClients, p: DeployMarketParameters): Promise<DeployMarketReturnType> {
  const wirer = clients.account.address;
  let gasUsed = 0n;
  let startBlock: bigint | undefined;
  const track = (name: string, r: { block: bigint; gasUsed: bigint; hash: TxRef["hash"] }) => {
    gasUsed += r.gasUsed;
    startBlock ??= r.block;
    p.onTx?.({ what: `deploy ${name}`, hash: r.hash, blockNumber: r.block });
  };
  let token = p.token;
  if (!token) {
    const t = await deployContract(clients, testTokenAbi, testTokenBytecode, ["PoUW Dev Token", "PDT"]);
    track("TestToken", t);
    token = t.address;
  }
  const vault = await deployContract(clients, stakeVaultAbi, stakeVaultBytecode, [token, p.unbondingDelaySeconds, wirer]);
  track("StakeVault", vault);
  const registry = await deployContract(clients, auditorRegistryAbi, auditorRegistryBytecode, [
    token,
    p.minBond,
    p.exitDelaySeconds,
    p.activationDelaySeconds ?? DEFAULT_ACTIVATION_DELAY_SECONDS,
    wirer,
  ]);
  track("AuditorRegistry", registry);
  const market = await deployContract(clients, jobMarketAbi, jobMarketBytecode, [vault.address, wirer]);
  track("JobMarket", market);
  // ownerless: reads jobs, segment commitments and the AuditorRegistry from the market it names
  const records = await deployContract(clients, jobRecordsAbi, jobRecordsBytecode, [market.address]);
  track("JobRecords", records);
  // INVARIANT: the vault's roles are fixed here, for good: JobMarket locks and slashes, nobody else.
  const g = await sendContractTx(clients, { address: vault.address, abi: stakeVaultAbi, functionName: "wire", args: [market.address, zeroAddress] });
  gasUsed += g.gasUsed;
  p.onTx?.(txRef("StakeVault.wire", g));
  let registries: { providerRegistry: Address; dataRegistry: Address } | undefined;
  if (p.registries !== false) {
    const r = p.registries ?? DEFAULT_ATTESTATION_PARAMS;
    const providers = await deployContract(clients, providerRegistryAbi, providerRegistryBytecode, [
      registry.address,
      r.attestationCommitteeSize,
      r.attestationQuorum,
      r.attestationMaxValiditySeconds,
      r.attestationSeedDelayBlocks,
      r.attestationRequestWindowSeconds,
      r.attestationRequestFee,
    ]);
    track("ProviderRegistry", providers);
    // INVARIANT: the ProviderRegistry may forfeit the signers of a statement a dispute found false; wired once, here,
    // before deployDisputeGame's AuditorRegistry.wire ends that registry's wiring.
    const w = await sendContractTx(clients, { address: registry.address, abi: auditorRegistryAbi, functionName: "wireAttestation", args: [providers.address] });
    gasUsed += w.gasUsed;
    p.onTx?.(txRef("AuditorRegistry.wireAttestation", w));
    const data = await deployContract(clients, dataRegistryAbi, dataRegistryBytecode, []);
    track("DataRegistry", data);
    const s = await sendContractTx(clients, { address: market.address, abi: jobMarketAbi, functionName: "setRegistries", args: [registry.address, providers.address, data.address] });
    gasUsed += s.gasUsed;
    p.onTx?.(txRef("JobMarket.setRegistries", s));
    registries = { providerRegistry: providers.address, dataRegistry: data.address };
  }
  // ownerless and event-only: where parties announce their IPFS nodes (getAnnouncedPeers)
  const peers = await deployContract(clients, peerDirectoryAbi, peerDirectoryBytecode, []);
  track("PeerDirectory", peers);
  return {
    format: "pouw-deployment-1",
    chainId: clients.wallet.chain.id,
    token,
    jobMarket: market.address,
    jobRecords: records.address,
    stakeVault: vault.address,
    auditorRegistry: registry.address,
    ...registries,
    peerDirectory: peers.address,
    startBlock: startBlock!.toString(),
    devToken: p.token === undefined,
    gasUsed,
  };
}
