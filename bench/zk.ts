/**
 * ZK step-proof benchmark (`npm run bench:zk`): constraint count of circuits/step.circom, Groth16 proving
 * time (median of several proofs of random tiles, committed artifacts), off-chain verification time and
 * on-chain verification gas of the generated StepVerifier on the in-process network.
 * Writes bench/results/zk.json and prints a table. Targets: proving <= 10 s on 2 cores,
 * verification about 240k gas.
 *
 * Proving time vs circuit size: smaller LinearStep tiles compiled from the same source (only the `component
 * main` line differs) with a throw-away local setup here (one powers of tau of 2^SIZE_POWER, no contribution worth
 * anything: proving time does not depend on the setup's secrecy), each proven RUNS_SMALL times, plus the committed
 * 8x4x8 circuit above; a least-squares line ms = a + b * constraints over them gives the largest tile provable in 10 s
 * (an extrapolation past the largest measured size: say so). Skip with --no-sizes.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { network } from "hardhat";
import * as snarkjs from "snarkjs";
import { encodeFunctionData } from "viem";
import { proveStep, releaseProver, stepVerifierAbi, toFixed, verifyStep, STEP_PARAMS } from "../verifier/src/zk/index.ts";
import { randomTile } from "../test/zk/helpers.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const RUNS = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

// Constraint count of the committed r1cs (circuits/keys, checked against the source by npm run zk:check), else a fresh compile.
const r1cs = existsSync(join(ROOT, "circuits/keys/step.r1cs")) ? join(ROOT, "circuits/keys/step.r1cs") : join(ROOT, "circuits/build/step.r1cs");
if (!existsSync(r1cs)) {
  mkdirSync(join(ROOT, "circuits/build"), { recursive: true });
  execFileSync(join(ROOT, "node_modules/.bin/circom2"), ["circuits/step.circom", "-l", "node_modules", "--O2", "--r1cs", "-o", "circuits/build"], {
    cwd: ROOT,
    stdio: "ignore",
  });
}
const info = await snarkjs.r1cs.info(r1cs);

// Proving: one warm-up proof (worker start-up, wasm compile), then RUNS timed proofs of distinct tiles.
const lr = toFixed(0.05);
await proveStep(randomTile(100, 65536, lr));
const proveMs: number[] = [];
const verifyMs: number[] = [];
let last: Awaited<ReturnType<typeof proveStep>> | undefined;
for (let r = 0; r < RUNS; r++) {
  const t0 = performance.now();
  last = await proveStep(randomTile(101 + r, 65536, lr));
  proveMs.push(performance.now() - t0);
  const t1 = performance.now();
  if (!(await verifyStep(last.proof, last.publicSignals))) throw new Error("a fresh proof did not verify");
  verifyMs.push(performance.now() - t1);
}
await releaseProver();

// Gas: estimateGas of a verifyProof call (whole transaction: 21k base + calldata + pairing checks),
// and a mined transaction's receipt as a cross-check.
const { viem } = await network.create();
const { address } = await viem.deployContract("contracts/verifiers/StepVerifier.sol:Groth16Verifier");
const [wallet] = await viem.getWalletClients();
const publicClient = await viem.getPublicClient();
const args = last!.calldata;
const data = encodeFunctionData({ abi: stepVerifierAbi, functionName: "verifyProof", args });
if (!(await publicClient.readContract({ address, abi: stepVerifierAbi, functionName: "verifyProof", args }))) {
  throw new Error("the proof did not verify on chain");
}
const estimateGas = await publicClient.estimateGas({ account: wallet!.account, to: address, data });
const hash = await wallet!.sendTransaction({ to: address, data });
const receipt = await publicClient.waitForTransactionReceipt({ hash });

// ---------------------------------------------------------------- proving time vs circuit size
const SIZE_POWER = 12;
const RUNS_SMALL = 3;
type Size = { shape: string; inputs: number; outputs: number; batch: number; constraints: number; medianMs: number; setup: "local (bench)" | "committed" };
const sizes: Size[] = [];
if (!process.argv.includes("--no-sizes")) {
  const source = readFileSync(join(ROOT, "circuits/step.circom"), "utf8");
  const dir = join(ROOT, "circuits/build/sizes");
  mkdirSync(dir, { recursive: true });
  const ptau = join(ROOT, `circuits/build/ptau/bench_pot${SIZE_POWER}.ptau`);
  if (!existsSync(ptau)) {
    mkdirSync(dirname(ptau), { recursive: true });
    const curve = await snarkjs.curves.getCurveFromName("bn128");
    const p0 = `${ptau}.0`;
    await snarkjs.powersOfTau.newAccumulator(curve, SIZE_POWER, p0);
    await snarkjs.powersOfTau.preparePhase2(p0, ptau);
  }
  // NOTE: circom2 (WASI) opens includes only under its working directory, so circomlib is copied next to the sizes
  // (a worktree's node_modules may be a link to elsewhere)
  const lib = join(ROOT, "circuits/build/lib");
  if (!existsSync(join(lib, "circomlib/circuits"))) cpSync(realpathSync(join(ROOT, "node_modules/circomlib/circuits")), join(lib, "circomlib/circuits"), { recursive: true });
  const lrSmall = toFixed(0.05);
  for (const [IN, OUT, LOG2B] of [
    [2, 2, 1],
    [4, 2, 1],
    [4, 4, 1],
  ] as const) {
    const B = 1 << LOG2B;
    const name = `step_${IN}x${OUT}x${B}`;
    const file = join(dir, `${name}.circom`);
    writeFileSync(file, source.replace(/component main[^\n]*/, `component main {public [lr]} = LinearStep(${IN}, ${OUT}, ${B}, ${LOG2B}, 16, 32);`));
    execFileSync(join(ROOT, "node_modules/.bin/circom2"), [relative(ROOT, file), "-l", relative(ROOT, lib), "--O2", "--r1cs", "--wasm", "-o", relative(ROOT, dir)], { cwd: ROOT, stdio: "ignore" });
    const r1csFile = join(dir, `${name}.r1cs`);
    const constraints = (await snarkjs.r1cs.info(r1csFile)).nConstraints;
    const zkey = join(dir, `${name}.zkey`);
    await snarkjs.zKey.newZKey(r1csFile, ptau, zkey);
    const wasm = join(dir, `${name}_js/${name}.wasm`);
    const ms: number[] = [];
    for (let r = 0; r <= RUNS_SMALL; r++) {
      const input = smallTileInput(IN, OUT, B, LOG2B, lrSmall, 200 + r);
      const t0 = performance.now();
      await snarkjs.groth16.fullProve(input, wasm, zkey);
      if (r > 0) ms.push(performance.now() - t0); // run 0 warms the workers up
    }
    sizes.push({ shape: `${IN}x${OUT}, B=${B}`, inputs: IN, outputs: OUT, batch: B, constraints, medianMs: Math.round(median(ms)), setup: "local (bench)" });
  }
  await releaseProver();
  sizes.push({ shape: "8x4, B=8", inputs: 8, outputs: 4, batch: 8, constraints: info.nConstraints, medianMs: Math.round(median(proveMs)), setup: "committed" });
}
// least squares ms = a + b * constraints; the largest constraint count within 10 s
const fit = (() => {
  if (sizes.length < 2) return undefined;
  const n = sizes.length;
  const mx = sizes.reduce((s, x) => s + x.constraints, 0) / n;
  const my = sizes.reduce((s, x) => s + x.medianMs, 0) / n;
  const b = sizes.reduce((s, x) => s + (x.constraints - mx) * (x.medianMs - my), 0) / sizes.reduce((s, x) => s + (x.constraints - mx) ** 2, 0);
  const a = my - b * mx;
  return { msFixed: Math.round(a), msPerConstraint: b, constraintsAt10s: Math.floor((10_000 - a) / b), extrapolated: (10_000 - a) / b > Math.max(...sizes.map((x) => x.constraints)) };
})();

const results = {
  circuit: "circuits/step.circom LinearStep(8, 4, 8, 3, 16, 32)",
  params: STEP_PARAMS,
  constraints: info.nConstraints,
  publicSignals: info.nOutputs + info.nPubInputs,
  privateInputs: info.nPrvInputs,
  proving: { runs: RUNS, medianMs: Math.round(median(proveMs)), minMs: Math.round(Math.min(...proveMs)), maxMs: Math.round(Math.max(...proveMs)) },
  verifyOffChainMedianMs: Math.round(median(verifyMs)),
  verifyGas: { estimateGas: Number(estimateGas), receiptGasUsed: Number(receipt.gasUsed) },
  provingVsSize: { sizes, fit },
  targets: { provingMs: 10_000, verifyGas: 240_000 },
  machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", node: process.version },
  date: new Date().toISOString(),
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results/zk.json"), `${JSON.stringify(results, null, 2)}\n`);

const rows: [string, string, string][] = [
  ["constraints", String(results.constraints), "< 16384 (2^14)"],
  ["public signals", String(results.publicSignals), "few"],
  [`proving, median of ${RUNS}`, `${results.proving.medianMs} ms (min ${results.proving.minMs}, max ${results.proving.maxMs})`, "<= 10000 ms"],
  ["verify off chain, median", `${results.verifyOffChainMedianMs} ms`, ""],
  ["verify on chain (estimateGas)", String(results.verifyGas.estimateGas), "~240000"],
  ["verify on chain (receipt gasUsed)", String(results.verifyGas.receiptGasUsed), "~240000"],
];
const w0 = Math.max(...rows.map((r) => r[0].length));
const w1 = Math.max(...rows.map((r) => r[1].length));
console.log(`ZK step proof benchmark (${results.machine.cores} cores, ${results.machine.cpu}, node ${results.machine.node})`);
for (const [a, b, c] of rows) console.log(`  ${a.padEnd(w0)}  ${b.padEnd(w1)}  ${c}`);
if (sizes.length > 0) {
  console.log("  proving time vs circuit size (median; upper bounds on a loaded machine):");
  for (const s of sizes) console.log(`    ${s.shape.padEnd(10)}  ${String(s.constraints).padStart(6)} constraints  ${String(s.medianMs).padStart(6)} ms  (${s.setup} setup)`);
  if (fit) console.log(`    fit: ${fit.msFixed} ms + ${fit.msPerConstraint.toFixed(3)} ms/constraint -> ${fit.constraintsAt10s} constraints in 10 s (${fit.extrapolated ? "extrapolated" : "interpolated"})`);
}
console.log("written bench/results/zk.json");

/** A valid witness input of LinearStep(IN, OUT, B, LOG2B, 16, 32): small random W, X in [0, 1], Y bits, W' by the exact step. */
function smallTileInput(IN: number, OUT: number, B: number, LOG2B: number, lr: bigint, seed: number): Record<string, unknown> {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31), s / 2 ** 31);
  const F = 16n;
  const S = 3n * F + BigInt(LOG2B);
  const w = Array.from({ length: IN }, () => Array.from({ length: OUT }, () => BigInt(Math.round((rnd() - 0.5) * 0.5 * 65536))));
  const x = Array.from({ length: B }, () => Array.from({ length: IN }, () => BigInt(Math.round(rnd() * 65536))));
  const y = Array.from({ length: B }, () => Array.from({ length: OUT }, () => (rnd() < 0.5 ? 65536n : 0n)));
  const e = x.map((xr, b) => Array.from({ length: OUT }, (_, j) => xr.reduce((acc, xv, i) => acc + xv * w[i]![j]!, 0n) - (y[b]![j]! << F)));
  const wNext = w.map((row, i) => row.map((wij, j) => wij - ((lr * e.reduce((acc, er, b) => acc + x[b]![i]! * er[j]!, 0n) + (1n << (S - 1n))) >> S)));
  const P = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
  const enc = (m: bigint[][]) => m.map((r) => r.map((v) => (((v % P) + P) % P).toString()));
  return { lr: lr.toString(), w: enc(w), x: enc(x), y: enc(y), wNext: enc(wNext) };
}
