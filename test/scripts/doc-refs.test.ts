import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkRepo, slug } from "../../scripts/check-doc-refs.ts";

const ROOT = join(import.meta.dirname, "..", "..");

describe("scripts/check-doc-refs: every file, link and section a reader can follow resolves", () => {
  it("finds no broken reference in README.md, docs/ and the sources' comments", () => {
    const broken = checkRepo(ROOT).map((b) => `${b.file}:${b.line}: ${b.ref}: ${b.why}`);
    expect(broken, broken.join("\n")).to.deep.equal([]);
  });

  it("reports a missing file, a missing heading, a missing anchor and a stale source comment, and passes the good ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-doc-refs-"));
    execFileSync("git", ["init", "-q"], { cwd: dir });
    mkdirSync(join(dir, "docs"));
    mkdirSync(join(dir, "verifier", "src", "bot"), { recursive: true });
    writeFileSync(join(dir, "docs", "a.md"), "# A\n\n## The panel fee\n\n**Bold lead (x).** text\n");
    writeFileSync(join(dir, "verifier", "src", "bot", "gate.ts"), "export {};\n");
    writeFileSync(
      join(dir, "README.md"),
      [
        "See [a](docs/a.md), [fee](docs/a.md#the-panel-fee), `bot/gate.ts` and docs/a.md \"panel fee\", docs/a.md, \"Bold lead\".",
        "Writes `OUT/trace.json` and `deployment.json`.",
        "Broken: [b](docs/b.md), [anchor](docs/a.md#nope), `bot/outbox.ts`, docs/a.md \"No such section\".",
        "```sh",
        "cat `bot/inside-a-fence.ts`",
        "```",
      ].join("\n"),
    );
    writeFileSync(join(dir, "verifier", "src", "bot", "x.ts"), "// the rule lives in verifier/src/bot/gone.ts\nexport {};\n");
    const broken = checkRepo(dir).map((b) => `${b.file}:${b.line}: ${b.ref}: ${b.why}`);
    expect(broken).to.have.members([
      "README.md:3: docs/b.md: no such file",
      "README.md:3: docs/a.md#nope: no such heading",
      "README.md:3: bot/outbox.ts: no such file",
      'README.md:3: docs/a.md "No such section": no such heading',
      "verifier/src/bot/x.ts:1: verifier/src/bot/gone.ts: no such file",
    ]);
  });

  it("slugs headings as GitHub does", () => {
    expect(slug("Evidence bundle, trust file and the committee path")).to.equal("evidence-bundle-trust-file-and-the-committee-path");
    expect(slug("State digest (`verifier/src/trace/digest.ts`, manifest `stateDigest`)")).to.equal(
      "state-digest-verifiersrctracedigestts-manifest-statedigest",
    );
  });
});
