import { expect } from "chai";
import {
  auditorBond,
  bribeFloor,
  brierRent,
  budgetStake,
  challengeBond,
  challengerStake,
  collusionStake,
  deterrence,
  inspection,
  minStake,
  multiAuditor,
  panelError,
  PolicyParamError,
  replicationStake,
  spotCheck,
  FORMULAS,
} from "../../verifier/src/policy/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

const close = (a: number, b: number, tol = 1e-12) => expect(Math.abs(a - b), `${a} vs ${b}`).to.be.at.most(tol * Math.max(1, Math.abs(b)));

function expectParamError(fn: () => unknown, fragment: string) {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(PolicyParamError);
    expect(err).to.be.instanceOf(InputError);
    expect((err as PolicyParamError).shortMessage).to.contain(fragment);
    return;
  }
  expect.fail(`expected a PolicyParamError mentioning "${fragment}"`);
}

describe("policy: inspection game", () => {
  it("reproduces the issue's example s=1, S=4, k=0.5, lam=0.5, h=0 -> x=0.25, y=0.2", () => {
    const r = inspection({ s: 1, S: 4, k: 0.5, lam: 0.5, h: 0 });
    close(r.x, 0.25);
    close(r.y, 0.2);
    expect(r.regime).to.equal("mixed");
  });

  it("reproduces the issue's example s=1, S=0.5, k=0.5, lam=0.5 -> nobody checks (1, 0)", () => {
    expect(inspection({ s: 1, S: 0.5, k: 0.5, lam: 0.5, h: 0 })).to.deep.equal({ x: 1, y: 0, regime: "no-check" });
  });

  it("counts the harm h: s=2, S=8, k=1, lam=0.25, h=2 -> x = 1/4, y = 2/10", () => {
    const r = inspection({ s: 2, S: 8, k: 1, lam: 0.25, h: 2 });
    close(r.x, 0.25);
    close(r.y, 0.2);
  });

  it("flips to no-check exactly at k = lam*S + h", () => {
    expect(inspection({ s: 1, S: 2, k: 1, lam: 0.5, h: 0 }).regime).to.equal("no-check");
    expect(inspection({ s: 1, S: 2, k: 0.999, lam: 0.5, h: 0 }).regime).to.equal("mixed");
  });

  it("at equilibrium each side is indifferent (payoffs recomputed from the game)", () => {
    const [s, S, k, lam, h] = [3, 7, 0.4, 0.6, 0.5];
    const { x, y } = inspection({ s, S, k, lam, h });
    // worker: cheat gains s unless checked, then loses s and S
    expect((1 - y) * s - y * S).to.be.closeTo(0, 1e-12);
    // auditor: checking costs k, catches with prob x and earns lam*S plus the avoided harm h
    expect(x * (lam * S + h) - k).to.be.closeTo(0, 1e-12);
  });

  it("rejects a negative cost, lam outside [0,1], non-finite values and s+S=0", () => {
    expectParamError(() => inspection({ s: 1, S: 4, k: -0.5, lam: 0.5, h: 0 }), "k must be >= 0");
    expectParamError(() => inspection({ s: 1, S: 4, k: 0.5, lam: 1.5, h: 0 }), "lam must be a probability");
    expectParamError(() => inspection({ s: Number.NaN, S: 4, k: 0.5, lam: 0.5, h: 0 }), "s must be a finite number");
    expectParamError(() => inspection({ s: 1, S: Infinity, k: 0.5, lam: 0.5, h: 0 }), "S must be a finite number");
    expectParamError(() => inspection({ s: 0, S: 0, k: 0, lam: 0.5, h: 1 }), "s + S must be > 0");
  });
});

describe("policy: m independent auditors", () => {
  it("with m = 1 equals the inspection game", () => {
    const r = multiAuditor({ s: 1, S: 4, k: 0.5, lam: 0.5, h: 0, m: 1 });
    close(r.x, 0.25);
    close(r.y, 0.2);
    close(r.D, 0.2);
    close(r.totalCheckCost, 0.1);
  });

  it("hand-computed m = 2: s=1, S=3, k=0.1, lam=0.5 -> D=0.25, y=1-sqrt(0.75), x=0.2*y/0.375", () => {
    const r = multiAuditor({ s: 1, S: 3, k: 0.1, lam: 0.5, h: 0, m: 2 });
    const y = 1 - Math.sqrt(0.75);
    close(r.D, 0.25);
    close(r.y, y);
    close(r.x, (0.2 * y) / 0.375);
    close(r.totalCheckCost, 0.2 * y);
    close(1 - (1 - r.y) ** 2, r.D); // at least one of two auditors checks with probability D
    expect(r.regime).to.equal("mixed");
  });

  it("total check cost grows with m at fixed detection", () => {
    const costs = [1, 2, 4, 8].map((m) => multiAuditor({ s: 1, S: 3, k: 0.1, lam: 0.5, h: 0, m }).totalCheckCost);
    for (let i = 1; i < costs.length; i++) expect(costs[i]!).to.be.greaterThan(costs[i - 1]!);
    expect(costs[3]!).to.be.below(-0.1 * Math.log(0.75)); // limit -k ln(1-D)
  });

  it("without an interior equilibrium the worker always cheats and auditors break even (hand-computed y = 1/15)", () => {
    // lam*S*D/(m*y) = 1.3995 <= k = 1.45 < lam*S = 1.5: benefit 1.5*(1 - y/2) = 1.45 -> y = 1/15
    const r = multiAuditor({ s: 1, S: 3, k: 1.45, lam: 0.5, h: 0, m: 2 });
    expect(r.regime).to.equal("always-cheat");
    expect(r.x).to.equal(1);
    close(r.y, 1 / 15, 1e-9);
  });

  it("rejects m = 0 and fractional m", () => {
    expectParamError(() => multiAuditor({ s: 1, S: 3, k: 0.1, lam: 0.5, h: 0, m: 0 }), "m must be an integer >= 1");
    expectParamError(() => multiAuditor({ s: 1, S: 3, k: 0.1, lam: 0.5, h: 0, m: 1.5 }), "m must be an integer >= 1");
  });
});

describe("policy: deterrence, minimum stake, budget stake", () => {
  it("hand-computed g=1, S=3: cheating pays at p=0.2 (advantage 0.2), not at the threshold p=0.25", () => {
    const a = deterrence({ g: 1, S: 3, p: 0.2 });
    expect(a.cheatPays).to.equal(true);
    close(a.advantage, 0.2);
    close(a.pThreshold, 0.25);
    const b = deterrence({ g: 1, S: 3, p: 0.25 });
    expect(b.cheatPays).to.equal(false);
    close(b.advantage, 0);
  });

  it("min stake S = g(1-p)/p is the stake at which p is the threshold", () => {
    close(minStake({ g: 1, p: 0.25 }).S, 3);
    close(minStake({ g: 5, p: 1 }).S, 0);
    for (const [g, p] of [[2, 0.1], [0.3, 0.7], [10, 0.05]] as const) {
      const S = minStake({ g, p }).S;
      close(deterrence({ g, S, p }).pThreshold, p);
    }
  });

  it("budget stake: g=2, n=100, B=10 -> p=0.1, S*=18 = minStake(g, B/n)", () => {
    const r = budgetStake({ g: 2, n: 100, B: 10 });
    close(r.p, 0.1);
    close(r.S, 18);
    close(minStake({ g: 2, p: r.p }).S, r.S);
    close(budgetStake({ g: 2, n: 100, B: 100 }).S, 0);
  });

  it("rejects p=0 for the min stake, B=0 or B>n, g+S=0, p outside [0,1]", () => {
    expectParamError(() => minStake({ g: 1, p: 0 }), "p must be in (0, 1]");
    expectParamError(() => budgetStake({ g: 1, n: 10, B: 0 }), "B must be > 0");
    expectParamError(() => budgetStake({ g: 1, n: 10, B: 11 }), "B must be <= n");
    expectParamError(() => deterrence({ g: 0, S: 0, p: 0.5 }), "g + S must be > 0");
    expectParamError(() => deterrence({ g: 1, S: 1, p: 1.01 }), "p must be a probability");
    expectParamError(() => deterrence({ g: -1, S: 1, p: 0.5 }), "g must be >= 0");
  });
});

describe("policy: spot checks, replication", () => {
  it("hand-computed spot check: T=100, g=0.1, k=10 audits at f=1 -> penalty 10 = gain 10, deterred; F=5 caps it", () => {
    expect(spotCheck({ T: 100, g: 0.1, F: 20, f: 1, k: 10 })).to.deep.include({ deterred: true });
    const r = spotCheck({ T: 100, g: 0.1, F: 5, f: 1, k: 10 });
    close(r.penalty, 5);
    close(r.gain, 10);
    expect(r.deterred).to.equal(false);
    expect(spotCheck({ T: 100, g: 0.1, F: 20, f: 1, k: 9 }).deterred).to.equal(false);
  });

  it("replication: G=10, beta=0.5, k=3 -> p=0.25, S=10/3; beta=0 needs no stake", () => {
    const r = replicationStake({ G: 10, beta: 0.5, k: 3 });
    close(r.p, 0.25);
    close(r.S, 10 / 3);
    expect(replicationStake({ G: 10, beta: 0, k: 2 })).to.deep.equal({ p: 0, S: 0 });
  });

  it("replication: k=1 or beta=1 cannot deter and is an error, not Infinity", () => {
    expectParamError(() => replicationStake({ G: 10, beta: 0.5, k: 1 }), "no stake deters");
    expectParamError(() => replicationStake({ G: 10, beta: 1, k: 5 }), "no stake deters");
  });
});

describe("policy: bribable auditors", () => {
  it("hand-computed bribe floor: lam=0.5, S=10, h=0, phi=0.1, J=20, k=1, x=0.5 -> 5 + 1/0.45", () => {
    const r = bribeFloor({ lam: 0.5, S: 10, h: 0, phi: 0.1, J: 20, k: 1, x: 0.5 });
    close(r.b, 5 + 1 / 0.45);
    expect(r.checksUnbribed).to.equal(true);
  });

  it("bribe floor falls below zero when checking is not worth its cost", () => {
    const r = bribeFloor({ lam: 0.1, S: 1, h: 0, phi: 0, J: 0, k: 1, x: 0.5 });
    close(r.b, 0.1 - 2);
    expect(r.checksUnbribed).to.equal(false);
  });

  it("collusion stake: hand-computed without and with planted faults", () => {
    expect(collusionStake({ s: 10, m: 2, phi: 0, J: 0, k: 0, h: 1, lam: 0.5 })).to.deep.equal({ bonus: 0, Sc: 8 });
    const r = collusionStake({ s: 10, m: 2, phi: 0.5, J: 4, k: 1, h: 1, lam: 0.5 });
    close(r.bonus, 4); // 2*(2-1)/0.5
    close(r.Sc, 4); // ((10-4)/2 - 1)/0.5
    expect(collusionStake({ s: 1, m: 2, phi: 0.5, J: 4, k: 1, h: 0, lam: 0.5 }).Sc).to.equal(0);
  });

  it("rejects phi=1, x=0 and lam=0 where they divide", () => {
    expectParamError(() => bribeFloor({ lam: 0.5, S: 10, h: 0, phi: 1, J: 20, k: 1, x: 0.5 }), "phi must be in [0, 1)");
    expectParamError(() => bribeFloor({ lam: 0.5, S: 10, h: 0, phi: 0.1, J: 20, k: 1, x: 0 }), "x must be in (0, 1]");
    expectParamError(() => collusionStake({ s: 10, m: 2, phi: 0, J: 0, k: 0, h: 1, lam: 0 }), "lam must be in (0, 1]");
  });

  it("auditor bond: (1-lam)*S + F over the meta-audit rate, growing with the workers audited", () => {
    close(auditorBond({ lam: 0.5, S: 10, F: 2, mu: 0.1, W: 1 }).A, 70);
    close(auditorBond({ lam: 0.5, S: 10, F: 2, mu: 0.1, W: 2 }).A, 14 / 0.19);
    const bonds = [1, 2, 5, 20].map((W) => auditorBond({ lam: 0.5, S: 10, F: 2, mu: 0.1, W }).A);
    for (let i = 1; i < bonds.length; i++) expect(bonds[i]!).to.be.greaterThan(bonds[i - 1]!);
    expectParamError(() => auditorBond({ lam: 0.5, S: 10, F: 2, mu: 0, W: 1 }), "mu must be in (0, 1]");
  });
});

describe("policy: challenger bond and panel", () => {
  it("panel error: n=1 is the juror error, n=3 hand-computed 3*e^2*(1-e) + e^3", () => {
    close(panelError(1, 0.1), 0.1);
    close(panelError(3, 0.1), 0.028);
    close(panelError(5, 0.1), 10 * 1e-3 * 0.81 + 5 * 1e-4 * 0.9 + 1e-5);
    expect(panelError(101, 0.1)).to.be.below(1e-15);
    expectParamError(() => panelError(4, 0.1), "must be odd");
  });

  it("challenger bond B = (eps*lam*S + grief)/(1-eps): a frivolous challenge then breaks even", () => {
    const { B } = challengeBond({ lam: 0.5, S: 10, eps: 0.1, grief: 1 });
    close(B, 1.5 / 0.9);
    expect(0.1 * 0.5 * 10 + 1 - 0.9 * B).to.be.closeTo(0, 1e-12);
  });

  it("challenger stake: hand-computed (eps*grief + (1-eps)*kc)/(lam*(1-2eps)) = 0.7, where an honest challenger breaks even", () => {
    const { S } = challengerStake({ lam: 0.5, eps: 0.1, grief: 1, kc: 0.2 });
    close(S, 0.7);
    const { B } = challengeBond({ lam: 0.5, S, eps: 0.1, grief: 1 });
    expect(0.9 * 0.5 * S - 0.1 * B - 0.2).to.be.closeTo(0, 1e-12);
    expectParamError(() => challengerStake({ lam: 0.5, eps: 0.5, grief: 1, kc: 0.2 }), "must be < 0.5");
  });

  it("challenger stake with panel fees: the fees a panel decision costs the challenger count like kc (0.415/0.4 = 1.0375)", () => {
    // DisputeGame panelFee 0.05 per member, 3 members: an honest challenger pays up to 0.15 when the panel decides
    const { S } = challengerStake({ lam: 0.5, eps: 0.1, grief: 1, kc: 0.2, fees: 0.15 });
    close(S, 1.0375);
    const { B } = challengeBond({ lam: 0.5, S, eps: 0.1, grief: 1 });
    expect(0.9 * 0.5 * S - 0.1 * B - 0.2 - 0.15).to.be.closeTo(0, 1e-12);
    expect(S).to.be.greaterThan(challengerStake({ lam: 0.5, eps: 0.1, grief: 1, kc: 0.2 }).S);
    expectParamError(() => challengerStake({ lam: 0.5, eps: 0.1, grief: 1, kc: 0.2, fees: -1 }), "fees");
  });
});

describe("policy: brier rent", () => {
  it("(n-1)/(a+b): a=2, b=3, n=11 -> 2; n=1 -> 0", () => {
    close(brierRent({ a: 2, b: 3, n: 11 }).rent, 2);
    expect(brierRent({ a: 2, b: 3, n: 1 }).rent).to.equal(0);
    expectParamError(() => brierRent({ a: 0, b: 3, n: 11 }), "a must be > 0");
  });
});

describe("policy: never NaN or Infinity", () => {
  it("every formula, fed random and edge values, returns finite outputs or throws PolicyParamError", () => {
    const edges = [0, 1, 0.5, -1, 1e-300, 1e300, 1.7e308, Number.NaN, Infinity, -Infinity, 2, 3, 0.999999];
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let ok = 0;
    let rejected = 0;
    for (const spec of FORMULAS) {
      for (let trial = 0; trial < 400; trial++) {
        const values: Record<string, number> = {};
        for (const p of spec.params) {
          const r = rand();
          values[p.name] = r < 0.4 ? edges[Math.floor(rand() * edges.length)]! : r < 0.7 ? Math.floor(rand() * 20) : rand() * 10;
        }
        try {
          const out = spec.evaluate(values);
          for (const v of Object.values(out)) if (typeof v === "number") expect(Number.isFinite(v), `${spec.name} ${JSON.stringify(values)}`).to.equal(true);
          ok++;
        } catch (err) {
          expect(err, `${spec.name} ${JSON.stringify(values)}`).to.be.instanceOf(PolicyParamError);
          rejected++;
        }
      }
    }
    expect(ok).to.be.greaterThan(100);
    expect(rejected).to.be.greaterThan(100);
  });
});
