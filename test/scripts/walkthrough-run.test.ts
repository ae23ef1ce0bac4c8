/**
 * Runs the README's walkthrough over IPFS (`npm run walkthrough -- --ipfs`, the block marked `<!-- walkthrough-ipfs`)
 * as a user would: a fresh `hardhat node`, every party on its own state directory, three `pouw serve --ipfs` nodes in
 * the background, peers found from the chain's PeerDirectory, no `--source` and no `--ipfs-peer`. It passes only
 * when the script exits 0, which it does only when every README command exited 0 and the chain shows job 1's cheater
 * slashed and refunded and job 2's honest provider paid and claimed (scripts/walkthrough.ts checkOutcome); the
 * buyer's `buyer fetch 2 --ipfs` is one of those commands, so its verified fetch is required too.
 *
 * NOTE: opt-in (`POUW_WALKTHROUGH=1`): 39 CLI processes, about 250 s wall and 4 CPU minutes on the shared 2-core
 * machine (measured 248 s at load ~4), so `npm test` skips it; run it with
 *   POUW_WALKTHROUGH=1 npx hardhat test mocha test/scripts/walkthrough-run.test.ts
 */
import { expect } from "chai";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../e2e/helpers.ts";

describe("scripts/walkthrough.ts --ipfs: the README walkthrough over IPFS, run as written", function () {
  this.timeout(900_000);

  before(function () {
    if (process.env.POUW_WALKTHROUGH !== "1") {
      console.log("    skipped: set POUW_WALKTHROUGH=1 to run the IPFS walkthrough (about 4 minutes)");
      this.skip();
    }
  });

  it("exits 0: the cheater slashed over IPFS, the honest provider paid, the buyer's fetch verified", async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("POUW_")));
    const child = spawn(process.execPath, [join(ROOT, "scripts/walkthrough.ts"), "--ipfs"], { cwd: ROOT, env: { ...env, POUW_LOG_FORMAT: "json" }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    const tail = out.slice(-6000);
    expect(code, tail).to.equal(0);
    // what the README promises, printed by the commands themselves
    expect(out, tail).to.match(/announced IPFS node \/ip4\/127\.0\.0\.1\/tcp\/\d+\/p2p\/\S+ on the PeerDirectory/);
    expect(out, tail).to.match(/job 1: committed segments 0\.\.2 with strategy skip:0\.3/);
    expect(out, tail).to.match(/job 2 \(Finalized\): provenance verified \(record 0x[0-9a-f]{64}, \d+ checks ok\)/);
    expect(out, tail).to.match(/\n {2}job 1: Refunded; provider 0x[0-9a-fA-F]{40} slashed [0-9.]+ of its lock/);
    expect(out, tail).to.match(/\n {2}job 2: Finalized; provider 0x[0-9a-fA-F]{40} paid [0-9.]+ \(unclaimed 0\), slashed 0\n/);
    expect(out, tail).to.match(/walkthrough: ok: the cheater slashed, the honest provider paid; wall time \d+ s/);
    // over IPFS only: no command was given a URL source or a peer by hand
    expect(out).to.not.match(/--source |--ipfs-peer /);
  });
});
