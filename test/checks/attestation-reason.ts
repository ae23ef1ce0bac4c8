/**
 * The named reason an attestation check refused with: awaits `p`, expects an AttestationError and returns its reason;
 * fails the test when `p` resolves (the evidence got a verdict it should not have).
 *
 * @example
 *   expect(await reasonOf(verifySevSnp(evidence, policy, now))).to.equal("crl-invalid");
 */
import { expect } from "chai";
import { AttestationError, type AttestationReason } from "../../verifier/src/checks/attestation/index.ts";

export async function reasonOf(p: Promise<unknown>): Promise<AttestationReason> {
  try {
    await p;
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(AttestationError);
    return (err as AttestationError).reason;
  }
  return expect.fail("expected a rejection: the evidence got a verdict") as never;
}
