/**
 * Shared fixture for the contract tests: deploys and wires the contract set on a fresh in-process
 * network the way ignition/modules/PoUW.ts does (ProviderRegistry committees of 3 with quorum 2 and DataRegistry set in JobMarket,
 * every role wired once, no admin left), with a DisputeCaller (contracts/mocks/) holding the dispute roles and
 * the vault's slasher role, `admin` as evaluator, funded and approved actors, and helpers for policies and
 * "moves no tokens" checks.
 */
import { expect } from "chai";
import { network } from "hardhat";
import { keccak256, maxUint256, parseEther, toHex, type Address, type Hex } from "viem";
import { traceRoot } from "../../verifier/src/trace/index.ts";

export const UNBONDING = 7n * 24n * 3600n;
export const MIN_BOND = parseEther("100");
export const EXIT_DELAY = 14n * 24n * 3600n;
export const HOUR = 3600n;
/** A bond counts for panel and committee snapshots this long after it is posted (the deployment default). */
export const ACTIVATION_DELAY = HOUR;
export const DAY = 86400n;

export type Policy = {
  segments: number;
  stepsPerSegment: number;
  requiredStake: bigint;
  segmentTimeout: number;
  challengeWindow: number;
  challengerBps: number;
  buyerBps: number;
  burnBps: number;
  timeoutSlashBps: number;
};

export function policy(overrides: Partial<Policy> = {}): Policy {
  return {
    segments: 3,
    stepsPerSegment: 4,
    requiredStake: parseEther("10"),
    segmentTimeout: Number(HOUR),
    challengeWindow: Number(DAY),
    challengerBps: 5_000,
    buyerBps: 3_000,
    burnBps: 2_000,
    timeoutSlashBps: 1_000,
    ...overrides,
  };
}

export const MANIFEST_HASH = keccak256(toHex("manifest"));
export const MANIFEST_URI = "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi";
export const CHECKPOINT_CID = "bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi";

/**
 * Deterministic made-up leaves of one segment (K+1 state hashes h(t) = keccak("h-jobId-t"), so consecutive segments
 * join), with the root JobMarket computes from them and the end state (last leaf). `tag` makes a divergent trace.
 */
export function segmentHashes(jobId: bigint, segment: number, k = 4, tag = "h"): { hashes: Hex[]; root: Hex; end: Hex } {
  const hashes = Array.from({ length: k + 1 }, (_, j) => keccak256(toHex(`${tag}-${jobId}-${segment * k + j}`)));
  return { hashes, root: traceRoot(segment * k, hashes), end: hashes[k]! };
}

export async function createConnection() {
  const connection = await network.create();
  const { viem, networkHelpers } = connection;
  const publicClient = await viem.getPublicClient();

  async function deploy() {
    const wallets = await viem.getWalletClients();
    const need = (i: number) => {
      const w = wallets[i];
      if (!w) throw new Error(`missing wallet ${i}`);
      return w;
    };
    const [admin, buyer, provider, provider2, challenger, stranger, auditor1, auditor2, auditor3] = [
      0, 1, 2, 3, 4, 5, 6, 7, 8,
    ].map(need) as [ReturnType<typeof need>, ...ReturnType<typeof need>[]];
    const token = await viem.deployContract("TestToken", ["Test", "TST"]);
    const vault = await viem.deployContract("StakeVault", [token.address, UNBONDING, admin.account.address]);
    const registry = await viem.deployContract("AuditorRegistry", [
      token.address,
      MIN_BOND,
      EXIT_DELAY,
      ACTIVATION_DELAY,
      admin.account.address,
    ]);
    const market = await viem.deployContract("JobMarket", [vault.address, admin.account.address]);
    const dispute = await viem.deployContract("DisputeCaller", [market.address, vault.address, registry.address]);
    // committees of 3, quorum 2, 2-block seed, 1-day request window, 1-token request fee (burned per request)
    const providers = await viem.deployContract("ProviderRegistry", [registry.address, 3n, 2n, 30n * DAY, 2, DAY, parseEther("1")]);
    const data = await viem.deployContract("DataRegistry", []);
    // Each role wired once, as the deploy paths do, and wiring ended: `admin` keeps no power over the set.
    await vault.write.wire([market.address, dispute.address]);
    await registry.write.wireAttestation([providers.address]);
    await registry.write.wire([dispute.address]);
    await market.write.setRegistries([registry.address, providers.address, data.address]);
    await market.write.wire([dispute.address, admin.account.address]);

    const actors = [buyer!, provider!, provider2!, challenger!, stranger!, auditor1!, auditor2!, auditor3!];
    for (const a of actors) {
      await token.write.mint([a.account.address, parseEther("1000000")]);
      for (const spender of [market.address, vault.address, registry.address, providers.address]) {
        await token.write.approve([spender, maxUint256], { account: a.account });
      }
    }
    for (const p of [provider!, provider2!]) {
      await vault.write.deposit([parseEther("100")], { account: p.account });
    }
    return {
      admin: admin!,
      buyer: buyer!,
      provider: provider!,
      provider2: provider2!,
      challenger: challenger!,
      stranger: stranger!,
      auditors: [auditor1!, auditor2!, auditor3!],
      token,
      vault,
      registry,
      market,
      dispute,
      providers,
      data,
    };
  }

  return { viem, networkHelpers, publicClient, deploy };
}

type TokenLike = { read: { balanceOf: (args: readonly [Address]) => Promise<bigint> } };

/** Token balances of `holders`, in order. */
export async function balances(token: TokenLike, holders: readonly Address[]): Promise<bigint[]> {
  return Promise.all(holders.map((h) => token.read.balanceOf([h])));
}

/** Runs `fn` (which must revert) and asserts no holder's token balance changed. */
export async function expectNoTokenMovement(token: TokenLike, holders: readonly Address[], fn: () => Promise<void>) {
  const before = await balances(token, holders);
  await fn();
  expect(await balances(token, holders)).to.deep.equal(before);
}
