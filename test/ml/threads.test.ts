import { expect } from "chai";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../../verifier/src/errors/index.ts";
import { jsKernels, matmulRef, ThreadedKernels, WasmKernels, type MatmulLayout } from "../../verifier/src/ml/kernels/index.ts";
import { createRun, offlineSalt, parseManifest, readTraceFile, type Run } from "../../verifier/src/ml/index.ts";
import { parseThreads } from "../../verifier/src/ml/engines.ts";
import { runPouw } from "../cli/in-process.ts";
import { exampleJson, ROOT, tempDir } from "./helpers.ts";
import fixed from "./tiny-keccak-vectors.json" with { type: "json" };

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const randF32 = (n: number, rand: () => number) => Float32Array.from({ length: n }, () => (rand() * 2 - 1) * 2 ** Math.floor(rand() * 16 - 8));
const bits = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
const SIZES = [1, 2, 3, 7, 47, 48, 49, 97, 129];

function hashes(run: Run, steps: number): string[] {
  let state = run.initState();
  const out = [run.stateHashOf(state)];
  for (let t = 1; t <= steps; t++) {
    state = run.step(state, t).state;
    out.push(run.stateHashOf(state));
  }
  return out;
}

describe("ml/kernels/threads: matmul split by output rows across worker threads changes no bit", () => {
  const pools: ThreadedKernels[] = [];
  after(async () => Promise.all(pools.map((p) => p.close())));
  const pool = (threads: number, base = new WasmKernels()) => {
    const p = new ThreadedKernels(threads, base, { minMacs: 0 });
    pools.push(p);
    return p;
  };

  for (const threads of [2, 3]) {
    it(`${threads} threads equal the JS reference on random shapes (odd sizes, block edges 47/48/49) in all three layouts`, () => {
      const k = pool(threads);
      const rand = rng(threads);
      for (let trial = 0; trial < 45; trial++) {
        const [M, K, N] = [0, 1, 2].map(() => SIZES[Math.floor(rand() * SIZES.length)]!) as [number, number, number];
        const layout = (["nn", "tn", "nt"] as MatmulLayout[])[trial % 3]!;
        const a = randF32(M * K, rand), b = randF32(K * N, rand);
        expect(bits(k.matmul(a, b, M, K, N, layout)).equals(bits(matmulRef(a, b, M, K, N, layout))), `${M}x${K}x${N} ${layout}`).to.equal(true);
      }
      // every product with M >= 2 went to the workers (M = 1 has one row: nothing to split)
      expect(k.dispatched).to.be.greaterThan(20);
    });
  }

  it("runs the JS reference kernels on the workers when the base is the JS reference", () => {
    const k = pool(2, jsKernels as never);
    const rand = rng(9);
    const a = randF32(9 * 50, rand), b = randF32(50 * 7, rand);
    expect(bits(k.matmul(a, b, 9, 50, 7, "nn")).equals(bits(matmulRef(a, b, 9, 50, 7)))).to.equal(true);
    expect(k.name).to.equal("js x2 threads");
  });

  it("examples/tiny.json on 2 threads (every product split) gives the fixed state hashes of one thread", async () => {
    const m = parseManifest(exampleJson("tiny.json"));
    const run = await createRun(m, { jobId: 0n, salt: offlineSalt(0n), kernels: pool(2) });
    expect(hashes(run, 12)).to.deep.equal(fixed.stateHashes);
    expect((run.kernels as ThreadedKernels).dispatched).to.be.greaterThan(12);
  });

  it("examples/mnist.json (784-128-10, batch 64): 4 steps on 2 threads (createRun threads) equal 1 thread", async function () {
    this.timeout(120_000);
    const m = parseManifest(exampleJson("mnist.json"));
    const one = await createRun(m, { jobId: 3n, salt: offlineSalt(3n) });
    const two = await createRun(m, { jobId: 3n, salt: offlineSalt(3n), threads: 2 });
    try {
      expect(two.threads).to.equal(2);
      expect(hashes(two, 4)).to.deep.equal(hashes(one, 4));
      expect((two.kernels as ThreadedKernels).dispatched, "the two large products of each step were split").to.be.at.least(8);
    } finally {
      await two.close();
    }
  });

  it("refuses bad thread counts, and threads on an engine other than pouw, with InputError", async () => {
    expect(parseThreads(undefined, "cpu")).to.equal(1);
    expect(parseThreads("4", "pouw")).to.equal(4);
    for (const bad of ["0", "-1", "1.5", "x", "65"]) expect(() => parseThreads(bad, "pouw"), bad).to.throw(InputError, /--threads must be an integer in \[1, 64\]/);
    expect(() => parseThreads("2", "cpu")).to.throw(InputError, /only the pouw engine runs on threads/);
    const m = parseManifest(exampleJson("tiny.json"));
    let err: unknown;
    try {
      await createRun(m, { jobId: 0n, salt: offlineSalt(0n), backend: "cpu", threads: 2 });
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(InputError);
    expect(() => new ThreadedKernels(0, new WasmKernels())).to.throw(RangeError);
  });

  describe("pouw train --threads", () => {
    let dir: string;
    before(async () => (dir = await tempDir("threads")));
    after(async () => rm(dir, { recursive: true, force: true }));
    const manifest = join(ROOT, "examples/tiny.json");

    it("trains examples/tiny.json on 2 threads to the fixed state hashes and says so in the summary", async () => {
      const out = join(dir, "t2");
      const r = await runPouw(["train", "--manifest", manifest, "--out", out, "--threads", "2"]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.contain("engine pouw (2 threads)");
      expect((await readTraceFile(join(out, "trace.json"))).stateHashes).to.deep.equal(fixed.stateHashes);
    });

    it("refuses --threads 0 and --threads 2 --engine cpu with exit 2 before writing anything", async () => {
      for (const [args, re] of [[["--threads", "0"], /^pouw: --threads must be an integer/], [["--threads", "2", "--engine", "cpu"], /^pouw: --threads 2: only the pouw engine/]] as const) {
        const out = join(dir, "bad");
        const r = await runPouw(["train", "--manifest", manifest, "--out", out, ...args]);
        expect(r.code).to.equal(2);
        expect(r.stderr).to.match(re);
        expect(existsSync(out)).to.equal(false);
      }
    });
  });
});
