/**
 * The adapter and distillation job kinds in the quote: each is priced from its own measured matrix
 * (bench/results/detection-adapter.json, detection-distill.json, written by bench/detection-kinds.ts) with the
 * adapted cheats' rows, and a distillation step's compute includes the teacher's forward pass.
 */
import { expect } from "chai";
import { readFileSync } from "node:fs";
import { runPouw } from "../cli/in-process.ts";
import {
  detectionKindOf,
  detectionPathFor,
  flopsPerStepOf,
  jobFlopsOf,
  loadDetectionMatrix,
  packageDetectionPath,
  quotePolicy,
  readQuoteJob,
  teacherFlopsPerStepOf,
} from "../../verifier/src/policy/index.ts";

const ADAPTER_CHEATS = ["skip:0.25", "plant:3", "wrong-base"];
const DISTILL_CHEATS = ["skip-teacher", "skip-teacher:6", "wrong-teacher"];

describe("policy: the adapter and distillation job kinds' detection rows and compute", function () {
  this.timeout(120_000);

  it("a manifest's kind picks its committed matrix: adapter, distill, or the full-training one", () => {
    expect(readQuoteJob("examples/lora-sotu.json").kind).to.equal("adapter");
    expect(readQuoteJob("examples/distill-sotu.json").kind).to.equal("distill");
    expect(readQuoteJob("examples/tiny.json").kind).to.equal(undefined);
    expect(detectionKindOf({})).to.equal(undefined);
    expect(detectionPathFor(undefined)).to.equal(packageDetectionPath());
    expect(detectionPathFor("adapter")).to.match(/bench\/results\/detection-adapter\.json$/);
    expect(detectionPathFor("distill")).to.match(/bench\/results\/detection-distill\.json$/);
  });

  for (const [kind, cheats] of [["adapter", ADAPTER_CHEATS], ["distill", DISTILL_CHEATS]] as const) {
    it(`the committed ${kind} matrix has measured rows for ${cheats.join(", ")}, each caught by recompute and no honest run flagged`, () => {
      const m = loadDetectionMatrix(detectionPathFor(kind));
      expect(m.strategies.map((s) => s.name)).to.deep.equal(cheats);
      expect(m.checks.map((c) => c.name)).to.include.members(["recompute", "screen"]);
      for (const s of m.strategies) expect(s.detection.recompute, s.name).to.equal(1);
      expect(m.falseAlarms.recompute!.alarms).to.equal(0);
      expect(m.falseAlarms.recompute!.runs).to.be.greaterThan(0);
      for (const c of m.checks) expect(c.costRatio, c.name).to.be.greaterThan(0);
    });
  }

  it("skip-teacher saves the teacher's pass (the measured saving is positive) and the other-weights cheats save no compute", () => {
    const d = loadDetectionMatrix(detectionPathFor("distill"));
    const a = loadDetectionMatrix(detectionPathFor("adapter"));
    expect(d.strategies.find((s) => s.name === "skip-teacher")!.computeSaving).to.be.greaterThan(0);
    expect(d.strategies.find((s) => s.name === "wrong-teacher")!.computeSaving).to.equal(0);
    expect(a.strategies.find((s) => s.name === "wrong-base")!.computeSaving).to.equal(0);
    expect(a.strategies.find((s) => s.name === "skip:0.25")!.computeSaving).to.be.closeTo(0.25, 1e-9);
  });

  it("a distillation step is priced with the teacher's forward pass: 2*B*T*(L*(4d^2 + 2dF + 2Td) + dV) per step on top of the student's", () => {
    const raw = JSON.parse(readFileSync("examples/distill-sotu.json", "utf8"));
    const B = raw.training.batchSize as number;
    const steps = raw.training.steps as number;
    // the teacher: 2 layers, dModel 32, F = 4d = 128, context 32, the SOTU vocabulary of 96; written out here
    const teacherForward = 2 * B * 32 * (2 * (4 * 32 * 32 + 2 * 32 * 128 + 2 * 32 * 32) + 32 * 96);
    expect(teacherFlopsPerStepOf(raw.distill.teacher.arch, B)).to.equal(teacherForward);
    const student = flopsPerStepOf(raw.model, B);
    const job = readQuoteJob("examples/distill-sotu.json");
    expect(job.flops).to.equal(steps * (student + teacherForward));
    // the teacher (d 32, 2 layers) costs more than the student (d 16, 1 layer) trains: the price is not the student's alone
    expect(job.flops! / (steps * student)).to.be.greaterThan(2);
    // a job without a distill block is priced as before
    expect(jobFlopsOf({ model: raw.model, training: raw.training })).to.equal(steps * student);
  });

  it("the quote of a distillation job prices skip-teacher from the measured row, against the compute with the teacher in it", async () => {
    const job = readQuoteJob("examples/distill-sotu.json");
    const matrix = loadDetectionMatrix(detectionPathFor(job.kind));
    const q = await quotePolicy(job, matrix);
    expect(q.compute.flops).to.equal(job.flops);
    expect(q.strategies.map((s) => s.name)).to.include.members(DISTILL_CHEATS);
    const skip = q.strategies.find((s) => s.name === "skip-teacher")!;
    expect(BigInt(skip.gainWei) > 0n, `gain ${skip.gainWei}`).to.equal(true);
  });

  it("pouw quote on a LoRA manifest reads the adapter rows; on a distill manifest the distill rows", async () => {
    const lora = await runPouw(["quote", "--manifest", "examples/lora-sotu.json", "--json"]);
    expect(lora.code, lora.stderr).to.equal(0);
    expect((JSON.parse(lora.stdout) as { strategies: { name: string }[] }).strategies.map((s) => s.name)).to.include.members(ADAPTER_CHEATS);
    const distill = await runPouw(["quote", "--manifest", "examples/distill-sotu.json", "--json"]);
    expect(distill.code, distill.stderr).to.equal(0);
    const q = JSON.parse(distill.stdout) as { strategies: { name: string }[]; compute: { flops: number } };
    expect(q.strategies.map((s) => s.name)).to.include.members(DISTILL_CHEATS);
    expect(q.compute.flops).to.equal(readQuoteJob("examples/distill-sotu.json").flops);
  });
});
