/**
 * Corpus content ids: the CID of the canonical bytes the loader reads matches the examples' manifests; a
 * corpus whose bytes differ (one byte) is refused with a CorpusMismatchError naming the corpus; an
 * unknown data set is an UnknownCorpusError; corpus proportions are validated.
 */
import { expect } from "chai";
import { runPouw } from "../cli/in-process.ts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  checkCorpusBytes,
  corpusBytes,
  corpusId,
  corpusProportions,
  corpusSpecOf,
  CorpusMismatchError,
  createRun,
  DataError,
  ManifestError,
  offlineSalt,
  parseDatasetName,
  parseManifest,
  UnknownCorpusError,
} from "../../verifier/src/ml/index.ts";
import { parseYears } from "../../verifier/src/cli/commands/corpus-run.ts";
import { loadMnist } from "../../verifier/src/ml/data/mnist.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const json = (name: string) => JSON.parse(readFileSync(join(ROOT, "examples", name), "utf8"));
/** `pouw ARGS` in-process through main(argv) (the corpus family's spawned smoke test is in test/e2e/market.test.ts). */
async function pouw(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const r = await runPouw(args);
  return { status: r.code, stdout: r.stdout, stderr: r.stderr };
}

describe("corpus content ids", function () {
  this.timeout(120_000);

  it("gives the content ids the example manifests name (mnist, sotu 1990-2021, sotu 2001)", () => {
    expect(corpusId({ dataset: "mnist" })).to.deep.equal({ contentId: json("tiny.json").corpora[0].contentId, bytes: 40 + 784 * 4 * 10_000, tokens: 10_000, tokenUnit: "images" });
    const sotu = json("sotu.json");
    const id = corpusId(corpusSpecOf(parseManifest(sotu)));
    expect(id.contentId).to.equal(sotu.corpora[0].contentId);
    expect(id.tokens).to.equal(sotu.corpora[0].declaredTokens);
    expect(corpusId({ dataset: "sotu", years: [2001, 2001] }).contentId).to.equal("bafkreibdr4cox2vam5jgegasxk7sf7i4aleffzt5jkbz5c2rpl3fqrsyey");
  });

  it("loadMnist builds each split once per process: same arguments give the same arrays, another seed another split over the same canonical bytes", () => {
    const a = loadMnist("mnist", 7, 5);
    expect(loadMnist("mnist", 7, 5)).to.equal(a);
    const b = loadMnist("mnist", 8, 5);
    expect(b).to.not.equal(a);
    expect(b.canonicalBytes).to.equal(a.canonicalBytes);
    expect(b.train.count).to.equal(a.train.count);
    // a different permutation per seed: the first training rows differ (each digit's first image is drawn anew)
    expect(Buffer.from(b.train.images.buffer, 0, 784 * 4 * 20).equals(Buffer.from(a.train.images.buffer, 0, 784 * 4 * 20))).to.equal(false);
    const c = loadMnist("mnist", 7, 6);
    expect(c.test.count).to.equal(60);
    expect(c.canonicalBytes).to.equal(a.canonicalBytes);
    expect(corpusId({ dataset: "mnist" }).contentId).to.equal(json("tiny.json").corpora[0].contentId);
  });

  it("refuses corpus bytes with one changed byte, naming the corpus", () => {
    const { bytes } = corpusBytes({ dataset: "sotu", years: [2001, 2001] });
    const corpus = { name: "sotu-2001", contentId: "bafkreibdr4cox2vam5jgegasxk7sf7i4aleffzt5jkbz5c2rpl3fqrsyey" };
    expect(() => checkCorpusBytes(corpus, bytes, "test")).not.to.throw();
    const tampered = Uint8Array.from(bytes);
    tampered[100] = tampered[100]! ^ 0x20;
    let err: unknown;
    try {
      checkCorpusBytes(corpus, tampered, "a tampered copy");
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(CorpusMismatchError);
    expect(err).to.be.instanceOf(DataError);
    const e = err as CorpusMismatchError;
    expect(e.corpus).to.equal("sotu-2001");
    expect(e.expected).to.equal(corpus.contentId);
    expect(e.actual).to.match(/^bafkrei/).and.not.equal(corpus.contentId);
    expect(e.shortMessage).to.match(/^corpus 'sotu-2001' content id mismatch: manifest says bafkrei\w+, a tampered copy gives bafkrei\w+$/);
  });

  it("the provider's loader refuses a manifest whose corpus id is not the package's bytes", async () => {
    const tiny = json("tiny.json");
    const m = parseManifest({ ...tiny, corpora: [{ ...tiny.corpora[0], name: "digits-claimed", contentId: "bafkreibdr4cox2vam5jgegasxk7sf7i4aleffzt5jkbz5c2rpl3fqrsyey" }] });
    const err = await createRun(m, { jobId: 0n, salt: offlineSalt(0n) }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(CorpusMismatchError);
    expect((err as CorpusMismatchError).corpus).to.equal("digits-claimed");
    expect((err as CorpusMismatchError).actual).to.equal(tiny.corpora[0].contentId);
  });

  it("an unknown data set is an UnknownCorpusError; pouw corpus id exits 2 on it and prints ids otherwise", async () => {
    expect(() => parseDatasetName("cifar10")).to.throw(UnknownCorpusError, /unknown data set "cifar10": known data sets are mnist, sotu/);
    expect(() => parseDatasetName("__proto__")).to.throw(UnknownCorpusError);
    // one at a time: runPouw captures this process's stdout
    const bad = await pouw(["corpus", "id", "--dataset", "cifar10"]);
    const ok = await pouw(["corpus", "id", "--dataset", "sotu", "--years", "2001"]);
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.equal('pouw: unknown data set "cifar10": known data sets are mnist, sotu\n');
    expect(() => parseYears("2021-1990")).to.throw(InputError, /first year is after last year/);
    expect(() => parseYears("90s")).to.throw(InputError, /--years must be YEAR or FIRST-LAST/);
    expect(ok.status, ok.stderr).to.equal(0);
    expect(ok.stdout).to.equal("bafkreibdr4cox2vam5jgegasxk7sf7i4aleffzt5jkbz5c2rpl3fqrsyey\n");
  });

  it("validates corpus proportions and derives them from declared tokens", () => {
    const tiny = json("tiny.json");
    const c = tiny.corpora[0];
    expect(parseManifest({ ...tiny, corpora: [{ ...c, proportion: 1 }] }).corpora[0]!.proportion).to.equal(1);
    expect(() => parseManifest({ ...tiny, corpora: [{ ...c, proportion: 0.5 }] })).to.throw(ManifestError, /manifest field corpora: proportions sum to 0.5, not 1/);
    expect(() => parseManifest({ ...tiny, corpora: [{ ...c, proportion: 0 }] })).to.throw(ManifestError, /corpora.0.proportion/);
    expect(corpusProportions([{ declaredTokens: 300 }, { declaredTokens: 100 }])).to.deep.equal([0.75, 0.25]);
    expect(corpusProportions([{ declaredTokens: 300, proportion: 0.4 }, { declaredTokens: 100, proportion: 0.6 }])).to.deep.equal([0.4, 0.6]);
  });
});
