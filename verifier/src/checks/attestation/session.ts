/**
 * Provider session keys: one key per attestation request, so a replayed statement names the wrong key. The evidence's nonce (EAT `eat_nonce`, or the first 32 bytes of a quote's
 * report data) is not the request binding itself but
 *
 *   evidenceNonce = keccak256(abi.encode(bytes32 binding, address sessionKey))
 *
 * where `sessionKey` is an Ethereum key made inside the attested machine. The bundle carries two EIP-191 signatures:
 *   authorization  by the provider's address: "this session key speaks for me on this binding"
 *   possession     by the session key:        "I hold this key, for this provider and binding"
 * So evidence made on a machine for one provider's key does not verify for another provider (relay: the nonce commits to
 * the binding, which names the provider, and to the key the provider authorized), and a provider cannot name a key it does
 * not control. The recorded evidenceHash covers the bundle, so the session key is fixed on chain with the record.
 *
 * The key is then held to the work: ProviderRegistry keeps the key a request declares with its statement
 * (sessionKeyOf), and JobMarket takes the segment commits of a job accepted at that tier from the session key only
 * (committerOf, JobMarketNotSessionKey; docs/checks.md). NOT proven: that the key's machine ran the training it
 * commits (the disputes check that).
 *
 * @example
 *   const nonce = evidenceNonce(binding, sessionKey.address);          // what the TEE puts in its report data
 *   const authorization = await providerAccount.signMessage({ message: sessionAuthorizationMessage(provider, sessionKey.address, binding) });
 *   const possession = await sessionKey.signMessage({ message: sessionPossessionMessage(provider, binding) });
 */
import { encodeAbiParameters, getAddress, keccak256, recoverMessageAddress, type Address, type Hex } from "viem";
import { AttestationError } from "./errors.ts";

/** The nonce evidence for `binding` and `sessionKey` carries (lowercase 0x hex, 32 bytes). */
export function evidenceNonce(binding: Hex, sessionKey: Address): Hex {
  return keccak256(encodeAbiParameters([{ type: "bytes32" }, { type: "address" }], [binding, getAddress(sessionKey)]));
}

/** What the provider's address signs (EIP-191) to authorize `sessionKey` for `binding`. */
export function sessionAuthorizationMessage(provider: Address, sessionKey: Address, binding: Hex): string {
  return `PoUW attestation session key ${getAddress(sessionKey)} speaks for provider ${getAddress(provider)} on binding ${binding.toLowerCase()}`;
}

/** What the session key signs (EIP-191) to prove it is held, for `provider` and `binding`. */
export function sessionPossessionMessage(provider: Address, binding: Hex): string {
  return `PoUW attestation session key held for provider ${getAddress(provider)} on binding ${binding.toLowerCase()}`;
}

export type SessionKeyProof = {
  readonly sessionKey: Address;
  /** EIP-191 signature by the provider over sessionAuthorizationMessage. */
  readonly authorization: Hex;
  /** EIP-191 signature by the session key over sessionPossessionMessage. */
  readonly possession: Hex;
};

async function recover(message: string, signature: Hex, what: string): Promise<Address> {
  try {
    return await recoverMessageAddress({ message, signature });
  } catch (err) {
    throw new AttestationError("session-key-unauthorized", `the ${what} signature does not decode`, { cause: err });
  }
}

/** Checks both signatures of `proof` for `provider` and `binding`; throws AttestationError("session-key-unauthorized"). */
export async function checkSessionKey(proof: SessionKeyProof, provider: Address, binding: Hex): Promise<void> {
  const by = await recover(sessionAuthorizationMessage(provider, proof.sessionKey, binding), proof.authorization, "session key authorization");
  // INVARIANT: only the provider's own address authorizes a session key for its binding
  if (getAddress(by) !== getAddress(provider)) {
    throw new AttestationError("session-key-unauthorized", `the session key ${proof.sessionKey} is authorized by ${by}, not by the provider ${getAddress(provider)}`);
  }
  const holder = await recover(sessionPossessionMessage(provider, binding), proof.possession, "session key possession");
  if (getAddress(holder) !== getAddress(proof.sessionKey)) {
    throw new AttestationError("session-key-unauthorized", `the possession proof is signed by ${holder}, not by the session key ${proof.sessionKey}`);
  }
}
