/**
 * Receipts in the provenance record and the data contributor's claim, in-process through main(argv) against the bot
 * fixture's market (test/bot/fixture.ts) with an honest provider and a registered corpus paying dev account 3: two
 * bots audit every segment and anchor their receipts (recordReceipt); `buyer status` counts them ("N receipts / M
 * segments audited", --json); `provider claim` finalizes and builds the record with exactly the anchored receipts, each
 * signature recovering to its auditor; `provenance verify` checks them and names a receipt whose signature was
 * changed; `corpus claim` pays the contributor its data share, with the tx hash and block the chain has. The auditor
 * metrics (bot/metrics.ts) over one of these real bots count its audits and receipts and show its balances, and
 * `auditor run --once --metrics-port 0` starts and closes the server.
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getAddress, parseEventLogs } from "viem";
import { startMetricsServer } from "../../verifier/src/bot/metrics.ts";
import { getAuditorFunds, getReceiptsRecorded, jobMarketAbi, writeDeployment } from "../../verifier/src/chain/index.ts";
import { parseProvenanceBytes } from "../../verifier/src/provenance/index.ts";
import { auditReceiptDigest, jobMarketDomain, recoverAuditReceiptSigner } from "../../verifier/src/receipts/index.ts";
import { cheatingJob, type CheatingJob } from "../bot/fixture.ts";
import { DEV_KEYS } from "../e2e/helpers.ts";
import { runPouw } from "./in-process.ts";
import { serveProvider, type ServedProvider } from "./rpc-over-http.ts";

describe("receipts in the provenance record, buyer status counts, corpus claim (in-process)", function () {
  this.timeout(120_000);
  let job: CheatingJob;
  let rpc: ServedProvider;
  let dir: string;
  const as = (key?: number) => ["--rpc", rpc.url, "--state-dir", dir, "--store", join(job.dir, "store"), ...(key === undefined ? [] : ["--private-key", DEV_KEYS[key]!])];
  const CONTRIBUTOR = 3;

  before(async () => {
    job = await cheatingJob("receipts", 600, { strategy: "honest", contributor: CONTRIBUTOR });
    for (const i of [0, 1]) {
      const b = job.bot(i);
      await b.tick(); // audits all 3 segments (rate 1), signs, queues and sends recordReceipt
      b.close();
    }
    rpc = await serveProvider(job.conn.provider);
    dir = mkdtempSync(join(tmpdir(), "pouw-cli-receipts-"));
    const { gasUsed: _gas, ...deployment } = job.d as typeof job.d & { gasUsed?: bigint };
    await writeDeployment(join(dir, "deployment.json"), deployment);
  });
  after(async () => {
    await rpc?.close();
  });

  it("buyer status: N receipts / M segments audited, and the receipts in --json", async () => {
    let r = await runPouw(["buyer", "status", "1", "--json", ...as()]);
    expect(r.code, r.stderr).to.equal(0);
    const s = JSON.parse(r.stdout) as { receiptCount: number; auditedSegments: number; receipts: { segment: number; auditor: string; verdict: string; tx: string; blockNumber: string }[] };
    const auditors = [0, 1].map((i) => getAddress(job.auditors[i]!.account.address));
    expect([s.receiptCount, s.auditedSegments]).to.deep.equal([6, 3]);
    expect(s.receipts.map((x) => `${x.segment} ${x.auditor} ${x.verdict}`).sort()).to.deep.equal([0, 1, 2].flatMap((seg) => auditors.map((a) => `${seg} ${a} ok`)).sort());
    for (const x of s.receipts) expect(x.tx).to.match(/^0x[0-9a-f]{64}$/);
    r = await runPouw(["buyer", "status", "1", ...as()]);
    expect(r.stdout).to.match(/^receipts: 6 receipts \/ 3 of 3 segments with a receipt$/m);
  });

  it("auditor metrics over a real bot: its audits, receipts and intents, its bond and balance; auditor run --metrics-port", async () => {
    const b = job.bot(0);
    const account = job.auditors[0]!.account.address;
    const m = await startMetricsServer({ port: 0, view: { summary: () => b.summary(), funds: () => getAuditorFunds(job.admin.public, { deployment: job.d, account }) } });
    try {
      const text = await (await fetch(`${m.url}/metrics`)).text();
      expect(text).to.match(/^pouw_auditor_audits_total\{result="ok"\} 3$/m);
      expect(text).to.match(/^pouw_auditor_audits_total\{result="bad"\} 0$/m);
      expect(text).to.match(/^pouw_auditor_receipts_signed_total 3$/m);
      expect(text).to.match(/^pouw_auditor_intents\{kind="recordReceipt",status="confirmed"\} 3$/m);
      expect(text).to.match(/^pouw_auditor_bond 5$/m); // the fixture bonds 5 of the 20 it mints
      expect(text).to.match(/^pouw_auditor_token_balance 15$/m);
      expect(text).to.match(/^pouw_auditor_bonded 1$/m);
    } finally {
      await m.close();
      b.close();
    }
    // the CLI wiring: the same bot state (--db), nothing new to do; the server starts, says where, and closes
    const r = await runPouw(["auditor", "run", "--once", "--metrics-port", "0", "--db", join(job.dir, "bot0.sqlite"), "--log-level", "error", ...as(5)]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.match(/^pouw: metrics at http:\/\/127\.0\.0\.1:\d+\/metrics, health at http:\/\/127\.0\.0\.1:\d+\/healthz$/m);
    expect(r.stdout).to.match(/^audited 0 segments \(0 failed\)/); // per run: the earlier run audited the 3
    const bad = await runPouw(["auditor", "run", "--once", "--metrics-port", "http", ...as(5)]);
    expect([bad.code, bad.stderr]).to.deep.equal([2, 'pouw: --metrics-port must be a port number 0..65535, got "http"\n']);
  });

  it("provider claim: the record holds the anchored receipts, signatures recovering to their auditors; provenance verify checks them", async () => {
    await job.conn.networkHelpers.time.increase(job.policy.challengeWindow + 1);
    const r = await runPouw(["provider", "claim", "1", "--json", ...as(2)]);
    expect(r.code, r.stderr).to.equal(0);
    const out = JSON.parse(r.stdout) as { jobs: { provenance: { recordPath: string; weightsPath: string; receipts: number; auditedSegments: number } }[] };
    const p = out.jobs[0]!.provenance;
    expect([p.receipts, p.auditedSegments]).to.deep.equal([6, 3]);
    const { record } = parseProvenanceBytes(new Uint8Array(readFileSync(p.recordPath)));
    // independent of finalize-anchor: the chain's ReceiptRecorded digests, and each signature recovered here
    const onChain = await getReceiptsRecorded(job.admin.public, { jobRecords: job.d.jobRecords, jobId: 1n, fromBlock: BigInt(job.d.startBlock) });
    expect(record.receipts.map((x) => `${x.segment} ${x.auditor} ${x.digest}`).sort()).to.deep.equal(onChain.map((x) => `${x.segment} ${x.auditor} ${x.digest}`).sort());
    const domain = jobMarketDomain(31337n, job.d.jobRecords);
    for (const x of record.receipts) {
      const receipt = { jobId: 1n, segment: x.segment, traceRoot: x.traceRoot, checks: x.checks, sampledSteps: x.sampledSteps, verdict: x.verdict };
      expect(auditReceiptDigest(domain, receipt)).to.equal(x.digest);
      expect(await recoverAuditReceiptSigner(domain, receipt, x.signature)).to.equal(x.auditor);
    }

    const verify = async (recordPath: string) => {
      const v = await runPouw(["provenance", "verify", "--weights", p.weightsPath, "--record", recordPath, "--json", "--rpc", rpc.url, "--deployment", join(dir, "deployment.json")]);
      if (!v.stdout) throw new Error(v.stderr);
      return { code: v.code, report: JSON.parse(v.stdout) as { ok: boolean; checks: { item: string; status: string; detail: string }[] } };
    };
    let v = await verify(p.recordPath);
    expect(v.code).to.equal(0);
    const receiptChecks = v.report.checks.filter((c) => c.item.startsWith("receipt "));
    expect(receiptChecks).to.have.length(6);
    for (const c of receiptChecks) expect([c.status, c.detail]).to.deep.equal(["ok", "signed by the auditor and recorded on chain"]);

    // one hex digit of one receipt's signature changed: that receipt is named (and the anchor no longer matches)
    const text = readFileSync(p.recordPath, "utf8");
    const at = text.indexOf('"signature":"0x') + 20;
    const tampered = join(dir, "tampered.json");
    writeFileSync(tampered, text.slice(0, at) + (text[at] === "a" ? "b" : "a") + text.slice(at + 1));
    v = await verify(tampered);
    expect(v.code).to.not.equal(0);
    const failing = v.report.checks.filter((c) => c.status === "fail").map((c) => c.item);
    expect(failing).to.include("record hash");
    expect(failing.filter((i) => i.startsWith("receipt "))).to.deep.equal([`receipt segment ${record.receipts[0]!.segment} by ${record.receipts[0]!.auditor}`]);
  });

  it("corpus claim: the contributor is paid its data share, with the tx hash and block", async () => {
    const contributor = getAddress(job.mk(CONTRIBUTOR).account.address);
    let r = await runPouw(["corpus", "claim", "--json", ...as(CONTRIBUTOR)]);
    expect(r.code, r.stderr).to.equal(0);
    const c = JSON.parse(r.stdout) as { account: string; claimed: string; symbol: string; dataShares: { jobId: string; amount: string }[]; txs: { what: string; hash: string; blockNumber: string }[] };
    // independent expectation: 10% (the default data share) of the payment, all to the one corpus
    expect(c).to.deep.include({ account: contributor, claimed: (job.payment / 10n).toString(), symbol: "PDT" });
    expect(c.dataShares).to.have.length(1);
    expect(c.dataShares[0]).to.deep.include({ jobId: "1", amount: (job.payment / 10n).toString() });
    expect(c.txs.map((t) => t.what)).to.deep.equal(["claimPayment"]);
    const receipt = await job.admin.public.getTransactionReceipt({ hash: c.txs[0]!.hash as `0x${string}` });
    expect([receipt.blockNumber.toString(), receipt.status]).to.deep.equal([c.txs[0]!.blockNumber, "success"]);
    const claimed = parseEventLogs({ abi: jobMarketAbi, logs: receipt.logs, eventName: "CreditClaimed" });
    expect(claimed.map((e) => [e.args.account, e.args.amount])).to.deep.equal([[contributor, job.payment / 10n]]);
    // a second claim has nothing left, and says so in text
    r = await runPouw(["corpus", "claim", ...as(CONTRIBUTOR)]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(new RegExp(`^${contributor}: 1 data share credited, ${Number(job.payment / 10n) / 1e18} PDT in all\\n  job 1, corpus 1: .* credited in block \\d+ \\(tx 0x[0-9a-f]{64}\\)\\nnothing to claim\\n$`));
  });
});
