import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { heavyFirst } from "../helpers/file-order.ts";

describe("test/helpers/file-order: the heaviest test files go first in a parallel run", () => {
  const dir = mkdtempSync(join(tmpdir(), "pouw-file-order-"));
  const times = join(dir, "test-times.json");
  const files = ["a", "b", "c", "d", "e"].map((f) => join(dir, "test", `${f}.test.ts`));
  const helper = join(dir, "test", "helpers.ts");
  writeFileSync(
    times,
    JSON.stringify({
      mocha: {
        files: [
          { file: "test/a.test.ts", seconds: 1, cpuSeconds: 2 },
          { file: "test/b.test.ts", seconds: 90, cpuSeconds: 20 }, // waits more than it computes: wall counts
          { file: "test/c.test.ts", seconds: 10, cpuSeconds: 40 }, // worker threads: CPU above wall counts
          { file: "test/e.test.ts", seconds: 2, cpuSeconds: 1 },
        ],
      },
    }),
  );

  it("orders by the larger of wall and CPU seconds, a test file with no figures (new) first, a helper last, ties in their given order", () => {
    expect(heavyFirst([helper, ...files], dir, times).at(-1)).to.equal(helper);
    expect(heavyFirst(files, dir, times).map((f) => f.slice(dir.length + 6))).to.deep.equal(["d.test.ts", "b.test.ts", "c.test.ts", "a.test.ts", "e.test.ts"]);
    expect(heavyFirst([files[4]!, files[0]!], dir, times).map((f) => f.slice(dir.length + 6))).to.deep.equal(["e.test.ts", "a.test.ts"]);
  });

  it("keeps the given order without a times file, and names a malformed one", () => {
    expect(heavyFirst(files, dir, join(dir, "missing.json"))).to.deep.equal(files);
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{ nope");
    expect(() => heavyFirst(files, dir, bad)).to.throw(/bad\.json is not valid JSON/);
  });
});
