import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPouw } from "../cli/in-process.ts";
import { FORMULAS } from "../../verifier/src/policy/index.ts";

const pouw = (...argv: string[]) => runPouw(argv);

const DET = "test/policy/fixtures/detection.fixture.json";
const MAN = "test/policy/fixtures/manifest.fixture.json";

const example: Record<string, string[]> = {
  inspection: ["--s", "1", "--S", "4", "--k", "0.5", "--lam", "0.5", "--h", "0"],
  "multi-auditor": ["--s", "1", "--S", "3", "--k", "0.1", "--lam", "0.5", "--h", "0", "--m", "2"],
  deterrence: ["--g", "1", "--S", "3", "--p", "0.2"],
  "min-stake": ["--g", "1", "--p", "0.25"],
  "budget-stake": ["--g", "2", "--n", "100", "--B", "10"],
  "spot-check": ["--T", "100", "--g", "0.1", "--F", "20", "--f", "1", "--k", "10"],
  "replication-stake": ["--G", "10", "--beta", "0.5", "--k", "3"],
  "bribe-floor": ["--lam", "0.5", "--S", "10", "--h", "0", "--phi", "0.1", "--J", "20", "--k", "1", "--x", "0.5"],
  "collusion-stake": ["--s", "10", "--m", "2", "--phi", "0", "--J", "0", "--k", "0", "--h", "1", "--lam", "0.5"],
  "brier-rent": ["--a", "2", "--b", "3", "--n", "11"],
};

describe("cli: pouw policy", function () {
  this.timeout(60_000);

  it("has an example for every formula", () => {
    expect(Object.keys(example).sort()).to.deep.equal(FORMULAS.map((f) => f.name).sort());
  });

  for (const spec of FORMULAS) {
    it(`${spec.name} --json parses and has every named output`, async () => {
      const r = await pouw("policy", spec.name, ...example[spec.name]!, "--json");
      expect(r.code, r.stderr).to.equal(0);
      const j = JSON.parse(r.stdout);
      expect(j.formula).to.equal(spec.name);
      for (const p of spec.params) expect(j.inputs).to.have.property(p.name);
      for (const o of spec.outputs) expect(j, o.name).to.have.property(o.name);
    });
  }

  it("prints the issue's inspection example as x = 0.25, y = 0.2", async () => {
    const r = await pouw("policy", "inspection", ...example.inspection!);
    expect(r.code).to.equal(0);
    expect(r.stdout).to.contain("x = 0.25").and.contain("y = 0.2");
  });

  it("help lists each parameter with its unit", async () => {
    const r = await pouw("policy", "bribe-floor", "--help");
    expect(r.code).to.equal(0);
    expect(r.stdout).to.contain("--phi").and.contain("planted-fault rate").and.contain("[probability [0,1)]").and.contain("b*(x)");
  });

  const bad: [string, string[], RegExp][] = [
    ["a negative cost", ["policy", "inspection", "--s", "1", "--S", "4", "--k", "-0.5", "--lam", "0.5", "--h", "0"], /k must be >= 0/],
    ["a probability above 1", ["policy", "deterrence", "--g", "1", "--S", "3", "--p", "1.5"], /p must be a probability in \[0, 1\]/],
    ["zero where it divides", ["policy", "min-stake", "--g", "1", "--p", "0"], /p must be in \(0, 1\]/],
    ["a non-number", ["policy", "min-stake", "--g", "abc", "--p", "0.5"], /--g must be a finite number/],
    ["Infinity", ["policy", "min-stake", "--g", "Infinity", "--p", "0.5"], /--g must be a finite number/],
    ["a missing parameter", ["policy", "spot-check", "--T", "100", "--g", "0.1", "--F", "20", "--f", "1"], /missing --k/],
    ["an unknown option", ["policy", "min-stake", "--g", "1", "--p", "0.5", "--q", "1"], /unknown option '--q'/],
    ["an unknown formula", ["policy", "no-such-formula", "--g", "1"], /unknown command 'no-such-formula'/],
    ["k = 1 replication", ["policy", "replication-stake", "--G", "10", "--beta", "0.5", "--k", "1"], /no stake deters/],
  ];
  for (const [what, argv, reason] of bad) {
    it(`exits 2 with a one-line reason on ${what}`, async () => {
      const r = await pouw(...argv);
      expect(r.code).to.equal(2);
      expect(r.stdout).to.equal("");
      expect(r.stderr.trim().split("\n")).to.have.length(1);
      expect(r.stderr).to.match(reason);
    });
  }
});

describe("cli: pouw quote", function () {
  this.timeout(60_000);

  it("--json parses and has the recommended contract and cost breakdown", async () => {
    const r = await pouw("quote", "--manifest", MAN, "--detection", DET, "--json");
    expect(r.code, r.stderr).to.equal(0);
    const q = JSON.parse(r.stdout);
    for (const k of ["auditRate", "checks", "stakeWei", "challengerBondWei", "panelSize", "auditorBondWei", "cost", "strategies"]) expect(q, k).to.have.property(k);
    for (const k of ["auditComputeWei", "metaAuditComputeWei", "capitalCostWei", "totalWei", "shareOfPayment"]) expect(q.cost, k).to.have.property(k);
  });

  it("--step-detection prices step sampling: r = 1 - (1 - d)^(1/S) per segment, in the table and the JSON; a bad d is refused", async () => {
    const r = await pouw("quote", "--manifest", MAN, "--detection", DET, "--step-detection", "0.99", "--json");
    expect(r.code, r.stderr).to.equal(0);
    const q = JSON.parse(r.stdout);
    const S = q.segments as number;
    expect(q.stepSampling.detection).to.equal(0.99);
    expect(q.stepSampling.stepRate).to.be.closeTo(1 - 0.01 ** (1 / S), 1e-12);
    expect(q.stepSampling.detectAllSegments).to.be.closeTo(0.99, 1e-12);
    const plain = await pouw("quote", "--manifest", MAN, "--detection", DET, "--json");
    expect(JSON.parse(plain.stdout)).to.not.have.property("stepSampling");
    // step sampling opens and screens the final state: the last segment is priced at p, not forced (the default keeps it)
    expect([q.lastSegmentAudited, JSON.parse(plain.stdout).lastSegmentAudited]).to.deep.equal([false, true]);
    const table = await pouw("quote", "--manifest", MAN, "--detection", DET, "--step-detection", "0.99");
    expect(table.stdout).to.match(/\nstep rate r         0\.[0-9]+: with state openings each auditor also recomputes one private-random step/);
    const bad = await pouw("quote", "--manifest", MAN, "--detection", DET, "--step-detection", "1");
    expect([bad.code, bad.stderr]).to.deep.equal([2, 'pouw: --step-detection must be a probability in (0, 1), got "1"\n']);
  });

  it("--audit-rate fixes the audit rate the contract is sized for", async () => {
    const r = await pouw("quote", "--manifest", MAN, "--detection", DET, "--audit-rate", "0.5", "--json");
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).auditRate).to.equal(0.5);
  });

  it("--panel-fee prices the fees a challenger pays the panel into the stake", async () => {
    // one at a time: pouw() captures this process's stdout
    const plain = await pouw("quote", "--manifest", MAN, "--detection", DET, "--json");
    const fee = await pouw("quote", "--manifest", MAN, "--detection", DET, "--panel-fee", "5", "--json");
    expect(plain.code, plain.stderr).to.equal(0);
    expect(fee.code, fee.stderr).to.equal(0);
    const [a, b] = [JSON.parse(plain.stdout), JSON.parse(fee.stdout)];
    expect(a.options.panelFee).to.equal(0);
    expect(b.options.panelFee).to.equal(5);
    expect(BigInt(b.stakeWei) > BigInt(a.stakeWei)).to.equal(true);
  });

  it("prints a readable table: 4 significant digits in tokens, one sentence per number, the binding cheat in words; --json exact in wei", async () => {
    const r = await pouw("quote", "--manifest", MAN, "--detection", DET, "--capital-rate", "0.02");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/audit rate p/).and.match(/stake S/).and.match(/challenger bond B/).and.match(/panel size n/).and.match(/auditor bond A/).and.match(/audit compute/).and.match(/capital cost/);
    const j = await pouw("quote", "--manifest", MAN, "--detection", DET, "--capital-rate", "0.02", "--json");
    const q = JSON.parse(j.stdout) as { stakeWei: string; bindingStake: string; challengerBondWei: string };
    // the same stake, rounded to 4 significant digits (an independent rounding of the exact wei)
    const four = Number((Number(q.stakeWei) / 1e18).toPrecision(4)).toString();
    expect(r.stdout).to.match(new RegExp(`^stake S +${four.replace(".", "\\.")} tokens: what the provider locks and loses if a dispute proves one wrong step; `, "m"));
    expect(r.stdout).to.not.match(/deterring|\d{7,} wei/);
    for (const line of r.stdout.split("\n").filter((l) => / tokens/.test(l))) {
      for (const m of line.matchAll(/(?<![\w.])([0-9]+(?:\.[0-9]+)?) tokens/g)) expect(m[1]!.replace(/^0\.0*|\./g, "").replace(/^0+/, "").length, line).to.be.at.most(4);
    }
    if (q.bindingStake !== "challenger" && q.bindingStake !== "none") expect(r.stdout).to.include(`(${q.bindingStake}, the measured cheat that needs the largest stake) loses more than it saves`);
    expect(BigInt(q.stakeWei).toString()).to.equal(q.stakeWei);
  });

  it("without --detection reads the package's committed matrix, from any working directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-quote-"));
    // run from an empty directory: bench/results/detection.json is found from the package root, not the cwd
    const r = spawnSync(join(process.cwd(), "node_modules/.bin/node"), [join(process.cwd(), "verifier/src/cli/pouw.ts"), "quote", "--manifest", join(process.cwd(), MAN), "--json"], { cwd: dir, encoding: "utf8" });
    expect(r.status, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout).detectionManifest).to.equal(JSON.parse(readFileSync("bench/results/detection.json", "utf8")).manifest);
  });

  const badQuote: [string, string[], RegExp][] = [
    ["a missing manifest", ["quote", "--manifest", "/nonexistent/m.json", "--detection", DET], /cannot read manifest/],
    ["an endless device as the manifest (read at most 1 MiB)", ["quote", "--manifest", "/dev/zero", "--detection", DET], /manifest \/dev\/zero is larger than 1048576 bytes/],
    ["a negative capital rate", ["quote", "--manifest", MAN, "--detection", DET, "--capital-rate", "-1"], /capitalRate must be >= 0/],
    ["a juror error of 0.5", ["quote", "--manifest", MAN, "--detection", DET, "--juror-error", "0.5"], /jurorError must be < 0.5/],
    ["a non-number option", ["quote", "--manifest", MAN, "--detection", DET, "--lam", "half"], /--lam must be a finite number/],
    ["a missing detection file", ["quote", "--manifest", MAN, "--detection", "/nonexistent/d.json"], /does not exist/],
    ["an audit rate of 0", ["quote", "--manifest", MAN, "--detection", DET, "--audit-rate", "0"], /auditRate must be in \(0, 1\]/],
    ["a negative panel fee", ["quote", "--manifest", MAN, "--detection", DET, "--panel-fee", "-0.1"], /panelFee must be >= 0/],
    ["a margin of 0 (break-even)", ["quote", "--manifest", MAN, "--detection", DET, "--margin", "0"], /margin must be > 0/],
    ["a negative integrity value", ["quote", "--manifest", MAN, "--detection", DET, "--integrity-value", "-1"], /integrityValue must be >= 0/],
    // an evaluate manifest is quoted per example (market/quote-kind.ts); this one states no payment
    ["an evaluate job without a payment", ["quote", "--manifest", "examples/evaluate-tiny.json"], /an evaluate manifest states no payment: pass --pay <amount>/],
  ];
  for (const [what, argv, reason] of badQuote) {
    it(`exits 2 with a one-line reason on ${what}`, async () => {
      const r = await pouw(...argv);
      expect(r.code).to.equal(2);
      expect(r.stderr.trim().split("\n")).to.have.length(1);
      expect(r.stderr).to.match(reason);
    });
  }

  it("a manifest without the payment field is a one-line error naming the field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-quote-"));
    const path = join(dir, "m.json");
    const m = JSON.parse(readFileSync(MAN, "utf8"));
    delete m.policy.paymentWei;
    writeFileSync(path, JSON.stringify(m));
    const r = await pouw("quote", "--manifest", path, "--detection", DET);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/manifest field policy\.paymentWei/);
  });
});

describe("cli: pouw quote on every example keeps the strict margin", function () {
  this.timeout(300_000);
  const examples = readdirSync("examples").filter((f) => f.endsWith(".json")).map((f) => join("examples", f));
  const training = examples.filter((f) => JSON.parse(readFileSync(f, "utf8")).kind === "pouw/training-job");

  it("covers the examples: every one but the evaluate job is a training job", () => {
    expect(training.length).to.be.at.least(8);
    expect(examples.filter((f) => !training.includes(f))).to.deep.equal(["examples/evaluate-tiny.json"]);
  });

  for (const f of training) {
    it(`${f}: every class that gains loses at least 1.25 x its gain in expectation (default margin 0.25, committed matrix)`, async () => {
      const r = await pouw("quote", "--manifest", f, "--json");
      expect(r.code, r.stderr).to.equal(0);
      const q = JSON.parse(r.stdout);
      expect(q.margin).to.equal(0.25);
      expect(q.lastSegmentAudited).to.equal(true);
      for (const s of q.strategies) {
        if (s.marginRatio === null) {
          expect(BigInt(s.gainWei), s.name).to.equal(0n);
          continue;
        }
        expect(s.marginRatio, s.name).to.be.at.least(0.25);
        // in wei too: the loss (rounded down) covers 1.25 x the gain (rounded up) up to the rounding of both
        expect(BigInt(s.lossWei) * 4n + 8n >= BigInt(s.gainWei) * 5n, s.name).to.equal(true);
        expect(s.statement).to.match(new RegExp(`^a cheater of class ${s.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} loses at least \\d+ wei in expectation`));
      }
    });
  }

  it("--integrity-value V prices plants against V: every class, plants included, prints a margin >= 0.25", async () => {
    const r = await pouw("quote", "--manifest", "examples/tiny.json", "--integrity-value", "0.5");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/margin m +0\.25: every cheat expects to lose at least 1\.25 x what it gains/).and.match(/integrity value V +0\.5 tokens: what a planted or unfinished model would cost you/);
    const rows = r.stdout.split("\n").filter((l) => /^ {2}\S+ +D=/.test(l));
    expect(rows.length).to.be.greaterThan(5);
    for (const l of rows) {
      const m = / margin=([0-9.]+)$/.exec(l);
      expect(m, l).to.not.equal(null);
      expect(Number(m![1]), l).to.be.at.least(0.25);
    }
    expect(r.stdout).to.match(/^ {2}a provider planting chosen weights at step 6 \(plant:6\) is caught with probability [0-9.]+ and expects to lose [0-9.]+ tokens for a gain of [0-9.]+ tokens/m);
    const j = await pouw("quote", "--manifest", "examples/tiny.json", "--integrity-value", "0.5", "--json");
    const q = JSON.parse(j.stdout);
    expect(q.integrityValueWei).to.equal("500000000000000000");
    for (const s of q.strategies) expect(BigInt(s.gainWei) >= 500000000000000000n, s.name).to.equal(true);
  });
});
