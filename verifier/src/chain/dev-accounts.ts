/**
 * The local dev chain's well-known funded accounts (Hardhat's default mnemonic). Only for chain 31337:
 * the demo, tests and `--dev-account N` on a local `hardhat node`.
 */
import { mnemonicToAccount, type HDAccount } from "viem/accounts";

export const DEV_MNEMONIC = "test test test test test test test test test test test junk";

// NOTE: each derivation runs the mnemonic's PBKDF2 (2048 rounds of HMAC-SHA512): ~65 ms here, paid by every fixture
// that builds nine clients. An account holds no state of its own (no nonce manager), so one per index is shared.
const derived = new Map<number, HDAccount>();

export function devAccount(index: number): HDAccount {
  let account = derived.get(index);
  if (account === undefined) {
    account = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: index });
    derived.set(index, account);
  }
  return account;
}
