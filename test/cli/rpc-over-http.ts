/**
 * Serves an EIP-1193 provider (Hardhat's in-process network, `network.create()`) as a JSON-RPC endpoint on a loopback
 * port, so that CLI cases run in-process through main(argv) (test/cli/in-process.ts) with `--rpc URL` against the same
 * chain a fixture built, without spawning a `hardhat node`.
 *
 * @example
 *   const rpc = await serveProvider(conn.provider);
 *   await runPouw(["buyer", "status", "1", "--rpc", rpc.url, ...]);
 *   await rpc.close();
 */
import { createServer } from "node:http";

type Provider = { request: (args: { method: string; params?: unknown[] }) => Promise<unknown> };
type Call = { jsonrpc: "2.0"; id: number | string | null; method: string; params?: unknown[] };

export type ServedProvider = { url: string; close: () => Promise<void> };

export async function serveProvider(provider: Provider): Promise<ServedProvider> {
  const answer = async (c: Call) => {
    try {
      return { jsonrpc: "2.0", id: c.id, result: await provider.request({ method: c.method, ...(c.params ? { params: c.params } : {}) }) };
    } catch (err) {
      const e = err as { code?: number; message?: string; data?: unknown };
      return { jsonrpc: "2.0", id: c.id, error: { code: typeof e.code === "number" ? e.code : -32603, message: e.message ?? String(err), ...(e.data === undefined ? {} : { data: e.data }) } };
    }
  };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const msg = JSON.parse(body) as Call | Call[];
      void (Array.isArray(msg) ? Promise.all(msg.map(answer)) : answer(msg)).then((out) => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(out, (_k, v: unknown) => (typeof v === "bigint" ? `0x${v.toString(16)}` : v)));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
