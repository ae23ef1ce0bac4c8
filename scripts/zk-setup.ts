/**
 * Development trusted setup for circuits/step.circom (`npm run zk:setup`):
 *   1. compile the circuit with the circom2 npm package (--O2) into circuits/build/ (git-ignored);
 *   2. phase 1: a LOCAL powers of tau (new accumulator, one random contribution, prepare phase 2),
 *      cached in circuits/build/ptau/ and reused unless --fresh-ptau is given (the slow part: minutes);
 *   3. phase 2: circuit-specific zkey, one random contribution and a final beacon, checked against the
 *      r1cs and the ptau;
 *   4. writes the committed artifacts: circuits/keys/{step.wasm, step.r1cs, step_final.zkey, step.vkey.json},
 *      contracts/verifiers/StepVerifier.sol (snarkjs's Groth16 template, untouched but for a generated-file
 *      banner) and circuits/keys/README.md with the sha256 of each.
 *
 * IMPORTANT: every contribution here comes from this machine's randomness, so whoever ran the script
 * could keep the toxic waste and forge proofs. For development only; docs/zk.md says how a production
 * ceremony replaces it.
 *
 * Run: npm run zk:setup [-- --fresh-ptau]
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import * as snarkjs from "snarkjs";
import { logger, setLogLevel } from "../verifier/src/log/index.ts";

setLogLevel("info");
const log = logger("zk-setup");

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const BUILD = join(ROOT, "circuits/build");
const PTAU_DIR = join(BUILD, "ptau");
const KEYS = join(ROOT, "circuits/keys");
const VERIFIER = join(ROOT, "contracts/verifiers/StepVerifier.sol");
const freshPtau = process.argv.includes("--fresh-ptau");

/** snarkjs logs through this (info and above). */
const snarkLog = {
  debug: () => {},
  info: (msg: string) => log.info(msg),
  warn: (msg: string) => log.warn(msg),
  error: (msg: string) => log.error(msg),
};

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function entropy(): string {
  return randomBytes(32).toString("hex");
}

// 1. compile
mkdirSync(BUILD, { recursive: true });
log.info("compiling circuits/step.circom with circom2 --O2");
execFileSync(
  join(ROOT, "node_modules/.bin/circom2"),
  ["circuits/step.circom", "-l", "node_modules", "--O2", "--r1cs", "--wasm", "--sym", "-o", "circuits/build"],
  { cwd: ROOT, stdio: "inherit" },
);
const r1csPath = join(BUILD, "step.r1cs");
const info = await snarkjs.r1cs.info(r1csPath);
// Groth16's evaluation domain holds every constraint plus one row per public input (and the constant).
const nPublic = info.nOutputs + info.nPubInputs;
const power = Math.max(8, Math.ceil(Math.log2(info.nConstraints + nPublic + 1)));
log.info({ constraints: info.nConstraints, nPublic, power }, "circuit compiled");

// 2. phase 1 (local powers of tau)
mkdirSync(PTAU_DIR, { recursive: true });
const ptauFinal = join(PTAU_DIR, `pot${power}_final.ptau`);
if (freshPtau || !existsSync(ptauFinal)) {
  const p0 = join(PTAU_DIR, `pot${power}_0000.ptau`);
  const p1 = join(PTAU_DIR, `pot${power}_0001.ptau`);
  const curve = await snarkjs.curves.getCurveFromName("bn128");
  log.info({ power }, "phase 1: new powers of tau (local, development only)");
  await snarkjs.powersOfTau.newAccumulator(curve, power, p0, snarkLog);
  await snarkjs.powersOfTau.contribute(p0, p1, "pouw local dev contribution", entropy(), snarkLog);
  log.info("phase 1: prepare phase 2 (slow)");
  // Written under a temporary name so that an interrupted run never leaves a "cached" partial file.
  await snarkjs.powersOfTau.preparePhase2(p1, `${ptauFinal}.partial`, snarkLog);
  renameSync(`${ptauFinal}.partial`, ptauFinal);
} else {
  log.info({ ptau: relative(ROOT, ptauFinal) }, "phase 1: reusing cached powers of tau (--fresh-ptau to regenerate)");
}

// 3. phase 2 (circuit-specific)
const z0 = join(BUILD, "step_0000.zkey");
const z1 = join(BUILD, "step_0001.zkey");
const zFinal = join(BUILD, "step_final.zkey");
log.info("phase 2: new zkey");
await snarkjs.zKey.newZKey(r1csPath, ptauFinal, z0, snarkLog);
await snarkjs.zKey.contribute(z0, z1, "pouw local dev contribution", entropy(), snarkLog);
await snarkjs.zKey.beacon(z1, zFinal, "pouw local dev beacon", entropy(), 10, snarkLog);
if (!(await snarkjs.zKey.verifyFromR1cs(r1csPath, ptauFinal, zFinal, snarkLog))) {
  throw new Error("the final zkey does not match the r1cs and the powers of tau");
}

// 4. artifacts
mkdirSync(KEYS, { recursive: true });
mkdirSync(dirname(VERIFIER), { recursive: true });
copyFileSync(join(BUILD, "step_js/step.wasm"), join(KEYS, "step.wasm"));
// The r1cs the keys were made from: what a phase-2 ceremony starts from (`snarkjs zkey new`) and what
// `npm run zk:check` compares the recompiled source with.
copyFileSync(r1csPath, join(KEYS, "step.r1cs"));
copyFileSync(zFinal, join(KEYS, "step_final.zkey"));
const vkey = await snarkjs.zKey.exportVerificationKey(zFinal);
writeFileSync(join(KEYS, "step.vkey.json"), `${JSON.stringify(vkey, null, 2)}\n`);
const template = readFileSync(join(ROOT, "node_modules/snarkjs/templates/verifier_groth16.sol.ejs"), "utf8");
const solidity = await snarkjs.zKey.exportSolidityVerifier(zFinal, { groth16: template });
// NOTE: snarkjs's template declares `pragma solidity >=0.7.0 <0.9.0;`, which solc 0.8.28 accepts as is.
if (!/pragma solidity [^;]*;/.test(solidity)) throw new Error("generated verifier has no pragma");
const banner =
  "// GENERATED by scripts/zk-setup.ts (snarkjs exportSolidityVerifier) from circuits/keys/step_final.zkey.\n" +
  "// Do not edit by hand: rerun `npm run zk:setup`. Development setup only, see docs/zk.md.\n";
writeFileSync(VERIFIER, banner + solidity);

await (await snarkjs.curves.getCurveFromName("bn128")).terminate();

const artifacts = ["circuits/keys/step.wasm", "circuits/keys/step.r1cs", "circuits/keys/step_final.zkey", "circuits/keys/step.vkey.json", "contracts/verifiers/StepVerifier.sol"];
const rows = artifacts.map((p) => `| \`${p}\` | \`${sha256(join(ROOT, p))}\` |`).join("\n");
const readme = `# circuits/keys: development Groth16 artifacts for circuits/step.circom

GENERATED by \`npm run zk:setup\` (scripts/zk-setup.ts); rerunning it replaces every file below together.

IMPORTANT: this is a LOCAL development setup, not a ceremony. Both phases were contributed by one
machine's randomness, so whoever ran the script could have kept the toxic waste and could forge proofs
that the verifier accepts. Never use these keys to secure real value. docs/zk.md ("Setup and ceremony")
describes the production replacement: phase 1 from a public perpetual powers of tau, phase 2 with
independent contributions and a public random beacon.

- circuit: circuits/step.circom, \`LinearStep(8, 4, 8, 3, 16, 32)\`, compiled with circom2 --O2
- constraints: ${info.nConstraints}; public signals: ${nPublic}; powers of tau: 2^${power} (local)
- phase 2: one random contribution plus a beacon (10 iterations), verified against the r1cs and ptau

| artifact | sha256 |
| --- | --- |
${rows}
`;
writeFileSync(join(KEYS, "README.md"), readme);
log.info({ constraints: info.nConstraints, power }, "setup done");
for (const p of artifacts) log.info({ file: p, sha256: sha256(join(ROOT, p)) }, "artifact");
