/**
 * npm run gpu:check — the WebGPU matmul (verifier/src/ml/webgpu) against the CPU reference on whatever adapter
 * Dawn finds: a real GPU on a machine that has one, SwiftShader (a CPU emulator) otherwise. Prints the adapter,
 * one row per product (bits equal or the first differing element; time on the adapter, the JS reference and
 * the wasm kernel) and a verdict:
 *   exit 0  PASS        every element of every product equals kernels/reference.ts matmulRef bit for bit
 *   exit 1  FAIL        some element differs (the row names it)
 *   exit 2  NO VERDICT  the adapter process died or errored before all products ran (none differed so far)
 *   exit 3  NO ADAPTER  Dawn found no adapter (set-up: docs/gpu.md)
 * Each group of products runs in its own child process, so a driver crash is reported as such, never as a pass.
 *
 *   node scripts/gpu-check.ts [--quick]      (--quick: the differential groups only, no realistic sizes)
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { WasmKernels } from "../verifier/src/ml/kernels/index.ts";
import { matmulRef, type MatmulLayout } from "../verifier/src/ml/kernels/reference.ts";
import { GpuMatmul, useSwiftShaderWhenNoIcd, WebGpuUnavailableError } from "../verifier/src/ml/webgpu/device.ts";
import { firstBitDifference, operands, rng, type InputKind } from "../verifier/src/ml/webgpu/operands.ts";

type Product = { name: string; M: number; K: number; N: number; layout: MatmulLayout; kind: InputKind; seed: number };
type Row = { name: string; shape: string; layout: MatmulLayout; kind: InputKind; diff: number; gpuMs: number; refMs: number; wasmMs: number };

const LAYOUTS: MatmulLayout[] = ["nn", "tn", "nt"];
const KINDS: InputKind[] = ["random", "wide", "adversarial", "cancel", "subnormal"];

/** Group g's products: groups 0..4 are the differential shapes of one input kind; group 5 the realistic sizes. */
function groups(): Product[][] {
  const out: Product[][] = KINDS.map((kind, g) => {
    const rand = rng(0x6c00 + g);
    return LAYOUTS.flatMap((layout) => [1, 47, 48, 49, 130].map((K, i) => ({
      name: `diff-${kind}`, M: 1 + Math.floor(rand() * 16), K, N: 1 + Math.floor(rand() * 16), layout, kind, seed: g * 100 + i,
    })));
  });
  // the mnist-fast step's products (batch 64, 784 pixels, 128 hidden, 10 classes) and one square size
  out.push([
    { name: "mnist fwd1 X.W1", M: 64, K: 784, N: 128, layout: "nn", kind: "random", seed: 1 },
    { name: "mnist bwdW1 X^T.dz1", M: 784, K: 64, N: 128, layout: "tn", kind: "random", seed: 2 },
    { name: "mnist bwdA1 dz2.W2^T", M: 64, K: 10, N: 128, layout: "nt", kind: "random", seed: 3 },
    { name: "square 256", M: 256, K: 256, N: 256, layout: "nn", kind: "wide", seed: 4 },
  ]);
  return out;
}

async function child(g: number): Promise<void> {
  useSwiftShaderWhenNoIcd();
  let gpu: GpuMatmul;
  try {
    gpu = await GpuMatmul.create();
  } catch (err) {
    if (err instanceof WebGpuUnavailableError) {
      console.log(JSON.stringify({ noAdapter: err.message }));
      process.exit(0);
    }
    throw err;
  }
  console.log(JSON.stringify({ adapter: gpu.info }));
  const wasm = new WasmKernels();
  for (const p of groups()[g]!) {
    const rand = rng(p.seed);
    const a = operands(p.M * p.K, p.kind, rand);
    const b = operands(p.K * p.N, p.kind, rand);
    let t = performance.now();
    const want = matmulRef(a, b, p.M, p.K, p.N, p.layout);
    const refMs = performance.now() - t;
    t = performance.now();
    wasm.matmul(a, b, p.M, p.K, p.N, p.layout);
    const wasmMs = performance.now() - t;
    t = performance.now();
    const got = new Float32Array((await gpu.matmulBits(new Uint32Array(a.buffer), new Uint32Array(b.buffer), p.M, p.K, p.N, p.layout)).buffer);
    const gpuMs = performance.now() - t;
    const row: Row = { name: p.name, shape: `${p.M}x${p.K}x${p.N}`, layout: p.layout, kind: p.kind, diff: firstBitDifference(want, got), gpuMs, refMs, wasmMs };
    console.log(JSON.stringify({ row }));
  }
  gpu.destroy();
}

function parent(quick: boolean): number {
  const self = fileURLToPath(import.meta.url);
  const all = groups();
  const count = quick ? all.length - 1 : all.length;
  const rows: Row[] = [];
  const died: string[] = [];
  let adapter: unknown = null;
  for (let g = 0; g < count; g++) {
    const r = spawnSync(process.execPath, [self, "--child", String(g)], { encoding: "utf8", timeout: 300_000 });
    for (const line of r.stdout.split("\n")) {
      if (!line.startsWith("{")) continue;
      const msg = JSON.parse(line) as { adapter?: unknown; noAdapter?: string; row?: Row };
      if (msg.noAdapter) {
        console.log(`NO ADAPTER: ${msg.noAdapter}`);
        return 3;
      }
      if (msg.adapter && !adapter) {
        adapter = msg.adapter;
        console.log(`adapter: ${JSON.stringify(adapter)}`);
      }
      if (msg.row) {
        rows.push(msg.row);
        const x = msg.row;
        console.log(`${x.diff === -1 ? "equal " : `DIFF@${x.diff}`}  ${x.name.padEnd(22)} ${x.shape.padEnd(12)} ${x.layout} ${x.kind.padEnd(11)} gpu ${x.gpuMs.toFixed(1).padStart(8)} ms  js-ref ${x.refMs.toFixed(1).padStart(7)} ms  wasm ${x.wasmMs.toFixed(1).padStart(7)} ms`);
      }
    }
    const expected = all[g]!.length;
    const got = rows.filter((x) => all[g]!.some((p) => p.name === x.name)).length;
    if (r.status !== 0 || got < expected) {
      const how = r.signal ? `signal ${r.signal}` : r.error ? r.error.message : `exit ${r.status}`;
      const tail = (r.stderr ?? "").split("\n").filter((l) => l && !l.includes("XDG_RUNTIME_DIR")).slice(-2).join(" | ");
      died.push(`group ${g} (${all[g]![0]!.name}): ${how} after ${got} of ${expected} products${tail ? `: ${tail}` : ""}`);
    }
  }
  const diffs = rows.filter((x) => x.diff !== -1);
  const sw = (adapter as { isSoftware?: boolean } | null)?.isSoftware;
  console.log(`\n${rows.length} products compared${sw ? " (software adapter: times are a CPU emulator's, not a GPU's)" : ""}`);
  for (const d of died) console.log(`died: ${d}`);
  if (diffs.length > 0) {
    console.log(`FAIL: ${diffs.length} products differ from the CPU reference`);
    return 1;
  }
  if (died.length > 0) {
    console.log("NO VERDICT: the adapter process died before every product ran; no product differed so far");
    return 2;
  }
  console.log("PASS: every element of every product equals the CPU reference bit for bit");
  return 0;
}

const argv = process.argv.slice(2);
if (argv[0] === "--child") await child(Number(argv[1]));
else process.exit(parent(argv.includes("--quick")));
