/**
 * The newcomer's path, in-process through main(argv) against a fresh in-process chain served over HTTP: every
 * command of the market's life with --json, from `pouw deploy` to `pouw buyer fetch` and the claims. Each command's
 * stdout parses as JSON (one object per line), and every write names each transaction it sent with its hash and
 * block: checked against the chain's own receipts (mined in that block, succeeded, sent by the command's account),
 * not against the command's word. The text form of `pouw deploy` lists the same transactions.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { getAddress, type Address } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { DEV_KEYS, ROOT } from "../e2e/helpers.ts";
import { runPouw } from "./in-process.ts";
import { serveProvider, type ServedProvider } from "./rpc-over-http.ts";

type Tx = { hash: string; blockNumber: string };

/** Every transaction reference in a command's JSON: an object with a 32-byte `hash` and a `blockNumber`. */
function txsIn(v: unknown): Tx[] {
  if (Array.isArray(v)) return v.flatMap(txsIn);
  if (v === null || typeof v !== "object") return [];
  const o = v as Record<string, unknown>;
  const own = typeof o.hash === "string" && /^0x[0-9a-f]{64}$/.test(o.hash) && typeof o.blockNumber === "string" ? [{ hash: o.hash, blockNumber: o.blockNumber }] : [];
  return [...own, ...Object.values(o).flatMap(txsIn)];
}

describe("newcomer path: every command's --json parses, every write names its transactions (in-process)", function () {
  this.timeout(120_000);
  let rpc: ServedProvider;
  let provider: { request: (a: { method: string; params?: unknown[] }) => Promise<unknown> };
  const dir = mkdtempSync(join(tmpdir(), "pouw-newcomer-"));
  const manifest = join(dir, "manifest.json");
  const address = (k: number): Address => privateKeyToAccount(DEV_KEYS[k]!).address;
  const as = (k?: number) => ["--rpc", rpc.url, "--state-dir", dir, ...(k === undefined ? [] : ["--private-key", DEV_KEYS[k]!])];
  const seen: { command: string; txs: number }[] = [];

  /** Runs `pouw ARGS --json` as account `k`, parses every stdout line, checks each named transaction on chain. */
  async function json(args: string[], k?: number, o: { writes?: boolean } = {}): Promise<Record<string, unknown>[]> {
    const r = await runPouw([...args, "--json", ...as(k)]);
    expect(r.code, `pouw ${args.join(" ")}: ${r.stderr}`).to.equal(0);
    const lines = r.stdout.split("\n").filter((l) => l !== "");
    expect(lines.length, `pouw ${args.join(" ")} printed nothing`).to.be.greaterThan(0);
    const values = lines.map((l, i) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        throw new Error(`pouw ${args.join(" ")} line ${i + 1} is not JSON: ${l.slice(0, 200)}`);
      }
    });
    const txs = txsIn(values);
    if (o.writes) expect(txs.length, `pouw ${args.join(" ")} sent transactions but named none`).to.be.greaterThan(0);
    for (const t of txs) {
      const receipt = (await provider.request({ method: "eth_getTransactionReceipt", params: [t.hash] })) as { blockNumber: string; status: string; from: string } | null;
      expect(receipt, `${t.hash} (pouw ${args.join(" ")}) is not on chain`).to.not.equal(null);
      expect(BigInt(receipt!.blockNumber), `${t.hash} block`).to.equal(BigInt(t.blockNumber));
      expect(receipt!.status).to.equal("0x1");
      if (k !== undefined) expect(getAddress(receipt!.from), `${t.hash} sender`).to.equal(address(k));
    }
    seen.push({ command: args.slice(0, 2).join(" "), txs: txs.length });
    return values;
  }

  before(async () => {
    const conn = await network.create();
    provider = conn.provider as never;
    rpc = await serveProvider(conn.provider);
    const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8"));
    // the corpus pays dev account 4 (so that it can claim its share); every segment audited
    writeFileSync(manifest, JSON.stringify({ ...tiny, corpora: tiny.corpora.map((c: object) => ({ ...c, payoutAddress: address(4) })), policy: { ...tiny.policy, auditRate: 1 } }));
  });
  after(async () => rpc?.close());

  it("deploy, register, bond, post, stake, accept, train, audit, claim, fetch, status: JSON throughout, every tx on chain", async () => {
    const [deployed] = await json(["deploy", "--unbonding-delay", "60", "--exit-delay", "691272", "--min-bond", "1"], 0, { writes: true });
    // the dev token, StakeVault, AuditorRegistry, JobMarket, JobRecords, the wire, two registries, setRegistries,
    // PeerDirectory, the dev verifier, DisputeGame, two wires, StateOpenings and KindRecords (deployed by default): 17 transactions, in
    // the order sent, blocks never going back
    const deployTxs = deployed!.txs as { what: string; blockNumber: string }[];
    expect(deployTxs.map((t) => t.what)).to.deep.equal([
      "deploy TestToken",
      "deploy StakeVault",
      "deploy AuditorRegistry",
      "deploy JobMarket",
      "deploy JobRecords",
      "StakeVault.wire",
      "deploy ProviderRegistry",
      "AuditorRegistry.wireAttestation",
      "deploy DataRegistry",
      "JobMarket.setRegistries",
      "deploy PeerDirectory",
      "deploy Groth16Verifier (development)",
      "deploy DisputeGame",
      "AuditorRegistry.wire",
      "JobMarket.wire",
      "deploy StateOpenings",
      "deploy KindRecords",
    ]);
    const blocks = deployTxs.map((t) => BigInt(t.blockNumber));
    expect(blocks[0]!.toString()).to.equal((deployed!.deployment as { startBlock: string }).startBlock);
    for (let i = 1; i < blocks.length; i++) expect(blocks[i]! >= blocks[i - 1]!).to.equal(true);

    await json(["corpus", "register", "--manifest", manifest], 4, { writes: true });
    await json(["auditor", "bond", "2", "--mint"], 3, { writes: true });
    await json(["dev", "advance", "3601"]);
    const [created] = await json(["buyer", "create", "--manifest", manifest, "--pay", "1", "--mint", "--challenge-window", "100"], 1, { writes: true });
    // the mint and the approve that funded it are named too, not only createJob
    expect((created!.txs as { what: string }[]).map((t) => t.what)).to.deep.equal(["mint", "approve", "createJob"]);
    const stake = BigInt((created!.policy as { requiredStake: string }).requiredStake);
    await json(["buyer", "create", "--manifest", manifest, "--pay", "1", "--mint", "--no-quote"], 1, { writes: true });
    await json(["buyer", "cancel", "2"], 1, { writes: true });
    await json(["buyer", "claim"], 1, { writes: true });
    await json(["provider", "stake", (Number(stake) / 1e18 + 1).toFixed(6), "--mint"], 2, { writes: true });
    await json(["provider", "accept", "1"], 2, { writes: true });
    await json(["provider", "run", "1"], 2, { writes: true });
    await json(["auditor", "fund", "--mint"], 3, { writes: true });

    // the bot: one JSON object per line, events named, then the summary; its receipts' transactions are on chain
    const events = await json(["auditor", "run", "--once", "--poll-interval", "50"], 3, { writes: true });
    expect(events[0]).to.include({ event: "startup", module: "bot" });
    const audits = events.filter((e) => e.event === "audit");
    expect(audits.map((a) => [a.jobId, a.segment, a.ok])).to.deep.equal([
      ["1", 0, true],
      ["1", 1, true],
      ["1", 2, true],
    ]);
    const summary = events.at(-1)!;
    expect(summary).to.deep.include({ event: "summary", account: address(3), audited: 3, failed: [], receipts: 3 });
    // each transaction the bot sent is a "tx" event with its hash and block (checked on chain by json() above) and
    // is listed again in the summary
    const sent = events.filter((e) => e.event === "tx");
    expect(sent.filter((t) => t.kind === "recordReceipt")).to.have.length(3);
    expect((summary.transactions as { txHash: string }[]).map((t) => t.txHash)).to.have.members(sent.map((t) => t.hash));

    await json(["dev", "advance", "101"]);
    const [claimed] = await json(["provider", "claim", "1"], 2, { writes: true });
    expect(claimed!.claimed).to.equal("900000000000000000");
    await json(["corpus", "claim"], 4, { writes: true });
    await json(["provider", "unstake", "1"], 2, { writes: true });
    await json(["dev", "advance", "61"]);
    await json(["provider", "withdraw"], 2, { writes: true });

    // read-only commands: no key
    const [status] = await json(["buyer", "status", "1"]);
    expect(status!.status).to.equal("Finalized");
    await json(["buyer", "fetch", "1", "--out", join(dir, "result")]);
    await json(["jobs"]);
    await json(["provider", "status", "--address", address(2)]);
    await json(["auditor", "status", "--address", address(3)]);
    await json(["dispute", "status", "--job", "1"]);
    await json(["report", "1", "--out", join(dir, "job-1.html")]);
    await json(["auditor", "claim"], 3);
    expect(seen.filter((s) => s.txs > 0).length).to.be.greaterThan(14);
  });

  it("pouw deploy as text lists each transaction with its hash and block", async () => {
    const r = await runPouw(["deploy", "--deployment", join(dir, "second.json"), "--no-registries", ...as(0)]);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stdout.split("\n");
    // KindRecords is deployed without the registries too (it reads only JobMarket)
    const at = lines.indexOf("12 transactions:");
    expect(at, r.stdout).to.be.greaterThan(0);
    const listed = lines.slice(at + 1, at + 13);
    for (const l of listed) expect(l).to.match(/^ {2}(deploy \w+( \(development\))?|\w+\.wire) tx 0x[0-9a-f]{64} in block \d+$/);
    for (const l of listed) {
      const [, hash, block] = / tx (0x[0-9a-f]{64}) in block (\d+)$/.exec(l)!;
      const receipt = (await provider.request({ method: "eth_getTransactionReceipt", params: [hash] })) as { blockNumber: string };
      expect(BigInt(receipt.blockNumber)).to.equal(BigInt(block!));
    }
  });
});
