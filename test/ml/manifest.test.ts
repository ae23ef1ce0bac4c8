import { expect } from "chai";
import { canonicalManifest, manifestHash, ManifestError, parseManifest, parseManifestJson } from "../../verifier/src/ml/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";
import { exampleJson } from "./helpers.ts";

/** Deep copy of the tiny manifest with one field changed (path like "training.batchSize"). */
function tinyWith(path: string, value: unknown): Record<string, unknown> {
  const m = structuredClone(exampleJson("tiny.json"));
  const keys = path.split(".");
  let o = m as Record<string, unknown>;
  for (const k of keys.slice(0, -1)) o = o[k] as Record<string, unknown>;
  if (value === undefined) delete o[keys[keys.length - 1]!];
  else o[keys[keys.length - 1]!] = value;
  return m;
}

function errorOf(value: unknown): ManifestError {
  try {
    parseManifest(value);
  } catch (err) {
    expect(err).to.be.instanceOf(ManifestError);
    return err as ManifestError;
  }
  throw new Error("manifest was accepted");
}

const CID = "bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku";

describe("ml/manifest: schema, canonical JSON and manifestHash", () => {
  it("accepts every example manifest", () => {
    for (const name of ["tiny.json", "mnist.json", "sotu.json"]) parseManifest(exampleJson(name));
  });

  it("accepts a fine-tuning init with optimizerState \"fresh\", and the field is part of the hash", () => {
    const m = parseManifest(tinyWith("init", { checkpointCid: CID, optimizerState: "fresh" }));
    expect(m.init).to.deep.equal({ checkpointCid: CID, optimizerState: "fresh" });
    expect(canonicalManifest(m)).to.contain('"init":{"checkpointCid":"' + CID + '","optimizerState":"fresh"}');
  });

  it("hashes the canonical JSON: key order and whitespace do not matter, defaults are filled in", () => {
    const m = exampleJson("tiny.json");
    const reordered = Object.fromEntries(Object.entries(m).reverse());
    const h = manifestHash(parseManifest(m));
    expect(manifestHash(parseManifestJson(JSON.stringify(reordered, null, 4)))).to.equal(h);
    // adam's beta1 default written out explicitly gives the same manifest
    expect(manifestHash(parseManifest(tinyWith("optimizer.beta1", 0.9)))).to.equal(h);
    expect(canonicalManifest(parseManifest(m))).to.contain('"beta1":0.9');
    expect(h).to.match(/^0x[0-9a-f]{64}$/);
  });

  it("changes the hash when any content changes", () => {
    const h = manifestHash(parseManifest(exampleJson("tiny.json")));
    expect(manifestHash(parseManifest(tinyWith("data.seed", 8)))).to.not.equal(h);
    expect(manifestHash(parseManifest(tinyWith("optimizer.lr", 0.011)))).to.not.equal(h);
  });

  const cases: [string, unknown, string][] = [
    ["training.batchSize", -1, "manifest field training.batchSize"],
    ["training.steps", 13, "manifest field training.steps: must be a multiple of training.stepsPerSegment"],
    ["model.arch", "resnet", "manifest field model.arch"],
    ["optimizer.lr", "fast", "manifest field optimizer.lr"],
    ["corpora.0.contentId", "QmNotACidV1", "manifest field corpora.0.contentId"],
    ["corpora.0.payoutAddress", "0x12", "manifest field corpora.0.payoutAddress"],
    ["data.testPerDigit", undefined, "manifest field data.testPerDigit: is required for mnist-mlp"],
    ["numerics", "approximate", "manifest field numerics"],
    ["policy.minTier", 5, "manifest field policy.minTier"],
    ["init", { seed: 1, checkpointCid: "x" }, "manifest field init"],
    // the fine-tuning form before init.optimizerState carried the base's Adam state into h(0): refused, not reinterpreted
    ["init", { checkpointCid: CID }, 'manifest field init.optimizerState: is required with init.checkpointCid and must be "fresh"'],
    ["init", { checkpointCid: CID, optimizerState: "base" }, 'manifest field init.optimizerState: must be "fresh"'],
    ["init", {}, "manifest field init.seed"],
    ["version", 1, "manifest field version: 1 is the unsalted data order of the engine before job salts; this engine trains version 2"],
    ["version", 3, "manifest field version: must be 2"],
  ];
  for (const [path, value, message] of cases) {
    it(`names the field in a one-line error: ${path} = ${JSON.stringify(value)}`, () => {
      const err = errorOf(tinyWith(path, value));
      expect(err.shortMessage).to.contain(message);
      expect(err.shortMessage).to.not.contain("\n");
      expect(err).to.be.instanceOf(InputError);
    });
  }

  it("rejects unknown keys, naming them", () => {
    const err = errorOf(tinyWith("training.epochs", 3));
    expect(err.shortMessage).to.equal('manifest field training: unknown key(s) "epochs"');
  });

  it("rejects invalid JSON with a ManifestError", () => {
    expect(() => parseManifestJson("{")).to.throw(ManifestError, /not valid JSON/);
  });

  it("requires dModel divisible by heads for char-transformer", () => {
    const m = structuredClone(exampleJson("sotu.json"));
    (m.model as Record<string, unknown>).heads = 3;
    expect(errorOf(m).shortMessage).to.contain("manifest field model.heads: must divide model.dModel");
  });
});
