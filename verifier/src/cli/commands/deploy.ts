/**
 * `pouw deploy [--rpc URL] [--token ADDR] [--no-registries] [--evaluator ADDR] [--json]`: deploy and wire the
 * market contracts (token unless given, StakeVault, AuditorRegistry, JobMarket, JobRecords, ProviderRegistry and
 * DataRegistry with JobMarket.setRegistries unless --no-registries, then the step verifier and DisputeGame
 * with the dispute roles) and write the deployment file the other commands read (default
 * .pouw/deployment.json). Without --token it deploys the mintable dev token (local chains).
 *
 * Admin (docs/governance.md): there is none. Each contract's roles are wired once by this command (`wire`)
 * and its wiring then ends; nobody ever holds DEFAULT_ADMIN_ROLE. The command reads the wiring back from
 * chain, prints it, puts it in --json, and exits non-zero if the deployment is not sealed as it should be.
 *
 * Every transaction it sent is listed with its hash and block (`txs` in --json), in the order sent.
 *
 * Proving (docs/zk.md): without --step-verifier the committed development verifier is deployed on the dev chain
 * (31337) and none elsewhere, where DisputeGame refuses proofs; `--step-verifier ADDR --vkey FILE` names a ceremony's
 * verifier (checked against the vkey's constants). The report's `proving` line says which it did.
 */
import type { Command } from "commander";
import type { Address } from "viem";
import { DEFAULT_ATTESTATION_PARAMS, DEFAULT_OPENING_TERMS, deployDisputeGame, deployKindRecords, deployMarket, deployStateOpenings, DeploymentWiringError, provingLine, wiringProblems, writeDeployment, type TxRef, type Wiring } from "../../chain/index.ts";
import { loadVerificationKey } from "../../zk/index.ts";
import { InputError } from "../../errors/index.ts";
import { chainContext, fmt, parseAddress, parseAmount, parseSeconds, txJson, txLines, withConfig } from "../context.ts";

/** KindRecords' default least lock (tokens): a recorded score was backed by at least this much at risk. */
export const DEFAULT_KIND_MIN_STAKE = "1";

/** One line per fund-moving role and what happened to the admin, for the deploy report. */
export function wiringLines(w: Wiring, names: Readonly<Record<string, string>>): string[] {
  const who = (a: Address | null) => (a === null ? "nobody" : `${names[a.toLowerCase()] ?? "account"} ${a}`);
  return [
    `admin            none: roles wired once and fixed, wiring ended on StakeVault, AuditorRegistry and JobMarket (wirer() = 0x0; nobody holds DEFAULT_ADMIN_ROLE)`,
    `roles            StakeVault.MARKET_ROLE ${who(w.roles.stakeVaultMarket)}; StakeVault.SLASHER_ROLE ${who(w.roles.stakeVaultSlasher)}`,
    `                 JobMarket.DISPUTE_ROLE ${who(w.roles.jobMarketDispute)}; AuditorRegistry.DISPUTE_ROLE ${who(w.roles.auditorRegistryDispute)}`,
    `                 JobMarket.EVALUATOR_ROLE ${who(w.roles.jobMarketEvaluator)}`,
  ];
}

export function registerDeploy(program: Command): void {
  withConfig(
    program
      .command("deploy")
      .description("deploy StakeVault, AuditorRegistry, JobMarket, JobRecords, the registries and DisputeGame (and the dev token), wire their roles once (no admin is left) and write the deployment file")
      .option(
        "--no-registries",
        "skip ProviderRegistry, DataRegistry and JobMarket.setRegistries (then no receipts are anchored, no data terms, no tiers, ever: the market's wiring ends at deployment)",
      )
      .option("--token <address>", "existing ERC-20 for payment, stake and bonds (default: deploy the dev TestToken)")
      .option("--evaluator <address>", "the one account that may record corpus improvement weights, fixed forever (default: nobody; every corpus keeps weight 1.0)")
      .option("--unbonding-delay <seconds>", "StakeVault unbonding delay", "604800")
      .option("--min-bond <amount>", "minimum auditor bond (tokens)", "100")
      .option("--exit-delay <seconds>", "auditor exit delay (>= 3 rounds x (seed delay + commit + reveal windows) + 1 day: 7 days + 72 s with the dispute defaults)", "1209600")
      .option("--activation-delay <seconds>", "seconds before a new auditor bond counts for panel and attestation-committee draws", "3600")
      .option("--attestation-fee <amount>", "tokens (the auditor token) each ProviderRegistry.requestAttestation burns, > 0: the price of one committee draw (docs/panels.md)", "1")
      .option("--step-verifier <address>", "a ceremony's Groth16 step verifier, deployed already (with --vkey); default: the development verifier on chain 31337, none elsewhere (proofs disabled)")
      .option("--vkey <file>", "the ceremony's verification key JSON (snarkjs zkey export verificationkey); its hash is fixed in DisputeGame")
      .option(
        "--no-state-openings",
        "leave out StateOpenings (deployed by default, and written as `stateOpenings` into the deployment file: auditors that step-sample ask providers for the state before a sampled step, and for the final state; providers answer every opening in time, `provider run` between segments, `pouw provider serve` after; docs/checks.md, \"State openings: the queue\"). Left out with --no-registries too (openings are asked by bonded auditors)",
      )
      .option("--answer-window <seconds>", "StateOpenings: seconds a provider has to answer an opening asked of its idle queue", String(DEFAULT_OPENING_TERMS.answerWindowSeconds))
      .option("--opening-replay <seconds>", "StateOpenings: seconds between two deadlines of one provider's openings (its time per opening: one segment replay and one answer), 1 .. --answer-window", String(DEFAULT_OPENING_TERMS.replaySeconds))
      .option(
        "--no-kind-records",
        "leave out KindRecords (deployed by default, and written as `kindRecords` into the deployment file: the scores and generated datasets of finalized evaluate and generate jobs, recorded by `provider claim` and the bot; docs/kinds.md)",
      )
      .option("--kind-min-stake <amount>", "KindRecords: the least lock (tokens, at the best tier) a job needs for its result to be recorded; the kind quote and `buyer create` keep every kind job's stake at or above it", DEFAULT_KIND_MIN_STAKE)
      .option("--json", "print JSON"),
  ).action(async (opts: Record<string, string | undefined> & { registries?: boolean; json?: boolean; stateOpenings?: boolean; kindRecords?: boolean }) => {
    const unbondingDelaySeconds = BigInt(parseSeconds("--unbonding-delay", opts.unbondingDelay!));
    const minBond = parseAmount("--min-bond", opts.minBond!);
    const exitDelaySeconds = BigInt(parseSeconds("--exit-delay", opts.exitDelay!));
    const activationDelaySeconds = BigInt(parseSeconds("--activation-delay", opts.activationDelay!));
    const attestationRequestFee = parseAmount("--attestation-fee", opts.attestationFee!);
    if (attestationRequestFee === 0n) throw new InputError("--attestation-fee must be > 0 (a free request lets a provider re-roll committees from many addresses)");
    const token = opts.token ? parseAddress("--token", opts.token) : undefined;
    const evaluator = opts.evaluator ? parseAddress("--evaluator", opts.evaluator) : undefined;
    if ((opts.stepVerifier === undefined) !== (opts.vkey === undefined)) throw new InputError("--step-verifier and --vkey go together (a ceremony verifier and its verification key)");
    const stepVerifier = opts.stepVerifier ? { address: parseAddress("--step-verifier", opts.stepVerifier), vkey: await loadVerificationKey(opts.vkey!) } : undefined;
    const answerWindowSeconds = parseSeconds("--answer-window", opts.answerWindow!);
    // StateOpenings' constructor refuses a window over 30 days: refused here before anything is deployed
    if (answerWindowSeconds > 30 * 86_400) throw new InputError(`--answer-window must be at most 2592000 seconds (30 days), got ${answerWindowSeconds}`);
    const replaySeconds = parseSeconds("--opening-replay", opts.openingReplay!);
    // StateOpenings' constructor refuses a replay of 0 or over the window (the first opening could not be answered in time)
    if (replaySeconds < 1 || replaySeconds > answerWindowSeconds) throw new InputError(`--opening-replay must be from 1 to --answer-window (${answerWindowSeconds}) seconds, got ${replaySeconds}`);
    const kindMinStake = parseAmount("--kind-min-stake", opts.kindMinStake!);
    // with no registries there is no AuditorRegistry to ask openings through: StateOpenings would refuse every request
    const withOpenings = opts.stateOpenings !== false && opts.registries !== false;
    const ctx = await chainContext(opts as Record<string, string | undefined>, { needDeployment: false });
    const txs: TxRef[] = [];
    const onTx = (t: TxRef) => txs.push(t);
    if (!token && ctx.chainId !== 31337) throw new InputError(`chain ${ctx.chainId} is not the local dev chain: pass --token with the ERC-20 to use`);
    const d = await deployMarket(ctx.clients, { unbondingDelaySeconds, minBond, exitDelaySeconds, activationDelaySeconds, ...(token ? { token } : {}), registries: opts.registries === false ? (false as const) : { ...DEFAULT_ATTESTATION_PARAMS, attestationRequestFee }, onTx });
    const { gasUsed: marketGas, ...market } = d;
    const game = await deployDisputeGame(ctx.clients, { deployment: market, ...(evaluator ? { evaluator } : {}), ...(stepVerifier ? { stepVerifier } : {}), onTx });
    const openings = withOpenings ? await deployStateOpenings(ctx.clients, { jobMarket: market.jobMarket, answerWindowSeconds, replaySeconds, onTx }) : undefined;
    const kinds = opts.kindRecords !== false ? await deployKindRecords(ctx.clients, { jobMarket: market.jobMarket, minStake: kindMinStake, onTx }) : undefined;
    const deployment = { ...market, disputeGame: game.disputeGame, ...(openings ? { stateOpenings: openings.stateOpenings } : {}), ...(kinds ? { kindRecords: kinds.kindRecords } : {}) };
    const gasUsed = marketGas + game.gasUsed;
    // INVARIANT: a deployment is written and reported only once the deployer has no power left over it.
    const problems = wiringProblems(game.wiring, deployment);
    if (problems.length > 0) throw new DeploymentWiringError(problems);
    await writeDeployment(ctx.config.deploymentPath, deployment);
    if (opts.json) {
      process.stdout.write(
        JSON.stringify({
          deployment,
          gasUsed: gasUsed.toString(),
          stepVerifier: game.stepVerifier,
          proving: game.proving,
          deployer: ctx.clients.account.address,
          admin: { holder: null, wiringEnded: game.wiring.sealed, note: "no admin: roles wired once at deployment; nobody holds DEFAULT_ADMIN_ROLE (docs/governance.md)" },
          wiring: game.wiring,
          deploymentPath: ctx.config.deploymentPath,
          txs: txs.map(txJson),
        }) + "\n",
      );
      return;
    }
    const names: Record<string, string> = { [deployment.jobMarket.toLowerCase()]: "JobMarket", [game.disputeGame.toLowerCase()]: "DisputeGame", [ctx.clients.account.address.toLowerCase()]: "the deployer" };
    process.stdout.write(
      [
        `deployed on chain ${d.chainId} from block ${d.startBlock} (gas ${gasUsed}), min auditor bond ${fmt(minBond)}, bonds count for panels after ${activationDelaySeconds} s`,
        `token            ${d.token}${d.devToken ? " (dev TestToken)" : ""}`,
        `StakeVault       ${d.stakeVault}`,
        `AuditorRegistry  ${d.auditorRegistry}`,
        `JobMarket        ${d.jobMarket}`,
        `JobRecords       ${d.jobRecords} (audit receipts and provenance)`,
        ...(d.providerRegistry ? [`ProviderRegistry ${d.providerRegistry} (each attestation request burns ${fmt(attestationRequestFee)})`, `DataRegistry     ${d.dataRegistry} (JobMarket.setRegistries done)`] : ["registries       not set (--no-registries): no receipts anchored, no data terms, ever"]),
        `DisputeGame      ${game.disputeGame}`,
        openings
          ? `StateOpenings    ${openings.stateOpenings} (answer window ${answerWindowSeconds} s, then one opening per ${replaySeconds} s of each provider's queue)`
          : `StateOpenings    not deployed (${opts.stateOpenings === false ? "--no-state-openings" : "--no-registries"}): auditors recompute segments, no step sampling`,
        kinds
          ? `KindRecords      ${kinds.kindRecords} (results of finalized evaluate and generate jobs; least lock ${fmt(kindMinStake)})`
          : "KindRecords      not deployed (--no-kind-records): no evaluate or generate result is recorded, no training on a generated dataset",
        ...(d.peerDirectory ? [`PeerDirectory    ${d.peerDirectory} (IPFS nodes announced by provider run --ipfs)`] : []),
        `proving          ${provingLine(game.proving, d.chainId)}`,
        ...wiringLines(game.wiring, names),
        `wrote ${ctx.config.deploymentPath}`,
      ].join("\n") +
        "\n" +
        `${txs.length} transactions:\n` +
        txLines(txs),
    );
  });
}
