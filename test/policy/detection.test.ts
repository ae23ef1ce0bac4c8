import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DetectionMatrixError, falseAlarmRate, loadDetectionMatrix, parseDetectionMatrix } from "../../verifier/src/policy/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

const FIXTURE = "test/policy/fixtures/detection.fixture.json";
const valid = () => JSON.parse(readFileSync(FIXTURE, "utf8"));

function rejects(value: unknown, fragment: string) {
  expect(() => parseDetectionMatrix(value)).to.throw(DetectionMatrixError, fragment);
}

describe("policy: detection matrix schema", () => {
  it("parses the fixture and estimates false-alarm rates as alarms/runs", () => {
    const m = loadDetectionMatrix(FIXTURE);
    expect(m.checks.map((c) => c.name)).to.deep.equal(["recompute", "freivalds", "progress", "magnitude"]);
    expect(falseAlarmRate(m, "progress")).to.equal(0.02);
    expect(falseAlarmRate(m, "recompute")).to.equal(0);
  });

  it("names the bad field: detection rate above 1, missing rate, unknown check, duplicate, alarms > runs, unknown key", () => {
    const a = valid(); a.strategies[0].detection.recompute = 1.5; rejects(a, "strategies.0.detection.recompute");
    const b = valid(); delete b.strategies[1].detection.progress; rejects(b, 'missing a rate for check "progress"');
    const c = valid(); c.strategies[0].detection.zk = 1; rejects(c, 'check "zk" is not listed');
    const d = valid(); d.checks.push({ name: "recompute", costRatio: 1 }); rejects(d, 'duplicate check "recompute"');
    const e = valid(); e.falseAlarms.magnitude = { runs: 10, alarms: 11 }; rejects(e, "exceeds runs");
    const f = valid(); f.extra = 1; rejects(f, 'unknown key(s) "extra"');
    const g = valid(); g.version = 2; rejects(g, "version");
    const h = valid(); h.checks[0].costRatio = -1; rejects(h, "checks.0.costRatio");
    const i = valid(); delete i.falseAlarms.freivalds; rejects(i, 'missing an entry for check "freivalds"');
  });

  it("a missing default file tells the user to run the detection bench or pass --detection", () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-det-"));
    try {
      loadDetectionMatrix(join(dir, "detection.json"), { isDefault: true });
      expect.fail("should throw");
    } catch (err) {
      expect(err).to.be.instanceOf(DetectionMatrixError).and.instanceOf(InputError);
      expect((err as DetectionMatrixError).shortMessage).to.match(/run the detection bench.*--detection/);
      expect((err as DetectionMatrixError).shortMessage).to.not.contain("\n");
    }
  });

  it("rejects a file that is not JSON", () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-det-"));
    const path = join(dir, "bad.json");
    writeFileSync(path, "{ not json");
    expect(() => loadDetectionMatrix(path)).to.throw(DetectionMatrixError, "is not valid JSON");
  });
});
