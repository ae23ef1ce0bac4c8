/**
 * Deploys the PoUW market set against an existing ERC-20 given as the `token` parameter, e.g.
 *   npx hardhat ignition deploy ignition/modules/PoUWWithToken.ts --network <net> --parameters params.json
 * with params.json = { "PoUWWithToken": { "token": "0x..." } }.
 */
import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";
import { buildMarket } from "./market.ts";

export default buildModule("PoUWWithToken", (m) => {
  return buildMarket(m, m.getParameter<string>("token"));
});
