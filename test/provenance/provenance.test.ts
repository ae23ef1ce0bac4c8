/**
 * Provenance records on the in-process network: an honest tiny job (trained with the engine, committed
 * and finalized on JobMarket) gets a record that verifies, and a single changed byte of the weights, the
 * record or a corpus, or a wrong anchored hash, is rejected with the failing item named.
 */
import { expect } from "chai";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { keccak256, maxUint256, parseEther, toBytes, toHex, type Hex } from "viem";
import {
  acceptJob,
  approveToken,
  commitSegment,
  deployMarket,
  devAccount,
  finalize,
  getJob,
  getSegmentCommits,
  mintTestToken,
  providerClients,
  stakeDeposit,
  type ChainClients,
  type Deployment,
} from "../../verifier/src/chain/index.ts";
import { postJob } from "../../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { corpusBytes, corpusSpecOf, createRun, parseManifest, parseStrategy, train } from "../../verifier/src/ml/index.ts";
import { jobMarketDomain, signAuditReceipt, checksMask } from "../../verifier/src/receipts/index.ts";
import {
  buildProvenanceRecord,
  canonicalRecordBytes,
  ProvenanceBuildError,
  ProvenanceRecordError,
  verifyProvenance,
  viemProvenanceChain,
  writeProvenance,
  type ChainAnchor,
  type ProvenanceChain,
  type ProvenanceReport,
} from "../../verifier/src/provenance/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";

const tiny = JSON.parse(readFileSync(new URL("../../examples/tiny.json", import.meta.url), "utf8"));
const manifest = parseManifest(tiny);

const ROOT = new URL("../../", import.meta.url).pathname;
function pouw(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "verifier/src/cli/pouw.ts"), ...args], { cwd: ROOT });
    let stdout = "";
    let stderr = "";
    p.stdout.on("data", (d) => (stdout += d));
    p.stderr.on("data", (d) => (stderr += d));
    p.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** Serves the in-process network over HTTP JSON-RPC, so a separate `pouw` process can read it. */
function rpcBridge(provider: { request: (a: { method: string; params?: unknown[] }) => Promise<unknown> }): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      const handle = async (m: { id: unknown; method: string; params?: unknown[] }) => {
        try {
          return { jsonrpc: "2.0", id: m.id, result: await provider.request({ method: m.method, params: m.params ?? [] }) };
        } catch (err) {
          const e = err as { code?: number; message?: string; data?: unknown };
          return { jsonrpc: "2.0", id: m.id, error: { code: e.code ?? -32000, message: e.message ?? String(err), data: e.data } };
        }
      };
      const msg = JSON.parse(body);
      const out = Array.isArray(msg) ? await Promise.all(msg.map(handle)) : await handle(msg);
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(out, (_k, v: unknown) => (typeof v === "bigint" ? `0x${v.toString(16)}` : v)));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

const failed = (r: ProvenanceReport) => r.failures.map((f) => f.item);
const flip = (bytes: Uint8Array, at: number): Uint8Array => {
  const out = Uint8Array.from(bytes);
  out[at] = out[at]! ^ 0x01;
  return out;
};

describe("provenance record", function () {
  this.timeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), "pouw-prov-"));
  let d: Deployment;
  let jobId: bigint;
  let weightsBytes: Uint8Array;
  let recordBytes: Uint8Array;
  let recordHashHex: Hex;
  let chainBase: ProvenanceChain;
  let mnistBytes: Uint8Array;
  let pub: ChainClients["public"];
  let bridge: { url: string; server: Server };
  let recordPath: string;
  let weightsPath: string;
  const anchored = new Map<bigint, ChainAnchor>();
  // NOTE: until the anchor contract is deployed by deployMarket, provenanceOf is served from this map;
  // every other read goes to the in-process chain.
  const chainWith = (anchor: Map<bigint, ChainAnchor>): ProvenanceChain => ({ ...chainBase, provenance: async (j) => anchor.get(j) });

  before(async () => {
    const conn = await network.create();
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    const [admin, buyer, provider, auditor] = [0, 1, 2, 3].map(mk) as ChainClients[];
    d = await deployMarket(admin!, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 60n });
    for (const c of [buyer!, provider!]) {
      await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("100") });
      await approveToken(c, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    }
    await stakeDeposit(provider!, { stakeVault: d.stakeVault, amount: parseEther("10") });
    const store = new LocalDirStore(join(dir, "store"));
    const { policy, payment } = await jobPolicyFor(manifest, { overrides: { challengeWindow: 60 } });
    jobId = (await postJob(buyer!, d, store, manifest, policy, payment)).jobId;
    await acceptJob(provider!, { jobMarket: d.jobMarket, jobId });
    const run = await createRun(manifest, { jobId });
    const out = join(dir, "provider");
    const { trace } = await train(run, { outDir: out, strategy: parseStrategy("honest"), evaluate: false });
    for (const s of trace.segments) {
      await commitSegment(provider!, { jobMarket: d.jobMarket, jobId, segment: s.index, traceRoot: s.traceRoot, endStateHash: s.endStateHash, lossE6: BigInt(s.lossE6), checkpointCid: s.checkpointCid });
    }
    await conn.networkHelpers.time.increase(61);
    await finalize(buyer!, { jobMarket: d.jobMarket, jobId });
    expect((await getJob(buyer!.public, { jobMarket: d.jobMarket, jobId })).status).to.equal("Finalized");

    weightsPath = join(out, "final.safetensors");
    weightsBytes = new Uint8Array(readFileSync(weightsPath));
    bridge = await rpcBridge(conn.provider as never);
    const commits = await getSegmentCommits(buyer!.public, { jobMarket: d.jobMarket, jobId, fromBlock: 0n });
    const domain = jobMarketDomain(31337n, d.jobMarket);
    const r = { jobId, segment: 1, traceRoot: commits[1]!.traceRoot, checks: checksMask(["recompute"]), sampledSteps: 4, verdict: 0 };
    const signature = await signAuditReceipt(devAccount(3), domain, r);
    const record = buildProvenanceRecord({ chainId: 31337, jobMarket: d.jobMarket, jobId, manifest, segments: commits, receipts: [{ ...r, auditor: auditor!.account.address, signature }], weightsBytes });
    const written = await writeProvenance(join(dir, "fetched"), record);
    recordPath = written.path;
    recordBytes = new Uint8Array(readFileSync(written.path));
    recordHashHex = written.recordHash;
    anchored.set(jobId, { recordHash: written.recordHash, weightsCidHash: keccak256(toBytes(record.weights.cid)), anchoredAt: 1n });
    pub = buyer!.public;
    chainBase = viemProvenanceChain(pub, { jobMarket: d.jobMarket });
    mnistBytes = corpusBytes(corpusSpecOf(manifest)).bytes;
  });

  it("writes the record as its canonical bytes, hashed with keccak256", () => {
    expect(keccak256(recordBytes)).to.equal(recordHashHex);
    const record = JSON.parse(new TextDecoder().decode(recordBytes));
    expect(canonicalRecordBytes(record)).to.deep.equal(recordBytes);
    const { package: _pkg, ...corpus } = tiny.corpora[0];
    expect(record.corpora).to.deep.equal([{ ...corpus, proportion: 1 }]);
    expect(record.segments).to.have.length(3);
    expect(record.receipts).to.have.length(1);
  });

  it("accepts the honest job's record, weights and corpus", async () => {
    const report = await verifyProvenance({ recordBytes, weightsBytes, chain: chainWith(anchored), deployment: d, corpusBytes: () => mnistBytes });
    expect(failed(report)).to.deep.equal([]);
    const items = report.checks.filter((c) => c.status === "ok").map((c) => c.item);
    for (const item of ["record", "manifest hash", "segment 0 trace root", "segment 2 trace root", "weights", "weights state hash", "record hash", "corpus mnist-digits"]) expect(items).to.include(item);
  });

  it("rejects a single changed byte of the weights, naming the weights", async () => {
    const report = await verifyProvenance({ recordBytes, weightsBytes: flip(weightsBytes, weightsBytes.length - 3), chain: chainWith(anchored), deployment: d, corpusBytes: () => mnistBytes });
    expect(failed(report)).to.deep.equal(["weights", "weights state hash"]);
  });

  it("rejects a single changed byte of the record: a trace root, or whitespace", async () => {
    const text = new TextDecoder().decode(recordBytes);
    const at = text.indexOf('"endStateHash":"0x') + 20;
    const changed = new TextEncoder().encode(text.slice(0, at) + (text[at] === "a" ? "b" : "a") + text.slice(at + 1));
    const r1 = await verifyProvenance({ recordBytes: changed, weightsBytes, chain: chainWith(anchored), deployment: d, corpusBytes: () => mnistBytes });
    expect(failed(r1)).to.deep.equal(["segment 0 trace root", "record hash"]);

    const spaced = new TextEncoder().encode(text.replace('{"chainId"', '{ "chainId"'));
    expect(spaced.length).to.equal(recordBytes.length + 1);
    const r2 = await verifyProvenance({ recordBytes: spaced, weightsBytes, chain: chainWith(anchored), deployment: d, corpusBytes: () => mnistBytes });
    expect(failed(r2)).to.deep.equal(["record", "record hash"]);
  });

  it("rejects a single changed byte of the corpus, naming the corpus", async () => {
    const report = await verifyProvenance({ recordBytes, weightsBytes, chain: chainWith(anchored), deployment: d, corpusBytes: () => flip(mnistBytes, 1234) });
    expect(failed(report)).to.deep.equal(["corpus mnist-digits"]);
  });

  it("rejects a wrong anchored hash and a missing anchor", async () => {
    const wrong = new Map([[jobId, { ...anchored.get(jobId)!, recordHash: keccak256(toHex("another record")) }]]);
    expect(failed(await verifyProvenance({ recordBytes, weightsBytes, chain: chainWith(wrong), deployment: d, corpusBytes: () => mnistBytes }))).to.deep.equal(["record hash"]);
    expect(failed(await verifyProvenance({ recordBytes, weightsBytes, chain: chainWith(new Map()), deployment: d, corpusBytes: () => mnistBytes }))).to.deep.equal(["provenance anchor"]);
  });

  it("rejects a record of another deployment", async () => {
    const report = await verifyProvenance({ recordBytes, weightsBytes, chain: chainWith(anchored), deployment: { ...d, jobMarket: d.stakeVault }, corpusBytes: () => mnistBytes });
    expect(failed(report)).to.deep.equal(["deployment"]);
  });

  it("refuses to build a record for weights that are not the committed final state", async () => {
    const commits = await getSegmentCommits(pub, { jobMarket: d.jobMarket, jobId, fromBlock: 0n });
    expect(() => buildProvenanceRecord({ chainId: 31337, jobMarket: d.jobMarket, jobId, manifest, segments: commits, weightsBytes: flip(weightsBytes, weightsBytes.length - 3) })).to.throw(ProvenanceBuildError, /not the committed end state/);
    expect(() => buildProvenanceRecord({ chainId: 31337, jobMarket: d.jobMarket, jobId, manifest, segments: commits.slice(1), weightsBytes })).to.throw(ProvenanceBuildError, /need segments 0..2/);
  });

  it("treats a malformed record as bad input naming the record", async () => {
    const err = await verifyProvenance({ recordBytes: recordBytes.subarray(0, 100), weightsBytes, chain: chainWith(anchored) }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ProvenanceRecordError);
    expect((err as ProvenanceRecordError).item).to.equal("record");
  });

  after(() => bridge?.server.close());

  it("pouw provenance verify over JSON-RPC: names each failing item (exit 1), bad input exits 2", async () => {
    const deploymentPath = join(dir, "deployment.json");
    writeFileSync(deploymentPath, JSON.stringify({ ...d, gasUsed: undefined }));
    const corpusFile = join(dir, "mnist.bin");
    writeFileSync(corpusFile, flip(mnistBytes, 99));
    const badRecord = join(dir, "bad.json");
    writeFileSync(badRecord, "{not json");
    const base = ["provenance", "verify", "--weights", weightsPath, "--rpc", bridge.url];
    const [real, tamperedCorpus, unknown, malformed] = await Promise.all([
      pouw([...base, "--record", recordPath, "--deployment", deploymentPath]),
      pouw([...base, "--record", recordPath, "--corpus", `mnist-digits=${corpusFile}`, "--json"]),
      pouw([...base, "--record", recordPath, "--corpus", `cifar=${corpusFile}`]),
      pouw([...base, "--record", badRecord]),
    ]);
    // NOTE: deployMarket does not deploy a provenance anchor yet, so the real chain has none to read.
    expect(real.status, real.stderr).to.equal(1);
    expect(real.stdout).to.match(/^ok +manifest hash: /m);
    expect(real.stdout).to.match(/^ok +segment 2 trace root: /m);
    expect(real.stdout).to.match(/^ok +weights state hash: /m);
    expect(real.stdout).to.match(/^ok +corpus mnist-digits: bytes match /m);
    expect(real.stderr).to.match(/^pouw: provenance check failed: provenance anchor: /);
    const report = JSON.parse(tamperedCorpus.stdout) as ProvenanceReport;
    expect(tamperedCorpus.status).to.equal(1);
    expect(failed(report).filter((i) => i !== "provenance anchor")).to.deep.equal(["corpus mnist-digits"]);
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.match(/^pouw: --corpus cifar: unknown corpus/);
    expect(malformed.status).to.equal(2);
    expect(malformed.stderr).to.match(/^pouw: provenance record is not valid UTF-8 JSON/);
  });
});
