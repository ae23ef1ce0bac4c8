/**
 * Panel ballots persisted before the commit transaction is signed: a member that commits and then loses its salt
 * cannot reveal and forfeits part of its bond as silent, so the salt is written (atomically, mode 0600) first.
 * One JSON file per (dispute, appeal round, member) under the ballot directory: a member drawn again in an appeal round
 * decides anew and commits with a fresh salt (its round-1 vote and salt are public once revealed, so reusing them
 * would show its appeal vote before the reveal phase).
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { encodeAbiParameters, getAddress, keccak256, toHex, type Address, type Hex } from "viem";
import { z } from "zod";
import { DisputeInputError } from "./errors.ts";

export type PanelVote = "Valid" | "Fault";
/** Numeric values of IDisputeGame.Vote. */
export const VOTE_VALUE: Record<PanelVote, 1 | 2> = { Valid: 1, Fault: 2 };

/** keccak256(abi.encode(uint8 vote, bytes32 salt, address member)), as DisputeGame.voteCommitment (pure). */
export function voteCommitment(vote: PanelVote, salt: Hex, member: Address): Hex {
  return keccak256(encodeAbiParameters([{ type: "uint8" }, { type: "bytes32" }, { type: "address" }], [VOTE_VALUE[vote], salt, member]));
}

/** 32 random bytes. */
export function newSalt(): Hex {
  return toHex(randomBytes(32));
}

const Ballot = z.strictObject({
  format: z.literal("pouw-ballot-1"),
  disputeGame: z.string(),
  disputeId: z.string().regex(/^[0-9]+$/),
  member: z.string(),
  vote: z.enum(["Valid", "Fault"]),
  salt: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  commitment: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  reason: z.string(),
  round: z.number().int().min(1).optional(),
});

export type Ballot = {
  disputeGame: Address;
  disputeId: bigint;
  member: Address;
  vote: PanelVote;
  salt: Hex;
  commitment: Hex;
  /** Why the member voted so (the recompute result), for the operator. */
  reason: string;
  /** The dispute's round (1 = the first panel, 2.. = appeal panels); absent means 1. */
  round?: number;
};

export class BallotStore {
  readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
  }

  private path(disputeGame: Address, disputeId: bigint, member: Address, round = 1): string {
    // round 1 keeps the name ballots had before appeal rounds existed, so a restarted bot finds them
    const r = round === 1 ? "" : `-r${round}`;
    return join(this.dir, `ballot-${getAddress(disputeGame)}-${disputeId}${r}-${getAddress(member)}.json`);
  }

  /** Writes the ballot atomically (temp file + rename), readable by the owner only. */
  async save(b: Ballot): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const path = this.path(b.disputeGame, b.disputeId, b.member, b.round ?? 1);
    const text = JSON.stringify({ format: "pouw-ballot-1", ...b, disputeId: b.disputeId.toString() }, null, 2);
    await writeFile(`${path}.tmp`, text, { mode: 0o600 });
    await rename(`${path}.tmp`, path);
  }

  /** The saved ballot of `round` (default 1), or undefined when none exists. */
  async load(disputeGame: Address, disputeId: bigint, member: Address, round = 1): Promise<Ballot | undefined> {
    let text: string;
    try {
      text = await readFile(this.path(disputeGame, disputeId, member, round), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    const parsed = Ballot.safeParse(JSON.parse(text));
    if (!parsed.success) throw new DisputeInputError(`ballot file for dispute ${disputeId} is malformed`, { details: parsed.error.message });
    const v = parsed.data;
    return { ...v, disputeGame: getAddress(v.disputeGame), member: getAddress(v.member), disputeId: BigInt(v.disputeId), salt: v.salt as Hex, commitment: v.commitment as Hex };
  }
}
