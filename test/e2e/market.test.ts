/**
 * End to end over JSON-RPC with separate OS processes: a local chain served over JSON-RPC by the test process (the
 * in-process network, test/helpers/chain.ts: a spawned `hardhat node` costs ~8 CPU s more), and `pouw` CLI processes
 * for the deployer (registries by default), the data contributor (registers the manifest's corpus), the buyer
 * (stake from the quote, data terms over the registered corpus), the provider and the auditor (the
 * challenger bot running until SIGTERM); at finalize the corpus's payout address is credited its share
 * and contributor + provider + refund == payment. That first case is the spawned smoke test of the market's command
 * families (deploy, corpus, buyer, provider, auditor, provenance: each family's first command is spawned, its later
 * ones, such as provider claim and buyer fetch, run in-process); the others run `pouw` in-process through main(argv)
 * (test/cli/in-process.ts) against the same node, since each spawn costs ~3.5 s of CPU in module loading: bad input,
 * --no-quote, --no-registries, and the same job lifecycle through a proxy that drops 20% of JSON-RPC requests (half
 * before the node sees them, half after it acted): the job still settles.
 */
import { expect } from "chai";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPublicClient, formatEther, getAddress, http, parseEther, type Address } from "viem";
import { jobMarketAbi } from "../../verifier/src/chain/index.ts";
import { cidOf } from "../../verifier/src/store/index.ts";
import { runPouw } from "../cli/in-process.ts";
import { startLocalChain, type LocalChain } from "../helpers/chain.ts";
import { cli, cliOk, DEV_KEYS, increaseTime, ROOT, startCli, startLossyProxy } from "./helpers.ts";

/** `pouw ARGS` in-process; fails the test with its stderr unless it exits 0. */
async function pouwOk(args: string[]): Promise<string> {
  const r = await runPouw(args);
  if (r.code !== 0) throw new Error(`pouw ${args.join(" ")} exited ${r.code}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

describe("e2e: market over JSON-RPC, one process per party", function () {
  this.timeout(300_000);
  let node: LocalChain;
  const dir = mkdtempSync(join(tmpdir(), "pouw-e2e-"));
  const manifest = join(dir, "manifest.json");
  const payout = getAddress(JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8")).corpora[0].payoutAddress as string);
  const creditOf = async (who: Address) => {
    const { jobMarket, token } = JSON.parse(readFileSync(join(dir, "deployment.json"), "utf8")) as { jobMarket: Address; token: Address };
    return createPublicClient({ transport: http(node.url) }).readContract({ address: jobMarket, abi: jobMarketAbi, functionName: "creditOf", args: [who, token] });
  };

  before(async () => {
    const tiny = JSON.parse(readFileSync(join(ROOT, "examples/tiny.json"), "utf8"));
    writeFileSync(manifest, JSON.stringify({ ...tiny, policy: { ...tiny.policy, auditRate: 1 } }));
    node = await startLocalChain();
  });
  after(async () => node?.stop());

  const common = (rpc: string, key: number) => ["--rpc", rpc, "--state-dir", dir, "--private-key", DEV_KEYS[key]!, "--poll-interval", "200"];

  it("deploys, posts, trains, audits, settles and fetches, each party its own process", async () => {
    expect(await cliOk(["deploy", ...common(node.url, 0), "--unbonding-delay", "60", "--exit-delay", "691272", "--min-bond", "1"])).to.match(/JobMarket\s+0x/).and.to.match(/DataRegistry\s+0x[0-9a-fA-F]{40} \(JobMarket.setRegistries done\)/);
    // the data contributor registers the manifest's corpus (the payout address is the manifest's)
    expect(await cliOk(["corpus", "register", "--manifest", manifest, ...common(node.url, 5)])).to.match(
      new RegExp(`^corpus mnist-digits \\(bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m\\) registered as DataRegistry corpus 1, payout ${payout}\\n  registerCorpus tx 0x[0-9a-f]{64} in block \\d+\\n$`),
    );
    expect(await pouwOk(["corpus", "register", "--manifest", manifest, ...common(node.url, 1)])).to.match(/is already DataRegistry corpus 1 \(registered by 0x/);
    // the stake comes from the quote over the package's committed detection matrix (the default); the
    // registered corpus gets data terms (10% of the payment by default)
    const created = JSON.parse(await cliOk(["buyer", "create", ...common(node.url, 1), "--manifest", manifest, "--pay", "1", "--mint", "--challenge-window", "100", "--json"])) as {
      jobId: string;
      stakeFrom: string;
      policy: { segments: number; stepsPerSegment: number; requiredStake: string };
      quote: { detection: string; auditRate: number; manifestAuditRate: number; sizedForAuditRate: number; stakeWei: string; bindingStake: string; forfeitShare: number; panelSize: number; panelFee: number; reason: string } | null;
      dataTerms: { attached: boolean; minTier: number; dataShareBps: number; corpora: { corpusId: string; tokens: string; payout: string }[] };
    };
    expect(created.dataTerms).to.deep.include({ attached: true, minTier: 4, dataShareBps: 1000 });
    expect(created.dataTerms.corpora).to.deep.equal([{ name: "mnist-digits", contentId: "bafkreiedkmci2krpbghjxi5aiuvbzxteeuq24mknx44c5okfunopejw46m", corpusId: "1", tokens: "10000", payout }]);
    expect(created.quote!.forfeitShare).to.equal(0.9);
    // the quote models the deployed DisputeGame's panel (read from the chain): 3 members at 0.05 token each
    expect(created.quote!.panelSize).to.equal(3);
    expect(created.quote!.panelFee).to.equal(0.05);
    expect(created).to.deep.include({ jobId: "1", stakeFrom: "quote" });
    expect(created.policy).to.deep.include({ segments: 3, stepsPerSegment: 4 });
    expect(created.quote).to.deep.include({ detection: join(ROOT, "bench/results/detection.json"), manifestAuditRate: 1, stakeWei: created.policy.requiredStake });
    expect(created.quote!.sizedForAuditRate).to.equal(created.quote!.auditRate);
    expect(created.quote!.reason).to.match(/^cheapest contract audits at /);
    const quotedStake = formatEther(BigInt(created.policy.requiredStake));
    expect(quotedStake).to.not.equal(formatEther(BigInt(JSON.parse(readFileSync(manifest, "utf8")).policy.providerStakeWei)));
    // in-process where another spawned command of the same family already runs as its own process
    await pouwOk(["provider", "stake", quotedStake, "--mint", ...common(node.url, 2)]);
    await pouwOk(["auditor", "bond", "2", "--mint", ...common(node.url, 3)]);
    await pouwOk(["provider", "accept", "1", ...common(node.url, 2)]);

    // the bot runs in its own process while the provider trains
    const bot = startCli(["auditor", "run", ...common(node.url, 3), "--log-level", "info"]);
    let oks = 0;
    const allAudited = new Promise<void>((resolve) => bot.onStderrLine((l) => l.includes("audit ok") && ++oks === 3 && resolve()));
    expect(await cliOk(["provider", "run", "1", ...common(node.url, 2)])).to.match(/committed segments 0\.\.2/);
    await allAudited;
    bot.child.kill("SIGTERM");
    const botResult = await bot.done;
    expect(botResult.code).to.equal(0);
    expect(botResult.stdout).to.match(/audited 3 segments \(0 failed\).*3 receipts signed/);

    await increaseTime(node.url, 101);
    const claim = await pouwOk(["provider", "claim", "1", ...common(node.url, 2)]);
    expect(claim).to.match(/job 1: finalized/).and.to.match(/job 1: provenance anchored \(record 0x[0-9a-f]{64}, weights b\w+, \d+ receipts \/ \d+ segments audited\)/).and.to.match(/claimed 0\.9\n/);
    const status = JSON.parse(await pouwOk(["buyer", "status", "1", "--json", ...common(node.url, 1)])) as { status: string; committed: unknown[]; myCredit: string };
    expect(status.status).to.equal("Finalized");
    // finalize split the payment: the corpus's payout address 0.1, the provider 0.9 (claimed), no refund
    const contributorCredit = await creditOf(payout);
    expect(contributorCredit).to.equal(parseEther("0.1"));
    expect(contributorCredit + parseEther("0.9") + BigInt(status.myCredit)).to.equal(parseEther("1"));
    expect(status.committed).to.have.length(3);
    expect(await pouwOk(["buyer", "fetch", "1", "--out", join(dir, "result"), ...common(node.url, 1)])).to.match(/^job 1 \(Finalized\): provenance verified \(record 0x/);
    expect(existsSync(join(dir, "result/final.safetensors"))).to.equal(true);
    expect(JSON.parse(readFileSync(join(dir, "result/provenance.json"), "utf8")).format).to.equal("pouw-provenance-1");

    // the fetched pair is what `pouw provenance verify` (its own process) accepts; one changed weights byte is rejected
    // (in-process, while the spawned one runs)
    const weights = join(dir, "result/final.safetensors");
    const verifyArgs = (w: string) => ["provenance", "verify", "--weights", w, "--record", join(dir, "result/provenance.json"), "--rpc", node.url];
    const tampered = join(dir, "tampered.safetensors");
    const bytes = readFileSync(weights);
    bytes[bytes.length - 3] = bytes[bytes.length - 3]! ^ 0x01;
    writeFileSync(tampered, bytes);
    const [ok, bad] = await Promise.all([cli(verifyArgs(weights)), runPouw(verifyArgs(tampered))]);
    expect(ok.code, ok.stdout + ok.stderr).to.equal(0);
    expect(ok.stdout).to.match(/^ok +record hash: anchored 0x/m).and.to.match(/^ok +corpus mnist-digits registry: registered as corpus 1/m).and.to.match(/^ok +corpus mnist-digits terms: job terms credit 10000 tokens/m).and.to.match(/^provenance of job 1 verified/m);
    expect(bad.code).to.equal(1);
    expect(bad.stdout).to.match(/^provenance of job 1 REJECTED: weights, weights state hash$/m);

    // a published record with one changed byte (a segment's end state) is refused by buyer fetch, naming the item
    const market = (JSON.parse(readFileSync(join(dir, "deployment.json"), "utf8")) as { jobMarket: string }).jobMarket.toLowerCase();
    const pointer = join(dir, "board", market, "1", "provenance.cid");
    const honestCid = readFileSync(pointer, "utf8");
    const text = readFileSync(join(dir, "result/provenance.json"), "utf8");
    const at = text.indexOf('"endStateHash":"0x') + 20;
    const forged = new TextEncoder().encode(text.slice(0, at) + (text[at] === "a" ? "b" : "a") + text.slice(at + 1));
    writeFileSync(join(dir, "store", cidOf(forged)), forged);
    writeFileSync(pointer, cidOf(forged));
    const refused = await runPouw(["buyer", "fetch", "1", "--out", join(dir, "forged"), ...common(node.url, 1)]);
    writeFileSync(pointer, honestCid);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/^pouw: provenance check failed: segment 0 trace root: .*\(and 1 more: record hash\)$/m);
    expect(existsSync(join(dir, "forged"))).to.equal(false);
  });

  it("exits 2 with a one-line reason on bad input", async () => {
    const malformed = join(dir, "malformed-detection.json");
    writeFileSync(malformed, "{ not json");
    const bad = [
      ["buyer", "status", "0", ...common(node.url, 1)],
      ["buyer", "create", "--manifest", join(dir, "missing.json"), ...common(node.url, 1)],
      ["buyer", "create", "--manifest", manifest, "--detection", join(dir, "missing-detection.json"), ...common(node.url, 1)],
      ["buyer", "create", "--manifest", manifest, "--detection", malformed, ...common(node.url, 1)],
      ["buyer", "create", "--manifest", manifest, "--detection", manifest, ...common(node.url, 1)],
      ["buyer", "create", "--manifest", manifest, "--detection", join(ROOT, "bench/results/detection.json"), "--no-quote", ...common(node.url, 1)],
      ["buyer", "create", "--manifest", join(ROOT, "examples/sotu.json"), "--data-terms", "--mint", ...common(node.url, 1)],
      ["buyer", "create", "--manifest", manifest, "--no-data-terms", "--data-share-bps", "500", ...common(node.url, 1)],
      ["corpus", "register", "--manifest", manifest, "--corpus", "cifar", ...common(node.url, 5)],
      ["provider", "stake", "-1", ...common(node.url, 2)],
      ["provider", "run", "1", "--strategy", "bogus", ...common(node.url, 2)],
      ["buyer", "status", "1", "--rpc", "ftp://x"],
      ["buyer", "status", "1", "--rpc", node.url, "--deployment", join(dir, "nope.json")],
    ];
    // in-process, one after another (runPouw captures this process's stdout and stderr)
    const results: Awaited<ReturnType<typeof runPouw>>[] = [];
    for (const args of bad) results.push(await runPouw(args));
    for (const [i, args] of bad.entries()) {
      const r = results[i]!;
      expect(r.code, args.join(" ")).to.equal(2);
      expect(r.stderr.trim().split("\n").filter((l) => l.startsWith("pouw: ") && !l.includes("WARNING"))).to.have.length(1);
      if (args.includes("--data-terms")) expect(r.stderr).to.match(/^pouw: cannot attach data terms: corpus sotu-1990-2021 \(b\w+\) is not registered in DataRegistry 0x/m);
      if (args.includes("--detection")) expect(r.stderr, args.join(" ")).to.match(/^pouw: (detection matrix \S+?(: field | does not exist$| is not valid JSON: )|--detection and --no-quote contradict)/m);
    }
    // a raw key is refused on a non-dev chain id is covered in test/config; a revert is exit 1 with its error name
    const r = await runPouw(["buyer", "cancel", "1", ...common(node.url, 1)]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/JobMarketWrongStatus/);
  });

  it("--no-quote posts the manifest's stake; an unregistered corpus gets no data terms, said in one line", async () => {
    const sotu = join(ROOT, "examples/sotu.json");
    const r = JSON.parse(await pouwOk(["buyer", "create", ...common(node.url, 1), "--manifest", sotu, "--pay", "1", "--mint", "--no-quote", "--json"])) as {
      jobId: string;
      stakeFrom: string;
      policy: { requiredStake: string };
      quote: unknown;
      dataTerms: { attached: boolean; reason: string };
    };
    expect(r).to.deep.include({ jobId: "2", stakeFrom: "manifest", quote: null });
    expect(r.policy.requiredStake).to.equal(JSON.parse(readFileSync(sotu, "utf8")).policy.providerStakeWei);
    expect(r.dataTerms.attached).to.equal(false);
    expect(r.dataTerms.reason).to.match(/^corpus sotu-1990-2021 \(b\w+\) is not registered in DataRegistry 0x[0-9a-fA-F]{40} for payout 0x[0-9a-fA-F]{40}$/);
    const text = await pouwOk(["buyer", "create", ...common(node.url, 1), "--manifest", sotu, "--pay", "1", "--mint", "--no-quote"]);
    expect(text).to.match(/^data terms: none \(corpus sotu-1990-2021 .* is not registered in DataRegistry 0x[0-9a-fA-F]{40} for payout 0x[0-9a-fA-F]{40}\): created without data terms, no contributor share$/m);
  });

  it("deploy --no-registries leaves JobMarket without registries", async () => {
    const path = join(dir, "bare-deployment.json");
    expect(await pouwOk(["deploy", ...common(node.url, 0), "--deployment", path, "--no-registries"])).to.match(/^registries +not set \(--no-registries\)/m);
    const bare = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    expect(bare).to.not.have.property("dataRegistry");
    expect(bare).to.have.property("jobMarket");
  });

  it("settles a job through an RPC proxy that drops 20% of requests", async () => {
    const proxy = await startLossyProxy(node.url, 0.2, 7);
    try {
      const via = (key: number) => common(proxy.url, key);
      const created = await pouwOk(["buyer", "create", ...via(1), "--manifest", manifest, "--pay", "1", "--mint", "--challenge-window", "100"]);
      expect(created).to.match(/^job 4: .*, stake [0-9.]+ PDT \(from quote\)/).and.to.match(/^data terms: 10% of the payment to corpus mnist-digits \(DataRegistry 1, 10000 tokens, payout 0x0+[dD]1\) at finalize; min tier 4$/m).and.to.match(/^quote: auditors recompute each segment with probability [0-9.e-]+ \(the cheapest rate; the manifest's 1 only catches more\), checks \S+.*; the stake of about [0-9.]+ PDT is (enough|no measured) .*; checking costs about [0-9.]+% of the payment on top of the training \(detection matrix .*detection\.json\)$/m);
      const stake = /, stake ([0-9.]+) PDT \(from quote\)/.exec(created)![1]!;
      await pouwOk(["provider", "stake", stake, "--mint", ...via(4)]);
      await pouwOk(["provider", "accept", "4", ...via(4)]);
      await pouwOk(["provider", "run", "4", ...via(4)]);
      expect(await pouwOk(["auditor", "run", "--once", ...via(3)])).to.match(/audited 3 segments \(0 failed\)/);
      await increaseTime(node.url, 101);
      expect(await pouwOk(["provider", "claim", "4", ...via(4)])).to.match(/claimed 0\.9\n/);
      expect(await creditOf(payout)).to.equal(parseEther("0.2"));
      const status = JSON.parse(await pouwOk(["buyer", "status", "4", "--json", ...via(1)])) as { status: string };
      expect(status.status).to.equal("Finalized");
      expect(proxy.stats.droppedRequests + proxy.stats.droppedResponses).to.be.greaterThan(5);
    } finally {
      await proxy.close();
    }
  });
});
