/**
 * Attack 8 (admin drain) on fresh in-process networks: the market is deployed the two standard ways, by the
 * `pouw deploy` path (deployMarket + deployDisputeGame, and `pouw deploy --json` in-process through main) and by
 * Ignition (ignition/modules/PoUW.ts). A provider then has free and locked stake, an auditor a bond and a
 * buyer an escrow. The deployer turns thief: it sends grantRole for every fund-moving role (and the admin
 * role), re-wires each contract, sets the registries again, locks free stake against a job that does not
 * exist, slashes and unlocks, forfeits the bond and settles the job as a fault with itself as challenger.
 * Every transaction reverts with a named custom error and not one balance moves (docs/governance.md).
 */
import { expect } from "chai";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { getAddress, keccak256, maxUint256, parseAbi, parseEther, toHex, type Address } from "viem";
import {
  acceptJob,
  approveToken,
  auditorRegistryAbi,
  ContractRevertError,
  createJob,
  DEFAULT_DISPUTE_PARAMS,
  deployDisputeGame,
  deployMarket,
  devAccount,
  minAuditorExitDelaySeconds,
  getWiring,
  jobMarketAbi,
  mintTestToken,
  postBond,
  providerClients,
  ROLE_IDS,
  sendContractTx,
  stakeDeposit,
  stakeVaultAbi,
  testTokenAbi,
  wiringProblems,
  type ChainClients,
  type Deployment,
  type JobPolicy,
} from "../../verifier/src/chain/index.ts";
import { runPouw } from "../cli/in-process.ts";
import PoUWModule from "../../ignition/modules/PoUW.ts";
import { DEV_KEYS } from "../e2e/helpers.ts";

/**
 * What the thief sends. grantRole/revokeRole/renounceRole are `pure` in the generated ABIs (they always revert),
 * so they are written here as plain nonpayable fragments: raw calldata, as an attacker would send it.
 */
const ATTACK = parseAbi([
  "function grantRole(bytes32 role, address account)",
  "function revokeRole(bytes32 role, address account)",
  "function renounceRole(bytes32 role, address callerConfirmation)",
  "function wire(address a, address b)",
  "function wire(address a)",
  "function setRegistries(address auditors, address providers, address data)",
  "function lock(address provider, uint256 jobId, uint256 amount)",
  "function unlock(address provider, uint256 jobId)",
  "function slash(address provider, uint256 jobId, uint256 amount, address[] recipients, uint256[] amounts)",
  "function forfeit(address auditor, uint256 amount, address to)",
  "function freeze(uint256 jobId)",
  "function settleProviderFault(uint256 jobId)",
  "function settleNoFault(uint256 jobId, bool reopen)",
  "function recordImprovement(uint256 jobId, uint64 corpusId, uint32 weightE6)",
]);

const policy: JobPolicy = {
  segments: 2,
  stepsPerSegment: 4,
  requiredStake: parseEther("5"),
  segmentTimeout: 3600,
  challengeWindow: 600,
  challengerBps: 5000,
  buyerBps: 3000,
  burnBps: 2000,
  timeoutSlashBps: 1000,
};

async function reverts(p: Promise<unknown>, errorName: string): Promise<void> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, `expected ${errorName}`).to.be.instanceOf(ContractRevertError);
  expect((err as ContractRevertError).errorName).to.equal(errorName);
}

type Victims = { provider: Address; auditor: Address; buyer: Address; jobId: bigint };

/** A provider with free and locked stake, a bonded auditor and a buyer's escrow on deployment `d`. */
async function victims(d: Deployment, buyer: ChainClients, provider: ChainClients, auditor: ChainClients): Promise<Victims> {
  for (const c of [buyer, provider, auditor]) {
    await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("1000") });
    for (const spender of [d.jobMarket, d.stakeVault, d.auditorRegistry]) await approveToken(c, { token: d.token, spender, amount: maxUint256 });
  }
  await stakeDeposit(provider, { stakeVault: d.stakeVault, amount: parseEther("50") });
  await postBond(auditor, { auditorRegistry: d.auditorRegistry, amount: parseEther("100") });
  const { jobId } = await createJob(buyer, { jobMarket: d.jobMarket, manifestHash: keccak256(toHex("m")), manifestUri: "x", token: d.token, payment: parseEther("3"), policy });
  await acceptJob(provider, { jobMarket: d.jobMarket, jobId });
  return { provider: provider.account.address, auditor: auditor.account.address, buyer: buyer.account.address, jobId };
}

/** Every balance the thief could move, as one comparable value. */
async function snapshot(c: ChainClients, d: Deployment, v: Victims, thief: Address): Promise<string> {
  const r = c.public;
  const bal = (a: Address) => r.readContract({ address: d.token, abi: testTokenAbi, functionName: "balanceOf", args: [a] });
  const values = await Promise.all([
    ...[d.stakeVault, d.auditorRegistry, d.jobMarket, d.disputeGame!, thief, v.provider, v.auditor, v.buyer].map(bal),
    r.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "accountOf", args: [v.provider] }),
    r.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "lockedFor", args: [v.provider, v.jobId] }),
    r.readContract({ address: d.stakeVault, abi: stakeVaultAbi, functionName: "creditOf", args: [thief] }),
    r.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "auditorOf", args: [v.auditor] }),
    r.readContract({ address: d.auditorRegistry, abi: auditorRegistryAbi, functionName: "creditOf", args: [thief] }),
    r.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [thief, d.token] }),
    r.readContract({ address: d.jobMarket, abi: jobMarketAbi, functionName: "getJob", args: [v.jobId] }),
  ]);
  return JSON.stringify(values, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x));
}

/** The thief's whole repertoire against deployment `d`; each call must revert with the named error. */
async function attack(thief: ChainClients, d: Deployment, v: Victims): Promise<void> {
  const me = thief.account.address;
  const send = (address: Address, functionName: string, args: readonly unknown[]) => sendContractTx(thief, { address, abi: ATTACK, functionName, args } as never);
  // 1. grant itself every role that moves funds, and the admin role
  for (const role of [ROLE_IDS.market, ROLE_IDS.slasher, ROLE_IDS.defaultAdmin]) await reverts(send(d.stakeVault, "grantRole", [role, me]), "FixedRolesImmutable");
  for (const role of [ROLE_IDS.dispute, ROLE_IDS.defaultAdmin]) await reverts(send(d.auditorRegistry, "grantRole", [role, me]), "FixedRolesImmutable");
  for (const role of [ROLE_IDS.dispute, ROLE_IDS.evaluator, ROLE_IDS.defaultAdmin]) await reverts(send(d.jobMarket, "grantRole", [role, me]), "FixedRolesImmutable");
  // 2. take a role away from the contracts (to stall settlement), or renounce it for them
  await reverts(send(d.stakeVault, "revokeRole", [ROLE_IDS.market, d.jobMarket]), "FixedRolesImmutable");
  await reverts(send(d.jobMarket, "renounceRole", [ROLE_IDS.dispute, me]), "FixedRolesImmutable");
  // 3. re-wire, or swap in its own registries (a DataRegistry whose payoutOf is the thief)
  await reverts(send(d.stakeVault, "wire", [me, me]), "FixedRolesNotWirer");
  await reverts(send(d.auditorRegistry, "wire", [me]), "FixedRolesNotWirer");
  await reverts(send(d.jobMarket, "wire", [me, me]), "FixedRolesNotWirer");
  await reverts(send(d.jobMarket, "setRegistries", [me, me, me]), "FixedRolesNotWirer");
  // 4. lock free stake against a job that does not exist, slash the real lock to itself, release it
  await reverts(send(d.stakeVault, "lock", [v.provider, 999n, parseEther("40")]), "AccessControlUnauthorizedAccount");
  await reverts(send(d.stakeVault, "slash", [v.provider, v.jobId, parseEther("5"), [me], [parseEther("5")]]), "StakeVaultNotSlasher");
  await reverts(send(d.stakeVault, "unlock", [v.provider, v.jobId]), "AccessControlUnauthorizedAccount");
  // 5. forfeit the auditor's bond to itself; settle the job as a fault with itself as challenger
  await reverts(send(d.auditorRegistry, "forfeit", [v.auditor, parseEther("100"), me]), "AccessControlUnauthorizedAccount");
  await reverts(send(d.jobMarket, "freeze", [v.jobId]), "AccessControlUnauthorizedAccount");
  await reverts(send(d.jobMarket, "settleProviderFault", [v.jobId]), "AccessControlUnauthorizedAccount");
  await reverts(send(d.jobMarket, "settleNoFault", [v.jobId, true]), "AccessControlUnauthorizedAccount");
  await reverts(send(d.jobMarket, "recordImprovement", [v.jobId, 1n, 0]), "AccessControlUnauthorizedAccount");
}

/** Serves an in-process network over HTTP JSON-RPC, so `pouw deploy` (main, in this process) can reach it. */
function rpcBridge(provider: { request: (a: { method: string; params?: unknown[] }) => Promise<unknown> }): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      const handle = async (m: { id: unknown; method: string; params?: unknown[] }) => {
        try {
          return { jsonrpc: "2.0", id: m.id, result: await provider.request({ method: m.method, params: m.params ?? [] }) };
        } catch (err) {
          const e = err as { code?: number; message?: string; data?: unknown };
          return { jsonrpc: "2.0", id: m.id, error: { code: e.code ?? -32000, message: e.message ?? String(err), data: e.data } };
        }
      };
      const msg = JSON.parse(body);
      const out = Array.isArray(msg) ? await Promise.all(msg.map(handle)) : await handle(msg);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(out, (_k, v: unknown) => (typeof v === "bigint" ? `0x${v.toString(16)}` : v)));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

const pouw = runPouw;

describe("governance: no admin power over user funds after deployment", function () {
  this.timeout(180_000);

  describe("the pouw deploy path (deployMarket + deployDisputeGame)", () => {
    let deployer: ChainClients, buyer: ChainClients, provider: ChainClients, auditor: ChainClients;
    let d: Deployment;
    let v: Victims;
    let bridge: { url: string; server: Server };

    before(async () => {
      const conn = await network.create();
      const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
      [deployer, buyer, provider, auditor] = [mk(0), mk(1), mk(2), mk(3)];
      const { gasUsed: _g, ...market } = await deployMarket(deployer, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: minAuditorExitDelaySeconds(DEFAULT_DISPUTE_PARAMS) });
      const game = await deployDisputeGame(deployer, { deployment: market });
      d = { ...market, disputeGame: game.disputeGame };
      v = await victims(d, buyer, provider, auditor);
      bridge = await rpcBridge(conn.provider as never);
    });
    after(() => bridge.server.close());

    it("ends wiring on every contract with each fund-moving role held by the deployment's own contract", async () => {
      const w = await getWiring(deployer.public, { deployment: d });
      expect(w.sealed).to.equal(true);
      expect(wiringProblems(w, d)).to.deep.equal([]);
      const game = getAddress(d.disputeGame!);
      expect(w.roles).to.deep.equal({ stakeVaultMarket: getAddress(d.jobMarket), stakeVaultSlasher: null, auditorRegistryDispute: game, jobMarketDispute: game, jobMarketEvaluator: null });
      for (const [address, abi] of [[d.stakeVault, stakeVaultAbi], [d.auditorRegistry, auditorRegistryAbi], [d.jobMarket, jobMarketAbi]] as const) {
        expect(await deployer.public.readContract({ address, abi: abi as typeof stakeVaultAbi, functionName: "hasRole", args: [ROLE_IDS.defaultAdmin, deployer.account.address] })).to.equal(false);
      }
    });

    it("the deployer's every attempt reverts with a named error and no balance moves", async () => {
      const before = await snapshot(deployer, d, v, deployer.account.address);
      await attack(deployer, d, v);
      expect(await snapshot(deployer, d, v, deployer.account.address)).to.equal(before);
    });

    it("a deployment whose roles are not wired is reported, not trusted", async () => {
      // deployMarket alone leaves JobMarket and AuditorRegistry wireable by their deployer.
      const { gasUsed: _g, ...half } = await deployMarket(deployer, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 60n, registries: false });
      const w = await getWiring(deployer.public, { deployment: half });
      expect(w.sealed).to.equal(false);
      expect(w.wirers).to.deep.equal({ stakeVault: null, auditorRegistry: deployer.account.address, jobMarket: deployer.account.address });
      expect(wiringProblems(w, half)).to.include.members([`auditorRegistry can still be wired by ${deployer.account.address}`, `jobMarket can still be wired by ${deployer.account.address}`, "no DisputeGame in the deployment"]);
    });

    it("pouw deploy --json says what it did with the admin: none, every role fixed, wiring ended", async () => {
      const dir = mkdtempSync(join(tmpdir(), "pouw-gov-"));
      const r = await pouw(["deploy", "--rpc", bridge.url, "--state-dir", dir, "--private-key", DEV_KEYS[0], "--unbonding-delay", "60", "--exit-delay", "691272", "--min-bond", "1", "--json"]);
      expect(r.code, r.stderr).to.equal(0);
      const out = JSON.parse(r.stdout);
      expect(out.admin).to.deep.include({ holder: null, wiringEnded: true });
      expect(out.wiring.sealed).to.equal(true);
      expect(out.wiring.wirers).to.deep.equal({ stakeVault: null, auditorRegistry: null, jobMarket: null });
      expect(out.wiring.roles).to.deep.equal({
        stakeVaultMarket: getAddress(out.deployment.jobMarket),
        stakeVaultSlasher: null,
        auditorRegistryDispute: getAddress(out.deployment.disputeGame),
        jobMarketDispute: getAddress(out.deployment.disputeGame),
        jobMarketEvaluator: null,
      });
      // the dev chain: the committed development verifier, allowed here only (DisputeGame.proving)
      expect(out.proving.mode).to.equal("Development");
      expect(getAddress(out.proving.verifier)).to.equal(getAddress(out.stepVerifier));
      const text = await pouw(["deploy", "--rpc", bridge.url, "--state-dir", dir, "--private-key", DEV_KEYS[0], "--evaluator", "0x00000000000000000000000000000000000000e1"]);
      expect(text.code, text.stderr).to.equal(0);
      expect(text.stdout).to.match(/^admin +none: roles wired once and fixed, wiring ended/m);
      expect(text.stdout).to.match(/JobMarket\.EVALUATOR_ROLE account 0x0{38}e1$/im);
      expect(text.stdout).to.match(/StakeVault\.MARKET_ROLE JobMarket 0x[0-9a-fA-F]{40}; StakeVault\.SLASHER_ROLE nobody/);
      expect(text.stdout).to.match(/^proving +Development: the committed development setup .* local dev chain 31337 only/m);
    });
  });

  describe("the Ignition path (ignition/modules/PoUW.ts)", () => {
    it("leaves the deployer no power: wiring ended, and its attacks revert with no balance moved", async () => {
      const conn = await network.create();
      const c = await conn.ignition.deploy(PoUWModule);
      const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
      const [deployer, buyer, provider, auditor] = [mk(0), mk(1), mk(2), mk(3)] as [ChainClients, ChainClients, ChainClients, ChainClients];
      const d: Deployment = {
        format: "pouw-deployment-1",
        chainId: 31337,
        token: getAddress(c.token.address),
        jobMarket: getAddress(c.jobMarket.address),
        jobRecords: getAddress(c.jobRecords.address),
        stakeVault: getAddress(c.stakeVault.address),
        auditorRegistry: getAddress(c.auditorRegistry.address),
        disputeGame: getAddress(c.disputeGame.address),
        providerRegistry: getAddress(c.providerRegistry.address),
        dataRegistry: getAddress(c.dataRegistry.address),
        startBlock: "0",
        devToken: true,
      };
      const w = await getWiring(deployer.public, { deployment: d });
      expect(wiringProblems(w, d)).to.deep.equal([]);
      expect(w.registries).to.deep.equal({ auditors: d.auditorRegistry, providers: d.providerRegistry, data: d.dataRegistry });
      expect(w.roles.jobMarketEvaluator).to.equal(null);
      const v = await victims(d, buyer, provider, auditor);
      const before = await snapshot(deployer, d, v, deployer.account.address);
      await attack(deployer, d, v);
      expect(await snapshot(deployer, d, v, deployer.account.address)).to.equal(before);
    });
  });
});
