/**
 * `pouw provider attest prepare|request` and `pouw auditor attest`: the attestation path from the command line
 * (verifier/src/attest). The provider prepares a challenge (binding, and with --session-key the evidence nonce and its
 * authorization of the key), has its machine make the evidence bundle, and requests with the bundle's hash; each drawn
 * committee member runs `pouw auditor attest REQUEST --bundle FILE --trust FILE`, which verifies, signs (tier 4 with the
 * reason when the evidence fails) and records once a quorum of signatures sits in the shared --statements directory.
 * `pouw auditor attest-dispute open|vote|settle|show|claim`: dispute a provider's standing statement (with a bond),
 * re-verify it as a drawn panel member and vote, settle an undecided one, claim a credited bond (docs/panels.md).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { keccak256, type Address } from "viem";
import type { Command } from "commander";
import { InputError } from "../../errors/index.ts";
import { txRef } from "../../chain/send.ts";
import { ensureFunds, marketContext, parseAddress, txJson, txLines, withConfig } from "../context.ts";

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

/**
 * The session key a request declares: the bundle's (the registry keeps it with the request). A file that is not a
 * bundle declares none: the request still opens, and its committee signs tier 4 with the reason.
 */
async function bundleSessionKey(bytes: Uint8Array): Promise<{ sessionKey?: Address }> {
  const { parseEvidenceBundle } = await import("../../checks/attestation/index.ts");
  try {
    return { sessionKey: parseEvidenceBundle(bytes).sessionKey as Address };
  } catch {
    return {};
  }
}

async function registryOf(opts: Opts) {
  const ctx = await marketContext(opts as never);
  const registry = ctx.deployment.providerRegistry;
  if (!registry) throw new InputError("the deployment has no ProviderRegistry: there is nothing to attest to");
  return { ctx, registry };
}

export function registerProviderAttest(provider: Command): void {
  const attest = provider.command("attest").description("attestation: prepare a challenge for your machine's evidence, then request a committee for the bundle");
  withConfig(
    attest
      .command("prepare")
      .description("the binding your evidence must answer (challenge = hash of a recent block); with --session-key also the evidence nonce and your signed authorization of the key")
      .option("--challenge-block <n>", "the block whose hash is the challenge (default: the latest; at most 64 blocks old when you request)")
      .option("--session-key <0x..>", "the session key your attested machine made (its address)")
      .option("--json", "print JSON"),
  ).action(async (opts: Opts) => {
    const { ctx, registry } = await registryOf(opts);
    const sessionKey = typeof opts.sessionKey === "string" ? parseAddress("--session-key", opts.sessionKey) : undefined;
    const { prepareAttestation } = await import("../../attest/index.ts");
    const p = await prepareAttestation(ctx.clients, { providerRegistry: registry, challengeBlock: parseBlock("--challenge-block", opts.challengeBlock as string | undefined), sessionKey });
    if (opts.json) return void process.stdout.write(jsonLine(p));
    process.stdout.write(
      `challenge block ${p.challengeBlock} (${p.challenge})\nbinding ${p.binding}\n` +
        (p.nonce ? `session key ${p.sessionKey}\nevidence nonce ${p.nonce} (put this in the evidence: eat_nonce / report data)\nauthorization ${p.authorization}\n` : "no --session-key: the evidence nonce is evidenceNonce(binding, session key)\n"),
    );
  });
  withConfig(
    attest
      .command("request")
      .description("open an attestation request for an evidence bundle (burns the registry's request fee)")
      .argument("<bundle>", "the evidence bundle file (JSON, docs/checks.md)")
      .requiredOption("--challenge-block <n>", "the challenge block the bundle's evidence answers (from `attest prepare`)")
      .option("--device <id...>", "each device the evidence attests, as the verifier names it (nvidia-ueid:<ueid>, intel-ppid:<hex>, amd-chip:<hex>, x5c-leaf:<hex>); committees sign tier 4 unless these are exactly the evidence's")
      .option("--mint", "dev chain: mint the request fee if the balance is short")
      .option("--json", "print JSON"),
  ).action(async (bundlePath: string, opts: Record<string, string | boolean | string[] | undefined>) => {
    const bytes = readBundle(bundlePath);
    const devices = (opts.device as string[] | undefined) ?? [];
    for (const d of devices) if (!/^[a-z0-9-]+:[^\s]+$/.test(d)) throw new InputError(`--device must be KIND:ID (e.g. nvidia-ueid:6229...), got ${JSON.stringify(d)}`);
    const { deviceIdHash } = await import("../../attest/index.ts");
    const { ctx, registry } = await registryOf(opts as Opts);
    const { getAttestationTerms, requestAttestation } = await import("../../chain/index.ts");
    const terms = await getAttestationTerms(ctx.clients.public, { providerRegistry: registry });
    const txs = await ensureFunds(ctx, registry, terms.requestFee, opts.mint === true);
    const r = await requestAttestation(ctx.clients, {
      providerRegistry: registry,
      evidenceHash: keccak256(bytes),
      challengeBlock: parseBlock("--challenge-block", opts.challengeBlock as string)!,
      ...(devices.length > 0 ? { deviceIds: devices.map(deviceIdHash) } : {}),
      // the registry keeps the bundle's session key with the request (sessionKeyOf): what commitments can be held to
      ...(await bundleSessionKey(bytes)),
    });
    txs.push(txRef("requestAttestation", r));
    if (opts.json) return void process.stdout.write(jsonLine({ requestId: r.requestId, binding: r.binding, evidenceHash: keccak256(bytes), seedBlock: r.seedBlock, deadline: r.deadline, txs: txs.map(txJson) }));
    process.stdout.write(`attestation request ${r.requestId}: committee drawn after block ${r.seedBlock}, record by ${new Date(Number(r.deadline) * 1000).toISOString()}\n${txLines(txs)}`);
  });
}

export function registerAuditorAttest(auditor: Command): void {
  registerAuditorAttestDispute(auditor);
  withConfig(
    auditor
      .command("attest")
      .description("as a drawn committee member: verify a request's evidence bundle, sign the statement (tier 4 with the reason when it fails) and record it once a quorum has signed")
      .argument("<request>", "the attestation request id")
      .requiredOption("--bundle <file>", "the evidence bundle (its keccak256 must be the request's evidence hash)")
      .requiredOption("--trust <file>", "what you trust per evidence format (JSON: nvidia JWKS and versions, intelTdx, pouwEat roots and policy)")
      .option("--statements <dir>", "the committee's shared directory of statements and signatures (default: STATE_DIR/attestations)")
      .option("--device-ledger <file>", "your ledger of attested devices: one device is refused for a second provider while your statement for the first lasts (default: STATE_DIR/attested-devices.json)")
      .option("--no-record", "sign only; do not submit even when a quorum has signed")
      .option("--json", "print JSON"),
  ).action(async (requestArg: string, opts: Opts) => {
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
        (r.recorded ? `recorded tier ${s.tier} for ${r.provider}\n${txLines([r.recorded])}` : r.signatures.length >= r.quorum ? "quorum reached (not recorded: --no-record)\n" : "waiting for more committee members\n"),
    );
  });
}

/** `pouw auditor attest-dispute ...`: statement disputes (ProviderRegistry.disputeStatement, voteDispute, settleDispute). */
export function registerAuditorAttestDispute(auditor: Command): void {
  const dispute = auditor.command("attest-dispute").description("dispute an attestation statement, or judge one as a drawn panel member");
  const parseId = (text: string) => {
    if (!/^[1-9][0-9]{0,14}$/.test(text)) throw new InputError(`DISPUTE must be a dispute id (1, 2, ...), got ${JSON.stringify(text)}`);
    return BigInt(text);
  };
  withConfig(
    dispute
      .command("open")
      .description("dispute a provider's standing tier 1-3 statement: locks the auditor minimum bond; a panel without the signers re-verifies it")
      .argument("<provider>", "the provider whose statement is false")
      .option("--mint", "dev chain: mint the bond if the balance is short")
      .option("--json", "print JSON"),
  ).action(async (providerArg: string, opts: Opts) => {
    const provider = parseAddress("PROVIDER", providerArg);
    const { ctx, registry } = await registryOf(opts);
    const { disputeStatement, getProviderAttestation } = await import("../../chain/index.ts");
    const a = await getProviderAttestation(ctx.clients.public, { providerRegistry: registry, provider });
    if (a.disputeId !== 0n) throw new InputError(`provider ${provider}'s statement (request ${a.requestId}) is already disputed: dispute ${a.disputeId}`);
    const txs = await ensureFunds(ctx, registry, a.disputeBond, opts.mint === true);
    const r = await disputeStatement(ctx.clients, { providerRegistry: registry, provider });
    txs.push(txRef("disputeStatement", r));
    if (opts.json) return void process.stdout.write(jsonLine({ disputeId: r.disputeId, requestId: r.requestId, bond: r.bond, seedBlock: r.seedBlock, deadline: r.deadline, txs: txs.map(txJson) }));
    process.stdout.write(`statement dispute ${r.disputeId} (request ${r.requestId}): panel drawn after block ${r.seedBlock}, votes until ${new Date(Number(r.deadline) * 1000).toISOString()}\n${txLines(txs)}`);
  });
  withConfig(
    dispute
      .command("vote")
      .description("as a drawn panel member: re-verify the statement's evidence at its issuedAt and vote (false: the evidence does not support it)")
      .argument("<dispute>", "the dispute id")
      .requiredOption("--bundle <file>", "the statement's evidence bundle (its keccak256 must be the request's evidence hash)")
      .requiredOption("--trust <file>", "what you trust per evidence format (as for `auditor attest`)")
      .option("--json", "print JSON"),
  ).action(async (disputeArg: string, opts: Opts) => {
    const disputeId = parseId(disputeArg);
    const bytes = readBundle(opts.bundle as string);
    const { loadEvidenceTrust } = await import("../../attest/index.ts");
    const { judgeStatement } = await import("../../attest/dispute.ts");
    const trust = loadEvidenceTrust(opts.trust as string);
    const { ctx, registry } = await registryOf(opts);
    const j = await judgeStatement(ctx.clients.public, { providerRegistry: registry, disputeId, bundle: bytes, trust });
    const { voteStatementDispute, getStatementDispute } = await import("../../chain/index.ts");
    const r = await voteStatementDispute(ctx.clients, { providerRegistry: registry, disputeId, statementFalse: j.statementFalse });
    const d = await getStatementDispute(ctx.clients.public, { providerRegistry: registry, disputeId });
    const found = j.verdict ? `tier ${j.verdict.tier} band ${j.verdict.band}` : `rejected (${j.reason})`;
    if (opts.json) return void process.stdout.write(jsonLine({ disputeId, recorded: j.recorded, verified: j.verdict ? { tier: j.verdict.tier, band: j.verdict.band } : null, reason: j.reason ?? null, statementFalse: j.statementFalse, outcome: d.outcome, txs: [txJson(txRef("voteDispute", r))] }));
    process.stdout.write(
      `statement of request ${j.requestId} says tier ${j.recorded.tier} band ${j.recorded.band}; re-verified at its issuedAt: ${found}\n` +
        `voted ${j.statementFalse ? "false" : "true"}; dispute ${disputeId} is ${d.outcome} (${d.falseVotes} false, ${d.trueVotes} true)\n${txLines([txRef("voteDispute", r)])}`,
    );
  });
  withConfig(dispute.command("settle").description("settle a dispute that lapsed undecided (deadline passed, or its seed gone undrawn): half the challenger's bond is burned, half credited back").argument("<dispute>", "the dispute id").option("--json", "print JSON")).action(
    async (disputeArg: string, opts: Opts) => {
      const disputeId = parseId(disputeArg);
      const { ctx, registry } = await registryOf(opts);
      const { settleStatementDispute } = await import("../../chain/index.ts");
      const r = await settleStatementDispute(ctx.clients, { providerRegistry: registry, disputeId });
      if (opts.json) return void process.stdout.write(jsonLine({ disputeId, outcome: "undecided", txs: [txJson(txRef("settleDispute", r))] }));
      process.stdout.write(`dispute ${disputeId} settled undecided: half the challenger's bond is burned, half credited back\n${txLines([txRef("settleDispute", r)])}`);
    },
  );
  withConfig(dispute.command("show").description("a statement dispute: parties, panel, votes, outcome").argument("<dispute>", "the dispute id").option("--json", "print JSON")).action(
    async (disputeArg: string, opts: Opts) => {
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
    },
  );
  withConfig(dispute.command("claim").description("claim your credited dispute bonds from the ProviderRegistry").option("--json", "print JSON")).action(async (opts: Opts) => {
    const { ctx, registry } = await registryOf(opts);
    const { claimAttestationCredit } = await import("../../chain/index.ts");
    const r = await claimAttestationCredit(ctx.clients, { providerRegistry: registry });
    if (opts.json) return void process.stdout.write(jsonLine({ txs: [txJson(txRef("claimCredit", r))] }));
    process.stdout.write(`claimed\n${txLines([txRef("claimCredit", r)])}`);
  });
}
