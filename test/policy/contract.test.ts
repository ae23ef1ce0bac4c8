import { expect } from "chai";
import { readFileSync } from "node:fs";
import {
  actionSetFromMatrix,
  budgetStake,
  catchProbability,
  checkSets,
  choosePanel,
  contractAt,
  minStake,
  NoDeterringContractError,
  optimiseContract,
  parseDetectionMatrix,
  PolicyParamError,
  quotePolicy,
  readQuoteJob,
  solveContractLp,
  strategyVertices,
  verifyWithLp,
  type ActionSet,
  type ContractParams,
} from "../../verifier/src/policy/index.ts";

const fixture = parseDetectionMatrix(JSON.parse(readFileSync("test/policy/fixtures/detection.fixture.json", "utf8")));

const base: ContractParams = {
  computeCost: 1,
  segments: 3,
  forfeit: 0.2,
  capitalRate: 0.05,
  lam: 0.5,
  challengeCost: 0.01,
  grief: 0.02,
  jurorError: 0.1,
  maxPanelError: 0.05,
  maxPanel: 11,
  metaAuditRate: 0.25,
  workersPerAuditor: 2,
  grid: 10,
};

const small: ActionSet = {
  checks: [
    { name: "full", costRatio: 1, falseAlarmRate: 0 },
    { name: "cheap", costRatio: 0.1, falseAlarmRate: 0.05 },
  ],
  strategies: [
    { name: "big", computeSaving: 0.5, detection: { full: 1, cheap: 0.6 } },
    { name: "small", computeSaving: 0.3, detection: { full: 1, cheap: 0.2 } },
    { name: "plant", computeSaving: 0, detection: { full: 1, cheap: 1 } },
  ],
};

/** Every mixed action: m[a] segments cheated with strategy a, sum(m) <= N. */
function* actionVectors(nStrategies: number, N: number): Generator<number[]> {
  const m = new Array(nStrategies).fill(0);
  function* rec(i: number, left: number): Generator<number[]> {
    if (i === nStrategies) { yield [...m]; return; }
    for (let k = 0; k <= left; k++) { m[i] = k; yield* rec(i + 1, left - k); }
    m[i] = 0;
  }
  yield* rec(0, N);
}

/** Direct payoff check: no mixed action of the provider beats honesty by more than tol. */
function providerDeterred(params: ContractParams, actions: ActionSet, set: string[], p: number, S: number, tol = 1e-12): boolean {
  const c = params.computeCost / params.segments;
  const D = actions.strategies.map((s) => Math.max(0, ...set.map((k) => s.detection[k] ?? 0)));
  for (const m of actionVectors(actions.strategies.length, params.segments)) {
    let gain = 0;
    let notCaught = 1;
    m.forEach((k, a) => {
      gain += k * actions.strategies[a]!.computeSaving * c;
      notCaught *= (1 - p * D[a]!) ** k;
    });
    // the provider side loses its stake less the challenger's share (its own second address may hold it) plus F
    if (gain - ((1 - params.lam) * S + params.forfeit) * (1 - notCaught) > tol) return false;
  }
  return true;
}

describe("policy: cheapest contract (closed form, HiGHS LP, brute force)", function () {
  this.timeout(60_000);

  it("reduces to min-stake g(1-p)/p for one segment, one perfect check and the gain forfeited when caught", () => {
    const g = 0.4;
    const params = { ...base, segments: 1, forfeit: g, challengeCost: 0, grief: 0, jurorError: 0 };
    const actions: ActionSet = { checks: [{ name: "recompute", costRatio: 1, falseAlarmRate: 0 }], strategies: [{ name: "cheat", computeSaving: g, detection: { recompute: 1 } }] };
    const panel = choosePanel(0, params.maxPanelError, params.maxPanel);
    for (const p of [0.05, 0.1, 0.25, 0.5, 0.9, 1]) {
      const c = contractAt(params, actions, actions.checks, p, panel)!;
      // min-stake deters a provider that loses all of S; the provider side keeps the challenger's share lam*S
      expect(c.stake).to.be.closeTo(minStake({ g, p }).S / (1 - params.lam), 1e-12);
    }
    // budget stake: n jobs, B audited -> p = B/n
    const c = contractAt(params, actions, actions.checks, 10 / 100, panel)!;
    expect(c.stake).to.be.closeTo(budgetStake({ g, n: 100, B: 10 }).S / (1 - params.lam), 1e-12);
  });

  it("catch probability over N segments is 1 - (1 - p*D)^N, accurate for tiny p", () => {
    expect(catchProbability(0.1, 3)).to.be.closeTo(1 - 0.9 ** 3, 1e-15);
    expect(catchProbability(1e-12, 1000)).to.be.closeTo(1e-9, 1e-18);
    expect(catchProbability(1, 5)).to.equal(1);
  });

  it("the closed form is the least feasible point: it deters every mixed action, and any smaller stake does not", () => {
    const panel = choosePanel(base.jurorError, base.maxPanelError, base.maxPanel);
    for (const set of checkSets(small.checks)) {
      const names = set.map((c) => c.name);
      for (let i = 1; i <= 10; i++) {
        const p = i / 10;
        const c = contractAt(base, small, set, p, panel)!;
        expect(providerDeterred(base, small, names, p, c.stake, 1e-12), `set ${names} p ${p}`).to.equal(true);
        if (c.bindingStake !== "challenger" && c.bindingStake !== "none") {
          expect(providerDeterred(base, small, names, p, c.stake - 1e-6), `smaller stake, set ${names} p ${p}`).to.equal(false);
        }
      }
    }
  });

  it("HiGHS LP gives the same (S, B, A) as the closed form at every grid point and check set", async () => {
    const panel = choosePanel(base.jurorError, base.maxPanelError, base.maxPanel);
    let compared = 0;
    for (const [params, actions] of [[base, small], [{ ...base, segments: 20, computeCost: 5 }, actionSetFromMatrix(fixture)]] as const) {
      for (const set of checkSets(actions.checks)) {
        for (const p of [0.01, 0.05, 0.1, 0.3, 0.7, 1]) {
          const c = contractAt(params, actions, set, p, panel);
          const lp = await solveContractLp(params, actions, set, p, panel);
          if (c === null) {
            expect(lp, `LP must be infeasible too for ${set.map((s) => s.name)}`).to.equal(null);
            continue;
          }
          await verifyWithLp(params, actions, c); // throws PolicySolverError on disagreement
          expect(lp!.stake).to.be.closeTo(c.stake, 1e-6 * Math.max(1, c.stake));
          compared++;
        }
      }
    }
    expect(compared).to.be.greaterThan(30);
  });

  it("matches brute force over a grid of (p, check set, S, B, A) with every mixed action enumerated", () => {
    const panel = choosePanel(base.jurorError, base.maxPanelError, base.maxPanel);
    const eps = panel.eps;
    const muW = 1 - (1 - base.metaAuditRate) ** base.workersPerAuditor;
    const dS = 0.001, dA = 0.001, dB = 0.001;
    let brute = Infinity;
    let exact = Infinity;
    for (const set of checkSets(small.checks)) {
      const names = set.map((c) => c.name);
      const ratio = set.reduce((r, c) => r + c.costRatio, 0) + (1 - set.reduce((q, c) => q * (1 - c.falseAlarmRate), 1)) * 1;
      for (let i = 1; i <= base.grid; i++) {
        const p = i / base.grid;
        const c = contractAt(base, small, set, p, panel);
        if (c) exact = Math.min(exact, c.cost.total);
        for (let S = 0; S <= 4; S = Math.round((S + dS) * 1e6) / 1e6) {
          if (!providerDeterred(base, small, names, p, S)) continue;
          // B: frivolous challenges must not pay, honest ones must (smallest grid B that stops frivolous ones)
          const B = Math.ceil(((eps * base.lam * S + base.grief) / (1 - eps)) / dB - 1e-9) * dB;
          if ((1 - eps) * base.lam * S - eps * B - base.challengeCost < -1e-12) continue;
          if (eps * base.lam * S + base.grief - (1 - eps) * B > 1e-12) continue;
          // A: bribes from all W providers must not pay
          const W = base.workersPerAuditor;
          const A = Math.ceil((W * ((1 - base.lam) * S + base.forfeit)) / muW / dA - 1e-9) * dA;
          if (W * (S + base.forfeit) - W * base.lam * S - muW * A > 1e-9) continue;
          const cost = p * base.computeCost * ratio * (1 + base.metaAuditRate) + base.capitalRate * S + (base.capitalRate * A) / W;
          brute = Math.min(brute, cost);
          break; // cost increases with S: the first deterring S is the cheapest at this (p, set)
        }
      }
    }
    const k = base.capitalRate, W = base.workersPerAuditor;
    const bound = k * dS + (k * (dA + (W * (1 - base.lam) * dS) / muW)) / W + 1e-9;
    expect(brute).to.be.at.least(exact - 1e-9);
    expect(brute).to.be.at.most(exact + bound);
    const opt = optimiseContract(base, small).best;
    expect(opt.cost.total).to.be.at.most(exact + 1e-12);
  });

  it("the optimiser's refined audit rate beats a fine scan of every check set (cost is convex in p)", () => {
    const params = { ...base, segments: 20, computeCost: 1, forfeit: 1, grid: 50 };
    const actions = actionSetFromMatrix(fixture);
    const { best } = optimiseContract(params, actions);
    const panel = choosePanel(params.jurorError, params.maxPanelError, params.maxPanel);
    for (const set of checkSets(actions.checks)) {
      for (let i = 1; i <= 2000; i++) {
        const c = contractAt(params, actions, set, i / 2000, panel);
        if (c) expect(c.cost.total).to.be.at.least(best.cost.total * (1 - 1e-9));
      }
    }
  });

  it("with a meta-audit menu, picks the mu whose contract is cheapest (no fixed mu of the menu does better)", async () => {
    const params = { ...base, segments: 20, computeCost: 1, forfeit: 1, grid: 50 };
    const actions = actionSetFromMatrix(fixture);
    const menu = [0.05, 0.2, 1];
    const { best } = optimiseContract({ ...params, metaAuditMenu: menu }, actions);
    expect(menu).to.include(best.metaAuditRate);
    for (const mu of menu) expect(optimiseContract({ ...params, metaAuditRate: mu }, actions).best.cost.total).to.be.at.least(best.cost.total * (1 - 1e-12));
    await verifyWithLp({ ...params, metaAuditMenu: menu }, actions, best);
    expect(() => optimiseContract({ ...params, metaAuditMenu: [0] }, actions)).to.throw(PolicyParamError, /metaAuditMenu\[0\]/);
  });

  it("a panel fee counts like the challenger's cost: n*panelFee raises the challenger-bound stake, LP agrees", async () => {
    const panel = choosePanel(base.jurorError, base.maxPanelError, base.maxPanel);
    const full = [small.checks[0]!];
    const withoutFee = contractAt(base, small, full, 1, panel)!;
    const params = { ...base, panelFee: 0.5 };
    const c = contractAt(params, small, full, 1, panel)!;
    expect(c.bindingStake).to.equal("challenger");
    // S = (eps*grief + (1-eps)*(kc + n*f)) / (lam*(1-2eps))
    const eps = panel.eps;
    const expected = (eps * base.grief + (1 - eps) * (base.challengeCost + panel.n * 0.5)) / (base.lam * (1 - 2 * eps));
    expect(c.stake).to.be.closeTo(expected, 1e-9);
    expect(c.stake).to.be.greaterThan(withoutFee.stake);
    const lp = await solveContractLp(params, small, full, 1, panel);
    expect(lp!.stake).to.be.closeTo(c.stake, 1e-6 * Math.max(1, c.stake));
    expect(() => optimiseContract({ ...base, panelFee: -1 }, small)).to.throw(PolicyParamError, /panelFee must be >= 0/);
  });

  it("picks the smallest odd panel that reaches the target panel error", () => {
    expect(choosePanel(0.1, 0.05, 11)).to.deep.include({ n: 3 });
    expect(choosePanel(0.1, 0.11, 11)).to.deep.include({ n: 1 });
    expect(choosePanel(0, 1e-9, 1)).to.deep.equal({ n: 1, eps: 0 });
    expect(() => choosePanel(0.4, 1e-9, 11)).to.throw(NoDeterringContractError);
  });

  it("reports a cheat no check detects instead of an infinite stake", () => {
    const actions: ActionSet = { ...small, strategies: [...small.strategies, { name: "ghost", computeSaving: 0.1, detection: { full: 0, cheap: 0 } }] };
    expect(() => optimiseContract(base, actions)).to.throw(NoDeterringContractError, /ghost/);
  });

  it("rejects bad contract parameters with a PolicyParamError", () => {
    expect(() => optimiseContract({ ...base, capitalRate: -0.1 }, small)).to.throw(PolicyParamError, /capitalRate must be >= 0/);
    expect(() => optimiseContract({ ...base, lam: 0 }, small)).to.throw(PolicyParamError, /lam must be in \(0, 1\]/);
    expect(() => optimiseContract({ ...base, jurorError: 0.5 }, small)).to.throw(PolicyParamError, /jurorError must be < 0.5/);
    expect(() => optimiseContract({ ...base, computeCost: 0 }, small)).to.throw(PolicyParamError, /computeCost must be > 0/);
    expect(() => optimiseContract({ ...base, segments: 2.5 }, small)).to.throw(PolicyParamError, /segments must be an integer/);
    const bad: ActionSet = { ...small, strategies: [{ name: "x", computeSaving: 1.2, detection: { full: 1, cheap: 1 } }] };
    expect(() => optimiseContract(base, bad)).to.throw(PolicyParamError, /computeSaving of x/);
  });
});

describe("policy: quotePolicy", function () {
  this.timeout(60_000);

  it("quotes the fixture manifest: every field present, LP-verified, cost parts add up", async () => {
    const job = readQuoteJob("test/policy/fixtures/manifest.fixture.json");
    expect(job).to.deep.equal({ paymentWei: 10n ** 18n, steps: 200, stepsPerSegment: 10, flops: 200 * 6 * 8 * (784 * 16 + 16 * 10) });
    const q = await quotePolicy(job, fixture);
    expect(q.segments).to.equal(20);
    expect(q.auditRate).to.be.greaterThan(0).and.at.most(1);
    expect(q.panelSize % 2).to.equal(1);
    for (const k of ["stakeWei", "challengerBondWei", "auditorBondWei"] as const) expect(q[k]).to.match(/^[0-9]+$/);
    const rel = (a: string, b: string) => Math.abs(Number(a) - Number(b)) / Math.max(1, Number(b));
    expect(rel(q.stakeWei, q.lp.stakeWei)).to.be.below(1e-6);
    expect(rel(q.auditorBondWei, q.lp.auditorBondWei)).to.be.below(1e-6);
    const parts = Number(q.cost.auditComputeWei) + Number(q.cost.metaAuditComputeWei) + Number(q.cost.capitalCostWei);
    expect(Math.abs(parts - Number(q.cost.totalWei)) / Number(q.cost.totalWei)).to.be.below(1e-9);
    expect(q.cost.shareOfPayment).to.be.closeTo(Number(q.cost.totalWei) / 1e18, 1e-9);
    // every strategy that saves compute is deterred: margin >= 0
    for (const s of q.strategies) expect(BigInt(s.marginWei) >= -1n, s.name).to.equal(true);
  });

  it("a larger capital cost buys a higher audit rate and a smaller stake", async () => {
    const job = { paymentWei: 10n ** 18n, steps: 200, stepsPerSegment: 10 };
    const cheap = await quotePolicy(job, fixture, { capitalRate: 0.001 });
    const dear = await quotePolicy(job, fixture, { capitalRate: 0.1 });
    expect(dear.auditRate).to.be.at.least(cheap.auditRate);
    expect(BigInt(dear.stakeWei) <= BigInt(cheap.stakeWei)).to.equal(true);
  });

  it("with a fixed audit rate quotes the least contract at that rate (the manifest's rate, not the optimiser's)", async () => {
    const job = { paymentWei: 10n ** 18n, steps: 200, stepsPerSegment: 10 };
    // checks: [] lets the optimiser choose the check set (the default prices the bot's pipeline only)
    const free = await quotePolicy(job, fixture, { checks: [] });
    const p = free.auditRate / 4;
    const fixed = await quotePolicy(job, fixture, { auditRate: p, checks: [] });
    expect(fixed.auditRate).to.equal(p);
    expect(fixed.cost.totalWei !== free.cost.totalWei && BigInt(fixed.cost.totalWei) > BigInt(free.cost.totalWei)).to.equal(true);
    // at a quarter of the rate the same cheat needs more stake; every strategy is still deterred (margin >= 0)
    expect(BigInt(fixed.stakeWei) > BigInt(free.stakeWei)).to.equal(true);
    for (const s of fixed.strategies) expect(BigInt(s.marginWei) >= -1n, s.name).to.equal(true);
    // the stake is the closed form at that rate for the chosen set, and no other set is cheaper there
    const params = { computeCost: 1e18, segments: 20, forfeit: 1e18, capitalRate: 0.01, lam: 0.5, challengeCost: 1e16, grief: 5e16, jurorError: 0.1, maxPanelError: 1e-6, maxPanel: 51, metaAuditRate: fixed.metaAuditRate, workersPerAuditor: 1, grid: 200, margin: 0.25, lastSegmentAudited: true };
    const actions = actionSetFromMatrix(fixture);
    const panel = choosePanel(0.1, 1e-6, 51);
    const at = contractAt(params, actions, actions.checks.filter((c) => fixed.checks.includes(c.name)), p, panel)!;
    expect(Number(fixed.stakeWei)).to.be.closeTo(at.stake, at.stake * 1e-9 + 1);
    for (const set of checkSets(actions.checks)) {
      const c = contractAt(params, actions, set, p, panel);
      if (c) expect(c.cost.total).to.be.at.least(Number(fixed.cost.totalWei) * (1 - 1e-9) - 1);
    }
    let err: unknown;
    try { await quotePolicy(job, fixture, { auditRate: 0 }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(PolicyParamError);
    expect((err as Error).message).to.match(/auditRate/);
  });

  it("rejects steps that are not a multiple of the segment length and bad options", async () => {
    let err: unknown;
    try { await quotePolicy({ paymentWei: 1000n, steps: 25, stepsPerSegment: 10 }, fixture); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(PolicyParamError);
    err = undefined;
    try { await quotePolicy({ paymentWei: 1000n, steps: 20, stepsPerSegment: 10 }, fixture, { lam: 2 }); } catch (e) { err = e; }
    expect(err).to.be.instanceOf(PolicyParamError);
  });
});

describe("policy: the quote prices the worst class (segments touched, the provider side's real loss, the every-segment screen)", () => {
  const panel = { n: 3, eps: 0.028 };
  const params: ContractParams = { ...base, segments: 10, forfeit: 0, lam: 0.5, challengeCost: 0, grief: 0 };
  const actions = (touched: number | "all"): ActionSet => ({
    checks: [
      { name: "recompute", costRatio: 1, falseAlarmRate: 0 },
      { name: "screen", costRatio: 0.02, falseAlarmRate: 0, everySegment: true },
    ],
    strategies: [{ name: "poison", computeSaving: 0.9, detection: { recompute: 1, screen: 1 }, segmentsTouched: touched }],
  });

  it("a one-shot cheat is caught with p on its one segment, not 1 - (1 - p)^N: the stake is the one-segment one", () => {
    const p = 0.2;
    const recomputeOnly = (a: ActionSet) => a.checks.filter((c) => c.name === "recompute");
    const once = contractAt(params, actions(1), recomputeOnly(actions(1)), p, panel)!;
    const every = contractAt(params, actions("all"), recomputeOnly(actions("all")), p, panel)!;
    // hand-computed: S = (g/Q - F)/(1 - lam), Q = p for T = 1 (injected before the last segment: gain 0.9),
    // Q = 1 - 0.8^10 for the N-segment cheat
    expect(once.strategies[0]!.Q).to.be.closeTo(p, 1e-15);
    expect(once.stake).to.be.closeTo(0.9 / p / 0.5, 1e-12);
    expect(every.stake).to.be.closeTo(0.9 / (1 - 0.8 ** 10) / 0.5, 1e-12);
    expect(once.stake).to.be.greaterThan(3 * every.stake);
  });

  it("the every-segment screen catches a one-shot cheat at a later segment with probability 1; the last segment's injection is priced at p and T/N of the job", () => {
    const p = 0.2;
    const c = contractAt(params, actions(1), actions(1).checks, p, panel)!;
    const o = c.strategies[0]!;
    // the screen's vertex (injected before the last segment) has Q = 1 and gain 0.9; the last-segment one Q = p and
    // gain min(0.9, 1/10) = 0.1: needs (0.1/0.2)/0.5 = 1 against (0.9/1)/0.5 = 1.8
    expect([o.segmentsTouched, o.Q, o.gain]).to.deep.equal([1, 1, 0.9]);
    expect(c.stake).to.be.closeTo(1.8, 1e-12);
    expect(o.loss).to.be.closeTo(0.5 * c.stake * 1, 1e-12);
    expect(o.margin).to.be.closeTo(0, 1e-12);
    // the screen costs its ratio on every segment, not p of them; recompute p of them
    expect(c.cost.auditCompute).to.be.closeTo(params.computeCost * (p * 1 + 0.02), 1e-12);
    // the LP agrees on both vertices
    return verifyWithLp(params, actions(1), c);
  });

  it("a challenger share of 1 leaves the provider side nothing to lose: no contract deters a saving cheat", () => {
    expect(contractAt({ ...params, lam: 1 }, actions("all"), actions("all").checks, 0.5, panel)).to.equal(null);
  });

  it("pouw quote's default prices the bot's pipeline (recompute + screen) on the committed matrix, names the worst class and deters every strategy", async () => {
    const matrix = parseDetectionMatrix(JSON.parse(readFileSync("bench/results/detection.json", "utf8")));
    const q = await quotePolicy(readQuoteJob("examples/tiny.json"), matrix);
    expect(q.checks).to.deep.equal(["recompute", "screen"]);
    expect(q.worstStrategy).to.be.a("string");
    for (const s of q.strategies) expect(BigInt(s.lossWei) + 2n >= BigInt(s.gainWei), s.name).to.equal(true);
    // the worst class is the one with the least loss per unit of gain
    const ratio = (s: (typeof q.strategies)[number]) => Number(s.lossWei) / Number(s.gainWei);
    const saving = q.strategies.filter((s) => BigInt(s.gainWei) > 0n);
    expect(q.worstStrategy).to.equal(saving.reduce((a, b) => (ratio(b) < ratio(a) ? b : a)).name);
    // one-shot cheats are priced on the segments they touch
    expect(q.strategies.find((s) => s.name === "state-poison")!.segmentsTouched).to.equal(1);
    expect(q.strategies.find((s) => s.name === "skip:0.25")!.segmentsTouched).to.equal(q.segments);
    let err: unknown;
    try { await quotePolicy(readQuoteJob("examples/tiny.json"), matrix, { checks: ["nope"] }); } catch (e) { err = e; }
    expect((err as Error).message).to.match(/measures none of the checks nope/);
  });
});

describe("policy: a strict margin, the integrity value and the last segment always audited", () => {
  const panel = { n: 3, eps: 0.028 };
  const params: ContractParams = { ...base, segments: 10, forfeit: 0, lam: 0.5, challengeCost: 0, grief: 0 };
  const recompute = { name: "recompute", costRatio: 1, falseAlarmRate: 0 };
  const one = (s: ActionSet["strategies"][number]): ActionSet => ({ checks: [recompute], strategies: [s] });

  it("with margin m every vertex's expected loss is >= (1 + m) x its gain, equal at the binding one (hand-computed), and the LP agrees", async () => {
    const a = one({ name: "cheat", computeSaving: 0.9, detection: { recompute: 1 } });
    const p = 0.2;
    const plain = contractAt(params, a, a.checks, p, panel)!;
    const strict = contractAt({ ...params, margin: 0.25 }, a, a.checks, p, panel)!;
    // S = ((1 + m) g / Q - F) / (1 - lam) with Q = 1 - 0.8^10
    const Q = 1 - 0.8 ** 10;
    expect(plain.stake).to.be.closeTo(0.9 / Q / 0.5, 1e-12);
    expect(strict.stake).to.be.closeTo((1.25 * 0.9) / Q / 0.5, 1e-9);
    expect(plain.strategies[0]!.marginRatio).to.be.closeTo(0, 1e-12);
    expect(strict.strategies[0]!.marginRatio).to.be.at.least(0.25);
    expect(strict.strategies[0]!.marginRatio).to.be.closeTo(0.25, 1e-9);
    await verifyWithLp({ ...params, margin: 0.25 }, a, strict);
    expect(() => optimiseContract({ ...params, margin: -0.1 }, a)).to.throw(PolicyParamError, /margin must be >= 0/);
  });

  it("with V above a segment's saving, a per-segment cheat on ONE segment (gain V, caught only if sampled) keeps the margin, with and without the last-segment rule (hand-computed), and the LP agrees", async () => {
    // N = 10 segments, saving 0.9 of C = 1: one segment saves 0.09 < V = 0.5, so the gain is V however few are cheated
    const a = one({ name: "cheat", computeSaving: 0.9, detection: { recompute: 1 } });
    const p = 0.2;
    for (const lastSegmentAudited of [false, true]) {
      const c = contractAt({ ...params, margin: 0.25, integrityValue: 0.5, lastSegmentAudited }, a, a.checks, p, panel)!;
      // one segment other than the last: Q = p, loss (1 - lam) S Q >= 1.25 V  =>  S >= 1.25 * 0.5 / 0.2 / 0.5 = 6.25
      expect(c.stake, `lastSegmentAudited ${lastSegmentAudited}`).to.be.at.least(6.25 - 1e-9);
      expect(c.stake).to.be.closeTo(6.25, 1e-9);
      await verifyWithLp({ ...params, margin: 0.25, integrityValue: 0.5, lastSegmentAudited }, a, c);
    }
  });

  it("the integrity value prices a plant that saves nothing: gain V, stake ((1 + m) V / Q - F) / (1 - lam)", async () => {
    const a = one({ name: "plant", computeSaving: 0, detection: { recompute: 1 }, segmentsTouched: 1 });
    const p = 0.2;
    // without V a plant gains nothing and needs no stake
    expect(contractAt(params, a, a.checks, p, panel)!.stake).to.equal(0);
    const V = 0.5;
    const c = contractAt({ ...params, margin: 0.25, integrityValue: V }, a, a.checks, p, panel)!;
    const o = c.strategies[0]!;
    // binding vertex: injected before the last segment, caught only if its segment is sampled (Q = p)
    expect(o.gain).to.equal(V);
    expect(o.Q).to.be.closeTo(p, 1e-15);
    expect(c.stake).to.be.closeTo((1.25 * V) / p / 0.5, 1e-9);
    await verifyWithLp({ ...params, margin: 0.25, integrityValue: V }, a, c);
    // a cheat nobody detects cannot be priced once it has a value to the cheater
    const blind = one({ name: "ghost-plant", computeSaving: 0, detection: { recompute: 0 }, segmentsTouched: 1 });
    expect(() => optimiseContract({ ...params, integrityValue: V }, blind)).to.throw(NoDeterringContractError, /ghost-plant/);
  });

  it("with the last segment always audited a per-segment cheat has three vertices (all, all but the last, the last alone), hand-computed", () => {
    const s = { name: "skip", computeSaving: 0.6, detection: { recompute: 1 } };
    const N = 10, p = 0.1, C = 1;
    const v = strategyVertices(s, 1, 0, p, N, C, { lastSegmentAudited: true });
    expect(v.map((x) => x.T)).to.deep.equal([10, 9, 1]);
    expect(v[0]!.Q).to.equal(1); // the last segment is recomputed with D = 1
    expect(v[1]!.Q).to.be.closeTo(1 - 0.9 ** 9, 1e-15);
    expect(v[1]!.gain).to.be.closeTo(0.6 * 0.9, 1e-15);
    expect(v[2]!).to.deep.equal({ T: 1, Q: 1, gain: 0.06 });
    // without the rule: one vertex, Q = 1 - 0.9^10
    expect(strategyVertices(s, 1, 0, p, N, C)).to.deep.equal([{ T: 10, Q: catchProbability(0.1, 10), gain: 0.6 }]);
    // a one-shot plant in the last segment: caught by its recompute (D = 0.8 here), not at p*D; before it, at p*D
    const plant = { name: "plant", computeSaving: 0, detection: { recompute: 0.8 }, segmentsTouched: 1 };
    const pv = strategyVertices(plant, 0.8, 0, p, N, C, { lastSegmentAudited: true, integrityValue: 2 });
    expect(pv.map((x) => [x.T, x.gain])).to.deep.equal([[1, 2], [1, 2]]);
    expect(pv[0]!.Q).to.be.closeTo(0.08, 1e-15);
    expect(pv[1]!.Q).to.be.closeTo(0.8, 1e-15);
    // the closed form deters all three vertices with one stake, and brute force over "which segments" agrees
    const a = one(s);
    const c = contractAt({ ...params, lastSegmentAudited: true }, a, a.checks, p, panel)!;
    // the buyer pays for the last segment's recompute: p of the first N - 1 segments and all of the last
    expect(c.cost.auditCompute).to.be.closeTo(params.computeCost * (p + (1 - p) / N) * 1, 1e-12);
    const keep = 1 - params.lam;
    for (let k = 0; k <= N - 1; k++) for (const last of [0, 1]) {
      const gain = ((k + last) * 0.6) / N;
      const caught = 1 - (1 - p) ** k * (last ? 0 : 1);
      expect(gain - (keep * c.stake + params.forfeit) * caught, `k ${k} last ${last}`).to.be.at.most(1e-12);
    }
  });
});
