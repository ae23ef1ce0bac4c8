/**
 * The contracts' enums by position (contracts/interfaces/I*.sol), so that every reader and every decoded revert
 * names a status instead of printing its number. getJob.ts and getDispute.ts re-export the ones they return.
 */
export const JOB_STATUS = ["None", "Open", "Active", "Committed", "Finalized", "Cancelled", "Refunded", "TimedOut", "Unresolved"] as const;
export type JobStatusName = (typeof JOB_STATUS)[number];
/** The statuses a listed job can have (every one but None). */
export const LISTED_JOB_STATUS = JOB_STATUS.filter((s) => s !== "None");

export const DISPUTE_STATUS = ["None", "Open", "Resolved"] as const;
export const DISPUTE_OUTCOME = ["None", "Conceded", "Proven", "PanelFault", "PanelValid", "NoDecision", "Superseded"] as const;
export type DisputeStatusName = (typeof DISPUTE_STATUS)[number];
export type DisputeOutcomeName = (typeof DISPUTE_OUTCOME)[number];

export const AUDITOR_STATUS = ["None", "Active", "Inactive", "Exiting"] as const;
export type AuditorStatusName = (typeof AUDITOR_STATUS)[number];

/** The name at `index` of an enum, or "status N" for a value the table does not know. */
export const enumName = (names: readonly string[], index: unknown): string => names[Number(index)] ?? `status ${String(index)}`;
