/**
 * `npm run walkthrough [-- --rpc URL] [-- --keep] [-- --ipfs]`: the README walkthrough ("Walkthrough"), run as
 * written; `--ipfs` runs the README's second block instead (marker `<!-- walkthrough-ipfs`, "The same over IPFS"):
 * every party on its own state directory, content over IPFS only (`--ipfs`, peers found from the chain's
 * PeerDirectory, no `--source` or `--ipfs-peer`).
 *
 * 1. Starts a fresh `hardhat node` on a free loopback port (a child process, stopped at the end whatever happens), or
 *    takes `--rpc URL` (then it must be a fresh node: the walkthrough's job ids are 1 and 2).
 * 2. Extracts the sh block that follows the `<!-- walkthrough` marker in README.md, so the README and this script
 *    cannot drift, and runs its commands in order in one bash process (`set -euo pipefail`), printing each command
 *    before its output:
 *      - `npx hardhat node` (terminal 1) is not run: step 1 started the node;
 *      - `npx pouw ARGS` runs as `node verifier/src/cli/pouw.ts ARGS`, which is what npx resolves the package's bin
 *        to, without npx's own start-up (seconds per command on 2 cores); any other npx command is refused;
 *      - the environment has no POUW_* variables but POUW_RPC_URL (the node) and POUW_LOG_FORMAT=pretty (unless
 *        given), and TMPDIR is this run's temporary directory, so the block's `mktemp -d` state directory is
 *        removed with it at the end (kept with --keep, or when the run fails);
 *      - `npx pouw serve ... &` (a party's long-running content node, "terminal 3") runs in the background: the
 *        script waits for its `ipfs <peer id> at <multiaddr>` line (`serving ...` without --ipfs) before the next
 *        command and stops it (SIGTERM) when the block ends, whatever happens; any other background command is
 *        refused.
 * 3. Reads the outcome from the chain (getJobOutcome, verifier/src/chain): job 1 (the cheater) Refunded, its
 *    provider's lock slashed in full and nothing left locked, its buyer's slash share and refund claimed; job 2 (honest) Finalized, its provider's pay credited
 *    and claimed, nothing slashed. Exits 1 when a command fails or a check does not hold, 2 on a README without
 *    the block. Prints the wall time.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createPublicClient, formatEther, http, type Chain } from "viem";
import { hardhat } from "viem/chains";
import { getCredits, getJobOutcome, readDeployment } from "../verifier/src/chain/index.ts";
import { jobMoney } from "../verifier/src/market/job-report.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const POUW_CLI = join(ROOT, "verifier/src/cli/pouw.ts");
const HARDHAT_CLI = join(ROOT, "node_modules/hardhat/dist/src/cli.js");
export const MARKER = "<!-- walkthrough";
/** The IPFS variant's block (`--ipfs`): the same market, each party on its own state dir, content over IPFS. */
export const IPFS_MARKER = "<!-- walkthrough-ipfs";
/** The README's job ids: job 1 is trained with a cheating strategy, job 2 honestly. */
const CHEATING_JOB = 1n;
const HONEST_JOB = 2n;

export class WalkthroughBlockError extends Error {
  override name = "WalkthroughBlockError";
}

/** One command of the block: the text as written (continuation lines joined) and the README line it starts on. */
export type WalkthroughCommand = { line: number; text: string; kind: "run" | "node" | "serve" };

/** Whether a README line opens the block of `marker` (`<!-- walkthrough` does not match `<!-- walkthrough-ipfs`). */
function opensBlock(line: string, marker: string): boolean {
  const t = line.trimStart();
  return t.startsWith(marker) && !/^[-\w]/.test(t.slice(marker.length));
}

/**
 * The commands of the sh block(s) that follow a `<!-- walkthrough` marker, in order: blank and comment-only lines
 * dropped, `\` continuations joined; `npx hardhat node` is kind "node" (the caller provides the node). Throws
 * WalkthroughBlockError when there is no marked block, a marker is not followed by an sh block, or a command is sent
 * to the background.
 */
export function extractWalkthrough(readme: string, marker: string = MARKER): WalkthroughCommand[] {
  const lines = readme.split("\n");
  const commands: WalkthroughCommand[] = [];
  let blocks = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!opensBlock(lines[i]!, marker)) continue;
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() === "") j++;
    if (lines[j]?.trim() !== "```sh") throw new WalkthroughBlockError(`README line ${i + 1}: the walkthrough marker must be followed by a \`\`\`sh block`);
    blocks++;
    let pending: WalkthroughCommand | undefined;
    for (j++; j < lines.length && lines[j]!.trim() !== "```"; j++) {
      const raw = lines[j]!;
      if (!pending && (raw.trim() === "" || raw.trimStart().startsWith("#"))) continue;
      const part = raw.endsWith("\\") ? raw.slice(0, -1) : raw;
      pending = pending ? { ...pending, text: `${pending.text} ${part.trim()}` } : { line: j + 1, text: part, kind: "run" };
      if (raw.endsWith("\\")) continue;
      const code = stripComment(pending.text).trim();
      if (/^npx\s+hardhat\s+node(\s|$)/.test(code)) pending.kind = "node";
      else if (/(^|[^&])&\s*$/.test(code)) {
        if (!/^npx\s+pouw\s+serve\s[^&;|]*[^&]&\s*$/.test(code)) throw new WalkthroughBlockError(`README line ${pending.line}: a background command (&) other than \`npx pouw serve ... &\` is not run by the walkthrough: ${code}`);
        pending.kind = "serve";
      }
      commands.push(pending);
      pending = undefined;
    }
    if (j >= lines.length) throw new WalkthroughBlockError(`README line ${i + 1}: the walkthrough block is not closed`);
  }
  if (blocks === 0) throw new WalkthroughBlockError(`README.md has no sh block marked ${marker} ... -->`);
  return commands;
}

/** The command without a trailing `# comment` (a `#` outside quotes that starts a word). */
function stripComment(text: string): string {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!))) return text.slice(0, i);
  }
  return text;
}

const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** The node that runs this script (Node 22 under npm), not whichever `node` is first on PATH (Node 20 cannot run .ts). */
const NODE = shQuote(process.execPath);

/** The bash script that runs the commands in order, each printed (with the seconds since the start) before it runs. */
export function walkthroughScript(commands: readonly WalkthroughCommand[]): string {
  const out = [
    "set -euo pipefail",
    `npx() { if [ "\${1:-}" = pouw ]; then shift; ${NODE} ${shQuote(POUW_CLI)} "$@"; else echo "walkthrough: npx $* is not run by the walkthrough" >&2; return 2; fi; }`,
    `trap 'echo "walkthrough: FAILED (exit $?) at README line $__line: $__cmd" >&2' ERR`,
    // background `npx pouw serve` nodes: stopped when the block ends, however it ends
    "__bg=()",
    `__stop_bg() { local p; for p in "\${__bg[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; for p in "\${__bg[@]}"; do wait "$p" 2>/dev/null || true; done; }`,
    "trap __stop_bg EXIT",
    // waits for a background serve's ready line ($3), echoing it; fails with its output when it exits first or takes 120 s
    `__wait_ready() { local i; for i in $(seq 1 600); do if grep -q "$3" "$1"; then grep "^serving \\|^ipfs " "$1" || true; return 0; fi; if ! kill -0 "$2" 2>/dev/null; then cat "$1" >&2; return 1; fi; sleep 0.2; done; echo "walkthrough: not ready within 120 s" >&2; cat "$1" >&2; return 1; }`,
  ];
  for (const c of commands) {
    out.push(`__line=${c.line}; __cmd=${shQuote(c.text)}`);
    if (c.kind === "node") {
      out.push(`printf '\\n[%4d s] $ %s\\n(not run: the walkthrough started its own node at %s)\\n' "$SECONDS" "$__cmd" "$POUW_RPC_URL"`);
      continue;
    }
    if (c.kind === "serve") {
      const code = stripComment(c.text).trim().replace(/&\s*$/, "").replace(/^npx\s+pouw\s+/, "");
      const ready = /\s--ipfs(\s|$)/.test(code) ? "^ipfs .* at " : "^serving ";
      out.push(
        `printf '\\n[%4d s] $ %s\\n' "$SECONDS" "$__cmd"`,
        `__log=$(mktemp); ${NODE} ${shQuote(POUW_CLI)} ${code} >"$__log" 2>&1 &`,
        `__bg+=($!)`,
        `__wait_ready "$__log" $! ${shQuote(ready)}`,
      );
      continue;
    }
    out.push(`printf '\\n[%4d s] $ %s\\n' "$SECONDS" "$__cmd"`, c.text);
  }
  return out.join("\n") + "\n";
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

async function chainId(url: string): Promise<number> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }) });
  return Number(((await res.json()) as { result: string }).result);
}

type Node = { url: string; child: ChildProcess | undefined; log: () => string; stop: () => Promise<void> };

async function startNode(): Promise<Node> {
  const port = await freePort();
  const child = spawn(process.execPath, [HARDHAT_CLI, "node", "--hostname", "127.0.0.1", "--port", String(port)], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr!.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const kill = setTimeout(() => child.kill("SIGKILL"), 5_000);
      child.once("exit", () => {
        clearTimeout(kill);
        resolve();
      });
      child.kill("SIGTERM");
    });
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`hardhat node exited (${child.exitCode}): ${output.slice(-2000)}`);
    try {
      await chainId(url);
      break;
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`hardhat node did not answer within 120 s: ${output.slice(-2000)}`);
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  return { url, child, log: () => output, stop };
}

function runBash(script: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn("bash", [script], { cwd: ROOT, env, stdio: ["ignore", "inherit", "inherit"] });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** Reads the outcome of both jobs and returns one line per failed check (none: the walkthrough ended as it should). */
async function checkOutcome(url: string, deploymentPath: string): Promise<{ lines: string[]; failures: string[] }> {
  const chain: Chain = { ...hardhat, rpcUrls: { default: { http: [url] } } };
  const client = createPublicClient({ chain, transport: http(url) });
  const deployment = await readDeployment(deploymentPath, await client.getChainId());
  const cheat = await getJobOutcome(client, { deployment, jobId: CHEATING_JOB });
  const honest = await getJobOutcome(client, { deployment, jobId: HONEST_JOB });
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => (ok ? undefined : failures.push(what));
  const stake = cheat.job.policy.requiredStake;
  check(cheat.job.status === "Refunded", `job ${CHEATING_JOB} is ${cheat.job.status}, not Refunded`);
  check(cheat.slashed === stake && stake > 0n, `job ${CHEATING_JOB}: slashed ${formatEther(cheat.slashed)} of a lock of ${formatEther(stake)}`);
  check(cheat.slashes.every((s) => s.provider === cheat.job.provider), `job ${CHEATING_JOB}: a slash of someone other than its provider ${cheat.job.provider}`);
  check(cheat.lock === 0n, `job ${CHEATING_JOB}: ${formatEther(cheat.lock)} still locked`);
  check(cheat.fault !== undefined && cheat.fault.refund > 0n, `job ${CHEATING_JOB}: no ProviderFaultSettled with a buyer refund`);
  check(cheat.finalized === undefined, `job ${CHEATING_JOB} was finalized`);
  check(honest.job.status === "Finalized", `job ${HONEST_JOB} is ${honest.job.status}, not Finalized`);
  check(honest.finalized !== undefined && honest.finalized.providerPay > 0n, `job ${HONEST_JOB}: no provider pay at finalize`);
  check(honest.providerCredit === 0n, `job ${HONEST_JOB}: its provider's pay ${formatEther(honest.providerCredit)} is not claimed`);
  check(honest.slashes.length === 0, `job ${HONEST_JOB}: the honest provider was slashed`);
  check(honest.lock === 0n, `job ${HONEST_JOB}: ${formatEther(honest.lock)} still locked`);
  // the buyer's share of the slash is a StakeVault credit; `pouw buyer claim` in the block collected it with the refund
  const money = jobMoney(cheat);
  const buyerLeft = await getCredits(client, { deployment, account: cheat.job.buyer });
  check(money.buyerSlashShare > 0n, `job ${CHEATING_JOB}: the buyer got no share of the slash`);
  check(buyerLeft.stakeVault === 0n && buyerLeft.jobMarket === 0n, `job ${CHEATING_JOB}: the buyer's credits are not claimed (${formatEther(buyerLeft.jobMarket)} refunds, ${formatEther(buyerLeft.stakeVault)} slash shares left)`);
  const lines = [
    `job ${CHEATING_JOB}: ${cheat.job.status}; provider ${cheat.job.provider} slashed ${formatEther(cheat.slashed)} of its lock of ${formatEther(stake)} ` +
      `(${formatEther(cheat.slashes.reduce((s, x) => s + x.burned, 0n))} burned, ${formatEther(cheat.fault?.toChallengers ?? 0n)} to the challengers), still locked ${formatEther(cheat.lock)}; buyer refund ${formatEther(cheat.fault?.refund ?? 0n)}`,
    `job ${CHEATING_JOB}: buyer ${cheat.job.buyer} slash share ${formatEther(money.buyerSlashShare)} + refund ${formatEther(money.buyerRefund)}, claimed (left ${formatEther(buyerLeft.jobMarket + buyerLeft.stakeVault)})`,
    `job ${HONEST_JOB}: ${honest.job.status}; provider ${honest.job.provider} paid ${formatEther(honest.finalized?.providerPay ?? 0n)} (unclaimed ${formatEther(honest.providerCredit)}), slashed ${formatEther(honest.slashed)}`,
  ];
  return { lines, failures };
}

async function main(argv: string[]): Promise<number> {
  const started = performance.now();
  const rpcAt = argv.indexOf("--rpc");
  const givenRpc = rpcAt >= 0 ? argv[rpcAt + 1] : undefined;
  if (rpcAt >= 0 && !givenRpc) {
    process.stderr.write("walkthrough: --rpc needs a URL\n");
    return 2;
  }
  const keep = argv.includes("--keep");
  const ipfs = argv.includes("--ipfs");
  let commands: WalkthroughCommand[];
  try {
    commands = extractWalkthrough(readFileSync(join(ROOT, "README.md"), "utf8"), ipfs ? IPFS_MARKER : MARKER);
  } catch (err) {
    process.stderr.write(`walkthrough: ${(err as Error).message}\n`);
    return 2;
  }
  const dir = mkdtempSync(join(tmpdir(), "pouw-walkthrough-"));
  let node: Node | undefined;
  const stopNode = () => node?.child?.kill("SIGKILL");
  process.once("exit", stopNode);
  const onSignal = (sig: NodeJS.Signals) => {
    stopNode();
    process.stderr.write(`walkthrough: stopped by ${sig}; files kept in ${dir}\n`);
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  let ok = false;
  try {
    if (givenRpc) {
      const id = await chainId(givenRpc).catch(() => undefined);
      if (id !== 31337) {
        process.stderr.write(`walkthrough: ${givenRpc} is ${id === undefined ? "not reachable" : `chain ${id}`}: the walkthrough needs a fresh local dev node (31337)\n`);
        return 2;
      }
      node = { url: givenRpc, child: undefined, log: () => "", stop: async () => {} };
    } else {
      node = await startNode();
    }
    process.stdout.write(`walkthrough${ipfs ? " (over IPFS)" : ""}: ${commands.length} commands from README.md against ${node.url}${givenRpc ? "" : " (hardhat node started for this run)"}; files in ${dir}\n`);
    const script = join(dir, "walkthrough.sh");
    writeFileSync(script, walkthroughScript(commands));
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("POUW_")));
    Object.assign(env, { POUW_RPC_URL: node.url, POUW_LOG_FORMAT: process.env.POUW_LOG_FORMAT ?? "pretty", TMPDIR: dir });
    const commandsStarted = performance.now();
    const code = await runBash(script, env);
    const commandSeconds = (performance.now() - commandsStarted) / 1000;
    if (code !== 0) {
      process.stderr.write(`walkthrough: FAILED: a README command exited ${code} (above)\n`);
      return 1;
    }
    const deployments = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(join(dir, e.name, "deployment.json")))
      .map((e) => join(dir, e.name, "deployment.json"));
    if (deployments.length !== 1) {
      process.stderr.write(`walkthrough: FAILED: expected one state directory with deployment.json under ${dir}, found ${deployments.length}\n`);
      return 1;
    }
    const outcome = await checkOutcome(node.url, deployments[0]!);
    process.stdout.write(`\nwalkthrough: outcome on chain\n${outcome.lines.map((l) => `  ${l}`).join("\n")}\n`);
    const wall = ((performance.now() - started) / 1000).toFixed(0);
    if (outcome.failures.length > 0) {
      process.stderr.write(`walkthrough: FAILED after ${wall} s:\n${outcome.failures.map((f) => `  - ${f}`).join("\n")}\n`);
      return 1;
    }
    ok = true;
    process.stdout.write(`walkthrough: ok: the cheater slashed, the honest provider paid; wall time ${wall} s (README commands ${commandSeconds.toFixed(0)} s)\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`walkthrough: FAILED: ${(err as Error).message}\n`);
    return 1;
  } finally {
    if (node && !ok && node.child) process.stderr.write(`walkthrough: hardhat node log (tail):\n${node.log().slice(-1500)}\n`);
    await node?.stop();
    process.off("exit", stopNode);
    if (ok && !keep) rmSync(dir, { recursive: true, force: true });
    else process.stdout.write(`walkthrough: files kept in ${dir}\n`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
