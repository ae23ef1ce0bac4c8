/**
 * `pouw deploy [--rpc URL] [--token ADDR]`: deploy and wire the market contracts (token unless given,
 * StakeVault, AuditorRegistry, JobMarket, with --registries also ProviderRegistry and DataRegistry and
 * JobMarket.setRegistries, then the step verifier and DisputeGame with the dispute roles)
 * and write the deployment file the other commands read (default .pouw/deployment.json). Without --token
 * it deploys the mintable dev token (local chains).
 */
import type { Command } from "commander";
import { deployDisputeGame, deployMarket, writeDeployment } from "../../chain/index.ts";
import { InputError } from "../../errors/index.ts";
import { chainContext, fmt, parseAddress, parseAmount, parseSeconds, withConfig } from "../context.ts";

export function registerDeploy(program: Command): void {
  withConfig(
    program
      .command("deploy")
      .description("deploy StakeVault, AuditorRegistry and JobMarket (and the dev token) and write the deployment file")
      .option(
        "--registries",
        "also deploy ProviderRegistry and DataRegistry and call JobMarket.setRegistries (needed by recordReceipt; then every manifest corpus must be registered in DataRegistry, or provenance checks fail)",
      )
      .option("--token <address>", "existing ERC-20 for payment, stake and bonds (default: deploy the dev TestToken)")
      .option("--unbonding-delay <seconds>", "StakeVault unbonding delay", "604800")
      .option("--min-bond <amount>", "minimum auditor bond (tokens)", "100")
      .option("--exit-delay <seconds>", "auditor exit delay", "1209600"),
  ).action(async (opts: Record<string, string | undefined> & { registries?: boolean }) => {
    const unbondingDelaySeconds = BigInt(parseSeconds("--unbonding-delay", opts.unbondingDelay!));
    const minBond = parseAmount("--min-bond", opts.minBond!);
    const exitDelaySeconds = BigInt(parseSeconds("--exit-delay", opts.exitDelay!));
    const token = opts.token ? parseAddress("--token", opts.token) : undefined;
    const ctx = await chainContext(opts as Record<string, string | undefined>, { needDeployment: false });
    if (!token && ctx.chainId !== 31337) throw new InputError(`chain ${ctx.chainId} is not the local dev chain: pass --token with the ERC-20 to use`);
    // NOTE: registries are opt-in here: with a DataRegistry set, provenance verification (buyer fetch) requires every
    // manifest corpus to be registered, and buyer create does not register corpora yet.
    const d = await deployMarket(ctx.clients, { unbondingDelaySeconds, minBond, exitDelaySeconds, ...(token ? { token } : {}), ...(opts.registries === true ? {} : { registries: false as const }) });
    const { gasUsed: marketGas, ...market } = d;
    const game = await deployDisputeGame(ctx.clients, { deployment: market });
    const deployment = { ...market, disputeGame: game.disputeGame };
    const gasUsed = marketGas + game.gasUsed;
    await writeDeployment(ctx.config.deploymentPath, deployment);
    process.stdout.write(
      [
        `deployed on chain ${d.chainId} (gas ${gasUsed}), min auditor bond ${fmt(minBond)}`,
        `token            ${d.token}${d.devToken ? " (dev TestToken)" : ""}`,
        `StakeVault       ${d.stakeVault}`,
        `AuditorRegistry  ${d.auditorRegistry}`,
        `JobMarket        ${d.jobMarket}`,
        ...(d.providerRegistry ? [`ProviderRegistry ${d.providerRegistry}`, `DataRegistry     ${d.dataRegistry} (JobMarket.setRegistries done)`] : ["registries       not set (--registries): receipts are not anchored"]),
        `DisputeGame      ${game.disputeGame} (step verifier ${game.stepVerifier})`,
        `wrote ${ctx.config.deploymentPath}`,
      ].join("\n") + "\n",
    );
  });
}
