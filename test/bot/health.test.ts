/**
 * GET /healthz answers whether the bot can act (bot.ts health()): a bonded auditor with no tokens for a challenge
 * deposit is 503 with the reason "unfunded" (its numbers and the fix), and 200 once the tokens arrive; /metrics carries
 * the JSON-RPC requests the bot sent, by method, and the reorgs it saw.
 */
import { expect } from "chai";
import { join } from "node:path";
import { formatEther, parseEther } from "viem";
import { ChallengerBot } from "../../verifier/src/bot/index.ts";
import { startMetricsServer, type MetricsServer } from "../../verifier/src/bot/metrics.ts";
import { getAuditorFunds, getRequiredDeposit, mintTestToken } from "../../verifier/src/chain/index.ts";
import { cheatingJob } from "./fixture.ts";

describe("bot health: /healthz says whether the bot can act", function () {
  this.timeout(240_000);

  it("is 503 with the reason for an unfunded bot and 200 once funded", async () => {
    // auditor 0 bonds 5 of its 5 tokens: bonded, nothing left for a deposit
    const f = await cheatingJob("health", 600, { auditorTokens: (i) => (i === 0 ? parseEther("5") : parseEther("20")) });
    const a = f.auditors[0]!;
    const bot = new ChallengerBot({ clients: a, deployment: f.d, store: f.store, board: f.board, dbPath: join(f.dir, "health.sqlite"), dispute: f.hooks(a, 0), heartbeatMs: 0 });
    let server: MetricsServer | undefined;
    try {
      const before = await bot.health();
      expect(before.reasons.map((r) => r.kind), "before any scan").to.include("rpc-stale");
      await bot.startup();
      await bot.tick();
      server = await startMetricsServer({
        port: 0,
        view: { summary: () => bot.summary(), funds: () => getAuditorFunds(a.public, { deployment: f.d, account: a.account.address }), health: () => bot.health(), chainCounters: () => bot.chainCounters() },
      });
      const deposit = await getRequiredDeposit(f.admin.public, { disputeGame: f.d.disputeGame!, jobId: f.jobId });
      let res = await fetch(`${server.url}/healthz`);
      let body = (await res.json()) as { status: string; canAct: boolean; reasons: { kind: string; message: string }[]; depositsFunded: number };
      expect(res.status).to.equal(503);
      expect(body.status).to.equal("cannot-act");
      expect(body.canAct).to.equal(false);
      expect(body.depositsFunded).to.equal(0);
      expect(body.reasons.map((r) => r.kind)).to.deep.equal(["unfunded"]);
      const fmt = formatEther;
      expect(body.reasons[0]!.message).to.equal(`token balance 0 < one challenge deposit ${fmt(deposit)} (short ${fmt(deposit)}); fix: pouw auditor fund ${fmt(deposit)} --mint`);

      await mintTestToken(a, { token: f.d.token, to: a.account.address, amount: deposit * 2n });
      res = await fetch(`${server.url}/healthz`);
      body = (await res.json()) as typeof body;
      expect(res.status, JSON.stringify(body.reasons)).to.equal(200);
      expect(body.status).to.equal("ok");
      expect(body.depositsFunded).to.equal(2);

      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const calls = /^pouw_auditor_rpc_requests_total\{method="eth_call"\} (\d+)$/m.exec(metrics);
      expect(calls, "eth_call requests counted").to.not.equal(null);
      expect(Number(calls![1])).to.be.greaterThan(0);
      expect(metrics).to.match(/^pouw_auditor_reorgs_total 0$/m);
    } finally {
      await server?.close();
      bot.close();
    }
  });
});
