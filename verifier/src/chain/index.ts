/**
 * viem actions over the market contracts, one per file, typed from the generated ABIs (abi/, `npm run abi`).
 * Every write goes through send.ts (sign once, persist, broadcast idempotently); every revert becomes a
 * ContractRevertError named after the contract's custom error (errors.ts).
 */
export * from "./errors.ts";
export * from "./clients.ts";
export * from "./retry.ts";
export * from "./send.ts";
export * from "./deployment.ts";
export * from "./deployMarket.ts";
export * from "./getJob.ts";
export * from "./createJob.ts";
export * from "./registerCorpus.ts";
export * from "./findCorpus.ts";
export * from "./cancelJob.ts";
export * from "./acceptJob.ts";
export * from "./commitSegment.ts";
export * from "./reportTimeout.ts";
export * from "./finalize.ts";
export * from "./claimPayment.ts";
export * from "./stakeDeposit.ts";
export * from "./requestWithdrawal.ts";
export * from "./withdraw.ts";
export * from "./claimStakeCredit.ts";
export * from "./postBond.ts";
export * from "./requestExit.ts";
export * from "./leaveRegistry.ts";
export * from "./claimBondCredit.ts";
export * from "./requestAttestation.ts";
export * from "./drawAttestationCommittee.ts";
export * from "./recordAttestation.ts";
export * from "./getAttestationRequest.ts";
export * from "./approveToken.ts";
export * from "./mintTestToken.ts";
export * from "./abi/index.ts";
export * from "./dev-accounts.ts";
export * from "./getJobCreated.ts";
export * from "./getSegmentCommits.ts";
export * from "./deployDisputeGame.ts";
export * from "./getWiring.ts";
export * from "./challengeStep.ts";
export * from "./commitChallenge.ts";
export * from "./concede.ts";
export * from "./proveDisputedStep.ts";
export * from "./drawPanel.ts";
export * from "./commitVote.ts";
export * from "./revealVote.ts";
export * from "./resolveDispute.ts";
export * from "./claimDisputeCredit.ts";
export * from "./setCircuitTerms.ts";
export * from "./getDispute.ts";
export * from "./getJobDisputes.ts";
export * from "./getDisputeParams.ts";
export * from "./getAuditorFunds.ts";
export * from "./getHoldings.ts";
export * from "./describeRevert.ts";
