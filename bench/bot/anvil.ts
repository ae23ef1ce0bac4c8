/**
 * A local anvil node for the bot's service tests and `npm run bench:bot`: started on a free loopback port as a child
 * process (the platform binary of the @foundry-rs/anvil devDependency, so that a stop signal reaches the node itself,
 * not a wrapper), answered on eth_chainId before it is returned, and stopped by `stop()`, which resolves only once the
 * process has exited. Chain id 31337 and the same dev accounts as Hardhat's node (the "test ... junk" mnemonic).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const PLATFORM_BINARY = join(ROOT, "node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil");
const WRAPPER = join(ROOT, "node_modules/.bin/anvil");

/** anvil did not start or did not answer. */
export class AnvilStartError extends Error {
  override name = "AnvilStartError";
}

/** A JSON-RPC call failed (transport or an `error` member in the answer). */
export class RpcCallError extends Error {
  override name = "RpcCallError";
}

export type AnvilNode = { url: string; port: number; child: ChildProcess; log: () => string; stop: () => Promise<void> };

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

let nextId = 1;
/** One JSON-RPC call over HTTP; the `result`, or RpcCallError with the node's message. */
export async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }) });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new RpcCallError(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** Starts anvil (automine) on a free port; `args` are extra flags. Throws AnvilStartError when it does not answer in 30 s. */
export async function startAnvil(args: readonly string[] = []): Promise<AnvilNode> {
  const port = await freePort();
  const bin = existsSync(PLATFORM_BINARY) ? PLATFORM_BINARY : WRAPPER;
  if (!existsSync(bin)) throw new AnvilStartError(`anvil is not installed (${WRAPPER}): npm ci installs the @foundry-rs/anvil devDependency`);
  const child = spawn(bin, ["--host", "127.0.0.1", "--port", String(port), "--silent", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (d: Buffer) => (output = (output + d.toString()).slice(-20_000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const kill = setTimeout(() => child.kill("SIGKILL"), 5_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(kill);
    }
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new AnvilStartError(`anvil exited (${child.exitCode}): ${output.slice(-2000)}`);
    try {
      await rpc(url, "eth_chainId");
      break;
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new AnvilStartError(`anvil did not answer within 30 s: ${output.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url, port, child, log: () => output, stop };
}
