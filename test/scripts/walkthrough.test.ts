/**
 * scripts/walkthrough.ts without running the walkthrough (minutes; `npm run walkthrough`): the README's marked block
 * has the shape the issue asks for (enough funded auditors for a panel, the activation delay passed, a `skip:0.3`
 * provider, the seed block mined, the status checked), nothing in it bypasses the script's node or state, and the
 * bash the script generates prints each command, skips `npx hardhat node` and stops at the first failing command
 * naming its README line.
 */
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { extractWalkthrough, walkthroughScript, WalkthroughBlockError } from "../../scripts/walkthrough.ts";
import { ROOT } from "../e2e/helpers.ts";

const fence = "```";
const md = (body: string) => `# t\n\n<!-- walkthrough -->\n${fence}sh\n${body}\n${fence}\n`;

describe("scripts/walkthrough.ts", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const commands = extractWalkthrough(readme);
  const texts = commands.map((c) => c.text.replace(/\s+#.*$/, "").trim());
  const index = (re: RegExp) => texts.findIndex((t) => re.test(t));

  it("the README block starts the chain, bonds and funds four auditors, passes the activation delay and cheats with skip:0.3", () => {
    expect(commands[0]!.kind).to.equal("node");
    expect(commands.filter((c) => c.kind === "node")).to.have.length(1);
    const auditorsOf = (re: RegExp) => {
      const t = texts.find((x) => re.test(x));
      return t ? /^for K in ((?:\$K\d+ ?)+); do/.exec(t)?.[1]!.trim().split(/\s+/) : undefined;
    };
    const bonded = auditorsOf(/auditor bond 100 --mint/)!;
    expect(new Set(bonded).size, "panel size 3 + the challenger").to.equal(4);
    expect(auditorsOf(/auditor fund --mint/)).to.deep.equal(bonded);
    expect(auditorsOf(/^for K .*auditor run --once/)).to.deep.equal(bonded);
    expect(texts.filter((t) => /^for K .*auditor run --once/.test(t)), "panel: commit, reveal, resolve").to.have.length(3);
    const advance = index(/^npx pouw dev advance 3601$/);
    expect(advance).to.be.greaterThan(index(/auditor bond/));
    expect(advance).to.be.lessThan(index(/buyer create/));
    const cheat = index(/^npx pouw provider run 1 --strategy skip:0\.3 /);
    expect(cheat).to.be.greaterThan(0);
    const firstBot = index(/auditor run --once/);
    expect(firstBot).to.be.greaterThan(cheat);
    expect(index(/^npx pouw dev advance --blocks 2$/)).to.be.greaterThan(firstBot);
    expect(index(/^npx pouw buyer status 1 /)).to.be.greaterThan(index(/^npx pouw dev advance --blocks 2$/));
    expect(index(/^npx pouw provider claim 2 /)).to.be.greaterThan(index(/^npx pouw buyer status 1 /));
  });

  it("nothing in the block bypasses the script's node or state directory", () => {
    for (const t of texts) {
      expect(t, t).to.not.match(/--rpc\b|--state-dir\b|POUW_RPC_URL|\.pouw\b/);
      if (t.startsWith("npx ")) expect(t, t).to.match(/^npx (pouw|hardhat node)\b/);
    }
    expect(texts).to.include("export POUW_STATE_DIR=$(mktemp -d)");
  });

  it("refuses a README without a marked sh block, an unclosed block and a background command", () => {
    expect(() => extractWalkthrough("# no block\n")).to.throw(WalkthroughBlockError, /no sh block marked/);
    expect(() => extractWalkthrough("<!-- walkthrough -->\ntext\n")).to.throw(WalkthroughBlockError, /line 1: .* followed by a ```sh block/);
    expect(() => extractWalkthrough(`<!-- walkthrough -->\n${fence}sh\necho a\n`)).to.throw(WalkthroughBlockError, /not closed/);
    expect(() => extractWalkthrough(md("npx pouw serve &   # background"))).to.throw(WalkthroughBlockError, /line 5: a background command/);
    // `&&` and a `#` inside quotes are not a background command or a comment
    expect(extractWalkthrough(md("true && echo '# not a comment &'"))).to.deep.equal([{ line: 5, text: "true && echo '# not a comment &'", kind: "run" }]);
  });

  it("joins continuation lines and drops comments and blank lines", () => {
    expect(extractWalkthrough(md("# comment\n\nnpx hardhat node   # terminal 1\necho a \\\n  b\nX=1"))).to.deep.equal([
      { line: 7, text: "npx hardhat node   # terminal 1", kind: "node" },
      { line: 8, text: "echo a  b", kind: "run" },
      { line: 10, text: "X=1", kind: "run" },
    ]);
  });

  it("the generated bash prints each command, does not run the node line, and stops at the first failure naming its README line", () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-walkthrough-test-"));
    const script = join(dir, "w.sh");
    const run = (body: string) => {
      writeFileSync(script, walkthroughScript(extractWalkthrough(md(body))));
      return spawnSync("bash", [script], { env: { PATH: process.env.PATH ?? "", POUW_RPC_URL: "http://127.0.0.1:1" }, encoding: "utf8" });
    };
    try {
      let r = run("npx hardhat node\nX=hello   # set\necho $X");
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/\$ npx hardhat node\n\(not run: the walkthrough started its own node at http:\/\/127\.0\.0\.1:1\)\n/);
      expect(r.stdout).to.match(/\$ echo \$X\nhello\n$/);
      r = run("echo one\nfalse\necho never");
      expect(r.status).to.equal(1);
      expect(r.stdout).to.not.include("never");
      expect(r.stderr).to.equal("walkthrough: FAILED (exit 1) at README line 6: false\n");
      r = run("npx hardhat compile");
      expect(r.status).to.equal(2);
      expect(r.stderr).to.match(/^walkthrough: npx hardhat compile is not run by the walkthrough\n/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
