/**
 * Disputes off chain: what the challenger bot, panel members, providers and `pouw dispute` call. On-chain actions
 * live one per file in ../chain/ (challengeStep, concede, proveDisputedStep, drawPanel, commitVote, revealVote,
 * resolveDispute, claimDisputeCredit, setCircuitTerms, getDispute, getJobDisputes, deployDisputeGame).
 * See docs/disputes.md.
 */
export * from "./errors.ts";
export * from "./ballots.ts";
export * from "./circuit.ts";
export * from "./terms.ts";
export * from "./challenge.ts";
export * from "./panel.ts";
export * from "./defend.ts";
export * from "./claim.ts";
export * from "./status.ts";
