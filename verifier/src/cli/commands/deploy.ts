/**
 * `pouw deploy [--rpc URL] [--token ADDR] [--no-registries]`: deploy and wire the market contracts (token
 * unless given, StakeVault, AuditorRegistry, JobMarket, ProviderRegistry and DataRegistry with
 * JobMarket.setRegistries unless --no-registries, then the step verifier and DisputeGame with the dispute
 * roles) and write the deployment file the other commands read (default .pouw/deployment.json). Without
 * --token it deploys the mintable dev token (local chains).
 */
import type { Command } from "commander";
import { deployDisputeGame, deployMarket, writeDeployment } from "../../chain/index.ts";
import { InputError } from "../../errors/index.ts";
import { chainContext, fmt, parseAddress, parseAmount, parseSeconds, withConfig } from "../context.ts";

export function registerDeploy(program: Command): void {
  withConfig(
    program
      .command("deploy")
      .description("deploy StakeVault, AuditorRegistry, JobMarket, the registries and DisputeGame (and the dev token) and write the deployment file")
      .option(
        "--no-registries",
        "skip ProviderRegistry, DataRegistry and JobMarket.setRegistries (then no receipts are anchored, no data terms, no tiers; setRegistries can be called once later)",
      )
      .option("--token <address>", "existing ERC-20 for payment, stake and bonds (default: deploy the dev TestToken)")
      .option("--unbonding-delay <seconds>", "StakeVault unbonding delay", "604800")
      .option("--min-bond <amount>", "minimum auditor bond (tokens)", "100")
      .option("--exit-delay <seconds>", "auditor exit delay (>= seed delay + commit + reveal windows + 1 day: 3 days + 24 s with the dispute defaults)", "1209600")
      .option("--activation-delay <seconds>", "seconds before a new auditor bond counts for panel and attestation-committee draws", "3600"),
  ).action(async (opts: Record<string, string | undefined> & { registries?: boolean }) => {
    const unbondingDelaySeconds = BigInt(parseSeconds("--unbonding-delay", opts.unbondingDelay!));
    const minBond = parseAmount("--min-bond", opts.minBond!);
    const exitDelaySeconds = BigInt(parseSeconds("--exit-delay", opts.exitDelay!));
    const activationDelaySeconds = BigInt(parseSeconds("--activation-delay", opts.activationDelay!));
    const token = opts.token ? parseAddress("--token", opts.token) : undefined;
    const ctx = await chainContext(opts as Record<string, string | undefined>, { needDeployment: false });
    if (!token && ctx.chainId !== 31337) throw new InputError(`chain ${ctx.chainId} is not the local dev chain: pass --token with the ERC-20 to use`);
    const d = await deployMarket(ctx.clients, { unbondingDelaySeconds, minBond, exitDelaySeconds, activationDelaySeconds, ...(token ? { token } : {}), ...(opts.registries === false ? { registries: false as const } : {}) });
    const { gasUsed: marketGas, ...market } = d;
    const game = await deployDisputeGame(ctx.clients, { deployment: market });
    const deployment = { ...market, disputeGame: game.disputeGame };
    const gasUsed = marketGas + game.gasUsed;
    await writeDeployment(ctx.config.deploymentPath, deployment);
    process.stdout.write(
      [
        `deployed on chain ${d.chainId} (gas ${gasUsed}), min auditor bond ${fmt(minBond)}, bonds count for panels after ${activationDelaySeconds} s`,
        `token            ${d.token}${d.devToken ? " (dev TestToken)" : ""}`,
        `StakeVault       ${d.stakeVault}`,
        `AuditorRegistry  ${d.auditorRegistry}`,
        `JobMarket        ${d.jobMarket}`,
        ...(d.providerRegistry ? [`ProviderRegistry ${d.providerRegistry}`, `DataRegistry     ${d.dataRegistry} (JobMarket.setRegistries done)`] : ["registries       not set (--no-registries): no receipts anchored, no data terms"]),
        `DisputeGame      ${game.disputeGame} (step verifier ${game.stepVerifier})`,
        `wrote ${ctx.config.deploymentPath}`,
      ].join("\n") + "\n",
    );
  });
}
