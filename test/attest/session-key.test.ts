/**
 * The committee's session-key check (attest checkDeclaredSessionKey): a request that declared a session key
 * (ProviderRegistry.sessionKeyOf) gets an attested tier only for a bundle that binds that key; one that declared none
 * gets tier 4 (every bundle binds a key). The on-chain side (the key kept with the request) is contracts/ProviderRegistryDevices.t.sol and
 * test/cli/attest-cli.test.ts.
 */
import { expect } from "chai";
import { checkDeclaredSessionKey } from "../../verifier/src/attest/index.ts";
import { AttestationError } from "../../verifier/src/checks/attestation/index.ts";

describe("attest: the request's declared session key is the bundle's", () => {
  const key = "0x5e55000000000000000000000000000000000001" as const;
  const other = "0x5e55000000000000000000000000000000000002" as const;

  it("passes when the request declares the bundle's key (any letter case)", () => {
    expect(() => checkDeclaredSessionKey({ sessionKey: key }, key)).to.not.throw();
    expect(() => checkDeclaredSessionKey({ sessionKey: key }, key.toUpperCase().replace("0X", "0x") as `0x${string}`)).to.not.throw();
  });

  it("refuses a bundle whose request declared no key (session-key-undeclared: the member signs tier 4)", () => {
    let err: unknown;
    try {
      checkDeclaredSessionKey({ sessionKey: key }, undefined);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(AttestationError);
    expect((err as AttestationError).reason).to.equal("session-key-undeclared");
    expect((err as AttestationError).message).to.include("declares no session key");
  });

  it("refuses a bundle binding another key than the request declared (session-key-undeclared)", () => {
    let err: unknown;
    try {
      checkDeclaredSessionKey({ sessionKey: other }, key);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(AttestationError);
    expect((err as AttestationError).reason).to.equal("session-key-undeclared");
    expect((err as AttestationError).message).to.include("0x5E55000000000000000000000000000000000001".slice(0, 6));
  });
});
