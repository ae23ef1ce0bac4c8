/**
 * The step verifier's ABI (`Groth16Verifier.verifyProof`, contracts/verifiers/StepVerifier.sol): the generated one
 * (chain/abi, `npm run abi`), under the name the zk module has always exported.
 */
export { groth16VerifierAbi as stepVerifierAbi } from "../chain/abi/Groth16Verifier.ts";
