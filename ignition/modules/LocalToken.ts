/**
 * Local chains only: a freely mintable test ERC-20 (contracts/mocks/TestToken.sol) used as the stake,
 * bond and payment token by ignition/modules/PoUW.ts on `npx hardhat node`.
 */
import { buildModule } from "@nomicfoundation/hardhat-ignition/modules";

export default buildModule("LocalToken", (m) => {
  const token = m.contract("TestToken", ["PoUW Test Token", "PTT"]);
  return { token };
});
