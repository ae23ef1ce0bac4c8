/**
 * bot/metrics.ts: /healthz and Prometheus /metrics served on port 0 over a read-only view of a bot, fetched with
 * node's fetch and parsed with a small exposition-format parser written here (HELP/TYPE lines, name{labels} value):
 * the values are those of a hand-built summary and balances, a failed balance read drops the balance gauges, a stopped
 * bot or a dead RPC is 503, anything else 404/405.
 */
import { expect } from "chai";
import { parseEther } from "viem";
import type { BotSummary } from "../../verifier/src/bot/bot.ts";
import { startMetricsServer, type BotView, type MetricsServer } from "../../verifier/src/bot/metrics.ts";

type Parsed = { types: Map<string, string>; helps: Map<string, string>; samples: { name: string; labels: Record<string, string>; value: number }[] };

/** A parser of the text exposition format 0.0.4 (enough of it for these metrics), independent of the writer. */
function parseExposition(text: string): Parsed {
  const out: Parsed = { types: new Map(), helps: new Map(), samples: [] };
  expect(text.endsWith("\n"), "ends with a newline").to.equal(true);
  for (const line of text.slice(0, -1).split("\n")) {
    let m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (m) {
      (m[1] === "HELP" ? out.helps : out.types).set(m[2]!, m[3]!);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+]+|NaN|[+-]Inf)$/.exec(line);
    expect(m, `sample line: ${line}`).to.not.equal(null);
    const labels: Record<string, string> = {};
    for (const l of (m![2] ?? "").match(/[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"/g) ?? []) {
      const i = l.indexOf("=");
      labels[l.slice(0, i)] = JSON.parse(l.slice(i + 1)) as string;
    }
    expect(out.types.has(m![1]!), `TYPE before ${m![1]}`).to.equal(true);
    out.samples.push({ name: m![1]!, labels, value: Number(m![3]!.replace("Inf", "Infinity")) });
  }
  return out;
}

const value = (p: Parsed, name: string, labels: Record<string, string> = {}) =>
  p.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).map((s) => s.value);

const AUDITOR = "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955";

function summary(): BotSummary {
  const audit = (jobId: string, segment: number, ok: boolean) => ({ jobId, segment, ok, firstBadStep: ok ? null : 2, costMs: 10, flops: 1, kind: ok ? null : "recompute" });
  const intent = (kind: string, status: string, i: number) => ({ kind, key: `${kind}:${i}`, status, txHash: null, error: status === "pending" ? 'waiting for funds: "quoted"\nline' : null });
  return {
    auditor: AUDITOR,
    audits: [audit("1", 0, true), audit("1", 1, true), audit("1", 2, false), audit("2", 0, true)],
    sampledOut: 5,
    screens: [],
    receipts: 3,
    intents: [intent("recordReceipt", "confirmed", 1), intent("recordReceipt", "confirmed", 2), intent("challenge", "confirmed", 3), intent("challenge", "pending", 4), intent("challenge", "failed", 5), intent("approveBond", "confirmed", 6)],
  };
}

describe("bot metrics: /healthz and Prometheus /metrics (node:http, port 0)", () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const serve = async (view: BotView) => (server = await startMetricsServer({ port: 0, view }));

  it("serves the summary and balances in the exposition format", async () => {
    const s = await serve({ summary, funds: async () => ({ tokenBalance: parseEther("12.5"), ethBalance: parseEther("0.25"), bond: parseEther("5"), active: true }), blockNumber: async () => 42n });
    expect(s.port).to.be.greaterThan(0);
    const res = await fetch(`${s.url}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.equal("text/plain; version=0.0.4; charset=utf-8");
    const p = parseExposition(await res.text());
    expect(value(p, "pouw_auditor_audits_total", { result: "ok" })).to.deep.equal([3]);
    expect(value(p, "pouw_auditor_audits_total", { result: "bad" })).to.deep.equal([1]);
    expect(value(p, "pouw_auditor_audit_failures_total")).to.deep.equal([1]);
    expect(value(p, "pouw_auditor_sampled_out_total")).to.deep.equal([5]);
    expect(value(p, "pouw_auditor_receipts_signed_total")).to.deep.equal([3]);
    expect(value(p, "pouw_auditor_challenges_total")).to.deep.equal([1]);
    expect(value(p, "pouw_auditor_challenges_pending")).to.deep.equal([1]);
    expect(value(p, "pouw_auditor_lost_findings_total")).to.deep.equal([1]);
    expect(value(p, "pouw_auditor_intents", { kind: "recordReceipt", status: "confirmed" })).to.deep.equal([2]);
    expect(value(p, "pouw_auditor_intents", { kind: "challenge" })).to.have.members([1, 1, 1]);
    expect(value(p, "pouw_auditor_token_balance")).to.deep.equal([12.5]);
    expect(value(p, "pouw_auditor_eth_balance")).to.deep.equal([0.25]);
    expect(value(p, "pouw_auditor_bond")).to.deep.equal([5]);
    expect(value(p, "pouw_auditor_bonded")).to.deep.equal([1]);
    expect(value(p, "pouw_auditor_funds_up")).to.deep.equal([1]);
    expect(p.samples.find((x) => x.name === "pouw_auditor_info")!.labels).to.deep.equal({ auditor: AUDITOR });
    expect(p.types.get("pouw_auditor_audits_total")).to.equal("counter");
    expect(p.types.get("pouw_auditor_token_balance")).to.equal("gauge");
    for (const name of p.types.keys()) expect(p.helps.get(name), name).to.be.a("string").and.not.equal("");

    const h = await fetch(`${s.url}/healthz`);
    expect(h.status).to.equal(200);
    expect(await h.json()).to.deep.equal({ status: "ok", auditor: AUDITOR, block: "42" });
  });

  it("a failed balance read drops the balance gauges and says so; the counters stay", async () => {
    const s = await serve({ summary, funds: () => Promise.reject(new Error("RPC down")) });
    const p = parseExposition(await (await fetch(`${s.url}/metrics`)).text());
    expect(value(p, "pouw_auditor_funds_up")).to.deep.equal([0]);
    expect(value(p, "pouw_auditor_token_balance")).to.deep.equal([]);
    expect(value(p, "pouw_auditor_audits_total", { result: "ok" })).to.deep.equal([3]);
  });

  it("/healthz is 503 when the bot stopped or its RPC does not answer; other paths 404, other methods 405", async () => {
    let running = true;
    let rpcUp = true;
    const s = await serve({
      summary,
      funds: async () => ({ tokenBalance: 0n, ethBalance: 0n, bond: 0n, active: false }),
      blockNumber: async () => (rpcUp ? 1n : Promise.reject(Object.assign(new Error("x"), { shortMessage: "cannot reach the RPC" }))),
      running: () => running,
    });
    rpcUp = false;
    let h = await fetch(`${s.url}/healthz`);
    expect([h.status, await h.json()]).to.deep.equal([503, { status: "unhealthy", reason: "cannot reach the RPC" }]);
    running = false;
    h = await fetch(`${s.url}/healthz`);
    expect([h.status, await h.json()]).to.deep.equal([503, { status: "stopped" }]);
    expect((await fetch(`${s.url}/`)).status).to.equal(404);
    expect((await fetch(`${s.url}/metrics`, { method: "POST" })).status).to.equal(405);
  });
});
