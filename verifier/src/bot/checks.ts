/** The bot's audit entry points live in checks/ (checks/target.ts); re-exported here for bot/dispute.ts's import. */
export { startCheckpointUnavailable, type StepClaim } from "../checks/target.ts";
