/**
 * Deploys the PoUW market set against an existing ERC-20 given as the `token` parameter, e.g.
 *   npx hardhat ignition deploy ignition/modules/PoUWWithToken.ts --network <net> --parameters params.json
 * with params.json = { "PoUWWithToken": { "token": "0x...", "stepVerifier": "0x...", "stepVkeyHash": "0x..." } }.
 * stepVerifier / stepVkeyHash name a ceremony's Groth16 verifier (deployed beforehand) and its vkey hash
 * (docs/zk.md "Deploying with a ceremony key"); without them no verifier is set and proving is disabled
 * (DisputeGame.proving() reads Disabled; every dispute goes to the panel). The development verifier is never
 * deployed by this module.
 */
import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import { buildMarket, parameterVerifier } from "./market.ts";

export default buildModule("PoUWWithToken", (m) => {
  return buildMarket(m, m.getParameter<string>("token"), parameterVerifier(m));
});
