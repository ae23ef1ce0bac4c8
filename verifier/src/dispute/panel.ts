/**
 * Serving on a panel: decide the one disputed step by recomputing it with the engine's step function, then commit
 * (ballot persisted first) and later reveal.
 *
 * How a member decides: checks/decide.ts decideStep, the audit pipeline's rule for one disputed step (the same
 * openSegment and replay the bot's and `pouw audit`'s recompute run).
 */
import { zeroHash, type Address, type Hex } from "viem";
import { getBallot } from "../chain/getBallot.ts";
import { commitVote } from "../chain/commitVote.ts";
import type { ChainClients } from "../chain/clients.ts";
import { drawPanel } from "../chain/drawPanel.ts";
import { ContractRevertError } from "../chain/errors.ts";
import { getDispute } from "../chain/getDispute.ts";
import { revealVote } from "../chain/revealVote.ts";
import { logger } from "../log/index.ts";
import { BallotMissingError } from "./errors.ts";
import { BallotStore, newSalt, VOTE_VALUE, voteCommitment, type PanelVote } from "./ballots.ts";

const log = logger("dispute.panel");

export { decideStep, type DecideStepParameters, type StepDecision } from "../checks/decide.ts";
import type { StepDecision } from "../checks/decide.ts";

export type ServePanelParameters = {
  disputeGame: Address;
  disputeId: bigint;
  ballots: BallotStore;
  /** Decides the step (decideStep with the member's view of the provider's data); called once, before committing. */
  decide: () => Promise<StepDecision>;
};

/** What servePanel did on this call. */
export type ServePanelReturnType =
  | { action: "not-member" | "waiting-seed" | "waiting-reveal" | "done" | "resolved" | "missed-commit" | "no-panel"; vote?: PanelVote }
  | { action: "committed" | "revealed"; vote: PanelVote; hash: Hex; gasUsed: bigint };

/**
 * One pass of a panel member's duty on a dispute; call it again on every new block or timer tick. It commits
 * (after persisting the ballot) in the commit phase and reveals in the reveal phase; it never double-sends.
 */
export async function servePanel(clients: ChainClients, p: ServePanelParameters): Promise<ServePanelReturnType> {
  const me = clients.account.address;
  let d = await getDispute(clients.public, { disputeGame: p.disputeGame, disputeId: p.disputeId });
  if (d.phase === "resolved") return { action: "resolved" };
  if (d.panel.length === 0) {
    if (d.phase === "seed") return { action: "waiting-seed" };
    try {
      await drawPanel(clients, { disputeGame: p.disputeGame, disputeId: p.disputeId });
    } catch (err) {
      // the seed left blockhash range before anyone drew (DisputeGame never reseeds): this round never gets a panel
      if (err instanceof ContractRevertError && err.errorName === "DisputeGameSeedExpired") return { action: "no-panel" };
      throw err;
    }
    d = await getDispute(clients.public, { disputeGame: p.disputeGame, disputeId: p.disputeId });
    if (d.panel.length === 0) return { action: "waiting-seed" };
  }
  if (!d.panel.some((m) => m.toLowerCase() === me.toLowerCase())) return { action: "not-member" };
  // the current round's ballot (ballotOf reads the round the dispute is in; an appeal round is a fresh panel and vote)
  const round = Number(d.round);
  const { commitment, vote } = await getBallot(clients.public, { disputeGame: p.disputeGame, disputeId: p.disputeId, member: me });
  let ballot = await p.ballots.load(p.disputeGame, p.disputeId, me, round);
  if (commitment === zeroHash) {
    if (d.phase !== "commit") return { action: "missed-commit" };
    if (!ballot) {
      const decision = await p.decide();
      const salt = newSalt();
      ballot = { disputeGame: p.disputeGame, disputeId: p.disputeId, member: me, vote: decision.vote, salt, commitment: voteCommitment(decision.vote, salt, me), reason: decision.reason, round };
      // IMPORTANT: the salt is on disk before the commitment leaves the process.
      await p.ballots.save(ballot);
    }
    const r = await commitVote(clients, { disputeGame: p.disputeGame, disputeId: p.disputeId, commitment: ballot.commitment });
    log.info({ disputeId: p.disputeId, round, vote: ballot.vote }, "vote committed");
    return { action: "committed", vote: ballot.vote, hash: r.hash, gasUsed: r.gasUsed };
  }
  if (vote !== "None") return { action: "done" };
  if (d.phase !== "reveal") return { action: "waiting-reveal" };
  if (!ballot || ballot.commitment !== commitment) {
    throw new BallotMissingError(`dispute ${p.disputeId}: committed ${commitment} but no matching ballot in ${p.ballots.dir}`);
  }
  const r = await revealVote(clients, { disputeGame: p.disputeGame, disputeId: p.disputeId, vote: VOTE_VALUE[ballot.vote], salt: ballot.salt });
  log.info({ disputeId: p.disputeId, vote: ballot.vote }, "vote revealed");
  return { action: "revealed", vote: ballot.vote, hash: r.hash, gasUsed: r.gasUsed };
}
