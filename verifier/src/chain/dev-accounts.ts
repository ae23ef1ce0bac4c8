/**
 * The local dev chain's well-known funded accounts (Hardhat's default mnemonic). Only for chain 31337:
 * the demo, tests and `--dev-account N` on a local `hardhat node`.
 */
import { mnemonicToAccount, type HDAccount } from "viem/accounts";

export const DEV_MNEMONIC = "test test test test test test test test test test test junk";

export function devAccount(index: number): HDAccount {
  return mnemonicToAccount(DEV_MNEMONIC, { addressIndex: index });
}
