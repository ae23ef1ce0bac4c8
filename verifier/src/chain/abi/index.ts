/** The generated ABI modules (scripts/gen-abi.ts) and one ABI holding every custom error, for decoding reverts. */
import { auditorRegistryAbi } from "./AuditorRegistry.ts";
import { jobMarketAbi } from "./JobMarket.ts";
import { stakeVaultAbi } from "./StakeVault.ts";
import { testTokenAbi } from "./TestToken.ts";

export { auditorRegistryAbi, auditorRegistryBytecode } from "./AuditorRegistry.ts";
export { jobMarketAbi, jobMarketBytecode } from "./JobMarket.ts";
export { stakeVaultAbi, stakeVaultBytecode } from "./StakeVault.ts";
export { testTokenAbi, testTokenBytecode } from "./TestToken.ts";

/** Every error of every contract we call (a revert bubbling up from the vault decodes too). */
export const allErrorsAbi = [...jobMarketAbi, ...stakeVaultAbi, ...auditorRegistryAbi, ...testTokenAbi].filter(
  (item) => item.type === "error",
);
