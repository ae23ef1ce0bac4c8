/**
 * Shared set-up of the dispute tests: a fresh in-process network with the market set, the generated step verifier
 * and DisputeGame deployed and wired by the same functions `pouw deploy` uses, funded actors and five bonded
 * auditors whose bonds already count for panels (the activation delay has passed).
 */
import { expect } from "chai";
import { network } from "hardhat";
import { maxUint256, parseEther, type Hex } from "viem";
import {
  approveToken,
  ContractRevertError,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  DEFAULT_DISPUTE_PARAMS,
  deployDisputeGame,
  deployMarket,
  minAuditorExitDelaySeconds,
  devAccount,
  mintTestToken,
  postBond,
  providerClients,
  stakeDeposit,
  type ChainClients,
  type Deployment,
  type DisputeParams,
  type JobPolicy,
  type Proving,
} from "../../verifier/src/chain/index.ts";

export const PARAMS: DisputeParams = {
  // the deployment defaults, with hour-long voting windows and a smaller forfeit
  ...DEFAULT_DISPUTE_PARAMS,
  commitWindowSeconds: 3600,
  revealWindowSeconds: 3600,
  panelForfeit: parseEther("2"),
};

export function policy(segments: number, stepsPerSegment: number): JobPolicy {
  return {
    segments,
    stepsPerSegment,
    requiredStake: parseEther("10"),
    segmentTimeout: 3600,
    challengeWindow: 86_400,
    challengerBps: 5000,
    buyerBps: 3000,
    burnBps: 2000,
    timeoutSlashBps: 1000,
  };
}

export type DisputeEnv = {
  d: Deployment & { disputeGame: `0x${string}` };
  admin: ChainClients;
  buyer: ChainClients;
  provider: ChainClients;
  challenger: ChainClients;
  auditors: ChainClients[];
  /** The in-process network's EIP-1193 provider (to serve it over HTTP: test/cli/rpc-over-http.ts). */
  provider1193: Awaited<ReturnType<typeof network.create>>["provider"];
  mine: (blocks: number) => Promise<void>;
  increaseTime: (seconds: number) => Promise<void>;
};

/** `chainId`: the in-process network's chain id (default 31337, the dev chain; another id plays a live chain). */
export async function disputeEnv(opts: { chainId?: number } = {}): Promise<DisputeEnv & { proving: Proving }> {
  const chainId = opts.chainId ?? 31337;
  const conn = await network.create(chainId === 31337 ? undefined : { override: { chainId } });
  const mk = (i: number) => providerClients(conn.provider, chainId, { account: devAccount(i), pollingIntervalMs: 20 });
  const [admin, buyer, provider, challenger] = [mk(0), mk(1), mk(2), mk(3)];
  const auditors = [4, 5, 6, 7, 8].map(mk);
  const market = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("10"), exitDelaySeconds: minAuditorExitDelaySeconds(PARAMS) });
  const { disputeGame, proving } = await deployDisputeGame(admin, { deployment: market, params: PARAMS });
  const d = { ...market, disputeGame };
  for (const c of [buyer, provider, challenger, ...auditors]) {
    await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("1000") });
    for (const spender of [d.jobMarket, d.stakeVault, d.auditorRegistry, d.disputeGame]) {
      await approveToken(c, { token: d.token, spender, amount: maxUint256 });
    }
  }
  await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("100") });
  for (const a of auditors) await postBond(a, { auditorRegistry: d.auditorRegistry, amount: parseEther("20") });
  // the bonds count for panel snapshots (taken at each challenge) once the activation delay (1 hour) has passed
  await conn.networkHelpers.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
  return {
    d,
    proving,
    admin,
    buyer,
    provider,
    challenger,
    auditors,
    provider1193: conn.provider,
    mine: async (blocks) => {
      await conn.networkHelpers.mine(blocks);
    },
    increaseTime: async (seconds) => {
      await conn.networkHelpers.time.increase(seconds);
    },
  };
}

export async function expectRevert(p: Promise<unknown>, errorName: string): Promise<ContractRevertError> {
  try {
    await p;
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(ContractRevertError);
    expect((err as ContractRevertError).errorName).to.equal(errorName);
    return err as ContractRevertError;
  }
  expect.fail(`expected ${errorName}`);
}

export const hex32 = (n: number): Hex => `0x${n.toString(16).padStart(64, "0")}`;
