/**
 * Local attestation verification: no vendor service is contacted. The provider answers the
 * verifier's challenge with an EAT-style JWT signed by a key whose X.509 chain (JWS `x5c` header)
 * ends at a vendor root the verifier configured. verifyAttestation checks, in order: token shape and
 * algorithm, certificate chain (signatures, CA constraints, validity at `now`), token signature and
 * lifetime, nonce (equals the challenge, challenge not older than the policy's max age), claims
 * shape, and the claims policy; then maps the evidence to a tier and trust band (tiers.ts). The tier is the
 * evidence type of the key that verified (its extended key usage, under a root trusted for that type), lowered
 * by the claims when they describe a weaker platform, never raised by them.
 * Every rejection is an AttestationError with its own `reason`.
 * This file only re-exports: the token check is eat.ts, the evidence bundle (every format) bundle.ts, which uses eat.ts.
 *
 * @example
 *   const root = loadVendorRoot(readFileSync(rootPemPath, "utf8"));
 *   const policy = parseAttestationPolicy(config.attestation);
 *   const challenge = createChallenge(new Date());
 *   // ... send challenge.nonce to the provider, receive `token` ...
 *   const anchors = [{ type: "accelerator-cc-report", root }];
 *   const verdict = await verifyAttestation(token, { anchors, policy, challenge, now: new Date() });
 */
export * from "./errors.ts";
export * from "./policy.ts";
export * from "./tiers.ts";
export * from "./binding.ts";
export * from "./session.ts";
export * from "./bundle.ts";
export { checkJwsUniqueKeys } from "./json.ts";
export { verifyTdxQuote, tdxQuoteLength, checkTdxTcbStatus, DEFAULT_REFUSED_TDX_TCB_STATUSES, INTEL_SGX_ROOT_CA_SHA256, TdxCollateralSchema, type TdxPolicy, type TdxVerdict, type TdxCollateral } from "./formats/tdx.ts";
export { verifySevSnp, DEFAULT_MAX_CRL_AGE_SECONDS, DEFAULT_SNP_MIN_TCB, parseSevSnpReport, SNP_REPORT_BYTES, type SevSnpPolicy, type SevSnpVerdict, type SevSnpEvidence } from "./formats/sev-snp.ts";
export { verifyNvidiaEat, compareHexVersions, NvidiaPolicySchema, NRAS_ISSUER, type NvidiaPolicy, type NvidiaVerdict } from "./formats/nvidia.ts";
export { loadVendorRoot, parseDer, type VendorRoot, type ParsedCert } from "./chain.ts";
export * from "./eat.ts";
