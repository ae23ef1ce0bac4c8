/**
 * Multi-process test helpers: a `hardhat node` child on a free loopback port, `pouw` CLI runs as child
 * processes, raw JSON-RPC calls, and a lossy JSON-RPC proxy.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const NODE = process.execPath; // Node 22 (hardhat test runs on it)
const HARDHAT = join(ROOT, "node_modules/hardhat/dist/src/cli.js");

/** Hardhat's default dev accounts (public, well known; local chain only). */
export const DEV_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
  "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
] as const;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createNetServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

export async function rpc(url: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

export async function increaseTime(url: string, seconds: number): Promise<void> {
  await rpc(url, "evm_increaseTime", [seconds]);
  await rpc(url, "evm_mine");
}

/**
 * Runs `pouw ARGS` in a child process with a module-resolution hook and returns its exit status, stderr and the npm
 * packages it resolved (what a command loads: the lazy-loading smoke test and bench/cli.ts). `dir` holds the hook and
 * the output file.
 */
export function pouwLoading(dir: string, args: string[], pouw = join(ROOT, "verifier/src/cli/pouw.ts")): { status: number | null; stderr: string; loaded: string[] } {
  const hook = join(dir, "loaded.mjs");
  const out = join(dir, "loaded.json");
  writeFileSync(
    hook,
    `import { registerHooks } from "node:module"; import { writeFileSync } from "node:fs";
const seen = new Set();
registerHooks({ resolve(s, c, next) { const r = next(s, c); const m = /node_modules\\/((@[^/]+\\/)?[^/]+)/.exec(r.url); if (m) seen.add(m[1]); return r; } });
process.on("exit", () => writeFileSync(process.env.POUW_LOADED_OUT, JSON.stringify([...seen])));\n`,
  );
  const r = spawnSync(process.execPath, ["--import", hook, pouw, ...args], { cwd: ROOT, env: { ...process.env, POUW_LOADED_OUT: out }, encoding: "utf8" });
  return { status: r.status, stderr: r.stderr, loaded: JSON.parse(readFileSync(out, "utf8")) as string[] };
}

export type NodeHandle = { url: string; child: ChildProcess; stop: () => Promise<void> };

/** Starts `hardhat node` on a free loopback port and waits until it answers eth_chainId. */
export async function startHardhatNode(): Promise<NodeHandle> {
  const port = await freePort();
  const child = spawn(NODE, [HARDHAT, "node", "--hostname", "127.0.0.1", "--port", String(port)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hardhat node exited: ${output.slice(-2000)}`);
    try {
      await rpc(url, "eth_chainId");
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`hardhat node did not start: ${output.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  return {
    url,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

// the spawned `pouw` helpers live in test/helpers/cli.ts (the one CLI helper); re-exported for existing callers
export { cli, cliOk, startCli, type CliResult, type CliRun } from "../helpers/cli.ts";

export type LossyProxy = { url: string; server: Server; stats: { forwarded: number; droppedRequests: number; droppedResponses: number }; close: () => Promise<void> };

/**
 * A JSON-RPC proxy on loopback that drops `rate` of requests: half of the drops before forwarding (the
 * node never sees the request), half after (the node acted, the client never hears back). A drop
 * destroys the client's socket. Deterministic for a given seed.
 */
export async function startLossyProxy(target: string, rate: number, seed = 1): Promise<LossyProxy> {
  let s = seed >>> 0;
  const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const stats = { forwarded: 0, droppedRequests: 0, droppedResponses: 0 };
  const t = new URL(target);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = rand();
      if (r < rate / 2) {
        stats.droppedRequests++;
        req.socket.destroy();
        return;
      }
      const dropResponse = r < rate;
      const up = httpRequest({ hostname: t.hostname, port: t.port, path: "/", method: "POST", headers: { "content-type": "application/json" } }, (upRes) => {
        const body: Buffer[] = [];
        upRes.on("data", (c: Buffer) => body.push(c));
        upRes.on("end", () => {
          if (dropResponse) {
            stats.droppedResponses++;
            req.socket.destroy();
            return;
          }
          stats.forwarded++;
          res.writeHead(upRes.statusCode ?? 200, { "content-type": "application/json" });
          res.end(Buffer.concat(body));
        });
      });
      up.on("error", () => req.socket.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${port}`, server, stats, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
