/** The generated ABI modules (scripts/gen-abi.ts) and one ABI holding every custom error, for decoding reverts. */
import { auditorRegistryAbi } from "./AuditorRegistry.ts";
import { dataRegistryAbi } from "./DataRegistry.ts";
import { disputeGameAbi } from "./DisputeGame.ts";
import { jobMarketAbi } from "./JobMarket.ts";
import { jobRecordsAbi } from "./JobRecords.ts";
import { kindRecordsAbi } from "./KindRecords.ts";
import { peerDirectoryAbi } from "./PeerDirectory.ts";
import { providerRegistryAbi } from "./ProviderRegistry.ts";
import { stakeVaultAbi } from "./StakeVault.ts";
import { stateOpeningsAbi } from "./StateOpenings.ts";
import { testTokenAbi } from "./TestToken.ts";

export { auditorRegistryAbi, auditorRegistryBytecode } from "./AuditorRegistry.ts";
export { dataRegistryAbi, dataRegistryBytecode } from "./DataRegistry.ts";
export { disputeGameAbi, disputeGameBytecode } from "./DisputeGame.ts";
export { groth16VerifierAbi, groth16VerifierBytecode } from "./Groth16Verifier.ts";
export { jobMarketAbi, jobMarketBytecode } from "./JobMarket.ts";
export { jobRecordsAbi, jobRecordsBytecode } from "./JobRecords.ts";
export { kindRecordsAbi, kindRecordsBytecode } from "./KindRecords.ts";
export { peerDirectoryAbi, peerDirectoryBytecode } from "./PeerDirectory.ts";
export { providerRegistryAbi, providerRegistryBytecode } from "./ProviderRegistry.ts";
export { stakeVaultAbi, stakeVaultBytecode } from "./StakeVault.ts";
export { stateOpeningsAbi, stateOpeningsBytecode } from "./StateOpenings.ts";
export { testTokenAbi, testTokenBytecode } from "./TestToken.ts";
export { contractVersions } from "./versions.ts";

/** Every error of every contract we call (a revert bubbling up from the vault decodes too). */
export const allErrorsAbi = [
  ...jobMarketAbi,
  ...jobRecordsAbi,
  ...kindRecordsAbi,
  ...stakeVaultAbi,
  ...stateOpeningsAbi,
  ...auditorRegistryAbi,
  ...disputeGameAbi,
  ...providerRegistryAbi,
  ...dataRegistryAbi,
  ...peerDirectoryAbi,
  ...testTokenAbi,
].filter(
  (item) => item.type === "error",
);
