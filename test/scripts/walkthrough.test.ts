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
import { readdirSync } from "node:fs";
import { extractWalkthrough, IPFS_MARKER, walkthroughScript, WalkthroughBlockError } from "../../scripts/walkthrough.ts";
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
    expect(() => extractWalkthrough(md("sleep 9 &   # background"))).to.throw(WalkthroughBlockError, /line 5: a background command \(&\) other than `npx pouw serve ... &`/);
    expect(() => extractWalkthrough(md("npx pouw serve --port 0 & rm -rf x &"))).to.throw(WalkthroughBlockError, /background command/);
    expect(extractWalkthrough(md("npx pouw serve --port 0 --ipfs &   # terminal 3"))[0]!.kind).to.equal("serve");
    // `&&` and a `#` inside quotes are not a background command or a comment
    expect(extractWalkthrough(md("true && echo '# not a comment &'"))).to.deep.equal([{ line: 5, text: "true && echo '# not a comment &'", kind: "run" }]);
  });

  it("the IPFS block (--ipfs): every party on its own state dir, content over IPFS found from the chain, no --source or --ipfs-peer", () => {
    const ipfs = extractWalkthrough(readme, IPFS_MARKER);
    const t = ipfs.map((c) => c.text.replace(/\s+#.*$/, "").trim());
    expect(ipfs[0]!.kind).to.equal("node");
    // the classic block and this one are told apart by their markers
    expect(ipfs.map((c) => c.line)).to.not.include.members(commands.map((c) => c.line));
    const serves = ipfs.filter((c) => c.kind === "serve").map((c) => c.text.replace(/\s+#.*$/, "").trim());
    expect(serves).to.deep.equal(["buyer", "cheater", "honest"].map((p) => `npx pouw serve --port 0 --ipfs --state-dir $W/${p} &`));
    const at = (re: RegExp) => t.findIndex((x) => re.test(x));
    expect(at(/pouw serve .*\$W\/buyer/)).to.be.lessThan(at(/buyer create/));
    expect(at(/pouw serve .*\$W\/cheater/)).to.be.lessThan(at(/provider run 1/));
    for (const x of t) {
      expect(x, x).to.not.match(/--source\b|--ipfs-peer\b|--rpc\b|POUW_RPC_URL|POUW_STATE_DIR|\.pouw\b/);
      // every command that reads or offers content runs an IPFS node
      if (/pouw (provider run|auditor run|buyer create|buyer fetch) /.test(x)) expect(x, x).to.match(/ --ipfs( |$)/);
    }
    // one state dir per party, always the same one for the same key
    const dirOf = new Map<string, string>();
    for (const x of t.filter((y) => /--private-key /.test(y))) {
      const key = /--private-key (\$K\d|\$\{!K\})/.exec(x)![1]!;
      const dir = /--state-dir (\$W\/[a-z]+(\$i|\d)?)(\s|;|$)/.exec(x)?.[1];
      expect(dir, `${x}: no --state-dir $W/<party>`).to.not.equal(undefined);
      if (key === "${!K}") {
        expect(x, x).to.match(/^for i in 3 5 6 7; do K=K\$i; .*--state-dir \$W\/auditor\$i; done$/);
        continue;
      }
      expect(dirOf.get(key) ?? dir, `${key} on two state dirs`).to.equal(dir);
      dirOf.set(key, dir!);
    }
    expect(new Set(dirOf.values()).size, "distinct parties, distinct dirs").to.equal(dirOf.size);
    expect(dirOf.get("$K1")).to.equal("$W/buyer");
    expect(dirOf.get("$K2")).to.equal("$W/cheater");
    expect(dirOf.get("$K8")).to.equal("$W/honest");
    expect(dirOf.get("$K3")).to.equal("$W/auditor3");
    expect(t).to.include("export POUW_DEPLOYMENT=$W/deployment.json");
    expect(at(/^npx pouw provider run 1 --strategy skip:0\.3 /)).to.be.greaterThan(0);
    expect(t.filter((x) => /^for i in 3 5 6 7; .*auditor run --once --ipfs/.test(x)), "panel: commit, reveal, resolve").to.have.length(3);
    expect(at(/^npx pouw buyer fetch 2 /)).to.equal(t.length - 1);
  });

  it("the generated bash runs `npx pouw serve ... &` in the background, waits until it serves, and stops it when the block ends", () => {
    const dir = mkdtempSync(join(tmpdir(), "pouw-walkthrough-serve-"));
    try {
      const script = join(dir, "w.sh");
      writeFileSync(script, walkthroughScript(extractWalkthrough(md(`npx pouw serve --port 0 --state-dir ${dir}/s &   # terminal 3\necho next`))));
      const r = spawnSync("bash", [script], { env: { PATH: process.env.PATH ?? "", TMPDIR: dir, HOME: process.env.HOME ?? "/tmp" }, encoding: "utf8", timeout: 120_000 });
      expect(r.status, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/\$ npx pouw serve --port 0 .* &   # terminal 3\nserving .* at http:\/\/127\.0\.0\.1:[0-9]+ .*\n\n\[ *[0-9]+ s\] \$ echo next\nnext\n$/);
      // its output went to a log under TMPDIR; the EXIT trap stopped it (SIGTERM) and waited for it
      const logs = readdirSync(dir).filter((f) => f.startsWith("tmp.")).map((f) => readFileSync(join(dir, f), "utf8"));
      expect(logs).to.have.length(1);
      expect(logs[0]).to.match(/\nstopped\n$/);
      // a serve that exits at once fails the block, with its output
      writeFileSync(script, walkthroughScript(extractWalkthrough(md("npx pouw serve --port notaport &\necho never"))));
      const bad = spawnSync("bash", [script], { env: { PATH: process.env.PATH ?? "", TMPDIR: dir, HOME: process.env.HOME ?? "/tmp" }, encoding: "utf8", timeout: 120_000 });
      expect(bad.status).to.not.equal(0);
      expect(bad.stdout).to.not.include("never");
      expect(bad.stderr).to.match(/port/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
