/**
 * Deploys the PoUW market set on a local chain: the test ERC-20 (LocalToken module) as stake, bond and
 * payment token, then StakeVault, AuditorRegistry, JobMarket, the step verifier, DisputeGame and the registries,
 * each role wired once and no admin left to the deployer (see market.ts, docs/governance.md).
 *
 *   npx hardhat node
 *   npx hardhat ignition deploy ignition/modules/PoUW.ts --network localhost
 *
 * The step verifier is the committed development one (vkey hash 0): DisputeGame lets it settle disputes on chain
 * 31337 only (`proving()` says Development there, Disabled anywhere else). For a chain with a real ERC-20, deploy
 * ignition/modules/PoUWWithToken.ts with the token's address as the `token` parameter instead (and a ceremony
 * verifier as `stepVerifier` / `stepVkeyHash`, docs/zk.md).
 */
import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import LocalToken from "./LocalToken.ts";
import { buildMarket, developmentVerifier } from "./market.ts";

export default buildModule("PoUW", (m) => {
  const { token } = m.useModule(LocalToken);
  const { stepVerifier, proving } = developmentVerifier(m);
  return { token, stepVerifier, ...buildMarket(m, token, proving) };
});
