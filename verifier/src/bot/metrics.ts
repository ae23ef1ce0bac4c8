/**
 * Opt-in operator endpoints of `pouw auditor run --metrics-port N` (node:http, no dependencies):
 *
 *   GET /healthz  200 {"status":"ok","canAct":true,...} when the bot can act (bot.ts health(): RPC answering and a scan
 *                 recent, bonded, tokens for at least one challenge deposit and ETH for its gas, indexer caught up, no
 *                 intent stuck past its deadline); 503 {"status":"cannot-act","reasons":[{kind,message}...]} otherwise
 *                 (reason kinds: rpc-down, rpc-stale, unbonded, unfunded, no-gas, indexer-behind, intent-stuck), or
 *                 503 {"status":"stopped"} once the loop ended. A view without `health` answers 200 while the RPC does.
 *   GET /metrics  Prometheus text exposition (format 0.0.4): audits, failed audits, challenges, receipts, intents by
 *                 kind and status, lost findings, the auditor's token, ETH and bond balances as gauges, and with
 *                 `chainCounters` reorgs seen, blocks rolled back and JSON-RPC requests by method
 *
 * It reads the bot through a read-only view (BotView: the bot's `summary()`, a funds reader, the chain head), so it
 * never touches the bot's state or its loop. The audit, receipt and intent counters come from the bot's SQLite state,
 * which only grows, so they survive restarts; reorgs, rollbacks and RPC requests count from the process start (a
 * restart is a counter reset, which Prometheus's rate() handles).
 *
 * @example
 *   const m = await startMetricsServer({ port: 9464, view: { summary: () => bot.summary(), funds: () => getAuditorFunds(client, { deployment, account }) } });
 *   // ... m.url; await m.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { formatEther } from "viem";
import { logger } from "../log/index.ts";
import type { BotSummary } from "./bot.ts";
import type { BotHealth } from "./health.ts";

const log = logger("metrics");

/** What the endpoints read: nothing here writes. */
export type BotView = {
  summary(): BotSummary;
  /** The auditor's balances (chain/getAuditorFunds); a rejection sets pouw_auditor_funds_up 0. */
  funds(): Promise<{ tokenBalance: bigint; ethBalance: bigint; bond: bigint; active: boolean }>;
  /** The RPC's latest block, for /healthz (default: not checked). */
  blockNumber?(): Promise<bigint>;
  /** Whether the bot's loop is running (default: always). */
  running?(): boolean;
  /** Whether the bot can act (bot.ts health()); /healthz answers from it when given. */
  health?(): Promise<BotHealth>;
  /** Reorgs seen, blocks rolled back and JSON-RPC requests by method since the process started. */
  chainCounters?(): ChainCounters;
};

export type ChainCounters = { reorgs: number; rolledBackBlocks: number; rpcRequests: ReadonlyMap<string, number> };

export type MetricsServerOptions = { port: number; host?: string; view: BotView };

export type MetricsServer = { url: string; port: number; close: () => Promise<void> };

type Sample = { labels?: Record<string, string>; value: number };
type Family = { name: string; help: string; type: "counter" | "gauge"; samples: Sample[] };

const escLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const escHelp = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const num = (v: number) => (Number.isFinite(v) ? String(v) : v > 0 ? "+Inf" : v < 0 ? "-Inf" : "NaN");
/** Tokens (18 decimals) as a float gauge value. NOTE: exact to ~15 significant digits, which a dashboard needs. */
const tokenValue = (wei: bigint) => Number(formatEther(wei));

/** The Prometheus text exposition of `families` (HELP, TYPE, then one line per sample). Pure. */
export function exposition(families: readonly Family[]): string {
  let out = "";
  for (const f of families) {
    out += `# HELP ${f.name} ${escHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    for (const s of f.samples) {
      const labels = s.labels && Object.keys(s.labels).length ? `{${Object.entries(s.labels).map(([k, v]) => `${k}="${escLabel(v)}"`).join(",")}}` : "";
      out += `${f.name}${labels} ${num(s.value)}\n`;
    }
  }
  return out;
}

/** The metric families of a bot summary and its balances (undefined: the balance read failed). Pure. */
export function botMetrics(s: BotSummary, funds: Awaited<ReturnType<BotView["funds"]>> | undefined, auditor = s.auditor, chain?: ChainCounters): Family[] {
  const ok = s.audits.filter((a) => a.ok).length;
  const bad = s.audits.length - ok;
  const byKindStatus = new Map<string, Sample>();
  for (const i of s.intents) {
    const k = `${i.kind}\u0000${i.status}`;
    const x = byKindStatus.get(k) ?? { labels: { kind: i.kind, status: i.status }, value: 0 };
    x.value++;
    byKindStatus.set(k, x);
  }
  const challenges = s.intents.filter((i) => i.kind === "challenge");
  const a = { auditor };
  const families: Family[] = [
    { name: "pouw_auditor_info", help: "The auditor this bot runs as (value 1).", type: "gauge", samples: [{ labels: a, value: 1 }] },
    { name: "pouw_auditor_audits_total", help: "Segments audited, by result (ok: clean, bad: a wrong step found).", type: "counter", samples: [{ labels: { result: "ok" }, value: ok }, { labels: { result: "bad" }, value: bad }] },
    { name: "pouw_auditor_audit_failures_total", help: "Audits that found a wrong step (a finding to challenge).", type: "counter", samples: [{ value: bad }] },
    { name: "pouw_auditor_sampled_out_total", help: "Committed segments this bot's private sampling skipped.", type: "counter", samples: [{ value: s.sampledOut }] },
    { name: "pouw_auditor_receipts_signed_total", help: "EIP-712 audit receipts signed for clean segments.", type: "counter", samples: [{ value: s.receipts }] },
    { name: "pouw_auditor_challenges_total", help: "Challenges sent and mined (challenge intents confirmed).", type: "counter", samples: [{ value: challenges.filter((i) => i.status === "confirmed").length }] },
    { name: "pouw_auditor_challenges_pending", help: "Challenges not sent yet (pending intents; waiting for funds among them).", type: "gauge", samples: [{ value: challenges.filter((i) => i.status === "pending").length }] },
    { name: "pouw_auditor_lost_findings_total", help: "Findings recorded as failed for good (the job could no longer be frozen).", type: "counter", samples: [{ value: challenges.filter((i) => i.status === "failed").length }] },
    { name: "pouw_auditor_intents", help: "Transaction intents in the bot's state, by kind and status.", type: "gauge", samples: [...byKindStatus.values()].sort((x, y) => `${x.labels?.kind}/${x.labels?.status}`.localeCompare(`${y.labels?.kind}/${y.labels?.status}`)) },
    { name: "pouw_auditor_funds_up", help: "1 when the last balance read succeeded, else 0 (the balance gauges are then absent).", type: "gauge", samples: [{ value: funds ? 1 : 0 }] },
  ];
  if (funds) {
    families.push(
      { name: "pouw_auditor_token_balance", help: "Payment/bond token balance of the auditor, in tokens (a challenge deposit comes out of it).", type: "gauge", samples: [{ value: tokenValue(funds.tokenBalance) }] },
      { name: "pouw_auditor_eth_balance", help: "ETH balance of the auditor, for gas.", type: "gauge", samples: [{ value: tokenValue(funds.ethBalance) }] },
      { name: "pouw_auditor_bond", help: "Auditor bond in AuditorRegistry, in tokens.", type: "gauge", samples: [{ value: tokenValue(funds.bond) }] },
      { name: "pouw_auditor_bonded", help: "1 when the auditor is active in AuditorRegistry (receipts anchor, panels draw it).", type: "gauge", samples: [{ value: funds.active ? 1 : 0 }] },
    );
  }
  if (chain) {
    families.push(
      { name: "pouw_auditor_reorgs_total", help: "Chain reorganisations the indexer saw (each rolled back and re-indexed).", type: "counter", samples: [{ value: chain.reorgs }] },
      { name: "pouw_auditor_rolled_back_blocks_total", help: "Blocks rolled back over all reorgs.", type: "counter", samples: [{ value: chain.rolledBackBlocks }] },
      {
        name: "pouw_auditor_rpc_requests_total",
        help: "JSON-RPC requests the bot sent, by method.",
        type: "counter",
        samples: [...chain.rpcRequests.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([method, value]) => ({ labels: { method }, value })),
      },
    );
  }
  return families;
}

async function health(view: BotView): Promise<{ code: number; body: Record<string, unknown> }> {
  if (view.running && !view.running()) return { code: 503, body: { status: "stopped" } };
  if (view.health) {
    const h = await view.health();
    return { code: h.canAct ? 200 : 503, body: { status: h.canAct ? "ok" : "cannot-act", ...h } };
  }
  try {
    const block = view.blockNumber ? await view.blockNumber() : undefined;
    return { code: 200, body: { status: "ok", auditor: view.summary().auditor, ...(block === undefined ? {} : { block: block.toString() }) } };
  } catch (err) {
    return { code: 503, body: { status: "unhealthy", reason: (err as { shortMessage?: string }).shortMessage ?? String(err) } };
  }
}

async function answer(view: BotView, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD" }).end();
    return;
  }
  if (path === "/healthz") {
    const h = await health(view);
    res.writeHead(h.code, { "content-type": "application/json" }).end(JSON.stringify(h.body) + "\n");
    return;
  }
  if (path === "/metrics") {
    let funds: Awaited<ReturnType<BotView["funds"]>> | undefined;
    try {
      funds = await view.funds();
    } catch (err) {
      log.warn({ err }, "balance read for /metrics failed");
    }
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(exposition(botMetrics(view.summary(), funds, undefined, view.chainCounters?.())));
    return;
  }
  res.writeHead(404, { "content-type": "text/plain" }).end("not found: GET /metrics or /healthz\n");
}

/** Listens on host:port (port 0: any free port) until close(). */
export async function startMetricsServer(o: MetricsServerOptions): Promise<MetricsServer> {
  const host = o.host ?? "127.0.0.1";
  const server = createServer((req, res) => {
    answer(o.view, req, res).catch((err: unknown) => {
      log.error({ err, url: req.url }, "metrics request failed");
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
