/**
 * `npm run workloads` (scripts/workloads.ts) as a test, at the script's own sizes (tiny models, 8 steps per job): the
 * buyer's text by CID, a base GPT on SOTU, a LoRA adapter on it, a student distilled from the merged model; the
 * skip-teacher taker of the student job is challenged at step 1 and slashed, the three others are paid, and every
 * provenance link (data CID -> base -> adapter -> student) holds. 31 to 65 s here, depending on the load.
 */
import { expect } from "chai";
import { join } from "node:path";
import { runWorkloads } from "../../scripts/workloads.ts";
import { tempDir } from "../ml/helpers.ts";

describe("npm run workloads: data by CID, base, adapter, distilled student through the market", function () {
  this.timeout(600_000);

  it("one cheater slashed, three providers paid, the provenance chain verified", async () => {
    const lines: string[] = [];
    const r = await runWorkloads({ outDir: join(await tempDir("workloads"), "out"), say: (l) => lines.push(l) });
    const out = lines.join("\n");
    expect(r.failures, out).to.deep.equal([]);
    expect(r.code).to.equal(0);
    expect(out).to.match(/job 3: Refunded; P4 \(skip-teacher\) slashed (\S+) of its lock of \1;/);
    expect(out).to.match(/job 3: challenged at step 1 \(dispute 1: PanelFault\)/);
    for (const job of [1, 2, 4]) expect(out).to.match(new RegExp(`job ${job}: Finalized; P\\d paid 0\\.5 \\(claimed\\), slashed 0`));
    expect(out.match(/^ {2}ok {3}/gm)).to.have.length(5);
  });
});
