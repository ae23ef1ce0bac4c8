/**
 * The pieces of `npm run workloads` (scripts/workloads.ts) without the market: the buyer's text and the SOTU years
 * published by CID in one 30-symbol vocabulary, then the script's own three manifests chained offline exactly as the
 * market run chains them: the base trained on SOTU, the LoRA adapter on the base's final weights CID, the merge as the
 * teacher CID, the student distilled from it; the student's trace audits bit for bit against the teacher by CID.
 * The whole run through the market (posting, bots, the skip-teacher cheater slashed, three providers paid, the
 * provenance chain verified on chain) is `npm run workloads`, a README test command of its own (.ci/run runs it).
 */
import { expect } from "chai";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ALPHABET, MODEL, publishWorkloadData, workloadManifests } from "../../scripts/workloads.ts";
import { runPouw } from "../helpers/cli.ts";
import { tempDir } from "../ml/helpers.ts";
import { mergeCheckpoint } from "../../verifier/src/ml/adapters/index.ts";
import { createRun, offlineSalt, train, type Manifest } from "../../verifier/src/ml/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";

describe("npm run workloads, its pieces offline: data by CID, base, adapter, merged teacher, distilled student", function () {
  this.timeout(600_000);

  it("the script's data and manifests chain base -> adapter -> teacher -> student, and the student audits bit for bit", async () => {
    const dir = await tempDir("workloads-pieces");
    const store = new LocalDirStore(join(dir, "store"));
    const { sotu, mine } = await publishWorkloadData(dir, store);
    expect(sotu.schema.vocabulary).to.have.length(ALPHABET.length);
    expect(mine.schema.vocabulary).to.deep.equal(sotu.schema.vocabulary);
    expect(sotu.cid).to.not.equal(mine.cid);

    /** One job of the script trained offline (job 0, honest); its final checkpoint is put into the shared store. */
    const run = async (label: string, manifest: Manifest) => {
      const out = join(dir, label);
      const { trace } = await train(await createRun(manifest, { jobId: 0n, salt: offlineSalt(0n), store }), { outDir: out, strategy: { kind: "honest" }, evaluate: false });
      const bytes = await new LocalDirStore(join(out, "store")).get(trace.finalCheckpointCid);
      expect(await store.put(bytes)).to.equal(trace.finalCheckpointCid);
      return { out, cid: trace.finalCheckpointCid, bytes, steps: trace.stateHashes.length - 1 };
    };
    const baseManifest = workloadManifests.base(sotu);
    expect(baseManifest.corpora[0]!.contentId).to.equal(sotu.cid);
    const base = await run("base", baseManifest);
    const adapterManifest = workloadManifests.adapter(mine, base.cid);
    expect(adapterManifest.corpora[0]!.contentId).to.equal(mine.cid);
    const adapter = await run("adapter", adapterManifest);
    // the teacher is the buyer's merge of the adapter into the base (what the script publishes), of the base's arch
    const teacher = mergeCheckpoint(adapterManifest, base.bytes, adapter.bytes);
    const teacherCid = await store.put(teacher.bytes);
    const studentManifest = workloadManifests.student(mine, teacherCid);
    expect(studentManifest.distill?.teacher.arch).to.deep.include({ dModel: MODEL.dModel, vocab: ALPHABET.length });
    const student = await run("student", studentManifest);
    expect([base.steps, adapter.steps, student.steps]).to.deep.equal([8, 8, 8]);

    const manifestPath = join(dir, "student.json");
    await writeFile(manifestPath, JSON.stringify(studentManifest));
    const a = await runPouw(["audit", "--trace", student.out, "--manifest", manifestPath, "--data-store", store.dir, "--segments", "all"]);
    expect(a.code, a.stdout + a.stderr).to.equal(0);
    expect(a.stdout).to.match(/all 2 audited segments ok/);
  });
});
