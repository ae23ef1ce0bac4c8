/**
 * A counting JSON-RPC proxy: an HTTP server on a free loopback port that forwards every POST body to `upstream` and
 * counts the requests by method (a batch counts each of its calls), and keeps every eth_sendRawTransaction payload in
 * the order sent. One proxy in front of the node per bot gives that bot's RPC load and the transactions it broadcast,
 * seen from outside the bot. `mark()` returns a snapshot to diff against (`since(mark)`), so a caller can measure a
 * window (an idle minute) without stopping the traffic.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";

export type MethodCounts = Record<string, number>;
export type ProxyMark = { at: number; counts: MethodCounts };

export type RpcProxy = {
  url: string;
  /** Requests by method since the proxy started. */
  counts: () => MethodCounts;
  total: () => number;
  /** Raw signed transactions (0x...) passed to eth_sendRawTransaction, in order, repeats included. */
  rawTxs: () => readonly string[];
  mark: () => ProxyMark;
  /** Requests by method since `m`, and the seconds elapsed. */
  since: (m: ProxyMark) => { seconds: number; counts: MethodCounts; total: number };
  close: () => Promise<void>;
};

type Call = { method?: unknown; params?: unknown };

function body(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}

export async function startRpcProxy(upstream: string): Promise<RpcProxy> {
  const counts: MethodCounts = {};
  const raws: string[] = [];
  const count = (c: Call) => {
    const m = typeof c.method === "string" ? c.method : "(invalid)";
    counts[m] = (counts[m] ?? 0) + 1;
    if (m === "eth_sendRawTransaction" && Array.isArray(c.params) && typeof c.params[0] === "string") raws.push(c.params[0]);
  };
  const server: Server = createServer(async (req, res) => {
    try {
      const raw = await body(req);
      try {
        const parsed = JSON.parse(raw.toString()) as Call | Call[];
        for (const c of Array.isArray(parsed) ? parsed : [parsed]) count(c);
      } catch {
        count({});
      }
      const up = await fetch(upstream, { method: "POST", headers: { "content-type": "application/json" }, body: raw.toString() });
      const answer = Buffer.from(await up.arrayBuffer());
      res.writeHead(up.status, { "content-type": "application/json" });
      res.end(answer);
    } catch (err) {
      // the node is down or stopped: the client sees a transport error, as it would without the proxy
      res.writeHead(502, { "content-type": "text/plain" });
      res.end(`proxy: ${(err as Error).message}`);
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const total = (c: MethodCounts) => Object.values(c).reduce((a, b) => a + b, 0);
  const mark = (): ProxyMark => ({ at: performance.now(), counts: { ...counts } });
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    total: () => total(counts),
    rawTxs: () => raws,
    mark,
    since: (m) => {
      const diff: MethodCounts = {};
      for (const [k, v] of Object.entries(counts)) if (v - (m.counts[k] ?? 0) > 0) diff[k] = v - (m.counts[k] ?? 0);
      return { seconds: (performance.now() - m.at) / 1000, counts: diff, total: total(diff) };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
