/**
 * ABI of the generated `Groth16Verifier.verifyProof` (contracts/verifiers/StepVerifier.sol), so that
 * callers type-check without Hardhat's generated artifact types. `VerifierArgs` matches its inputs.
 */
export const stepVerifierAbi = [
  {
    type: "function",
    name: "verifyProof",
    stateMutability: "view",
    inputs: [
      { name: "_pA", type: "uint256[2]" },
      { name: "_pB", type: "uint256[2][2]" },
      { name: "_pC", type: "uint256[2]" },
      { name: "_pubSignals", type: "uint256[4]" },
    ],
    outputs: [{ name: "", type: "bool" }],
  },
] as const;
