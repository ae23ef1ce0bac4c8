/**
 * `npm run bench:attacks` (hardhat run bench/attacks.ts): plays every named attack on the market's rules, and the named ML cheats, on
 * Hardhat's in-process network as actor scripts (bench/attacks/game.ts: the rules of the game over declared traces;
 * bench/attacks/pool.ts: attacks that need more addresses than the roster, such as mass disputes by a part of the
 * auditor pool; bench/attacks/trained.ts: real training caught by the challenger bots), reads every party's holdings before and
 * after (verifier/src/chain/getHoldings.ts), prints a table and writes bench/results/attacks.json:
 *
 *   [{ attack, cheaterPaidWei, cheaterLossWei, honestChallengerNetWei, honestSlashedWei, outcome, play }]
 *
 * cheaterPaidWei: JobMarket credit (pay, data shares) gained by the cheater's side (the provider and every address it
 * controls; the deployer in the admin row, the squatter in the corpus row). cheaterLossWei: the side's net loss over
 * tokens, stake (free, locked, pending), credits and bonds. honestChallengerNetWei: the honest challenger's net (bond
 * back + fees back + reward - deposit). honestSlashedWei: what honest parties (auditors, buyer, honest provider,
 * contributor) ended below where they started, the buyer's payment for a job it received excepted. Gas (ETH) is in
 * none of them.
 *
 * The rule every row must meet: cheaterPaidWei == 0, honestSlashedWei == 0, honestChallengerNetWei >= 0, and
 * cheaterLossWei > 0 unless the outcome starts with "impossible:" (the attack is stopped before it costs anything;
 * the outcome names what stops it). A row that breaks it, or whose script finds a step the rules let through, is
 * printed as a VIOLATION and the bench exits 1.
 *
 * POUW_BENCH_ONLY=<substring> runs the matching rows only and writes no JSON (development; `hardhat run` passes no
 * arguments to a script).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { setLogLevel } from "../verifier/src/log/index.ts";
import * as entry from "./attacks/entry.ts";
import * as game from "./attacks/game.ts";
import * as pool from "./attacks/pool.ts";
import { poisonJobInFrontOfBots, removeWorkDirs, supersededInFrontOfBots, sybilDisputeBeforeBots, trainedAttack } from "./attacks/trained.ts";
import { AttackSucceeded, tokens, type Row } from "./attacks/world.ts";

setLogLevel("silent");
const started = performance.now();
const only = process.env.POUW_BENCH_ONLY || undefined;

const ROWS: { attack: string; run: () => Promise<Row> }[] = [
  { attack: "1a withhold leaves", run: () => trainedAttack({ attack: "1a withhold leaves", strategy: "skip:0.25", withhold: "leaves" }) },
  { attack: "1b withhold checkpoints", run: () => trainedAttack({ attack: "1b withhold checkpoints", strategy: "skip:0.25", withhold: "all" }) },
  { attack: "1c withhold by being unreachable", run: () => trainedAttack({ attack: "1c withhold by being unreachable", strategy: "honest", withhold: "unreachable" }) },
  { attack: "2a backdoored end state", run: game.backdooredEndState },
  { attack: "2b boundary plant", run: game.boundaryPlant },
  { attack: "3a sybil concession", run: game.sybilConcession },
  { attack: "3b mempool copy of a challenge", run: game.mempoolCopy },
  { attack: "3c challengerBps 10,000", run: game.challengerShareTooHigh },
  { attack: "3d self-report at the cap", run: game.selfReportAtCap },
  { attack: "3e reward dilution by the provider's own disputes", run: pool.rewardDilution },
  { attack: "4 panel picked after the seed", run: game.panelAfterSeed },
  { attack: "5 unbounded freeze", run: game.unboundedFreeze },
  { attack: "6 NoDecision after the window", run: game.noDecisionAfterWindow },
  { attack: "7 self-attestation", run: game.selfAttestation },
  { attack: "8 admin drain", run: game.adminDrain },
  { attack: "9 corpus squatting", run: game.corpusSquatting },
  { attack: "10 bot with the README's auditor set-up", run: () => trainedAttack({ attack: "10 bot with the README's auditor set-up", strategy: "skip:0.25", readme: true }) },
  { attack: "11 abandonment laundering", run: game.abandonmentLaundering },
  { attack: "12 superseded dispute vs the bots", run: supersededInFrontOfBots },
  { attack: "13 unauditable job in front of the bots", run: poisonJobInFrontOfBots },
  { attack: "14 sybil dispute ahead of the bots", run: sybilDisputeBeforeBots },
  { attack: "15 concede after the reveals", run: game.concedeAfterReveals },
  { attack: "16 lock too small to pay the panel", run: game.lockCannotPayPanel },
  { attack: "17 panel re-roll and reseed choice", run: game.panelReroll },
  { attack: "18 tie exhaustion", run: game.tieExhaustion },
  { attack: "18b tie exhaustion against an honest provider", run: game.tieExhaustionHonest },
  { attack: "18c exhausted rounds", run: game.exhaustedRounds },
  { attack: "18d silent captured panels", run: game.silentCapturedPanels },
  { attack: "19 sniped commitment", run: entry.snipedCommitment },
  { attack: "20 lock shrunk by a timeout slash", run: entry.shrunkenLock },
  { attack: "21 fee-on-transfer payment token", run: entry.feeOnTransferToken },
  { attack: "22 zero-slash accept griefing", run: entry.zeroSlashGriefing },
  { attack: "23 mass disputes, 2 of 7 auditors", run: () => pool.massDisputes("23 mass disputes, 2 of 7 auditors", 2, 7, 12) },
  { attack: "24 mass disputes, 3 of 12 auditors", run: () => pool.massDisputes("24 mass disputes, 3 of 12 auditors", 3, 12, 32) },
  { attack: "25 forfeited voter", run: game.forfeitedVoter },
  ...(
    [
      ["skip", "skip:0.25"],
      ["stale", "stale:2"],
      ["plant", "plant:6"],
      ["near-zero", "near-zero"],
      ["quarter batch", "quarter-batch"],
      ["low precision", "fp16"],
      ["copy", "copy"],
    ] as const
  ).map(([name, strategy]) => ({ attack: `ML cheat: ${name}`, run: () => trainedAttack({ attack: `ML cheat: ${name} (${strategy})`, strategy }) })),
  ...(await import("./attacks/attestation.ts")).ATTESTATION_ROWS,
];

/** Why a row breaks the rule, or undefined. */
function violation(r: Row): string | undefined {
  const why: string[] = [];
  if (BigInt(r.cheaterPaidWei) !== 0n) why.push(`cheater paid ${tokens(BigInt(r.cheaterPaidWei))}`);
  if (BigInt(r.cheaterLossWei) <= 0n && !r.outcome.startsWith("impossible:")) why.push(`cheater lost ${tokens(BigInt(r.cheaterLossWei))} and the attack was not impossible`);
  if (BigInt(r.honestSlashedWei) !== 0n) why.push(`honest parties lost ${tokens(BigInt(r.honestSlashedWei))}`);
  if (BigInt(r.honestChallengerNetWei) < 0n) why.push(`honest challenger net ${tokens(BigInt(r.honestChallengerNetWei))}`);
  return why.length ? why.join("; ") : undefined;
}

const rows: Row[] = [];
const violations: string[] = [];
for (const spec of ROWS) {
  if (only && !spec.attack.includes(only)) continue;
  const t0 = performance.now();
  process.stderr.write(`${spec.attack} ... `);
  try {
    const r = await spec.run();
    rows.push(r);
    const v = violation(r);
    if (v) violations.push(`${r.attack}: ${v}`);
    process.stderr.write(`${v ? "VIOLATION" : "ok"} (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
  } catch (err) {
    const what = err instanceof AttackSucceeded ? `ATTACK SUCCEEDED: ${err.message}` : `bench error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`;
    violations.push(`${spec.attack}: ${what}`);
    rows.push({ attack: spec.attack, cheaterPaidWei: "?", cheaterLossWei: "?", honestChallengerNetWei: "?", honestSlashedWei: "?", outcome: what.split("\n")[0]!, play: "-" });
    process.stderr.write(`VIOLATION (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`);
  }
}
const wallSeconds = (performance.now() - started) / 1000;
removeWorkDirs();

mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
if (!only) writeFileSync(new URL("./results/attacks.json", import.meta.url), `${JSON.stringify(rows, null, 2)}\n`);

const t = (x: string) => (/^-?[0-9]+$/.test(x) ? tokens(BigInt(x)) : x);
const table = [["attack", "play", "cheater paid", "cheater loss", "honest chall. net", "honest slashed", "outcome"], ...rows.map((r) => [r.attack, r.play, t(r.cheaterPaidWei), t(r.cheaterLossWei), t(r.honestChallengerNetWei), t(r.honestSlashedWei), r.outcome])];
const widths = table[0]!.slice(0, 6).map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
const line = (r: string[]) => r.map((c, i) => (i < 6 ? c.padEnd(widths[i]!) : c)).join("  ");
process.stdout.write(
  `${line(table[0]!)}\n${table.slice(1).map(line).join("\n")}\n\n` +
    `amounts in tokens (18 decimals; bench/results/attacks.json has wei); gas (ETH) is excluded from every column.\n` +
    `play: "declared" rows commit a declared trajectory (a divergent state at the cheat) and honest panel members vote by the ` +
    `panel rule over it; "trained <strategy>" rows train examples/tiny.json with the engine's cheat and four ChallengerBots ` +
    `audit, challenge and sit on the panel; "-" rows commit no trace.\n` +
    `${rows.length} rows, ${violations.length} violations; wall time ${wallSeconds.toFixed(1)} s` +
    `${only ? " (POUW_BENCH_ONLY: bench/results/attacks.json not written)" : "; wrote bench/results/attacks.json"}\n`,
);
if (violations.length) {
  process.stderr.write(`\nVIOLATIONS (an attack that paid, or a bench failure):\n${violations.map((v) => `  - ${v}`).join("\n")}\n`);
  process.exitCode = 1;
}
