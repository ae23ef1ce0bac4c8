/**
 * The handlers of `pouw attest` (attest.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls one flow (attest/:
 * index.ts, request.ts, dispute.ts; chain/ for a single read or call) and renders its result as text or --json.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Address } from "viem";
import { InputError } from "../../errors/index.ts";
import { txRef } from "../../chain/send.ts";
import { marketContext, parseAddress, txJson, txLines } from "../context.ts";

type Opts = Record<string, string | boolean | undefined>;

const jsonLine = (v: Record<string, unknown>) => JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x)) + "\n";

function parseBlock(flag: string, text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]{1,12}$/.test(text)) throw new InputError(`${flag} must be a block number, got ${JSON.stringify(text)}`);
  return BigInt(text);
}

function readBundle(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new InputError(`cannot read the evidence bundle ${path}`, { cause: err });
  }
}

async function registryOf(opts: Opts) {
  const ctx = await marketContext(opts as never);
  const registry = ctx.deployment.providerRegistry;
  if (!registry) throw new InputError("the deployment has no ProviderRegistry: there is nothing to attest to");
  return { ctx, registry };
}

/** A statement dispute id (ProviderRegistry numbers them 1, 2, ...). */
function parseId(text: string): bigint {
  if (!/^[1-9][0-9]{0,14}$/.test(text)) throw new InputError(`DISPUTE must be a dispute id (1, 2, ...), got ${JSON.stringify(text)}`);
  return BigInt(text);
}

/** `prepare`'s handler (the definitions and flags are in attest.ts). */
export const prepare = async (opts: Opts) => {
  const { ctx, registry } = await registryOf(opts);
  const sessionKey = typeof opts.sessionKey === "string" ? parseAddress("--session-key", opts.sessionKey) : undefined;
  const { prepareAttestation } = await import("../../attest/index.ts");
  const p = await prepareAttestation(ctx.clients, { providerRegistry: registry, challengeBlock: parseBlock("--challenge-block", opts.challengeBlock as string | undefined), sessionKey });
  if (opts.json) return void process.stdout.write(jsonLine(p));
  process.stdout.write(
    `challenge block ${p.challengeBlock} (${p.challenge})\nbinding ${p.binding}\n` +
      (p.nonce
        ? `session key ${p.sessionKey}\nevidence nonce ${p.nonce} (put this in the evidence: eat_nonce / report data)\nauthorization ${p.authorization}\n`
        : "no --session-key: the evidence nonce is evidenceNonce(binding, session key)\n"),
  );
};

/** `request`'s handler (the definitions and flags are in attest.ts). */
export const request = async (bundlePath: string, opts: Record<string, string | boolean | string[] | undefined>) => {
  const bytes = readBundle(bundlePath);
  const devices = (opts.device as string[] | undefined) ?? [];
  for (const d of devices) if (!/^[a-z0-9-]+:[^\s]+$/.test(d)) throw new InputError(`--device must be KIND:ID (e.g. nvidia-ueid:6229...), got ${JSON.stringify(d)}`);
  const { deviceIdHash } = await import("../../attest/index.ts");
  const { ctx, registry } = await registryOf(opts as Opts);
  const { requestBundleAttestation } = await import("../../attest/request.ts");
  const r = await requestBundleAttestation(ctx.clients, ctx.deployment, {
    providerRegistry: registry,
    bundle: bytes,
    challengeBlock: parseBlock("--challenge-block", opts.challengeBlock as string)!,
    deviceIds: devices.map(deviceIdHash),
    mint: opts.mint === true,
  });
  if (opts.json) return void process.stdout.write(jsonLine({ requestId: r.requestId, binding: r.binding, evidenceHash: r.evidenceHash, seedBlock: r.seedBlock, deadline: r.deadline, txs: r.txs.map(txJson) }));
  process.stdout.write(`attestation request ${r.requestId}: committee drawn after block ${r.seedBlock}, record by ${new Date(Number(r.deadline) * 1000).toISOString()}\n${txLines(r.txs)}`);
};

/** `attest`'s handler (the definitions and flags are in attest.ts). */
export const attest = async (requestArg: string, opts: Opts) => {
  if (!/^[1-9][0-9]{0,14}$/.test(requestArg)) throw new InputError(`REQUEST must be a request id (1, 2, ...), got ${JSON.stringify(requestArg)}`);
  const bytes = readBundle(opts.bundle as string);
  const { attestRequest, loadEvidenceTrust } = await import("../../attest/index.ts");
  const trust = loadEvidenceTrust(opts.trust as string);
  const { ctx, registry } = await registryOf(opts);
  const statementsDir = typeof opts.statements === "string" ? opts.statements : join(ctx.config.stateDir, "attestations");
  const deviceLedgerPath = typeof opts.deviceLedger === "string" ? opts.deviceLedger : join(ctx.config.stateDir, "attested-devices.json");
  const r = await attestRequest(ctx.clients, { providerRegistry: registry, requestId: BigInt(requestArg), bundle: bytes, trust, statementsDir, deviceLedgerPath, record: opts.record !== false });
  const s = r.statement;
  if (opts.json) {
    process.stdout.write(
      jsonLine({
        requestId: r.requestId,
        provider: r.provider,
        tier: s.tier,
        band: s.band,
        expiresAt: s.expiresAt,
        issuedAt: s.issuedAt,
        evidenceHash: s.evidenceHash,
        format: r.verdict?.format ?? null,
        sessionKey: r.verdict?.sessionKey ?? null,
        reason: r.reason ?? null,
        message: r.message ?? null,
        signer: r.signer,
        signatures: r.signatures.length,
        quorum: r.quorum,
        recorded: r.recorded ? txJson(r.recorded) : null,
        dissent: r.dissent.map((d) => ({ tier: d.tier, band: d.band })),
      }),
    );
    return;
  }
  const what = r.verdict
    ? `verified ${r.verdict.format} evidence (session key ${r.verdict.sessionKey as Address}): tier ${s.tier}, band ${s.band}, expires ${new Date(Number(s.expiresAt) * 1000).toISOString()}`
    : `evidence rejected (${r.message}): tier 4, band ${s.band}`;
  process.stdout.write(
    `request ${r.requestId} (provider ${r.provider}): ${what}\n` +
      r.dissent.map((d) => `another member's proposal says tier ${d.tier} band ${d.band}: not co-signed (this member signs its own verdict)\n`).join("") +
      `signed as ${r.signer}: ${r.signatures.length} of ${r.quorum} signatures\n` +
      (r.recorded
        ? `recorded tier ${s.tier} for ${r.provider}\n${txLines([r.recorded])}`
        : r.signatures.length >= r.quorum
          ? "quorum reached (not recorded: --no-record)\n"
          : "waiting for more committee members\n"),
  );
};

/** `open`'s handler (the definitions and flags are in attest.ts). */
export const open = async (providerArg: string, opts: Opts) => {
  const provider = parseAddress("PROVIDER", providerArg);
  const { ctx, registry } = await registryOf(opts);
  const { openStatementDispute } = await import("../../attest/dispute.ts");
  const bundle = readBundle(opts.bundle as string);
  const r = await openStatementDispute(ctx.clients, ctx.deployment, { providerRegistry: registry, provider, bundle, mint: opts.mint === true });
  if (opts.json) return void process.stdout.write(jsonLine({ disputeId: r.disputeId, requestId: r.requestId, bond: r.bond, seedBlock: r.seedBlock, deadline: r.deadline, txs: r.txs.map(txJson) }));
  process.stdout.write(
    `statement dispute ${r.disputeId} (request ${r.requestId}): panel drawn after block ${r.seedBlock}, votes until ${new Date(Number(r.deadline) * 1000).toISOString()}\n${txLines(r.txs)}`,
  );
};

/** `vote`'s handler (the definitions and flags are in attest.ts). */
export const vote = async (disputeArg: string, opts: Opts) => {
  const disputeId = parseId(disputeArg);
  // without --bundle, the bundle the dispute carries on chain (judgeStatement reads its StatementEvidence event)
  const bytes = typeof opts.bundle === "string" ? readBundle(opts.bundle) : undefined;
  const { loadEvidenceTrust } = await import("../../attest/index.ts");
  const { voteOnStatementDispute } = await import("../../attest/dispute.ts");
  const trust = loadEvidenceTrust(opts.trust as string);
  const currentTrust = typeof opts.currentTrust === "string" ? loadEvidenceTrust(opts.currentTrust) : undefined;
  const { ctx, registry } = await registryOf(opts);
  const { judgement: j, tx, dispute: d } = await voteOnStatementDispute(ctx.clients, { providerRegistry: registry, disputeId, bundle: bytes, trust, currentTrust });
  const found = j.verdict ? `tier ${j.verdict.tier} band ${j.verdict.band}` : `rejected (${j.reason})`;
  if (opts.json)
    return void process.stdout.write(
      jsonLine({
        disputeId,
        recorded: j.recorded,
        verified: j.verdict ? { tier: j.verdict.tier, band: j.verdict.band } : null,
        reason: j.reason ?? null,
        statementFalse: j.statementFalse,
        revokedSince: j.revokedSince,
        revokedReason: j.revokedReason ?? null,
        outcome: d.outcome,
        txs: [txJson(tx)],
      }),
    );
  process.stdout.write(
    `statement of request ${j.requestId} says tier ${j.recorded.tier} band ${j.recorded.band}; re-verified at its issuedAt: ${found}\n` +
      `voted ${j.statementFalse ? "false" : j.revokedSince ? `revoked since (${j.revokedReason ?? "a weaker verdict under --current-trust"})` : "true"}; dispute ${disputeId} is ${d.outcome} (${d.falseVotes} false, ${d.trueVotes} true)\n${txLines([tx])}`,
  );
};

/** `settle`'s handler (the definitions and flags are in attest.ts). */
export const settle = async (disputeArg: string, opts: Opts) => {
  const disputeId = parseId(disputeArg);
  const { ctx, registry } = await registryOf(opts);
  const { settleStatementDispute } = await import("../../chain/index.ts");
  const r = await settleStatementDispute(ctx.clients, { providerRegistry: registry, disputeId });
  if (opts.json) return void process.stdout.write(jsonLine({ disputeId, outcome: "undecided", txs: [txJson(txRef("settleDispute", r))] }));
  process.stdout.write(`dispute ${disputeId} settled undecided: half the challenger's bond is burned, half credited back\n${txLines([txRef("settleDispute", r)])}`);
};

/** `show`'s handler (the definitions and flags are in attest.ts). */
export const show = async (disputeArg: string, opts: Opts) => {
  const disputeId = parseId(disputeArg);
  const { ctx, registry } = await registryOf(opts);
  const { getStatementDispute } = await import("../../chain/index.ts");
  const d = await getStatementDispute(ctx.clients.public, { providerRegistry: registry, disputeId });
  if (d.provider === "0x0000000000000000000000000000000000000000") throw new InputError(`statement dispute ${disputeId} does not exist`);
  if (opts.json) return void process.stdout.write(jsonLine(d));
  process.stdout.write(
    `dispute ${disputeId}: provider ${d.provider}, request ${d.requestId}, challenger ${d.challenger}, bond ${d.bond}\n` +
      `panel ${d.drawn ? d.panel.join(", ") : `not drawn (seed block ${d.seedBlock})`}\nvotes ${d.falseVotes} false, ${d.trueVotes} true; ${d.outcome}; deadline ${new Date(Number(d.deadline) * 1000).toISOString()}\n`,
  );
};

/** `claim`'s handler (the definitions and flags are in attest.ts). */
export const claim = async (opts: Opts) => {
  const { ctx, registry } = await registryOf(opts);
  const { claimAttestationCredit } = await import("../../chain/index.ts");
  const r = await claimAttestationCredit(ctx.clients, { providerRegistry: registry });
  if (opts.json) return void process.stdout.write(jsonLine({ txs: [txJson(txRef("claimCredit", r))] }));
  process.stdout.write(`claimed\n${txLines([txRef("claimCredit", r)])}`);
};
