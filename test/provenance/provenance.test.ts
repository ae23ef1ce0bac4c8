/**
 * Provenance records on the in-process network: an honest tiny job (registered corpus, job with data
 * terms, trained with the engine, committed, a receipt recorded, finalized, record anchored with
 * JobMarket.anchorProvenance) gets a record that verifies, and a single changed byte of the weights, the
 * record or a corpus, a wrong anchored hash, or an unknown corpus, is rejected with the failing item named.
 */
import { expect } from "chai";
import { segmentStateHashes } from "../../verifier/src/ml/trace-file.ts";
import { runPouw } from "../cli/in-process.ts";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { keccak256, maxUint256, parseEther, toHex, type Abi, type Address, type Hex } from "viem";
import {
  acceptJob,
  approveToken,
  commitSegment,
  dataRegistryAbi,
  dataRegistryBytecode,
  deployMarket,
  devAccount,
  finalize,
  getJob,
  getSegmentCommits,
  jobMarketAbi,
  jobRecordsAbi,
  mintTestToken,
  postBond,
  providerClients,
  providerRegistryAbi,
  providerRegistryBytecode,
  sendContractTx,
  stakeDeposit,
  type ChainClients,
  type Deployment,
} from "../../verifier/src/chain/index.ts";
import { publishManifest } from "../../verifier/src/market/manifest-store.ts";
import { jobPolicyFor } from "../../verifier/src/market/job-policy.ts";
import { corpusBytes, corpusSpecOf, createRun, deploymentSalt, parseManifest, parseStrategy, train } from "../../verifier/src/ml/index.ts";
import { jobMarketDomain, signAuditReceipt, checksMask } from "../../verifier/src/receipts/index.ts";
import {
  anchorProvenance,
  buildProvenanceRecord,
  contentDigestOf,
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


/** Serves the in-process network over HTTP JSON-RPC, so `pouw` (main(argv) with --rpc) can read it. */
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
  let anchored: ChainAnchor;
  // A test double for the two anchor cases the honest chain cannot show (a wrong hash, no anchor);
  // every other read goes to the in-process chain.
  const chainWith = (anchor: ChainAnchor | undefined): ProvenanceChain => ({ ...chainBase, provenance: async () => anchor });

  before(async () => {
    const conn = await network.create();
    const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
    const [admin, buyer, provider, auditor] = [0, 1, 2, 3].map(mk) as ChainClients[];
    d = await deployMarket(admin!, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 60n, registries: false });
    pub = buyer!.public;
    const deploy = async (abi: Abi, bytecode: Hex, args: readonly unknown[]): Promise<Address> => {
      const hash = await admin!.wallet.deployContract({ abi, bytecode, args } as never);
      return (await pub.waitForTransactionReceipt({ hash })).contractAddress!;
    };
    // the registries JobMarket reads corpora, tiers and receipt signers from
    const dataRegistry = await deploy(dataRegistryAbi, dataRegistryBytecode, []);
    const providerRegistry = await deploy(providerRegistryAbi, providerRegistryBytecode, [d.auditorRegistry, 1n, 1n, 86_400n, 2, 60n, parseEther("1")]);
    await sendContractTx(admin!, { address: d.jobMarket, abi: jobMarketAbi, functionName: "setRegistries", args: [d.auditorRegistry, providerRegistry, dataRegistry] });
    for (const c of [buyer!, provider!, auditor!]) {
      await mintTestToken(c, { token: d.token, to: c.account.address, amount: parseEther("100") });
      await approveToken(c, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
      await approveToken(c, { token: d.token, spender: d.jobMarket, amount: maxUint256 });
    }
    await approveToken(auditor!, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
    await postBond(auditor!, { auditorRegistry: d.auditorRegistry, amount: parseEther("1") });
    await stakeDeposit(provider!, { stakeVault: d.stakeVault, amount: parseEther("10") });

    // the contributor registers the corpus; the buyer's job references it with its declared tokens
    const corpus = manifest.corpora[0]!;
    await sendContractTx(admin!, { address: dataRegistry, abi: dataRegistryAbi, functionName: "register", args: [contentDigestOf(corpus.contentId), corpus.contentId, corpus.licence, corpus.payoutAddress as Address, keccak256(toHex("terms"))] });
    const store = new LocalDirStore(join(dir, "store"));
    const { uri, hash } = await publishManifest(store, manifest);
    const { policy, payment } = await jobPolicyFor(manifest, { overrides: { challengeWindow: 60 } });
    const terms = { minTier: 0, dataShareBps: 1_000, corpora: [{ corpusId: 1n, tokens: BigInt(corpus.declaredTokens) }] };
    await sendContractTx(buyer!, { address: d.jobMarket, abi: jobMarketAbi, functionName: "createJobWithTerms", args: [hash, uri, d.token, payment, policy, terms] });
    jobId = 1n;
    await acceptJob(provider!, { jobMarket: d.jobMarket, jobId });
    const run = await createRun(manifest, { jobId, salt: deploymentSalt(d, jobId) });
    const out = join(dir, "provider");
    const { trace } = await train(run, { outDir: out, strategy: parseStrategy("honest"), evaluate: false });
    for (const s of trace.segments) {
      await commitSegment(provider!, { jobMarket: d.jobMarket, jobId, segment: s.index, stateHashes: segmentStateHashes(trace, s.index), lossE6: BigInt(s.lossE6), checkpointCid: s.checkpointCid });
    }
    // an auditor's receipt for segment 1, recorded on chain
    const commits = await getSegmentCommits(pub, { jobMarket: d.jobMarket, jobId, fromBlock: 0n });
    const r = { jobId, segment: 1, traceRoot: commits[1]!.traceRoot, checks: checksMask(["recompute"]), sampledSteps: 4, verdict: 0 };
    const signature = await signAuditReceipt(devAccount(3), jobMarketDomain(31337n, d.jobRecords), r);
    await sendContractTx(auditor!, { address: d.jobRecords, abi: jobRecordsAbi, functionName: "recordReceipt", args: [r, commits[1]!.endStateHash, signature] });
    await conn.networkHelpers.time.increase(61);
    await finalize(buyer!, { jobMarket: d.jobMarket, jobId });
    expect((await getJob(pub, { jobMarket: d.jobMarket, jobId })).status).to.equal("Finalized");

    // buyer fetch / provider claim: build and write the record next to the weights; the provider anchors it
    weightsPath = join(out, "final.safetensors");
    weightsBytes = new Uint8Array(readFileSync(weightsPath));
    const record = buildProvenanceRecord({ chainId: 31337, jobMarket: d.jobMarket, jobRecords: d.jobRecords, jobId, manifest, manifestUri: uri, segments: commits, receipts: [{ ...r, auditor: auditor!.account.address, signature }], weightsBytes });
    const written = await writeProvenance(out, record);
    await anchorProvenance(provider!, { anchor: d.jobRecords, jobId, recordHash: written.recordHash, weightsCid: record.weights.cid });
    recordPath = written.path;
    recordBytes = new Uint8Array(readFileSync(written.path));
    recordHashHex = written.recordHash;
    chainBase = viemProvenanceChain(pub, { jobMarket: d.jobMarket, jobRecords: d.jobRecords });
    anchored = (await chainBase.provenance(jobId))!;
    mnistBytes = corpusBytes(corpusSpecOf(manifest)).bytes;
    bridge = await rpcBridge(conn.provider as never);
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
    const report = await verifyProvenance({ recordBytes, weightsBytes, chain: chainBase, deployment: d, corpusBytes: () => mnistBytes });
    expect(failed(report)).to.deep.equal([]);
    const items = report.checks.filter((c) => c.status === "ok").map((c) => c.item);
    for (const item of ["record", "manifest hash", "segment 0 trace root", "segment 2 trace root", "weights", "weights state hash", "record hash", "anchored weights CID", "corpus mnist-digits", "corpus mnist-digits registry", "corpus mnist-digits terms"]) {
      expect(items).to.include(item);
    }
    expect(report.checks.find((c) => c.item.startsWith("receipt segment 1"))).to.include({ status: "ok", detail: "signed by the auditor and recorded on chain" });
    expect(report.checks.filter((c) => c.status === "skipped")).to.deep.equal([]);
  });

  it("rejects a single changed byte of the weights, naming the weights", async () => {
    const report = await verifyProvenance({ recordBytes, weightsBytes: flip(weightsBytes, weightsBytes.length - 3), chain: chainBase, deployment: d, corpusBytes: () => mnistBytes });
    expect(failed(report)).to.deep.equal(["weights", "weights state hash"]);
  });

  it("rejects a single changed byte of the record: a trace root, or whitespace", async () => {
    const text = new TextDecoder().decode(recordBytes);
    const at = text.indexOf('"endStateHash":"0x') + 20;
    const changed = new TextEncoder().encode(text.slice(0, at) + (text[at] === "a" ? "b" : "a") + text.slice(at + 1));
    const r1 = await verifyProvenance({ recordBytes: changed, weightsBytes, chain: chainBase, deployment: d, corpusBytes: () => mnistBytes });
    expect(failed(r1)).to.deep.equal(["segment 0 trace root", "record hash"]);

    const spaced = new TextEncoder().encode(text.replace('{"chainId"', '{ "chainId"'));
    expect(spaced.length).to.equal(recordBytes.length + 1);
    const r2 = await verifyProvenance({ recordBytes: spaced, weightsBytes, chain: chainBase, deployment: d, corpusBytes: () => mnistBytes });
    expect(failed(r2)).to.deep.equal(["record", "record hash"]);
  });

  it("rejects a single changed byte of the corpus, naming the corpus", async () => {
    const report = await verifyProvenance({ recordBytes, weightsBytes, chain: chainBase, deployment: d, corpusBytes: () => flip(mnistBytes, 1234) });
    expect(failed(report)).to.deep.equal(["corpus mnist-digits"]);
  });

  it("rejects a wrong anchored hash and a missing anchor", async () => {
    const wrong = { ...anchored, recordHash: keccak256(toHex("another record")) };
    expect(failed(await verifyProvenance({ recordBytes, weightsBytes, chain: chainWith(wrong), deployment: d, corpusBytes: () => mnistBytes }))).to.deep.equal(["record hash"]);
    expect(failed(await verifyProvenance({ recordBytes, weightsBytes, chain: chainWith(undefined), deployment: d, corpusBytes: () => mnistBytes }))).to.deep.equal(["provenance anchor"]);
  });

  it("rejects a corpus the DataRegistry does not know, and one outside the job's terms", async () => {
    const unregistered: ProvenanceChain = { ...chainBase, corpus: async () => undefined };
    expect(failed(await verifyProvenance({ recordBytes, weightsBytes, chain: unregistered, deployment: d, corpusBytes: () => mnistBytes }))).to.deep.equal(["corpus mnist-digits registry"]);
    const otherTerms: ProvenanceChain = { ...chainBase, jobCorpora: async () => [{ corpusId: 7n, tokens: 10_000n, weightE6: 0, weighted: false }] };
    const r = await verifyProvenance({ recordBytes, weightsBytes, chain: otherTerms, deployment: d, corpusBytes: () => mnistBytes });
    expect(r.failures).to.deep.equal([{ item: "corpus mnist-digits terms", detail: "unknown corpus: registered corpus 1 is not in job 1's terms" }]);
  });

  it("skips the registry check of an unregistered corpus only for a job created without data terms", async () => {
    const noTerms: ProvenanceChain = { ...chainBase, corpus: async () => undefined, jobCorpora: async () => [] };
    const r = await verifyProvenance({ recordBytes, weightsBytes, chain: noTerms, deployment: d, corpusBytes: () => mnistBytes });
    expect(r.ok, JSON.stringify(r.failures)).to.equal(true);
    expect(r.checks.find((c) => c.item === "corpus mnist-digits registry")).to.deep.include({ status: "skipped" });
    // terms unreadable: no exemption
    const unreadable: ProvenanceChain = { ...noTerms, jobCorpora: async () => null };
    expect(failed(await verifyProvenance({ recordBytes, weightsBytes, chain: unreadable, deployment: d, corpusBytes: () => mnistBytes }))).to.deep.equal(["corpus mnist-digits registry"]);
  });

  it("rejects a record of another deployment", async () => {
    const report = await verifyProvenance({ recordBytes, weightsBytes, chain: chainBase, deployment: { ...d, jobMarket: d.stakeVault }, corpusBytes: () => mnistBytes });
    expect(failed(report)).to.deep.equal(["deployment"]);
  });

  it("refuses to build a record for weights that are not the committed final state", async () => {
    const commits = await getSegmentCommits(pub, { jobMarket: d.jobMarket, jobId, fromBlock: 0n });
    expect(() => buildProvenanceRecord({ chainId: 31337, jobMarket: d.jobMarket, jobRecords: d.jobRecords, jobId, manifest, segments: commits, weightsBytes: flip(weightsBytes, weightsBytes.length - 3) })).to.throw(ProvenanceBuildError, /not the committed end state/);
    expect(() => buildProvenanceRecord({ chainId: 31337, jobMarket: d.jobMarket, jobRecords: d.jobRecords, jobId, manifest, segments: commits.slice(1), weightsBytes })).to.throw(ProvenanceBuildError, /need segments 0..2/);
  });

  it("treats a malformed record as bad input naming the record", async () => {
    const err = await verifyProvenance({ recordBytes: recordBytes.subarray(0, 100), weightsBytes, chain: chainBase }).catch((e: unknown) => e);
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
    // in-process through main(argv), one after another: the spawned smoke test of `pouw provenance verify` is in
    // test/e2e/market.test.ts
    const run = async (args: string[]) => {
      const r = await runPouw(args);
      return { status: r.code, stdout: r.stdout, stderr: r.stderr };
    };
    const real = await run([...base, "--record", recordPath, "--deployment", deploymentPath]);
    const tamperedCorpus = await run([...base, "--record", recordPath, "--corpus", `mnist-digits=${corpusFile}`, "--json"]);
    const unknown = await run([...base, "--record", recordPath, "--corpus", `cifar=${corpusFile}`]);
    const malformed = await run([...base, "--record", badRecord]);
    expect(real.status, real.stdout + real.stderr).to.equal(0);
    for (const item of ["manifest hash", "segment 2 trace root", "weights state hash", "record hash", "anchored weights CID", "corpus mnist-digits", "corpus mnist-digits registry", "corpus mnist-digits terms"]) {
      expect(real.stdout).to.match(new RegExp(`^ok +${item}: `, "m"));
    }
    expect(real.stdout).to.match(/^ok +receipt segment 1 by 0x\w+: signed by the auditor and recorded on chain$/m);
    expect(real.stdout).to.match(/^provenance of job 1 verified/m);
    const report = JSON.parse(tamperedCorpus.stdout) as ProvenanceReport;
    expect(tamperedCorpus.status).to.equal(1);
    expect(failed(report)).to.deep.equal(["corpus mnist-digits"]);
    expect(unknown.status).to.equal(2);
    expect(unknown.stderr).to.match(/^pouw: --corpus cifar: unknown corpus/);
    expect(malformed.status).to.equal(2);
    expect(malformed.stderr).to.match(/^pouw: provenance record is not valid UTF-8 JSON/);
  });
});
