/**
 * Send failures the bot can get past, on the in-process network: a transaction signed before a crash whose nonce was
 * then used by another transaction of the account (its bytes can never be mined: re-signed once reconciled, sent once),
 * and an account without ETH for gas (the intent waits, named, and goes out once the ETH arrives). Neither is marked
 * failed. Plus the classification itself (chain/errors.ts) on the node messages viem and Hardhat produce.
 */
import { expect } from "chai";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import pino from "pino";
import { encodeFunctionData, InsufficientFundsError, parseEther, RpcRequestError, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import {
  classifySendFailure,
  ContractRevertError,
  deployMarket,
  describeRevert,
  devAccount,
  FeeTooLowError,
  GasFundsError,
  mintTestToken,
  NonceTooLowError,
  providerClients,
  ReplacementUnderpricedError,
  RpcUnavailableError,
  signTx,
  testTokenAbi,
  toChainError,
  TxRevertedError,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { SegmentBoard } from "../../verifier/src/market/segment-traces.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";

type Line = { level: number; msg: string } & Record<string, unknown>;

describe("bot send failures: retried, never silently failed", function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), "pouw-sendfail-"));
  const store = new LocalDirStore(join(dir, "store"));
  const board = new SegmentBoard(join(dir, "board"), store);
  let conn: Awaited<ReturnType<typeof network.create>>;
  let admin: ChainClients;
  let d: Awaited<ReturnType<typeof deployMarket>>;
  const mk = (account: ReturnType<typeof devAccount>) => providerClients(conn.provider, 31337, { account, pollingIntervalMs: 20 });
  const balanceOf = (who: `0x${string}`) => admin.public.readContract({ address: d.token, abi: testTokenAbi, functionName: "balanceOf", args: [who] });
  const mint = (to: `0x${string}`, amount: bigint) => encodeFunctionData({ abi: testTokenAbi, functionName: "mint", args: [to, amount] });

  before(async () => {
    conn = await network.create();
    admin = mk(devAccount(0));
    d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n }); // >= the 1-day attestation request window
  });

  function botFor(c: ChainClients, name: string, clock: { t: number }) {
    const lines: Line[] = [];
    const log = pino({ level: "debug", base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s) as Line) });
    const bot = new ChallengerBot({ clients: c, deployment: d, store, board, dbPath: join(dir, `${name}.sqlite`), log, now: () => clock.t, retryBaseMs: 1_000, reportTimeouts: false });
    return { bot, lines };
  }

  it("re-signs a signed transaction whose nonce another transaction used, and sends it once", async () => {
    const c = mk(devAccount(6));
    const me = c.account.address;
    const clock = { t: 0 };
    const { bot, lines } = botFor(c, "nonce", clock);
    // the bot recorded and signed an intent, then crashed before broadcasting it
    const row = bot.db.addIntent({ key: "mint:1", kind: "mint", payload: { to: d.token, data: mint(me, 7n) } });
    const stale = await signTx(c, d.token, mint(me, 7n));
    bot.db.intentSigned(row.id, stale.hash, stale.raw, stale.nonce);
    // meanwhile another process of the same account used that nonce
    await mintTestToken(c, { token: d.token, to: me, amount: 100n });
    expect(await balanceOf(me)).to.equal(100n);

    await bot.tick();
    let i = bot.db.intentByKey("mint:1")!;
    expect(i.status).to.equal("pending");
    expect(i.tx_hash).to.equal(null);
    expect(i.error).to.match(new RegExp(`^nonce ${stale.nonce} was used by another transaction: `));
    expect(lines.some((l) => l.level === 40 && /nonce was used by another transaction/.test(l.msg))).to.equal(true);

    await bot.tick();
    i = bot.db.intentByKey("mint:1")!;
    expect(i.status).to.equal("confirmed");
    expect(i.tx_hash).to.not.equal(stale.hash);
    expect(i.nonce).to.equal(stale.nonce + 1);
    expect(await balanceOf(me)).to.equal(107n); // the intent's effect exactly once
    expect(await admin.public.getTransaction({ hash: stale.hash }).catch(() => null)).to.equal(null);
    bot.close();
  });

  it("waits for ETH for gas, naming it, and sends once the ETH arrives", async () => {
    const c = mk(privateKeyToAccount(generatePrivateKey()) as never);
    const me = c.account.address;
    const clock = { t: 0 };
    const { bot, lines } = botFor(c, "gas", clock);
    bot.db.addIntent({ key: "mint:1", kind: "mint", payload: { to: d.token, data: mint(me, 5n) } });
    await bot.tick();
    let i = bot.db.intentByKey("mint:1")!;
    // the node refused the broadcast (gas * fee > balance): the signed bytes are kept and rebroadcast later
    expect(i.status).to.equal("signed");
    expect(i.error).to.match(/^waiting for funds: not enough ETH for gas/);
    expect(i.retry_at).to.equal(1_000);
    expect(lines.filter((l) => l.level === 50 && l.msg.startsWith("CANNOT SEND mint: not enough ETH for gas"))).to.have.length(1);
    const hash = i.tx_hash;

    await conn.provider.request({ method: "hardhat_setBalance", params: [me, toHex(parseEther("1"))] });
    await bot.tick(); // still inside the backoff: not retried
    expect(bot.db.intentByKey("mint:1")!.status).to.equal("signed");
    clock.t = 1_000;
    await bot.tick();
    i = bot.db.intentByKey("mint:1")!;
    expect(i.status).to.equal("confirmed");
    expect(i.attempts).to.equal(1);
    expect(i.tx_hash).to.equal(hash); // the same bytes
    expect(await balanceOf(me)).to.equal(5n);
    bot.close();
  });

  it("classifies failures by error class and node message; describes reverts with dates and amounts", () => {
    const rpc = (message: string) => new RpcRequestError({ body: {}, error: { code: -32000, message }, url: "http://x" });
    expect(toChainError(rpc("Nonce too low. Expected nonce to be 3 but got 2."))).to.be.instanceOf(NonceTooLowError);
    expect(toChainError(rpc("replacement transaction underpriced"))).to.be.instanceOf(ReplacementUnderpricedError);
    expect(toChainError(rpc("max fee per gas less than block base fee: maxFeePerGas: 1 baseFee: 7"))).to.be.instanceOf(FeeTooLowError);
    expect(toChainError(rpc("Sender doesn't have enough funds to send tx. The max upfront cost is: 1 and the sender's balance is: 0."))).to.be.instanceOf(GasFundsError);
    expect(toChainError(new InsufficientFundsError())).to.be.instanceOf(GasFundsError);
    expect(toChainError(rpc("already known"))).to.not.be.instanceOf(NonceTooLowError);

    const cls = (e: unknown) => classifySendFailure(toChainError(e));
    expect(cls(new ContractRevertError("ERC20InsufficientBalance", ["0x1", 0n, 5n]))).to.equal("funds");
    expect(cls(new ContractRevertError("DisputeGameDepositNotApproved", ["0x1", 0n, 5n]))).to.equal("funds");
    expect(cls(new ContractRevertError("JobMarketChallengeWindowClosed", [1n, 0n, 1n]))).to.equal("permanent");
    expect(cls(new ContractRevertError("DisputeGameDisputeOpen", [1n, 2n, 3n]))).to.equal("permanent");
    expect(cls(new ContractRevertError("DisputeGameVotingOpen", [1n, 2n, 1n]))).to.equal("later");
    expect(cls(new ContractRevertError("DisputeGameChallengerLimit", [1n, "0x1", 4n, 4n]))).to.equal("later");
    expect(cls(new ContractRevertError("DisputeGameJobDisputeLimit", [1n, 32n, 32n]))).to.equal("later");
    expect(cls(new RpcUnavailableError("down"))).to.equal("rpc");
    expect(cls(new TxRevertedError("challenge", "0xab", 9n))).to.equal("mined-revert");
    expect(cls(rpc("nonce too low"))).to.equal("nonce");
    expect(cls(rpc("replacement transaction underpriced"))).to.equal("fee");
    expect(cls(rpc("something odd"))).to.equal("unknown");

    expect(describeRevert(new ContractRevertError("JobMarketChallengeWindowClosed", [1n, 1_767_348_000n, 1_767_348_100n]))).to.equal(
      "job 1's challenge window closed at 2026-01-02T10:00:00Z (chain time 2026-01-02T10:01:40Z) [JobMarketChallengeWindowClosed]",
    );
    expect(describeRevert(new ContractRevertError("JobMarketNotDisputable", [4n, 6]))).to.equal("job 4 is Refunded: it can no longer be disputed [JobMarketNotDisputable]");
    expect(describeRevert(new ContractRevertError("DisputeGameDisputeOpen", [1n, 2n, 3n]))).to.equal("step 2 of job 1 is already disputed (dispute 3) [DisputeGameDisputeOpen]");
    expect(describeRevert(new ContractRevertError("DisputeGameChallengerLimit", [1n, "0xA", 4n, 4n]))).to.equal(
      "0xA already holds 4 open disputes on job 1, the most one challenger may (4); one resolves first [DisputeGameChallengerLimit]",
    );
    expect(describeRevert(new ContractRevertError("ERC20InsufficientBalance", ["0xA", 0n, parseEther("1.15")]))).to.equal(
      "0xA holds 0 tokens, 1.15 are needed (short 1.15) [ERC20InsufficientBalance]",
    );
    expect(describeRevert(new ContractRevertError("SomethingElse", [1n]))).to.equal("reverted: SomethingElse(1)");
  });
});
