/**
 * Deploys the PoUW market set on a local chain: the test ERC-20 (LocalToken module) as stake, bond and
 * payment token, then StakeVault, AuditorRegistry, JobMarket, the step verifier, DisputeGame and the registries,
 * each role wired once and no admin left to the deployer (see market.ts, docs/governance.md).
 *
 *   npx hardhat node
 *   npx hardhat ignition deploy ignition/modules/PoUW.ts --network localhost
 *
 * For a chain with a real ERC-20, deploy ignition/modules/PoUWWithToken.ts with the token's address as
 * the `token` parameter instead.
 */
import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import LocalToken from "./LocalToken.ts";
import { buildMarket } from "./market.ts";

export default buildModule("PoUW", (m) => {
  const { token } = m.useModule(LocalToken);
  return { token, ...buildMarket(m, token) };
});
