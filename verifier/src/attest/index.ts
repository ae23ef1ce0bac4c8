/**
 * The attestation path end to end, for `pouw provider attest` and `pouw auditor attest` (and anything else that
 * attests): the provider prepares (binding of a fresh challenge block, session key authorization) and requests; each
 * drawn committee member verifies the evidence bundle itself (checks/attestation verifyEvidenceBundle), signs one
 * AttestationVerified, and the member whose signature completes the quorum records it (ProviderRegistry.record).
 *
 * Agreement: every member verifies the evidence on its own. It co-signs a proposal already in the shared statements
 * directory (one a committee member signed) only if that proposal says what it verified (provider, request, tier, band,
 * evidence hash) and expires no later than its own verdict allows; otherwise it writes and signs its own verdict as a
 * new proposal. No member can veto: a dissenting member counter-signs its own verdict, and whichever proposal reaches
 * the quorum is recorded. A member whose verification fails signs tier 4 (no attestation, band 10), so a quorum of
 * members records a downgrade as readily as an upgrade (the registry orders statements by issuedAt).
 *
 * NOTE: the statements directory is the committee's only shared medium here (a local directory or a mounted share);
 * a gossip transport is not built. Any one member could record once it holds a quorum of signatures.
 *
 * @example
 *   const r = await attestRequest(clients, { providerRegistry, requestId, bundle, trust, statementsDir });
 *   // r.verdict.tier, r.reason, r.signatures, r.recorded?.hash
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { getAddress, keccak256, stringToBytes, type Address, type Hex, type LocalAccount } from "viem";
import { z } from "zod";
import { X509Crl } from "@peculiar/x509";
import {
  AttestationError,
  attestationBinding,
  attestationStatement,
  evidenceNonce,
  loadVendorRoot,
  NvidiaPolicySchema,
  parseAttestationPolicy,
  sessionAuthorizationMessage,
  TIER_BANDS,
  verifyEvidenceBundle,
  EVIDENCE_TYPES,
  type AttestationReason,
  type BundleVerdict,
  type EvidenceTrust,
} from "../checks/attestation/index.ts";
import { getAttestationRequest, getAttestationTerms, getDeviceBindings, getRequestSessionKey, recordAttestation, type ChainClients } from "../chain/index.ts";
import { txRef, type TxRef } from "../chain/send.ts";
import { InputError } from "../errors/index.ts";
import { logger } from "../log/index.ts";
import { providerRegistryDomain, recoverAttestationVerifiedSigner, signAttestationVerified, type AttestationVerified } from "../receipts/index.ts";

const log = logger("attest");

const TrustFileSchema = z
  .object({
    nvidia: z.record(z.string(), z.unknown()).optional(),
    intelTdx: z
      .object({
        allowedMrTd: z.array(z.string().regex(/^(0x)?[0-9a-fA-F]{96}$/)).optional(),
        allowedRtmrs: z.array(z.array(z.string().regex(/^(0x)?[0-9a-fA-F]{96}$/)).length(4)).optional(),
        minTcbEvaluationDataNumber: z.number().int().nonnegative().optional(),
        refusedTcbStatuses: z.array(z.string().min(1)).optional(),
      })
      .strict()
      .optional(),
    amdSevSnp: z
      .object({
        /** The pinned ARKs: PEM file paths (relative to the trust file) or the PEM itself. */
        arks: z.array(z.string().min(1)).min(1),
        allowedMeasurements: z.array(z.string().regex(/^(0x)?[0-9a-fA-F]{96}$/)).optional(),
        requireCrl: z.boolean().optional(),
        /** Today's CRLs (DER or PEM file paths, relative to the trust file): checked against the ASK and the VCEK. */
        currentCrls: z.array(z.string().min(1)).optional(),
        minTcb: z
          .object({ bootloader: z.number().int().min(0).max(255), tee: z.number().int().min(0).max(255), snp: z.number().int().min(0).max(255), microcode: z.number().int().min(0).max(255) })
          .partial()
          .strict()
          .optional(),
        maxValiditySeconds: z.number().int().positive().optional(),
        maxCrlAgeSeconds: z.number().int().positive().optional(),
        maxVmpl: z.number().int().min(0).max(3).optional(),
        allowMigrationAgent: z.boolean().optional(),
      })
      .strict()
      .optional(),
    pouwEat: z
      .object({
        /** Roots per evidence type: a PEM file path (relative to the trust file) or the PEM itself. */
        roots: z.array(z.object({ type: z.enum(EVIDENCE_TYPES), pem: z.string().min(1) }).strict()).min(1),
        policy: z.unknown(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** Reads what this auditor trusts per evidence format (docs/checks.md, "Evidence bundle, trust file"); InputError when invalid. */
export function loadEvidenceTrust(path: string): EvidenceTrust {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new InputError(`--trust ${path} is not a readable JSON file`, { cause: err });
  }
  const r = TrustFileSchema.safeParse(raw);
  if (!r.success) throw new InputError(`--trust ${path} is not a trust configuration`, { details: z.prettifyError(r.error) });
  const t = r.data;
  const rel = (p: string) => (isAbsolute(p) ? p : join(dirname(path), p));
  const pem = (x: string) => (x.includes("-----BEGIN") ? x : readFileSync(rel(x), "utf8"));
  const nvidia = t.nvidia === undefined ? undefined : NvidiaPolicySchema.safeParse(t.nvidia);
  if (nvidia && !nvidia.success) throw new InputError(`--trust ${path}: nvidia is not an NRAS policy`, { details: z.prettifyError(nvidia.error) });
  return {
    ...(nvidia ? { nvidia: nvidia.data } : {}),
    ...(t.intelTdx ? { intelTdx: t.intelTdx } : {}),
    ...(t.amdSevSnp
      ? { amdSevSnp: { ...t.amdSevSnp, arks: t.amdSevSnp.arks.map((x) => loadVendorRoot(pem(x))), currentCrls: (t.amdSevSnp.currentCrls ?? []).map((x) => crlBytes(rel(x), path)) } }
      : {}),
    ...(t.pouwEat
      ? {
          pouwEat: {
            anchors: t.pouwEat.roots.map((x) => ({ type: x.type, root: loadVendorRoot(pem(x.pem)) })),
            policy: parseAttestationPolicy(t.pouwEat.policy),
          },
        }
      : {}),
  };
}

/** A CRL file's DER bytes (PEM "X509 CRL" decoded); InputError when unreadable. */
function crlBytes(file: string, trustPath: string): Uint8Array {
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch (err) {
    throw new InputError(`--trust ${trustPath}: the CRL file ${file} is not readable`, { cause: err });
  }
  const text = raw.toString("latin1");
  const der = text.includes("-----BEGIN X509 CRL-----") ? new Uint8Array(Buffer.from(text.replace(/-----(BEGIN|END) X509 CRL-----|\s+/g, ""), "base64")) : new Uint8Array(raw);
  let crl: X509Crl;
  try {
    crl = new X509Crl(der);
  } catch (err) {
    throw new InputError(`--trust ${trustPath}: the CRL file ${file} is not a DER or PEM X.509 CRL`, { cause: err });
  }
  // (checks/attestation/formats/sev-snp.ts: the entries of a CRL without nextUpdate do not parse)
  if (crl.nextUpdate === undefined) throw new InputError(`--trust ${trustPath}: the CRL file ${file} has no nextUpdate (its entries would be read as none)`);
  return der;
}

export type Preparation = {
  provider: Address;
  chainId: number;
  registry: Address;
  challengeBlock: bigint;
  challenge: Hex;
  binding: Hex;
  /** Present with a session key: what the evidence's nonce must be, and the provider's authorization of the key. */
  sessionKey?: Address;
  nonce?: Hex;
  authorization?: Hex;
};

/** What the provider's machine needs to make evidence for a request at `challengeBlock` (default: the latest block). */
export async function prepareAttestation(clients: ChainClients, p: { providerRegistry: Address; challengeBlock?: bigint; sessionKey?: Address }): Promise<Preparation> {
  const challengeBlock = p.challengeBlock ?? (await clients.public.getBlockNumber({ cacheTime: 0 }));
  const block = await clients.public.getBlock({ blockNumber: challengeBlock });
  const provider = clients.account.address;
  const chainId = await clients.public.getChainId();
  const binding = attestationBinding({ provider, chainId: BigInt(chainId), registry: p.providerRegistry, challenge: block.hash });
  const base = { provider, chainId, registry: p.providerRegistry, challengeBlock, challenge: block.hash, binding };
  if (p.sessionKey === undefined) return base;
  const sessionKey = getAddress(p.sessionKey);
  const authorization = await (clients.account as LocalAccount).signMessage({ message: sessionAuthorizationMessage(provider, sessionKey, binding) });
  return { ...base, sessionKey, nonce: evidenceNonce(binding, sessionKey), authorization };
}

export type AttestRequestParameters = {
  providerRegistry: Address;
  requestId: bigint;
  /** The evidence bundle bytes (their keccak256 must be the request's evidenceHash). */
  bundle: Uint8Array;
  trust: EvidenceTrust;
  /** Where the committee's statement and signatures for this request are shared. */
  statementsDir: string;
  /** Record once a quorum of signatures is in (default true). */
  record?: boolean;
  /**
   * This auditor's ledger of attested devices (JSON file): a device (BundleVerdict.deviceIds) it signed for one
   * provider is refused for another (`device-reused`, tier 4) until that statement expires. Absent: no ledger.
   */
  deviceLedgerPath?: string;
  /** Evidence verification time (default: the chain head's time, the clock the registry checks expiries by). */
  now?: Date;
};

export type AttestRequestReturnType = {
  requestId: bigint;
  provider: Address;
  /** The statement signed (and recorded, when `recorded`). */
  statement: AttestationVerified;
  /** The bundle's verdict, or undefined when it was rejected (then `reason` says why, and the statement is tier 4). */
  verdict: BundleVerdict | undefined;
  reason: AttestationReason | undefined;
  message: string | undefined;
  signer: Address;
  /** Valid committee signatures over the statement now in the statements directory (this one included). */
  signatures: { signer: Address; signature: Hex }[];
  quorum: number;
  recorded: TxRef | undefined;
  /** Proposals by other members that say other than this member verified (it did not co-sign them). */
  dissent: AttestationVerified[];
};

/** Refusals an auditor acts on (wrong file, not drawn, a statement it did not verify): exit 2 at the CLI. */
export class AttestCommitteeError extends InputError {
  override name = "AttestCommitteeError";
  override readonly code: string = "ATTEST_COMMITTEE";
}

const replacer = (_k: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);
const StatementFile = z.object({ provider: z.string(), requestId: z.string(), tier: z.number(), band: z.number(), evidenceHash: z.string(), expiresAt: z.string(), issuedAt: z.string() });

/** The proposals of request `requestId` in `dir` (one file per distinct statement; unreadable files are skipped). */
function readProposals(dir: string, requestId: bigint): AttestationVerified[] {
  const prefix = `request-${requestId}.statement`;
  const out: AttestationVerified[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.startsWith(prefix) || !f.endsWith(".json")) continue;
    const s = readStatement(join(dir, f));
    if (s) out.push(s);
  }
  return out;
}

/** Whether `proposed` says what this member verified (`mine`) and nothing longer-lived, issued inside [asOf, now]. */
function agrees(proposed: AttestationVerified, mine: AttestationVerified, asOf: bigint, now: bigint): boolean {
  const same = proposed.provider === mine.provider && proposed.requestId === mine.requestId && proposed.tier === mine.tier && proposed.band === mine.band && proposed.evidenceHash === mine.evidenceHash;
  return same && proposed.expiresAt <= mine.expiresAt && proposed.issuedAt >= asOf && proposed.issuedAt <= now;
}

function readStatement(path: string): AttestationVerified | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  let s: z.output<typeof StatementFile>;
  try {
    s = StatementFile.parse(JSON.parse(text));
  } catch (err) {
    // anyone who can write the shared directory can write garbage: it is no member's proposal
    log.warn({ path, err: String(err) }, "statement file is not a statement: ignored");
    return undefined;
  }
  return { provider: getAddress(s.provider), requestId: BigInt(s.requestId), tier: s.tier, band: s.band, evidenceHash: s.evidenceHash as Hex, expiresAt: BigInt(s.expiresAt), issuedAt: BigInt(s.issuedAt) };
}

type Ledger = Record<string, { provider: string; requestId: string; expiresAt: string }>;

function readLedger(path: string | undefined): Ledger {
  if (path === undefined) return {};
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Ledger;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new InputError(`the device ledger ${path} is not readable JSON`, { cause: err });
  }
}

/** Throws device-reused when one of `v`'s devices speaks, in an unexpired statement of this auditor, for another provider. */
function checkDevices(ledger: Ledger, v: BundleVerdict, now: bigint): void {
  for (const id of v.deviceIds) {
    const e = ledger[id];
    // INVARIANT: one device attests for one provider at a time (as far as this auditor has seen)
    if (e && getAddress(e.provider) !== v.provider && BigInt(e.expiresAt) > now) {
      throw new AttestationError("device-reused", `device ${id} was attested for ${getAddress(e.provider)} (request ${e.requestId}) until ${new Date(Number(e.expiresAt) * 1000).toISOString()}`);
    }
  }
}

/** What a request declares for a verdict device id ("nvidia-ueid:<ueid>", "intel-ppid:<hex>", ...): its keccak256. */
export function deviceIdHash(id: string): Hex {
  return keccak256(stringToBytes(id));
}

/**
 * Throws device-undeclared unless the request declared exactly the verdict's devices (ProviderRegistry binds the
 * declared ones to the provider on record, one provider per device: a device left out would escape that ledger).
 */
export function checkDeclaredDevices(v: Pick<BundleVerdict, "deviceIds">, declared: readonly Hex[]): void {
  const want = [...new Set(v.deviceIds.map(deviceIdHash))].sort();
  const got = [...declared].map((x) => x.toLowerCase()).sort();
  // INVARIANT: every attested device is on the chain's ledger for this provider, and nothing else is
  if (want.length !== got.length || want.some((x, i) => x !== got[i])) {
    throw new AttestationError("device-undeclared", `the request declares ${got.length} device(s), the evidence attests ${v.deviceIds.join(", ") || "none"}: declare exactly these (pouw provider attest request --device)`);
  }
}

/**
 * Throws session-key-undeclared unless the request declared exactly the bundle's session key: the key the registry
 * keeps with the statement (sessionKeyOf) is then the one the evidence binds. Every bundle binds a key, so a request
 * that declared none gets tier 4 (ProviderRegistry.record refuses tiers 1-2 without a key anyway): an attested tier
 * with no key would let the provider's own address, on any machine, commit the jobs its discounted lock covers.
 */
export function checkDeclaredSessionKey(v: Pick<BundleVerdict, "sessionKey">, declared: Address | undefined): void {
  // INVARIANT: a recorded attested statement's session key is the key its evidence binds, and there always is one
  if (declared === undefined) {
    throw new AttestationError("session-key-undeclared", `the request declares no session key, the bundle binds ${getAddress(v.sessionKey)}: declare it (requestAttestation with the session key; pouw provider attest request does)`);
  }
  if (getAddress(declared) !== getAddress(v.sessionKey)) {
    throw new AttestationError("session-key-undeclared", `the request declares session key ${getAddress(declared)}, the bundle binds ${getAddress(v.sessionKey)}`);
  }
}

/** The committee members' signatures over `statement` in `dir` (a signature over another statement, or by a non-member, does not count). */
async function committeeSignatures(dir: string, requestId: bigint, domain: ReturnType<typeof providerRegistryDomain>, statement: AttestationVerified, committee: readonly Address[]) {
  const signatures: { signer: Address; signature: Hex }[] = [];
  const prefix = `request-${requestId}.0x`;
  for (const f of readdirSync(dir).sort()) {
    if (!f.startsWith(prefix) || !f.endsWith(".sig")) continue;
    const sig = readFileSync(join(dir, f), "utf8").trim() as Hex;
    const signer = await recoverAttestationVerifiedSigner(domain, statement, sig).catch(() => undefined);
    // (a signature by a non-member would revert the record)
    if (signer && committee.includes(getAddress(signer))) signatures.push({ signer: getAddress(signer), signature: sig });
  }
  return signatures;
}

/** Verifies request `requestId`'s bundle as one committee member, signs, and records once a quorum has signed. */
export async function attestRequest(clients: ChainClients, p: AttestRequestParameters): Promise<AttestRequestReturnType> {
  const account = clients.account as LocalAccount;
  const me = getAddress(account.address);
  const q = await getAttestationRequest(clients.public, { providerRegistry: p.providerRegistry, requestId: p.requestId });
  if (q.provider === "0x0000000000000000000000000000000000000000") throw new AttestCommitteeError(`attestation request ${p.requestId} does not exist`);
  if (q.recorded) throw new AttestCommitteeError(`attestation request ${p.requestId} is already recorded`);
  if (q.committee === undefined) throw new AttestCommitteeError(`request ${p.requestId}'s committee cannot be drawn now (${q.committeeUnavailable ?? "unknown"})`);
  const committee = q.committee.map((a) => getAddress(a));
  // INVARIANT: only a drawn member speaks for a request (the registry refuses others too, after the gas)
  if (!committee.includes(me)) throw new AttestCommitteeError(`${me} is not on request ${p.requestId}'s committee (${committee.join(", ")})`);
  const evidenceHash = keccak256(p.bundle);
  if (evidenceHash !== q.evidenceHash) throw new AttestCommitteeError(`the bundle's keccak256 ${evidenceHash} is not request ${p.requestId}'s evidence hash ${q.evidenceHash}: wrong file`);

  const terms = await getAttestationTerms(clients.public, { providerRegistry: p.providerRegistry });
  const chainId = BigInt(await clients.public.getChainId());
  const head = await clients.public.getBlock({ blockTag: "latest" });
  const issuedAt = head.timestamp;
  const challengeBlock = await clients.public.getBlock({ blockHash: q.challenge });
  const ceiling = issuedAt + terms.maxValiditySeconds;
  const ledger = readLedger(p.deviceLedgerPath);

  let verdict: BundleVerdict | undefined;
  let reason: AttestationReason | undefined;
  let message: string | undefined;
  try {
    verdict = await verifyEvidenceBundle(p.bundle, { trust: p.trust, request: q, challengeIssuedAt: new Date(Number(challengeBlock.timestamp) * 1000), now: p.now ?? new Date(Number(issuedAt) * 1000) });
    checkDevices(ledger, verdict, issuedAt);
    checkDeclaredDevices(verdict, (await getDeviceBindings(clients.public, { providerRegistry: p.providerRegistry, requestId: p.requestId })).declared);
    checkDeclaredSessionKey(verdict, await getRequestSessionKey(clients.public, { providerRegistry: p.providerRegistry, requestId: p.requestId }));
  } catch (err) {
    verdict = undefined;
    if (!(err instanceof AttestationError)) throw err;
    reason = err.reason;
    message = err.shortMessage;
    log.info({ requestId: p.requestId, reason }, "evidence rejected: signing tier 4");
  }
  let mine: AttestationVerified;
  if (verdict) {
    const expiresAt = verdict.expiresAt < ceiling ? verdict.expiresAt : ceiling;
    mine = attestationStatement({ ...verdict, expiresAt }, q, issuedAt);
  } else {
    // tier 4 lasts as long as the registry allows, capped at a day: it only has to outrank older statements
    const expiresAt = issuedAt + (terms.maxValiditySeconds < 86_400n ? terms.maxValiditySeconds : 86_400n);
    mine = { provider: getAddress(q.provider), requestId: p.requestId, tier: 4, band: TIER_BANDS[4].lo, evidenceHash, expiresAt, issuedAt };
  }

  mkdirSync(p.statementsDir, { recursive: true });
  const domain = providerRegistryDomain(chainId, p.providerRegistry);
  // INVARIANT: a proposal counts only when a drawn member signed it: a statement file written by anyone else (a
  // competitor's tier-4 or one-minute statement) would otherwise pull members onto it
  const proposals: { statement: AttestationVerified; signers: number }[] = [];
  for (const s of readProposals(p.statementsDir, p.requestId)) {
    const n = (await committeeSignatures(p.statementsDir, p.requestId, domain, s, committee)).length;
    if (n > 0) proposals.push({ statement: s, signers: n });
    else log.warn({ requestId: p.requestId }, "a statement file carries no committee member's signature: ignored");
  }
  // INVARIANT: a member co-signs only what it verified itself, never a longer validity than its own verdict; where no
  // proposal agrees it proposes its own verdict instead of refusing, so one dissenting member cannot block a quorum
  const agreeing = proposals.filter((x) => agrees(x.statement, mine, q.asOf, issuedAt)).sort((a, b) => b.signers - a.signers);
  const dissent = proposals.filter((x) => !agrees(x.statement, mine, q.asOf, issuedAt)).map((x) => x.statement);
  for (const d of dissent) log.info({ requestId: p.requestId, proposedTier: d.tier, mine: mine.tier, reason }, "a proposal says other than this member verified: not co-signing it");
  const statement = agreeing[0]?.statement ?? mine;
  if (agreeing.length === 0) {
    const digest = keccak256(new TextEncoder().encode(JSON.stringify(statement, replacer)));
    writeFileSync(join(p.statementsDir, `request-${p.requestId}.statement.${digest.slice(2, 18)}.json`), JSON.stringify(statement, replacer, 2) + "\n");
  }

  const signature = await signAttestationVerified(account, domain, statement);
  writeFileSync(join(p.statementsDir, `request-${p.requestId}.${me}.sig`), signature + "\n");
  if (verdict && p.deviceLedgerPath !== undefined) {
    for (const id of verdict.deviceIds) ledger[id] = { provider: statement.provider, requestId: String(p.requestId), expiresAt: String(statement.expiresAt) };
    mkdirSync(dirname(p.deviceLedgerPath), { recursive: true });
    writeFileSync(p.deviceLedgerPath, JSON.stringify(ledger, null, 2) + "\n");
  }

  const signatures = await committeeSignatures(p.statementsDir, p.requestId, domain, statement, committee);
  let recorded: TxRef | undefined;
  if ((p.record ?? true) && signatures.length >= terms.quorum) {
    const r = await recordAttestation(clients, { providerRegistry: p.providerRegistry, attestation: statement, signatures: signatures.slice(0, terms.quorum) });
    recorded = txRef("record", r);
  }
  if (!recorded && signatures.length >= terms.quorum && p.record === false) log.info({ requestId: p.requestId }, "quorum reached; not recording (record: false)");
  return { requestId: p.requestId, provider: getAddress(q.provider), statement, verdict, reason, message, signer: me, signatures, quorum: terms.quorum, recorded, dissent };
}

