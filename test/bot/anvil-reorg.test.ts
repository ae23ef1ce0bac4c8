/**
 * The challenger bot as a user runs it (`pouw auditor run`, a child process with `--json` records) on anvil, across
 * real reorgs (`anvil_reorg`: the last N blocks replaced by N new ones at the same heights, carrying the transactions
 * given and nothing else):
 *   (a) an honest segment commit the bot audited clean and receipted is reorged out and replaced, at the same height,
 *       by a cheating commit of the same segment: the bot challenges the cheating commit, and the provider, challenged,
 *       concedes and is slashed;
 *   (b) the blocks that mined the bot's own challenge are reorged out (the dispute is gone): the bot sends it again and
 *       the dispute is back;
 *   (c) nothing is sent twice: every transaction the bot broadcast (counted at a JSON-RPC proxy in front of the node)
 *       is one signed transaction per call (a re-send is the same bytes), and the bot's transactions on the final chain
 *       carry distinct calls with consecutive nonces.
 * The provider is dev account 2; the bot is auditor dev account 3 (dev accounts 4..6 are bonded too, so a panel could
 * be drawn). anvil runs on a free port and is stopped (and waited for) in `after`.
 */
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeFunctionData, keccak256, parseTransaction, type Hex } from "viem";
import { concede, getJobDisputes, getSegmentCommits, getStakeSlashes } from "../../verifier/src/chain/index.ts";
import { disputeGameAbi } from "../../verifier/src/chain/abi/DisputeGame.ts";
import { rpc, startAnvil, type AnvilNode } from "../../bench/bot/anvil.ts";
import { deployServiceMarket, postAcceptedJob, startBotService, tinyManifest, trainJob, type BotService, type ServiceMarket } from "../../bench/bot/market.ts";
import { startRpcProxy, type RpcProxy } from "../../bench/bot/rpc-proxy.ts";

type Block = { number: Hex; hash: Hex; transactions: { hash: Hex; from: string; to: string | null; input: Hex; nonce: Hex }[] };

describe("challenger bot service on anvil across reorgs", function () {
  this.timeout(240_000);
  let node: AnvilNode | undefined;
  let proxy: RpcProxy | undefined;
  let bot: BotService | undefined;
  let stateDir: string | undefined;

  after(async () => {
    await bot?.stop();
    await proxy?.close();
    await node?.stop();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  // shared by the cases, in order: one chain, one job, one bot service
  let m: ServiceMarket;
  let me: string;
  let jobId: bigint;
  let honestBlock: bigint;
  let firstChallenge: { disputeId: bigint; step: number; hash: Hex };
  const from = () => BigInt(m.d.startBlock);
  const url = () => node!.url;
  const commits = () => getSegmentCommits(m.admin.public, { jobMarket: m.d.jobMarket, jobId, fromBlock: from() });
  const disputes = () => getJobDisputes(m.admin.public, { disputeGame: m.d.disputeGame!, jobId, fromBlock: from() });
  const head = async () => BigInt(await rpc<Hex>(url(), "eth_blockNumber"));
  const block = (n: bigint) => rpc<Block>(url(), "eth_getBlockByNumber", [`0x${n.toString(16)}`, true]);
  /** Polls until the job's dispute list is not empty (at most `ms`). */
  const disputeBack = async (ms: number) => {
    let d = await disputes();
    for (const until = Date.now() + ms; d.length === 0 && Date.now() < until; d = await disputes()) await new Promise((r) => setTimeout(r, 200));
    return d;
  };
  /** The provider concedes the open dispute; returns the job's slashes. */
  const concedeAndSlashes = async (disputeId: bigint) => {
    await concede(m.providers[0]!, { disputeGame: m.d.disputeGame!, disputeId });
    return getStakeSlashes(m.admin.public, { stakeVault: m.d.stakeVault, jobId, fromBlock: from() });
  };

  before(async () => {
    node = await startAnvil();
    stateDir = mkdtempSync(join(tmpdir(), "pouw-anvil-reorg-"));
    m = await deployServiceMarket(node.url, stateDir, { providers: 1, auditors: 4, windowSeconds: 600 });
    me = m.auditors[0]!.account.address.toLowerCase();
    jobId = await postAcceptedJob(m, tinyManifest(1), m.providers[0]!);
  });

  it("(a) challenges a cheating commit that replaced, at the same height, an honest commit it had audited and receipted", async () => {
    const provider = m.providers[0]!;
    // the cheating commit of segment 0, as the provider would sign it on another branch: trained on a snapshot of the
    // chain, its call and gas kept, the snapshot reverted
    const snap = await rpc<Hex>(url(), "evm_snapshot");
    const cheatRun = await trainJob(m, provider, jobId, "quarter-batch", "cheat", 1);
    const cheatTx = await provider.public.getTransaction({ hash: cheatRun.txs[0]!.hash });
    expect(await rpc<boolean>(url(), "evm_revert", [snap])).to.equal(true);
    expect(await commits(), "the snapshot is reverted: no commit").to.deep.equal([]);

    proxy = await startRpcProxy(url());
    bot = startBotService(m, m.auditorIdx[0]!, proxy.url, { pollMs: 200 });
    await bot.waitFor((r) => r.event === "startup", 90_000, "the start-up summary");

    // the honest branch: segment 0 committed honestly, audited clean, its receipt mined
    const honestRun = await trainJob(m, provider, jobId, "honest", "honest", 1);
    honestBlock = honestRun.txs[0]!.blockNumber;
    await bot.waitFor((r) => r.event === "audit" && r.ok === true && r.receipt === true, 90_000, "the clean audit of the honest commit");
    await bot.waitFor((r) => r.event === "tx" && r.kind === "recordReceipt", 60_000, "the receipt's transaction");
    const honestTx = await provider.public.getTransaction({ hash: honestRun.txs[0]!.hash });
    const cheatRaw = await provider.wallet.signTransaction({
      account: provider.account,
      chain: provider.wallet.chain,
      to: cheatTx.to!,
      data: cheatTx.input,
      nonce: honestTx.nonce,
      gas: cheatTx.gas,
      maxFeePerGas: cheatTx.maxFeePerGas!,
      maxPriorityFeePerGas: cheatTx.maxPriorityFeePerGas!,
      type: "eip1559",
    });
    const honestRoot = (await commits())[0]!.traceRoot;
    const replacedHash = (await block(honestBlock)).hash;
    // the reorg: from the honest commit's block up, new blocks; the first carries the cheating commit
    await rpc(url(), "anvil_reorg", [Number((await head()) - honestBlock + 1n), [[cheatRaw, 0]]]);
    const now = await commits();
    expect(now.map((c) => [c.segment, c.blockNumber]), "the cheating commit sits at the honest commit's height").to.deep.equal([[0, honestBlock]]);
    expect(now[0]!.traceRoot).to.not.equal(honestRoot);
    expect((await block(honestBlock)).hash).to.not.equal(replacedHash);

    const challenge = await bot.waitFor((r) => r.event === "tx" && r.kind === "challenge", 120_000, "the challenge of the replacing cheating commit");
    await bot.waitFor((r) => r.event === "reorg", 1, "the reorg record");
    const opened = await disputes();
    expect(opened.map((x) => [x.challenger.toLowerCase(), x.segment]), "the cheating commit is challenged by the bot").to.deep.equal([[me, 0]]);
    expect(opened[0]!.transactionHash).to.equal(challenge.hash);
    firstChallenge = { disputeId: opened[0]!.disputeId, step: opened[0]!.step, hash: challenge.hash as Hex };
  });

  it("(b) sends its own challenge again when the blocks that mined it (approval, commitment, challenge) are reorged out; conceded, the cheater is slashed", async () => {
    const approve = bot!.records.filter((r) => r.event === "tx" && r.kind === "approveBond").at(-1)!;
    const firstOfRound = BigInt(approve.blockNumber as string);
    await rpc(url(), "anvil_reorg", [Number((await head()) - firstOfRound + 1n), []]);
    expect(await disputes(), "the dispute is gone with its blocks").to.deep.equal([]);
    const back = await disputeBack(60_000);
    expect(back.map((x) => [x.challenger.toLowerCase(), x.segment, x.step]), "the bot's challenge is back on chain").to.deep.equal([[me, 0, firstChallenge.step]]);
    expect(back[0]!.transactionHash, "re-sent: the same signed challenge").to.equal(firstChallenge.hash);

    const slashes = await concedeAndSlashes(back[0]!.disputeId);
    expect(slashes.map((s) => s.provider), "the cheating provider, challenged, concedes and is slashed").to.deep.equal([m.providers[0]!.account.address]);
    expect(slashes[0]!.amount > 0n).to.equal(true);
  });

  it("(c) sends nothing twice: one signed transaction per call, and distinct calls at consecutive nonces on the final chain", async () => {
    await new Promise((r) => setTimeout(r, 1_000));
    const byCall = new Map<string, Set<Hex>>();
    for (const raw of proxy!.rawTxs()) {
      const tx = parseTransaction(raw as Hex);
      const call = `${tx.to}:${tx.data}`;
      byCall.set(call, (byCall.get(call) ?? new Set()).add(keccak256(raw as Hex)));
    }
    const doubled = [...byCall.entries()].filter(([, hashes]) => hashes.size > 1);
    expect(doubled.map(([call, h]) => `${call.slice(0, 52)} signed ${h.size} times`), "one signed transaction per call").to.deep.equal([]);
    const mine: Block["transactions"] = [];
    for (let n = from(); n <= (await head()); n++) mine.push(...(await block(n)).transactions.filter((t) => t.from.toLowerCase() === me));
    const nonces = mine.map((t) => Number(BigInt(t.nonce)));
    expect(nonces, "the bot's transactions on the final chain: consecutive nonces").to.deep.equal(nonces.map((_, i) => i));
    expect(new Set(mine.map((t) => `${t.to}:${t.input}`)).size, "and distinct calls").to.equal(mine.length);
    const gameCalls = mine.filter((t) => t.to?.toLowerCase() === m.d.disputeGame!.toLowerCase()).map((t) => decodeFunctionData({ abi: disputeGameAbi, data: t.input }).functionName);
    expect(gameCalls.filter((f) => f === "commitChallenge").length, "one challenge commitment").to.equal(1);
    expect(gameCalls.filter((f) => f === "challenge").length, "one challenge").to.equal(1);
    console.log(`      bot broadcasts ${proxy!.rawTxs().length} (distinct ${byCall.size}); on the final chain ${mine.length} bot transactions; RPC requests ${proxy!.total()}; RSS ${Math.round((bot!.rssBytes() ?? 0) / 2 ** 20)} MiB`);
  });

  // NOTE: fails today (bot/outbox.ts): the receipt of the orphaned honest commit stays a signed intent after the rollback
  // of (a); it is rebroadcast and mined reverted (JobRecordsReceiptMismatch) on the new branch, consuming its nonce. When
  // a deeper reorg drops that reverted transaction too, the outbox re-estimates it, records it failed and never sends
  // that nonce again, so every later transaction it rebroadcasts (the approval, commitment and challenge, at higher
  // nonces) waits in the node's pool behind a nonce gap: the challenge never comes back.
  it("(b') re-sends its challenge when a deeper reorg also drops the reverted re-send of its orphaned receipt", async () => {
    await rpc(url(), "anvil_reorg", [Number((await head()) - honestBlock), []]);
    expect(await disputes(), "the dispute is gone with its blocks").to.deep.equal([]);
    const back = await disputeBack(60_000);
    expect(back.map((x) => [x.challenger.toLowerCase(), x.segment, x.step]), "the bot's challenge is back on chain").to.deep.equal([[me, 0, firstChallenge.step]]);
    const slashes = await concedeAndSlashes(back[0]!.disputeId);
    expect(slashes.length, "conceded again on this branch: slashed").to.equal(1);
  });
});
