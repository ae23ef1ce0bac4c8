/**
 * The shape rules of verifier/src that docs/architecture.md states ("Size and shape", "The rules"), checked on the
 * sources as they are: no file over 500 lines (the generated ABIs excepted), no import circle (static imports, type
 * imports included: a circle of types is still two files a reader must read together), bot/ and dispute/ reach the
 * training engine only through checks/ (no import from ml/), checks/ touches no chain and no bot, and market/ imports
 * nothing from cli/. Static text only: nothing is loaded or run.
 */
import { expect } from "chai";
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "verifier/src");
const MAX_LINES = 500;

/** Every .ts file under `dir`, absolute. */
function tsFiles(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).map((f) => join(dir, f));
}

// NOTE: the `import ... from "x"` / `export ... from "x"` / `import "x"` forms the sources use; dynamic import() is
// not a load-time edge, so it is not read here.
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s+)?["']([^"']+)["']/gm;

/** The relative static imports of each file in `files`, resolved to absolute paths within `files`. */
function importGraph(files: readonly string[], read: (f: string) => string = (f) => readFileSync(f, "utf8")): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const deps: string[] = [];
    for (const m of read(f).matchAll(STATIC_IMPORT)) {
      const spec = m[1]!;
      if (!spec.startsWith(".")) continue;
      const target = resolve(dirname(f), spec);
      if (known.has(target)) deps.push(target);
    }
    graph.set(f, deps);
  }
  return graph;
}

/** The import circles of `graph`: each strongly connected component of more than one file (or a file importing itself). */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's algorithm, iterative (no recursion-depth limit to think about)
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { v: string; i: number }[] = [{ v: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work.at(-1)!;
      const deps = graph.get(top.v) ?? [];
      if (top.i < deps.length) {
        const w = deps[top.i++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ v: w, i: 0 });
        } else if (onStack.has(w)) low.set(top.v, Math.min(low.get(top.v)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length > 0) low.set(work.at(-1)!.v, Math.min(low.get(work.at(-1)!.v)!, low.get(top.v)!));
      if (low.get(top.v) === index.get(top.v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== top.v);
        if (scc.length > 1 || (graph.get(top.v) ?? []).includes(top.v)) circles.push(scc.sort());
      }
    }
  }
  return circles;
}

describe("verifier/src layering: file size, import circles, which folder may import which", () => {
  const files = tsFiles(SRC);
  const rel = (f: string) => relative(ROOT, f);

  it("finds a circle when there is one (the check itself)", () => {
    const src: Record<string, string> = {
      "/s/a.ts": 'import { b } from "./b.ts";\n',
      "/s/b.ts": 'import type { C } from "./c/c.ts";\n',
      "/s/c/c.ts": 'export { a } from "../a.ts";\n',
      "/s/d.ts": 'import { a } from "./a.ts";\nconst later = () => import("./d.ts");\n',
    };
    const circles = importCircles(importGraph(Object.keys(src), (f) => src[f]!));
    expect(circles).to.deep.equal([["/s/a.ts", "/s/b.ts", "/s/c/c.ts"]]);
    expect(importCircles(importGraph(["/s/a.ts", "/s/b.ts"], (f) => src[f]!))).to.deep.equal([]);
  });

  it(`no file over ${MAX_LINES} lines except the generated ABIs (chain/abi/)`, () => {
    const over = files
      .filter((f) => !rel(f).startsWith("verifier/src/chain/abi/"))
      .map((f) => ({ file: rel(f), lines: readFileSync(f, "utf8").split("\n").length - 1 }))
      .filter((x) => x.lines > MAX_LINES);
    expect(over, "split these along a real seam (docs/architecture.md)").to.deep.equal([]);
  });

  it("no import circle among verifier/src's static imports", () => {
    const circles = importCircles(importGraph(files)).map((c) => c.map(rel));
    expect(circles).to.deep.equal([]);
  });

  /** Every static import from a file under one of `from` to a file under one of `to` (folders of verifier/src). */
  const imports = (from: readonly string[], to: readonly string[]): string[] => {
    const under = (f: string, dirs: readonly string[]) => dirs.some((d) => f.startsWith(join(SRC, d) + "/"));
    return [...importGraph(files)].filter(([f]) => under(f, from)).flatMap(([f, deps]) => deps.filter((d) => under(d, to)).map((d) => `${rel(f)} -> ${rel(d)}`));
  };

  it("bot/ and dispute/ import nothing from ml/ (they audit through checks/)", () => {
    expect(imports(["bot", "dispute"], ["ml"])).to.deep.equal([]);
  });

  it("checks/ imports nothing from chain/ or bot/, and market/ nothing from cli/", () => {
    expect(imports(["checks"], ["chain", "bot"]), "checks/ touches no chain and no bot state").to.deep.equal([]);
    expect(imports(["market"], ["cli"]), "shared flows live in market/, commands only call them").to.deep.equal([]);
  });
});
