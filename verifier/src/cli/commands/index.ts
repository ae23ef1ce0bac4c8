import type { Command } from "commander";

/**
 * Every `pouw` sub-command family, one entry per command file under this folder (keep it sorted). A file is imported
 * only when its family is the one invoked (or for `buildProgram()` with no argv): `pouw --help`, `pouw --version`
 * and each command load nothing else, so no command pays for TensorFlow.js, snarkjs or viem unless it uses them.
 * `summary` is the line `pouw --help` prints; it must equal the family's own description (a test checks).
 */
export type CommandFamily = { name: string; summary: string; load: () => Promise<(program: Command) => void> };

export const COMMAND_FAMILIES: readonly CommandFamily[] = [
  { name: "adapter", summary: "LoRA adapters on a frozen base: merge an adapter job's weights into its base (docs/data.md)", load: async () => (await import("./adapter.ts")).registerAdapter },
  { name: "audit", summary: "audit a provider's trace: recompute, Freivalds, progress, magnitude or tolerance checks per segment (docs/checks.md)", load: async () => (await import("./audit.ts")).registerAudit },
  { name: "auditor", summary: "bond, audit (challenger bot), attest, status and claim", load: async () => (await import("./auditor.ts")).registerAuditor },
  { name: "buyer", summary: "post and follow training jobs", load: async () => (await import("./buyer.ts")).registerBuyer },
  { name: "corpus", summary: "corpus content ids, registration and the contributor claim (docs/data.md)", load: async () => (await import("./corpus.ts")).registerCorpus },
  { name: "data", summary: "the buyer's own data sets by content id: parse, publish, print the manifest fragment (docs/data.md)", load: async () => (await import("./data.ts")).registerData },
  {
    name: "deploy",
    summary: "deploy StakeVault, AuditorRegistry, JobMarket, JobRecords, the registries and DisputeGame (and the dev token), wire their roles once (no admin is left) and write the deployment file",
    load: async () => (await import("./deploy.ts")).registerDeploy,
  },
  { name: "dev", summary: "local dev chain helpers (chain id 31337 only): advance time and mine blocks", load: async () => (await import("./dev.ts")).registerDev },
  { name: "dispute", summary: "follow one-step disputes (challenge, panel votes, proofs)", load: async () => (await import("./dispute.ts")).registerDispute },
  {
    name: "evaluate",
    summary: "run or verify an evaluate job: per-example outputs of a committed model on a content-addressed set, Merkle root (docs/data.md)",
    load: async () => (await import("./evaluate.ts")).registerEvaluate,
  },
  { name: "generate", summary: "run a generate job offline: exact seeded sampling from a committed char-transformer, one sample per prompt, the dataset and its CID (docs/kinds.md)", load: async () => (await import("./generate.ts")).registerGenerate },
  { name: "jobs", summary: "list the market's jobs (newest first): status, buyer, provider, segments, payment, stake, deadline", load: async () => (await import("./jobs.ts")).registerJobs },
  { name: "policy", summary: "evaluate a closed form of the economics by name (see docs/economics.md)", load: async () => (await import("./policy.ts")).registerPolicy },
  { name: "provenance", summary: "provenance records of finalized jobs (docs/data.md)", load: async () => (await import("./provenance.ts")).registerProvenance },
  { name: "provider", summary: "stake, accept, train, status, attest and get paid", load: async () => (await import("./provider.ts")).registerProvider },
  { name: "quote", summary: "recommend audit rate, stake, challenger bond, panel size and auditor bond for a job (docs/economics.md)", load: async () => (await import("./quote.ts")).registerQuote },
  {
    name: "report",
    summary: "render the HTML report of a job from the chain and the store: timeline, slashed-stake flows, receipts, provenance checks, loss curve",
    load: async () => (await import("./report.ts")).registerReport,
  },
  {
    name: "serve",
    summary: "serve this machine's content store (GET/HEAD /ipfs/<cid>) and board (GET /board/<jobMarket>/<jobId>/<segment|provenance>) read-only over HTTP, for other parties' --source",
    load: async () => (await import("./serve.ts")).registerServe,
  },
  { name: "train", summary: "train a job manifest deterministically, committing a state hash per step (docs/engine.md)", load: async () => (await import("./train.ts")).registerTrain },
];

/**
 * The family `argv` invokes (`pouw buyer status 1` -> buyer, `pouw help buyer` -> buyer), or undefined for
 * `pouw`, `pouw --help`, `pouw --version` and unknown names.
 */
export function invokedFamily(argv: readonly string[]): CommandFamily | undefined {
  const words = argv.filter((a) => !a.startsWith("-"));
  const name = words[0] === "help" ? words[1] : words[0];
  return COMMAND_FAMILIES.find((f) => f.name === name);
}

/**
 * Registers the families: all of them (argv undefined: the whole tree, for tests that walk it), or only the one argv
 * invokes, with every other family as a name and summary for the help listing.
 */
export async function registerCommands(program: Command, argv?: readonly string[]): Promise<void> {
  const wanted = argv === undefined ? undefined : invokedFamily(argv);
  for (const f of COMMAND_FAMILIES) {
    if (argv === undefined || f === wanted) (await f.load())(program);
    else program.command(f.name).description(f.summary);
  }
}
