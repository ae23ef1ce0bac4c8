/**
 * `pouw provider attest prepare|request` and `pouw auditor attest`, in-process through main(argv) on a local chain served
 * over HTTP: the whole path prepare -> evidence bundle -> request -> each drawn committee member verifies and signs ->
 * the member completing the quorum records. Valid bound evidence (NRAS-shaped detached EAT under a test JWKS,
 * test/checks/nras-fixture.ts) records tier 2 (GPU evidence alone ranks below composite evidence); a relayed bundle (provider A's evidence under provider B's request)
 * records tier 4 with the reason printed; a non-member and a wrong file are refused by name (exit 2).
 */
import { expect } from "chai";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { getAddress, keccak256, maxUint256, parseEther, toHex, type Address, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import {
  approveToken,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  deployMarket,
  devAccount,
  getAttestationRequest,
  getRequestSessionKey,
  mintTestToken,
  postBond,
  providerClients,
  providerRegistryAbi,
  writeDeployment,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { configureLogging } from "../../verifier/src/log/index.ts";
import { deviceIdHash } from "../../verifier/src/attest/index.ts";
import { makeNras, newSessionKey, sessionProof, type Nras } from "../checks/nras-fixture.ts";
import { runPouw } from "./in-process.ts";
import { serveProvider, type ServedProvider } from "./rpc-over-http.ts";

/** Hardhat's well-known dev keys 0..9 (local chain only), from the dev mnemonic. */
const DEV_KEYS: Hex[] = Array.from({ length: 10 }, (_, i) => toHex(devAccount(i).getHdKey().privateKey!));

describe("pouw provider attest / auditor attest: verify -> sign -> record on a local chain (in-process)", function () {
  this.timeout(180_000);
  let rpc: ServedProvider;
  let dir: string;
  let nras: Nras;
  let trustPath: string;
  let registry: Address;
  let admin: ChainClients;
  let mine: (n: number) => Promise<void>;
  let latest: () => Promise<number>;
  const AUDITORS = [3, 4, 5, 6];
  const GPU_UEID = "622903794624785314125385224830541104713451457931";
  const as = (key: number) => ["--rpc", rpc.url, "--state-dir", dir, "--private-key", DEV_KEYS[key]!];

  before(async () => {
    const conn = await network.create();
    mine = async (n) => void (await conn.networkHelpers.mine(n));
    latest = async () => Number(await conn.networkHelpers.time.latest());
    admin = providerClients(conn.provider, 31337, { account: devAccount(0), pollingIntervalMs: 20 });
    const d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    registry = d.providerRegistry!;
    for (const i of AUDITORS) {
      const a = providerClients(conn.provider, 31337, { account: devAccount(i), pollingIntervalMs: 20 });
      await mintTestToken(a, { token: d.token, to: a.account.address, amount: parseEther("10") });
      await approveToken(a, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
      await postBond(a, { auditorRegistry: d.auditorRegistry, amount: parseEther("1") });
    }
    await conn.networkHelpers.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
    rpc = await serveProvider(conn.provider);
    dir = mkdtempSync(join(tmpdir(), "pouw-attest-cli-"));
    const { gasUsed: _gas, ...deployment } = d as typeof d & { gasUsed?: bigint };
    await writeDeployment(join(dir, "deployment.json"), deployment);
    nras = await makeNras();
    trustPath = join(dir, "trust.json");
    writeFileSync(trustPath, JSON.stringify({ nvidia: { jwks: nras.jwks, minDriverVersion: "535.0", minVbiosVersion: "96.00.5E.00.00" } }));
  });
  after(async () => {
    configureLogging({ level: "warn", format: "auto" });
    await rpc?.close();
  });

  const json = (s: string) => JSON.parse(s.trim().split("\n").pop()!) as Record<string, unknown>;

  /** `provider attest prepare` with a fresh session key, then the machine's side: evidence and possession proof. */
  /** ... and the devices the bundle attests, as `provider attest request --device` takes them (one GPU of a fresh ueid by default). */
  async function prepareBundle(key: number, gpus: { ueid: string }[] = [{ ueid: BigInt(`0x${randomBytes(20).toString("hex")}`).toString() }]): Promise<{ bytes: Buffer; challengeBlock: string; binding: Hex; devices: string[] }> {
    const sessionKey = newSessionKey();
    const prep = await runPouw(["provider", "attest", "prepare", "--session-key", sessionKey.address, "--json", ...as(key)]);
    expect(prep.code, prep.stderr).to.equal(0);
    const p = json(prep.stdout) as { challengeBlock: string; binding: Hex; nonce: Hex; authorization: Hex; provider: Address };
    expect(getAddress(p.provider)).to.equal(privateKeyToAccount(DEV_KEYS[key]!).address);
    // the machine: NRAS evidence for the nonce (dated at chain time), and the session key's possession proof
    const eat = await nras.eat(p.nonce.slice(2), { iat: new Date((await latest()) * 1000), gpus });
    const proof = await sessionProof(privateKeyToAccount(DEV_KEYS[key]!), sessionKey, p.binding);
    expect(proof.authorization).to.equal(p.authorization); // the CLI signed the same authorization
    const bytes = Buffer.from(JSON.stringify({ version: 1, ...proof, evidence: { format: "nvidia-eat", eat } }));
    return { bytes, challengeBlock: p.challengeBlock, binding: p.binding, devices: gpus.map((g) => `nvidia-ueid:${g.ueid}`) };
  }

  async function request(key: number, bytes: Buffer, challengeBlock: string, devices: string[]): Promise<{ id: string; committee: number[] }> {
    const path = join(dir, `bundle-${key}-${challengeBlock}.json`);
    writeFileSync(path, bytes);
    await mine(1);
    const r = await runPouw(["provider", "attest", "request", path, "--challenge-block", challengeBlock, ...(devices.length ? ["--device", ...devices] : []), "--mint", "--json", ...as(key)]);
    expect(r.code, r.stderr).to.equal(0);
    const id = String(json(r.stdout).requestId);
    await mine(3); // past the seed block
    const q = await getAttestationRequest(admin.public, { providerRegistry: registry, requestId: BigInt(id) });
    const members = q.committee!.map((a) => getAddress(a));
    return { id, committee: AUDITORS.filter((i) => members.includes(privateKeyToAccount(DEV_KEYS[i]!).address)) };
  }

  const tierOf = async (key: number) =>
    admin.public.readContract({ address: registry, abi: providerRegistryAbi, functionName: "effectiveTier", args: [privateKeyToAccount(DEV_KEYS[key]!).address] });

  it("records tier 2 for a provider with valid bound GPU evidence: each member verifies and signs, the quorum's signatures recorded", async () => {
    const { bytes, challengeBlock, devices } = await prepareBundle(1, [{ ueid: GPU_UEID }]);
    const bundlePath = join(dir, "bundle-1.json");
    writeFileSync(bundlePath, bytes);
    const { id, committee } = await request(1, bytes, challengeBlock, devices);
    expect(committee).to.have.length(3);
    const statements = join(dir, "committee-1");
    const first = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, "--json", ...as(committee[0]!)]);
    expect(first.code, first.stderr).to.equal(0);
    expect(json(first.stdout)).to.include({ tier: 2, band: 89, format: "nvidia-eat", signatures: 1, quorum: 2, recorded: null, reason: null });
    expect(await tierOf(1)).to.equal(4); // one signature is not a quorum
    const second = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, ...as(committee[1]!)]);
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.match(/verified nvidia-eat evidence .*: tier 2, band 89/);
    expect(second.stdout).to.match(/2 of 2 signatures\nrecorded tier 2 for 0x/);
    expect(await tierOf(1)).to.equal(2);
    // the request declared the bundle's session key, and the registry keeps it with the statement
    const recordedRequest = (await admin.public.readContract({ address: registry, abi: providerRegistryAbi, functionName: "attestationOf", args: [privateKeyToAccount(DEV_KEYS[1]!).address] })).requestId;
    expect(recordedRequest).to.equal(BigInt(id));
    expect(await getRequestSessionKey(admin.public, { providerRegistry: registry, requestId: BigInt(id) })).to.equal(getAddress((JSON.parse(bytes.toString()) as { sessionKey: string }).sessionKey));
    // a member that was not drawn is refused by name, and so is a request already recorded
    const outsider = AUDITORS.find((i) => !committee.includes(i))!;
    const late = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, ...as(outsider)]);
    expect(late.code).to.equal(2);
    expect(late.stderr).to.match(/already recorded/);
  });

  it("records tier 4 with the reason printed for a relayed bundle (provider 1's evidence under provider 2's request)", async () => {
    const { bytes, challengeBlock, devices } = await prepareBundle(1);
    // provider 2 requests with provider 1's bundle (same challenge block: a different binding, since it names provider 2)
    const { id, committee } = await request(2, bytes, challengeBlock, devices);
    const bundlePath = join(dir, "bundle-relay.json");
    writeFileSync(bundlePath, bytes);
    const statements = join(dir, "committee-relay");
    const outsider = AUDITORS.find((i) => !committee.includes(i))!;
    const refused = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, ...as(outsider)]);
    expect(refused.code).to.equal(2);
    expect(refused.stderr).to.match(/is not on request \d+'s committee/);
    const wrong = join(dir, "wrong.json");
    writeFileSync(wrong, "{}");
    const wrongFile = await runPouw(["auditor", "attest", id, "--bundle", wrong, "--trust", trustPath, "--statements", statements, ...as(committee[0]!)]);
    expect(wrongFile.code).to.equal(2);
    expect(wrongFile.stderr).to.match(/is not request \d+'s evidence hash/);

    const a = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, ...as(committee[0]!)]);
    expect(a.code, a.stderr).to.equal(0);
    expect(a.stdout).to.match(/evidence rejected \(binding-mismatch: the bundle is 0x[0-9a-fA-F]{40}'s, the request is 0x[0-9a-fA-F]{40}'s\): tier 4, band 10/);
    const b = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, "--json", ...as(committee[1]!)]);
    expect(b.code, b.stderr).to.equal(0);
    const r = json(b.stdout);
    expect(r).to.include({ tier: 4, band: 10, reason: "binding-mismatch", signatures: 2 });
    expect(r.recorded).to.not.equal(null);
    const att = await admin.public.readContract({ address: registry, abi: providerRegistryAbi, functionName: "attestationOf", args: [privateKeyToAccount(DEV_KEYS[2]!).address] });
    expect([att.tier, att.band]).to.deep.equal([4, 10]);
    expect(await tierOf(2)).to.equal(4);
  });

  it("no single-member veto: a member that verified less signs its own tier-4 proposal, and the two that verified tier 2 record it", async () => {
    const { bytes, challengeBlock, devices } = await prepareBundle(7);
    const { id, committee } = await request(7, bytes, challengeBlock, devices);
    const bundlePath = join(dir, "bundle-7.json");
    writeFileSync(bundlePath, bytes);
    const statements = join(dir, "committee-7");
    // the first member trusts nothing for NVIDIA: it verifies tier 4 and proposes it first
    const empty = join(dir, "trust-none.json");
    writeFileSync(empty, "{}");
    const first = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", empty, "--statements", statements, "--json", ...as(committee[0]!)]);
    expect(first.code, first.stderr).to.equal(0);
    expect(json(first.stdout)).to.include({ tier: 4, reason: "untrusted-root", signatures: 1, recorded: null });
    // the second verifies tier 2: it does not co-sign the tier-4 proposal, it signs its own (1 of 2 each: no record)
    const second = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, ...as(committee[1]!)]);
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.match(/another member's proposal says tier 4 band 10: not co-signed/);
    expect(second.stdout).to.match(/1 of 2 signatures\nwaiting for more committee members/);
    expect(await tierOf(7)).to.equal(4);
    // the third verifies tier 2 too and co-signs that proposal: the quorum is reached and recorded
    const third = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, "--json", ...as(committee[2]!)]);
    expect(third.code, third.stderr).to.equal(0);
    const r = json(third.stdout);
    expect(r).to.include({ tier: 2, signatures: 2 });
    expect(r.recorded).to.not.equal(null);
    expect(r.dissent).to.deep.equal([{ tier: 4, band: 10 }]);
    expect(await tierOf(7)).to.equal(2);
  });

  it("a statement file nobody on the committee signed (a competitor's one-minute tier-2 statement) is ignored, not co-signed", async () => {
    const { bytes, challengeBlock, devices } = await prepareBundle(9);
    const { id, committee } = await request(9, bytes, challengeBlock, devices);
    const bundlePath = join(dir, "bundle-9.json");
    writeFileSync(bundlePath, bytes);
    const statements = join(dir, "committee-9");
    mkdirSync(statements, { recursive: true });
    const q = await getAttestationRequest(admin.public, { providerRegistry: registry, requestId: BigInt(id) });
    // says exactly what the members verify, but expires in two minutes: before, the first member adopted it
    const short = BigInt(await latest()) + 120n;
    const forged = { provider: q.provider, requestId: id, tier: 2, band: 89, evidenceHash: keccak256(bytes), expiresAt: String(short), issuedAt: String(q.asOf) };
    writeFileSync(join(statements, `request-${id}.statement.forged.json`), JSON.stringify(forged));
    for (const m of committee.slice(0, 2)) {
      const r = await runPouw(["auditor", "attest", id, "--bundle", bundlePath, "--trust", trustPath, "--statements", statements, "--json", ...as(m)]);
      expect(r.code, r.stderr).to.equal(0);
    }
    const att = await admin.public.readContract({ address: registry, abi: providerRegistryAbi, functionName: "attestationOf", args: [privateKeyToAccount(DEV_KEYS[9]!).address] });
    expect(att.tier).to.equal(2);
    expect(att.expiresAt > short + 3000n, `recorded expiresAt ${att.expiresAt}, forged ${short}`).to.equal(true); // the NRAS tokens' exp (1 h), not the forged two minutes
  });

  it("one GPU for two providers, auditors with separate state: the chain refuses provider 8's request naming it (ProviderRegistryDeviceBound); left undeclared, the committee signs tier 4 (device-undeclared)", async () => {
    const { bytes, challengeBlock, devices } = await prepareBundle(8, [{ ueid: GPU_UEID }]);
    const path = join(dir, "bundle-8.json");
    writeFileSync(path, bytes);
    await mine(1);
    const refused = await runPouw(["provider", "attest", "request", path, "--challenge-block", challengeBlock, "--device", ...devices, "--mint", ...as(8)]);
    expect(refused.code).to.not.equal(0);
    expect(refused.stderr).to.match(/ProviderRegistryDeviceBound/);
    // the same evidence with the GPU left out of the request: each member, with its own empty ledger, signs tier 4
    const { id, committee } = await request(8, bytes, challengeBlock, []);
    const statements = join(dir, "committee-8");
    const ledger = (m: number) => ["--device-ledger", join(dir, `own-ledger-${m}.json`)];
    const a = await runPouw(["auditor", "attest", id, "--bundle", path, "--trust", trustPath, "--statements", statements, ...ledger(committee[0]!), ...as(committee[0]!)]);
    expect(a.code, a.stderr).to.equal(0);
    expect(a.stdout).to.match(/evidence rejected \(device-undeclared: the request declares 0 device\(s\), the evidence attests nvidia-ueid:622903794624785314125385224830541104713451457931/);
    const b = await runPouw(["auditor", "attest", id, "--bundle", path, "--trust", trustPath, "--statements", statements, "--json", ...ledger(committee[1]!), ...as(committee[1]!)]);
    expect(json(b.stdout)).to.include({ tier: 4, reason: "device-undeclared", signatures: 2 });
    expect(await tierOf(8)).to.equal(4);
    expect(await tierOf(1)).to.equal(2); // the first provider keeps its record, and its GPU
    const [holder] = await admin.public.readContract({ address: registry, abi: providerRegistryAbi, functionName: "deviceBindingOf", args: [deviceIdHash(`nvidia-ueid:${GPU_UEID}`)] });
    expect(getAddress(holder)).to.equal(privateKeyToAccount(DEV_KEYS[1]!).address);
  });
});
