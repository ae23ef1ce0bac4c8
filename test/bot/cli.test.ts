/**
 * `pouw auditor run|fund` in-process through main(argv), on the README's own set-up against a local chain (Hardhat's in-process network over JSON-RPC, test/helpers/chain.ts): after
 * `auditor bond 100 --mint` the whole balance is bonded, and `auditor run` (info by default, pretty with
 * `--log-format pretty`) says so at start-up: an ERROR line naming the shortfall and `pouw auditor fund 1.15 --mint`.
 * After that command the start-up summary says ready. A deployment with no code at its addresses is refused (exit 2).
 */
import { expect } from "chai";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { privateKeyToAccount } from "viem/accounts";
import { runPouw } from "../cli/in-process.ts";
import { configureLogging } from "../../verifier/src/log/index.ts";
import { DEV_KEYS } from "../e2e/helpers.ts";
import { startLocalChain, type LocalChain } from "../helpers/chain.ts";

const run = runPouw;

describe("pouw auditor run|fund (in-process)", function () {
  this.timeout(180_000);
  let node: LocalChain;
  after(async () => {
    configureLogging({ level: "warn", format: "auto" });
    await node?.stop();
  });

  it("the README set-up: the start-up summary names the missing deposit and the command; funded, it is ready", async () => {
    node = await startLocalChain();
    const dir = mkdtempSync(join(tmpdir(), "pouw-auditor-cli-"));
    const as = (i: number) => ["--rpc", node.url, "--state-dir", dir, "--private-key", DEV_KEYS[i]!];
    const me = privateKeyToAccount(DEV_KEYS[3]!).address;
    expect((await run(["deploy", ...as(0)])).code).to.equal(0);
    expect((await run(["auditor", "bond", "100", "--mint", ...as(3)])).stdout).to.match(/^bond 100, active \(counts for dispute panels and attestation committees from \d{4}-\d\d-\d\dT[\d:.]+Z\)\n(  (mint|approve|postBond) tx 0x[0-9a-f]{64} in block \d+\n){3}$/);

    // no --log-level: info; pretty lines
    let r = await run(["auditor", "run", "--once", "--log-format", "pretty", ...as(3)]);
    expect(r.code, r.stderr).to.equal(0);
    const lines = r.stderr.split("\n");
    const info = lines.find((l) => / INFO  bot: auditor /.test(l))!;
    expect(info).to.match(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  bot: auditor ${me}: bond 100 \\(active\\), tokens 0 for a deposit of 1\\.15, ETH [0-9.]+ \\(a challenge's gas ~[0-9.]+\\), following 0 jobs, audit rate per job manifest: CANNOT ACT, see the errors `));
    const errors = lines.filter((l) => / ERROR bot: /.test(l));
    expect(errors).to.have.length(1);
    expect(errors[0]).to.match(
      /ERROR bot: token balance 0 < the deposit of one challenge 1\.15 \(the floor: bond minimum plus panel fees; short 1\.15\): a bad step found now would not be challenged; fix: pouw auditor fund 1\.15 --mint /,
    );
    expect(r.stdout).to.equal("audited 0 segments (0 failed), 0 not sampled, 0 receipts signed, 0 transactions confirmed\n");
    // one auditor: no panel can be drawn for its challenges (a warning: it still audits and signs receipts)
    const warns = lines.filter((l) => / WARN  bot: /.test(l));
    expect(warns.some((l) => /only 0 auditors besides 0x[0-9a-fA-F]{40} can be drawn for a panel now \(bonded and past the 3600 s activation delay\); a dispute needs 3 .*so a challenge would end NoDecision; fix: 3 more accounts: pouw auditor bond 100 --mint, then wait 3600 s/.test(l)), warns.join("\n")).to.equal(true);

    r = await run(["auditor", "fund", "2", ...as(3)]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(new RegExp(`pouw: token balance 0 < 2: transfer 2 tokens \\(0x[0-9a-fA-F]{40}\\) to ${me} or pass --mint on the dev chain\\n$`));
    r = await run(["auditor", "fund", "--mint", ...as(3)]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^token balance 1\.15; one challenge deposit is 1\.15 \(the floor: minimum challenger bond \+ panel fees, no open job\): 1 concurrent disputes funded; ETH [0-9.]+ \(a challenge's gas ~[0-9.]+\); the bot approves DisputeGame for each deposit itself\n  mint tx 0x[0-9a-f]{64} in block \d+\n$/);

    // three concurrent disputes: the balance reaches three deposits (the 1.15 held, 2.3 minted)
    r = await run(["auditor", "fund", "--disputes", "3", "--mint", "--json", ...as(3)]);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.deep.include({ tokenBalance: "3450000000000000000", depositsFunded: "3" });
    expect(JSON.parse(r.stdout).txs).to.have.length(1);
    r = await run(["auditor", "fund", "--disputes", "0", ...as(3)]);
    expect([r.code, r.stderr]).to.deep.equal([2, 'pouw: --disputes must be a whole number from 1 to 999, got "0"\n']);
    r = await run(["auditor", "fund", "2", "--disputes", "2", ...as(3)]);
    expect([r.code, r.stderr]).to.deep.equal([2, "pouw: give AMOUNT or --disputes N, not both\n"]);

    r = await run(["auditor", "run", "--once", "--log-format", "pretty", ...as(3)]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stderr).to.match(/ INFO  bot: auditor 0x[0-9a-fA-F]{40}: bond 100 \(active\), tokens 3\.45 for a deposit of 1\.15, .*: ready /);
    expect(r.stderr).to.not.match(/ ERROR /);

    // a deployment whose contracts are not on this chain: refused with one line, exit 2
    const stale = join(dir, "stale.json");
    writeFileSync(stale, readFileSync(join(dir, "deployment.json"), "utf8").replace(/"jobMarket": "0x[0-9a-fA-F]{40}"/, '"jobMarket": "0x000000000000000000000000000000000000dEaD"'));
    r = await run(["auditor", "run", "--once", "--deployment", stale, ...as(3)]);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.match(/pouw: no contract code at jobMarket 0x000000000000000000000000000000000000dEaD on chain 31337: the deployment file is stale \(redeploy\) or --rpc points at another chain\n$/);
  });
});
