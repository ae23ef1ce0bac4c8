/**
 * Ties the committed circuit artifacts to the circuit source (`npm run zk:check`; docs/zk.md "Checking the keys"):
 *
 *   1. recompiles circuits/step.circom with the circom2 npm package (WebAssembly, --O2) in a temporary directory;
 *   2. the recompiled witness generator and r1cs must equal circuits/keys/step.wasm and circuits/keys/step.r1cs byte
 *      for byte (so the compile-time parameter asserts in the source are the ones the artifacts were built from);
 *   3. the committed zkey must be a key of that r1cs: its Groth16 header (field, nVars, nPublic, domain size) and its
 *      coefficient section (every A and B entry, which is what the prover evaluates) must be exactly what
 *      `snarkjs zkey new` writes for the r1cs; with `--ptau FILE` (the powers of tau the setup used) it also runs
 *      `snarkjs zkey verify`, which checks every point section and the contribution chain;
 *   4. the committed vkey and Solidity verifier must be the ones exported from the zkey.
 *
 * Exits 1 with one line per mismatch; `--write` copies the recompiled wasm and r1cs over the committed ones (for a
 * source change that leaves the r1cs, and so the keys, unchanged; the r1cs check still runs against the zkey).
 *
 * Run: npm run zk:check [-- --ptau circuits/build/ptau/pot14_final.ptau] [-- --write]
 */
import { execFileSync } from "node:child_process";
import { cpSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import * as snarkjs from "snarkjs";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const KEYS = join(ROOT, "circuits/keys");
const args = process.argv.slice(2);
const ptau = args.includes("--ptau") ? args[args.indexOf("--ptau") + 1] : undefined;
const write = args.includes("--write");
const problems: string[] = [];
const timings: Record<string, number> = {};
const timed = async <T>(what: string, f: () => Promise<T> | T): Promise<T> => {
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    timings[what] = Math.round(performance.now() - t0);
  }
};

/** BN254 scalar field order r. */
const R_FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** The sections of an iden3 binary file (r1cs, zkey): type -> list of section bodies. */
function sections(buf: Buffer, magic: string): Map<number, Buffer[]> {
  if (buf.subarray(0, 4).toString("latin1") !== magic) throw new Error(`not a ${magic} file`);
  const n = buf.readUInt32LE(8);
  const out = new Map<number, Buffer[]>();
  let p = 12;
  for (let i = 0; i < n; i++) {
    const type = buf.readUInt32LE(p);
    const size = Number(buf.readBigUInt64LE(p + 4));
    out.set(type, [...(out.get(type) ?? []), buf.subarray(p + 12, p + 12 + size)]);
    p += 12 + size;
  }
  return out;
}
const one = (s: Map<number, Buffer[]>, t: number, what: string): Buffer => {
  const b = s.get(t);
  if (!b || b.length !== 1) throw new Error(`${what}: expected one section ${t}`);
  return b[0]!;
};
const le = (b: Buffer): bigint => BigInt(`0x${Buffer.from(b).reverse().toString("hex") || "0"}`);

/** What `snarkjs zkey new` writes as the zkey's coefficient section (4) for an r1cs (zkey_new.js processConstraints). */
function expectedCoefficients(r1cs: Map<number, Buffer[]>): { header: { n8: number; prime: bigint; nVars: number; nPublic: number; domainSize: number }; coefs: Buffer } {
  const h = one(r1cs, 1, "r1cs");
  const n8 = h.readUInt32LE(0);
  const prime = le(h.subarray(4, 4 + n8));
  let q = 4 + n8;
  const nVars = h.readUInt32LE(q);
  const nOutputs = h.readUInt32LE(q + 4);
  const nPubInputs = h.readUInt32LE(q + 8);
  const nConstraints = h.readUInt32LE(q + 24); // after nWires, nPubOut, nPubIn, nPrvIn (u32) and nLabels (u64)
  const nPublic = nOutputs + nPubInputs;
  const domainSize = 2 ** Math.ceil(Math.log2(nConstraints + nPublic + 1));
  const rr = (1n << BigInt(n8 * 8)) % prime;
  const r2 = (rr * rr) % prime;
  const c = one(r1cs, 2, "r1cs constraints");
  const entries: Buffer[] = [];
  const entry = (m: number, row: number, signal: number, value: bigint) => {
    const e = Buffer.alloc(12 + n8);
    e.writeUInt32LE(m, 0);
    e.writeUInt32LE(row, 4);
    e.writeUInt32LE(signal, 8);
    const v = ((value * r2) % prime).toString(16).padStart(n8 * 2, "0");
    Buffer.from(v, "hex").reverse().copy(e, 12);
    entries.push(e);
  };
  q = 0;
  for (let row = 0; row < nConstraints; row++) {
    for (let m = 0; m < 3; m++) {
      const terms = c.readUInt32LE(q);
      q += 4;
      for (let i = 0; i < terms; i++) {
        const signal = c.readUInt32LE(q);
        const value = le(c.subarray(q + 4, q + 4 + n8));
        q += 4 + n8;
        // C is not in the coefficient section: it only enters the setup's point sections.
        if (m < 2) entry(m, row, signal, value);
      }
    }
  }
  // One extra A row per public signal (and the constant), coefficient 1, as zkey_new appends.
  for (let s = 0; s <= nPublic; s++) entry(0, nConstraints + s, s, 1n);
  const count = Buffer.alloc(4);
  count.writeUInt32LE(entries.length, 0);
  return { header: { n8, prime, nVars, nPublic, domainSize }, coefs: Buffer.concat([count, ...entries]) };
}

// 1. recompile in a scratch directory with real files: circom2's WASI sandbox does not follow a node_modules
// symlink that leaves the directory it runs in.
const work = mkdtempSync(join(tmpdir(), "pouw-zk-check-"));
try {
  mkdirSync(join(work, "circuits"));
  copyFileSync(join(ROOT, "circuits/step.circom"), join(work, "circuits/step.circom"));
  cpSync(realpathSync(join(ROOT, "node_modules/circomlib")), join(work, "lib/circomlib"), { recursive: true, dereference: true });
  mkdirSync(join(work, "out"));
  await timed("compileMs", () => {
    execFileSync(process.execPath, [realpathSync(join(ROOT, "node_modules/circom2/cli.js")), "circuits/step.circom", "-l", "lib", "--O2", "--r1cs", "--wasm", "-o", "out"], { cwd: work, stdio: ["ignore", "ignore", "inherit"] });
  });
  const wasm = readFileSync(join(work, "out/step_js/step.wasm"));
  const r1csBytes = readFileSync(join(work, "out/step.r1cs"));
  if (write) {
    writeFileSync(join(KEYS, "step.wasm"), wasm);
    writeFileSync(join(KEYS, "step.r1cs"), r1csBytes);
  }

  // 2. byte-equal to the committed witness generator and r1cs
  if (!wasm.equals(readFileSync(join(KEYS, "step.wasm")))) problems.push("circuits/keys/step.wasm is not what circuits/step.circom compiles to (npm run zk:check -- --write, if the r1cs is unchanged)");
  if (!r1csBytes.equals(readFileSync(join(KEYS, "step.r1cs")))) problems.push("circuits/keys/step.r1cs is not what circuits/step.circom compiles to: the circuit changed, the keys need a new setup");

  // 3. the zkey belongs to this r1cs
  await timed("zkeyCoefficientsMs", () => {
    const zkey = sections(readFileSync(join(KEYS, "step_final.zkey")), "zkey");
    const { header, coefs } = expectedCoefficients(sections(r1csBytes, "r1cs"));
    if (one(zkey, 1, "zkey").readUInt32LE(0) !== 1) problems.push("step_final.zkey is not a Groth16 key");
    const g = one(zkey, 2, "zkey header");
    const n8q = g.readUInt32LE(0);
    const n8r = g.readUInt32LE(4 + n8q);
    const at = 8 + n8q + n8r;
    const got = { n8: n8r, prime: le(g.subarray(8 + n8q, 8 + n8q + n8r)), nVars: g.readUInt32LE(at), nPublic: g.readUInt32LE(at + 4), domainSize: g.readUInt32LE(at + 8) };
    if (header.prime !== R_FIELD) problems.push("the r1cs is not over the BN254 scalar field");
    if (!isDeepStrictEqual(got, header)) problems.push(`step_final.zkey header ${JSON.stringify({ ...got, prime: undefined })} is not the r1cs's ${JSON.stringify({ ...header, prime: undefined })}`);
    if (!one(zkey, 4, "zkey coefficients").equals(coefs)) problems.push("step_final.zkey's A/B coefficients are not the r1cs's: the key is for another circuit");
  });
  if (ptau) {
    const ok = await timed("zkeyVerifyMs", () => snarkjs.zKey.verifyFromR1cs(join(work, "out/step.r1cs"), ptau, join(KEYS, "step_final.zkey")));
    if (!ok) problems.push(`snarkjs zkey verify: step_final.zkey does not follow from the r1cs and ${ptau}`);
  }

  // 4. vkey and Solidity verifier exported from the zkey
  await timed("exportsMs", async () => {
    const vkey = await snarkjs.zKey.exportVerificationKey(join(KEYS, "step_final.zkey"));
    if (!isDeepStrictEqual(vkey, JSON.parse(readFileSync(join(KEYS, "step.vkey.json"), "utf8")))) problems.push("circuits/keys/step.vkey.json is not the zkey's verification key");
    const template = readFileSync(join(ROOT, "node_modules/snarkjs/templates/verifier_groth16.sol.ejs"), "utf8");
    const sol = await snarkjs.zKey.exportSolidityVerifier(join(KEYS, "step_final.zkey"), { groth16: template });
    const committed = readFileSync(join(ROOT, "contracts/verifiers/StepVerifier.sol"), "utf8").split("\n").slice(2).join("\n");
    if (committed !== sol) problems.push("contracts/verifiers/StepVerifier.sol is not the verifier exported from the zkey");
  });
  await (await snarkjs.curves.getCurveFromName("bn128")).terminate();
} finally {
  rmSync(work, { recursive: true, force: true });
}

process.stdout.write(`${JSON.stringify({ ok: problems.length === 0, timings, ptau: ptau ?? null })}\n`);
for (const p of problems) process.stderr.write(`zk:check: ${p}\n`);
process.exit(problems.length === 0 ? 0 : 1);
