/**
 * ZK step-proof benchmark (`npm run bench:zk`): constraint count of circuits/step.circom, Groth16 proving
 * time (median of several proofs of random tiles, committed artifacts), off-chain verification time and
 * on-chain verification gas of the generated StepVerifier on the in-process network.
 * Writes bench/results/zk.json and prints a table. Targets (issue 5): proving <= 10 s on 2 cores,
 * verification about 240k gas.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus } from "node:os";
import { dirname, join } from "node:path";
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

// Constraint count from a fresh compile (the r1cs is a build output, not committed).
const r1cs = join(ROOT, "circuits/build/step.r1cs");
if (!existsSync(r1cs)) {
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

const results = {
  circuit: "circuits/step.circom LinearStep(8, 4, 8, 3, 16, 32)",
  params: STEP_PARAMS,
  constraints: info.nConstraints,
  publicSignals: info.nOutputs + info.nPubInputs,
  privateInputs: info.nPrvInputs,
  proving: { runs: RUNS, medianMs: Math.round(median(proveMs)), minMs: Math.round(Math.min(...proveMs)), maxMs: Math.round(Math.max(...proveMs)) },
  verifyOffChainMedianMs: Math.round(median(verifyMs)),
  verifyGas: { estimateGas: Number(estimateGas), receiptGasUsed: Number(receipt.gasUsed) },
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
console.log("written bench/results/zk.json");
