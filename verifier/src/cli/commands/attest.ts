/**
 * `pouw provider attest prepare|request` and `pouw auditor attest`: the attestation path from the command line
 * (verifier/src/attest). The provider prepares a challenge (binding, and with --session-key the evidence nonce and its
 * authorization of the key), has its machine make the evidence bundle, and requests with the bundle's hash; each drawn
 * committee member runs `pouw auditor attest REQUEST --bundle FILE --trust FILE`, which verifies, signs (tier 4 with the
 * reason when the evidence fails) and records once a quorum of signatures sits in the shared --statements directory.
 * `pouw auditor attest-dispute open|vote|settle|show|claim`: dispute a provider's standing statement (with a bond),
 * re-verify it as a drawn panel member and vote, settle an undecided one, claim a credited bond (docs/panels.md).
 */
import type { Command } from "commander";
import { withConfig } from "../options.ts";
import { lazyAction } from "../lazy-action.ts";

export function registerProviderAttest(provider: Command): void {
  const attest = provider.command("attest").description("attestation: prepare a challenge for your machine's evidence, then request a committee for the bundle");
  withConfig(
    attest
      .command("prepare")
      .description("the binding your evidence must answer (challenge = hash of a recent block); with --session-key also the evidence nonce and your signed authorization of the key")
      .option("--challenge-block <n>", "the block whose hash is the challenge (default: the latest; at most 64 blocks old when you request)")
      .option("--session-key <0x..>", "the session key your attested machine made (its address)")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./attest-run.ts"), "prepare"));
  withConfig(
    attest
      .command("request")
      .description("open an attestation request for an evidence bundle (burns the registry's request fee)")
      .argument("<bundle>", "the evidence bundle file (JSON, docs/checks.md)")
      .requiredOption("--challenge-block <n>", "the challenge block the bundle's evidence answers (from `attest prepare`)")
      .option(
        "--device <id...>",
        "each device the evidence attests, as the verifier names it (nvidia-ueid:<ueid>, intel-ppid:<hex>, amd-chip:<hex>, x5c-leaf:<hex>); committees sign tier 4 unless these are exactly the evidence's",
      )
      .option("--mint", "dev chain: mint the request fee if the balance is short")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./attest-run.ts"), "request"));
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
      .option(
        "--device-ledger <file>",
        "your ledger of attested devices: one device is refused for a second provider while your statement for the first lasts (default: STATE_DIR/attested-devices.json)",
      )
      .option("--no-record", "sign only; do not submit even when a quorum has signed")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./attest-run.ts"), "attest"));
}

/** What `--current-trust` is, its format and when to pass it (`pouw auditor attest-dispute vote --help`). */
const CURRENT_TRUST_HELP = `
The two trust files:
  --trust FILE          what you trusted when the statement was signed: the statement's evidence is re-verified at
                        its issuedAt under it; the vote is "false" when it does not support the statement's tier and
                        band (the signers forfeit their bonds).
  --current-trust FILE  the same JSON format as --trust (keys nvidia, intelTdx, amdSevSnp, pouwEat; relative paths are
                        relative to the file), holding what has been published since: newer CRLs
                        ("amdSevSnp": { ..., "currentCrls": ["ask-crl.der"] }, DER or PEM), raised minimum TCBs or TCB
                        evaluation numbers, refused statuses. Only when the statement held under --trust is its
                        evidence re-verified, at the same issuedAt, under this file: if it no longer supports the
                        statement, the vote is "revoked since" (ProviderRegistry.voteRevoked: the record is downgraded,
                        nobody forfeits). A file unusable for the bundle (an undecodable CRL, a missing pin) is refused,
                        never counted as a revocation.
  Pass --current-trust when a revocation or TCB update was published after the statement was issued; without it the
  vote judges the statement at its time only (docs/checks.md, "Evidence bundle, trust file and the committee path").
`;

/** `pouw auditor attest-dispute ...`: statement disputes (ProviderRegistry.disputeStatement, voteDispute, settleDispute). */
export function registerAuditorAttestDispute(auditor: Command): void {
  const dispute = auditor.command("attest-dispute").description("dispute an attestation statement, or judge one as a drawn panel member");
  withConfig(
    dispute
      .command("open")
      .description("dispute a provider's standing tier 1-3 statement: locks the auditor minimum bond; a panel without the signers re-verifies it")
      .argument("<provider>", "the provider whose statement is false")
      .requiredOption("--bundle <file>", "the statement's evidence bundle (its keccak256 must be the statement's evidence hash): the dispute puts it on chain for the panel")
      .option("--mint", "dev chain: mint the bond if the balance is short")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./attest-run.ts"), "open"));
  withConfig(
    dispute
      .command("vote")
      .description("as a drawn panel member: re-verify the statement's evidence at its issuedAt and vote (false: the evidence does not support it)")
      .argument("<dispute>", "the dispute id")
      .option("--bundle <file>", "the statement's evidence bundle (its keccak256 must be the request's evidence hash); default: the one the dispute carries on chain (its StatementEvidence event)")
      .requiredOption("--trust <file>", "what you trust per evidence format (as for `auditor attest`)")
      .option("--current-trust <file>", "today's trust file (public revocation / TCB data since): a statement that held under --trust but not under it is voted 'revoked since' (ProviderRegistry.voteRevoked: downgrade, no forfeit)")
      .option("--json", "print JSON")
      .addHelpText("after", CURRENT_TRUST_HELP),
  ).action(lazyAction(() => import("./attest-run.ts"), "vote"));
  withConfig(
    dispute
      .command("settle")
      .description("settle a dispute that lapsed undecided (deadline passed, or its seed gone undrawn): half the challenger's bond is burned, half credited back")
      .argument("<dispute>", "the dispute id")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./attest-run.ts"), "settle"));
  withConfig(dispute.command("show").description("a statement dispute: parties, panel, votes, outcome").argument("<dispute>", "the dispute id").option("--json", "print JSON")).action(
    lazyAction(() => import("./attest-run.ts"), "show"),
  );
  withConfig(dispute.command("claim").description("claim your credited dispute bonds from the ProviderRegistry").option("--json", "print JSON")).action(
    lazyAction(() => import("./attest-run.ts"), "claim"),
  );
}
