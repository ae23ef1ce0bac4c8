/**
 * The bot's RPC load follows new blocks, not open jobs: on an idle chain a tick reads the head and nothing else, however
 * many jobs are open; a new block with no event for a job reads no job record; a deadline that passes reads each
 * waiting job once and records its timeout. Requests are counted through a transport that wraps the in-process
 * provider (every request the bot, its dispute hooks and its outbox send).
 */
import { expect } from "chai";
import { join } from "node:path";
import { chainDisputeHooks, ChallengerBot } from "../../verifier/src/bot/index.ts";
import { devAccount, providerClients } from "../../verifier/src/chain/index.ts";
import { botMarket, postCheatingJob } from "./fixture.ts";

const JOBS = 5;
const IDLE_TICKS = 10;

describe("challenger bot RPC load", function () {
  it("reads only the head on an idle chain with open jobs, and each job once its deadline passes", async () => {
    const market = await botMarket(600);
    const jobs = [];
    for (let n = 0; n < JOBS; n++) jobs.push(await postCheatingJob(market, `rpc-${n}`, { train: false }));
    const { conn, d } = market;
    const f = jobs[0]!;
    const counts = new Map<string, number>();
    const counting = {
      request: (args: { method: string; params?: unknown }) => {
        counts.set(args.method, (counts.get(args.method) ?? 0) + 1);
        return conn.provider.request(args as never);
      },
    };
    const clients = providerClients(counting, 31337, { account: devAccount(5), pollingIntervalMs: 20 });
    const bot = new ChallengerBot({
      clients,
      deployment: d,
      store: f.store,
      board: f.board,
      dbPath: join(f.dir, "load.sqlite"),
      heartbeatMs: 0,
      dispute: chainDisputeHooks({ clients, deployment: d, ballotsDir: join(f.dir, "load-ballots") }),
    });
    const total = () => [...counts.values()].reduce((a, b) => a + b, 0);
    const reset = () => counts.clear();
    try {
      await bot.startup();
      await bot.tick();
      expect(bot.db.jobsWithStatus("Active").length, "every posted job is followed as Active").to.equal(JOBS);

      reset();
      for (let t = 0; t < IDLE_TICKS; t++) await bot.tick();
      const idle = Object.fromEntries(counts);
      // one head read per tick; no job record, no log range, no balance: nothing grows with the open jobs
      expect(counts.get("eth_call") ?? 0, `no eth_call on an idle chain: ${JSON.stringify(idle)}`).to.equal(0);
      expect(total(), `one request per idle tick: ${JSON.stringify(idle)}`).to.equal(IDLE_TICKS);

      // a new block with no event for the jobs: the logs and the credit are read, no job record
      reset();
      await conn.networkHelpers.mine();
      await bot.tick();
      const block = Object.fromEntries(counts);
      expect(counts.get("eth_call") ?? 0, `a new block reads no job record: ${JSON.stringify(block)}`).to.be.lessThan(JOBS);
      reset();
      await bot.tick();
      expect(total(), "the tick after it is idle again").to.equal(1);

      // past the jobs' deadlines: each job is read once and its timeout recorded
      await conn.networkHelpers.time.increase(30 * 24 * 3600);
      await conn.networkHelpers.mine();
      reset();
      await bot.tick();
      const timeouts = bot.db.allIntents().filter((i) => i.kind === "reportTimeout");
      expect(timeouts.length, "a reportTimeout for every job past its deadline").to.equal(JOBS);
      console.log(`      requests: ${IDLE_TICKS} idle ticks with ${JOBS} open jobs ${JSON.stringify(idle)}; a tick after an empty block ${JSON.stringify(block)}`);
    } finally {
      bot.close();
    }
  });
});
