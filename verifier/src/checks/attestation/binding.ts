/**
 * Binding evidence to one provider's one request, so evidence cannot be replayed for another provider or request. The provider's ProviderRegistry request names a
 * challenge block; the evidence nonce (EAT `eat_nonce`, or a quote's report data) must be
 *
 *   binding = keccak256(abi.encode(address provider, uint256 chainId, address registry, bytes32 challenge))
 *
 * with challenge = blockhash(challengeBlock): unknown before that block (so the evidence is fresh), chosen by no
 * auditor, and spent once on chain (ProviderRegistryChallengeUsed). A committee member signs AttestationVerified only
 * for the provider and request that binding names (`attestationStatement`).
 *
 * Through an evidence bundle (bundle.ts) the evidence commits to evidenceNonce(binding, session key) instead
 * (session.ts). NOT proven: that the attested machine is the one that trains. A provider can still rent a confidential
 * machine; closing that needs the session key required on the provider's later messages (not built).
 *
 * @example
 *   const q = await getAttestationRequest(client, { providerRegistry, requestId });
 *   const challenge = bindingChallenge({ provider: q.provider, chainId, registry: providerRegistry, challenge: q.challenge }, asOfDate);
 *   const verdict = await verifyAttestation(token, { anchors, policy, challenge, now, seen });
 *   const att = attestationStatement(verdict, { requestId, provider: q.provider, binding: q.binding }, BigInt(nowSeconds));
 */
import { encodeAbiParameters, getAddress, keccak256, type Address, type Hex } from "viem";
import type { AttestationVerified } from "../../receipts/index.ts";
import { AttestationError } from "./errors.ts";

export type BindingInput = {
  readonly provider: Address;
  readonly chainId: bigint;
  readonly registry: Address;
  /** blockhash of the request's challenge block (ProviderRegistry requestOf(...).challenge). */
  readonly challenge: Hex;
};

/** The nonce the evidence for `b` must carry; equals ProviderRegistry.bindingOf(requestId). */
export function attestationBinding(b: BindingInput): Hex {
  return keccak256(
    encodeAbiParameters([{ type: "address" }, { type: "uint256" }, { type: "address" }, { type: "bytes32" }], [getAddress(b.provider), b.chainId, getAddress(b.registry), b.challenge]),
  );
}

/** A challenge bound to a provider's request: the nonce is the binding (lowercase 0x hex). */
export type BoundChallenge = {
  readonly nonce: string;
  readonly issuedAt: Date;
  readonly bound: BindingInput;
};

/** The challenge a verifier checks evidence for request `b` against; `issuedAt`: the challenge block's time. */
export function bindingChallenge(b: BindingInput, issuedAt: Date): BoundChallenge {
  return { nonce: attestationBinding(b), issuedAt, bound: b };
}

export type BoundVerdict = {
  readonly tier: number;
  readonly band: number;
  readonly evidenceHash: Hex;
  readonly expiresAt: bigint;
  /** Set when the verified evidence carried a binding: the provider it names and the binding itself. */
  readonly provider?: Address;
  readonly binding?: Hex;
};

/**
 * The AttestationVerified a committee member signs for a verified verdict on request `request`: only for the provider
 * the evidence's binding names, and only when that binding is the request's (relay: evidence for A submitted for B).
 */
export function attestationStatement(verdict: BoundVerdict, request: { readonly requestId: bigint; readonly provider: Address; readonly binding: Hex }, issuedAt: bigint): AttestationVerified {
  if (verdict.provider === undefined || verdict.binding === undefined) {
    throw new AttestationError("binding-mismatch", "the evidence was not verified against a provider binding: nothing to sign");
  }
  // INVARIANT: a statement names the provider whose binding the evidence carries, for the request that fixed it
  if (getAddress(verdict.provider) !== getAddress(request.provider)) {
    throw new AttestationError("binding-mismatch", `the evidence is bound to ${verdict.provider}, request ${request.requestId} is ${request.provider}'s`);
  }
  if (verdict.binding.toLowerCase() !== request.binding.toLowerCase()) {
    throw new AttestationError("binding-mismatch", `the evidence binding is not request ${request.requestId}'s`);
  }
  return { provider: getAddress(request.provider), requestId: request.requestId, tier: verdict.tier, band: verdict.band, evidenceHash: verdict.evidenceHash, expiresAt: verdict.expiresAt, issuedAt };
}
