/**
 * `pouw auditor attest-dispute open|vote|show|claim`, in-process through main(argv) on a local chain served over HTTP:
 * the provider's two sybil auditors land its committee and record tier 1 for evidence that proves nothing (a bundle that
 * is not a bundle); an honest challenger disputes the statement; the panel (drawn without the signers) re-verifies the
 * bundle at the statement's time, votes it false, and the record is revoked and both signers forfeit their bonds.
 */
import { expect } from "chai";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { network } from "hardhat";
import { getAddress, keccak256, maxUint256, parseEther, toHex, type Hex } from "viem";
import {
  approveToken,
  DEFAULT_ACTIVATION_DELAY_SECONDS,
  deployMarket,
  devAccount,
  drawStatementDisputePanel,
  getAttestationRequest,
  getAuditor,
  getProviderAttestation,
  mintTestToken,
  postBond,
  providerClients,
  recordAttestation,
  requestAttestation,
  writeDeployment,
  type ChainClients,
} from "../../verifier/src/chain/index.ts";
import { providerRegistryDomain, signAttestationVerified } from "../../verifier/src/receipts/index.ts";
import { configureLogging } from "../../verifier/src/log/index.ts";
import { runPouw } from "./in-process.ts";
import { serveProvider, type ServedProvider } from "./rpc-over-http.ts";

/** Hardhat's well-known dev accounts 0..19 (local chain only). */
const DEV = Array.from({ length: 20 }, (_, i) => devAccount(i));
const KEY = (i: number): Hex => toHex(DEV[i]!.getHdKey().privateKey!);

describe("pouw auditor attest-dispute: a forged tier is disputed, re-verified by a fresh panel, revoked, and its signers forfeit (in-process)", function () {
  this.timeout(180_000);
  let rpc: ServedProvider;
  let dir: string;
  const AUDITORS = [3, 4, 5, 6, 10, 11, 12];
  const PROVIDER = 1;
  const CHALLENGER = 13;

  after(async () => {
    configureLogging({ level: "warn", format: "auto" });
    await rpc?.close();
  });

  it("sybil signers record tier 1 for garbage evidence; the dispute's panel votes it false; tier revoked, both signers' bonds gone", async () => {
    const conn = await network.create();
    const clientsOf = (i: number): ChainClients => providerClients(conn.provider, 31337, { account: DEV[i]!, pollingIntervalMs: 20 });
    const admin = clientsOf(0);
    const d = await deployMarket(admin, { unbondingDelaySeconds: 60n, minBond: parseEther("1"), exitDelaySeconds: 86_400n });
    const registry = d.providerRegistry!;
    for (const i of [...AUDITORS, PROVIDER]) {
      const a = clientsOf(i);
      await mintTestToken(a, { token: d.token, to: a.account.address, amount: parseEther("10") });
      if (AUDITORS.includes(i)) {
        await approveToken(a, { token: d.token, spender: d.auditorRegistry, amount: maxUint256 });
        await postBond(a, { auditorRegistry: d.auditorRegistry, amount: parseEther("1") });
      }
    }
    await conn.networkHelpers.time.increase(Number(DEFAULT_ACTIVATION_DELAY_SECONDS));
    rpc = await serveProvider(conn.provider);
    dir = mkdtempSync(join(tmpdir(), "pouw-attest-dispute-"));
    const { gasUsed: _gas, ...deployment } = d as typeof d & { gasUsed?: bigint };
    await writeDeployment(join(dir, "deployment.json"), deployment);
    const as = (i: number) => ["--rpc", rpc.url, "--state-dir", dir, "--private-key", KEY(i)];
    const json = (s: string) => JSON.parse(s.trim().split("\n").pop()!) as Record<string, unknown>;

    // the forgery: a "bundle" that proves nothing, requested and signed tier 1 by two committee members (the sybils)
    const garbage = Buffer.from(JSON.stringify({ version: 1, evidence: { format: "nvidia-eat", eat: "nothing" } }));
    const bundlePath = join(dir, "garbage.json");
    writeFileSync(bundlePath, garbage);
    const provider = clientsOf(PROVIDER);
    await approveToken(provider, { token: d.token, spender: registry, amount: maxUint256 });
    await conn.networkHelpers.mine(1);
    const req = await requestAttestation(provider, { providerRegistry: registry, evidenceHash: keccak256(garbage), sessionKey: provider.account.address });
    await conn.networkHelpers.mine(3);
    const q = await getAttestationRequest(admin.public, { providerRegistry: registry, requestId: req.requestId });
    const signers = AUDITORS.filter((i) => q.committee!.map((a) => getAddress(a)).includes(DEV[i]!.address)).slice(0, 2);
    const now = BigInt(Number(await conn.networkHelpers.time.latest()));
    const statement = { provider: provider.account.address, requestId: req.requestId, tier: 1, band: 90, evidenceHash: keccak256(garbage), expiresAt: now + 7n * 86_400n, issuedAt: now };
    const domain = providerRegistryDomain(31337n, registry);
    const sigs = await Promise.all(signers.map(async (i) => ({ signer: DEV[i]!.address, signature: await signAttestationVerified(DEV[i]!, domain, statement) })));
    await recordAttestation(admin, { providerRegistry: registry, attestation: statement, signatures: sigs });
    expect((await getProviderAttestation(admin.public, { providerRegistry: registry, provider: provider.account.address })).effectiveTier).to.equal(1);

    // an honest auditor disputes it (not bonded here: anyone may, with the bond)
    const open = await runPouw(["auditor", "attest-dispute", "open", provider.account.address, "--bundle", bundlePath, "--mint", "--json", ...as(CHALLENGER)]);
    expect(open.code, open.stderr).to.equal(0);
    const disputeId = BigInt(json(open.stdout).disputeId as string);
    const again = await runPouw(["auditor", "attest-dispute", "open", provider.account.address, "--bundle", bundlePath, "--mint", ...as(CHALLENGER)]);
    expect(again.code).to.equal(2);
    expect(again.stderr).to.match(/is already disputed: dispute 1/);
    await conn.networkHelpers.mine(3);
    const { panel } = await drawStatementDisputePanel(admin, { providerRegistry: registry, disputeId });
    const members = AUDITORS.filter((i) => panel.map((a) => getAddress(a)).includes(DEV[i]!.address));
    expect(members).to.have.length(3);
    for (const s of signers) expect(members).to.not.include(s); // no signer judges its own statement

    const trustPath = join(dir, "trust.json");
    writeFileSync(trustPath, "{}");
    const v1 = await runPouw(["auditor", "attest-dispute", "vote", String(disputeId), "--bundle", bundlePath, "--trust", trustPath, ...as(members[0]!)]);
    expect(v1.code, v1.stderr).to.equal(0);
    expect(v1.stdout).to.match(/says tier 1 band 90; re-verified at its issuedAt: rejected \(bundle-invalid\)\nvoted false; dispute 1 is open \(1 false, 0 true\)/);
    // the second member judges the bundle the dispute put on chain (no --bundle)
    const v2 = await runPouw(["auditor", "attest-dispute", "vote", String(disputeId), "--trust", trustPath, "--json", ...as(members[1]!)]);
    expect(v2.code, v2.stderr).to.equal(0);
    expect(json(v2.stdout)).to.include({ statementFalse: true, outcome: "upheld" });

    const after = await getProviderAttestation(admin.public, { providerRegistry: registry, provider: provider.account.address });
    expect(after.effectiveTier).to.equal(4);
    for (const s of signers) expect((await getAuditor(admin.public, { auditorRegistry: d.auditorRegistry, auditor: DEV[s]!.address })).bond).to.equal(0n);
    const show = await runPouw(["auditor", "attest-dispute", "show", String(disputeId), "--json", ...as(CHALLENGER)]);
    expect(json(show.stdout)).to.include({ outcome: "upheld", falseVotes: 2 });
    const claim = await runPouw(["auditor", "attest-dispute", "claim", ...as(CHALLENGER)]);
    expect(claim.code, claim.stderr).to.equal(0);
    // a vote after the outcome is refused by name
    const late = await runPouw(["auditor", "attest-dispute", "vote", String(disputeId), "--bundle", bundlePath, "--trust", trustPath, ...as(members[2]!)]);
    expect(late.code).to.equal(2);
    expect(late.stderr).to.match(/already settled \(upheld\)/);
  });
});
