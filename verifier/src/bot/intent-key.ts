/**
 * The key of an intent: one typed value, one format, one parse. A key names what an intent does, so recording the
 * same intent twice (db.addIntent, unique by key) is a no-op: a restart neither loses nor repeats a transaction.
 *
 *   challenge round      approveBond:J:S[:cC][:rN][:topK]  commitChallenge:J:S[:cC][:rN][:renewK]  challenge:J:S[:cC][:rN]
 *   receipt              receipt:J:S[:cC]
 *   tenure               reportTimeout:J:PROVIDER:NEXT  reopenJob:J:PROVIDER:NEXT
 *   dispute resolution   resolve:DISPUTE[:rN]
 *   credit claims        claimStake:N  claimDispute:N  claimForfeit:N
 *   step sampling        requestOpening:J:T
 *   kind job result      recordKindResult:J
 *
 * J is the job id, S the segment, C the commit the intent is about (the first COMMIT_TAG_HEX hex digits of the hash of
 * the block whose SegmentCommitted event the bot audited: a commit a reorg replaced at the same (J, S) is a new commit
 * with its own keys, never a no-op under the old ones; absent in keys recorded before commits were tagged), rN the challenge round or, on resolve, the dispute's appeal round (absent for
 * round 1: resolving a split Fault opens an appeal round, which needs its own resolve), topK the K-th approval re-sent when the
 * allowance fell short, renewK the K-th renewal of an expired challenge commitment, NEXT the provider's next segment
 * (a later tenure of the same provider gets its own key), N the claim's sequence number, T the state asked for (its
 * opening is one per (job, state, requester) on chain, so one key per state).
 */
import { getAddress, isAddress, type Address } from "viem";
import { InputError } from "../errors/index.ts";

export const ROUND_KINDS = ["approveBond", "commitChallenge", "challenge"] as const;
export const CLAIM_KINDS = ["claimStake", "claimDispute", "claimForfeit"] as const;
export type RoundKind = (typeof ROUND_KINDS)[number];
export type ClaimKind = (typeof CLAIM_KINDS)[number];

/** Hex digits of the commit's block hash in a key (48 bits: two commits of one (job, segment) never share a tag in practice). */
export const COMMIT_TAG_HEX = 12;

/** The tag of the commit mined in block `blockHash` (the `C` of a key), or undefined for a commit recorded without its block hash. */
export function commitTag(blockHash: string | null | undefined): string | undefined {
  if (!blockHash) return undefined;
  return blockHash.toLowerCase().replace(/^0x/, "").slice(0, COMMIT_TAG_HEX);
}

export type IntentKey =
  /** One transaction of a challenge round (round 1 and up); `top`/`renew` only on approveBond/commitChallenge. */
  | { kind: RoundKind; jobId: bigint; segment: number; commit?: string; round: number; top?: number; renew?: number }
  | { kind: "receipt"; jobId: bigint; segment: number; commit?: string }
  | { kind: "reportTimeout" | "reopenJob"; jobId: bigint; provider: Address; nextSegment: number }
  /** `settle`: the resolve after the provider's appeal window of a unanimous first-round Fault passed unused. */
  | { kind: "resolve"; disputeId: bigint; round: number; settle?: true }
  | { kind: "requestOpening"; jobId: bigint; step: number }
  /** KindRecords.recordResult of a finalized evaluate or generate job (one record per job on chain, so one key). */
  | { kind: "recordKindResult"; jobId: bigint }
  | { kind: ClaimKind; n: number };

/** A key that does not parse: a database written by something else, or a bug; never guessed at. */
export class IntentKeyError extends InputError {
  override name = "IntentKeyError";
  override readonly code: string = "INTENT_KEY";
}

const UINT = /^(0|[1-9][0-9]*)$/;
const uint = (text: string | undefined, what: string, key: string): number => {
  if (text === undefined || !UINT.test(text) || !Number.isSafeInteger(Number(text))) throw new IntentKeyError(`intent key ${JSON.stringify(key)}: ${what} ${JSON.stringify(text)} is not a non-negative integer`);
  return Number(text);
};
const bigUint = (text: string | undefined, what: string, key: string): bigint => {
  if (text === undefined || !UINT.test(text)) throw new IntentKeyError(`intent key ${JSON.stringify(key)}: ${what} ${JSON.stringify(text)} is not a non-negative integer`);
  return BigInt(text);
};

const commitPart = (commit: string | undefined) => (commit === undefined ? "" : `:c${commit}`);
const COMMIT = /^c[0-9a-f]+$/;

/** The round part of a challenge key: `J:S[:cC]` for round 1, `J:S[:cC]:rN` after. Intents of one round share it. */
export function roundId(k: { jobId: bigint; segment: number; commit?: string; round: number }): string {
  return `${k.jobId}:${k.segment}${commitPart(k.commit)}${k.round === 1 ? "" : `:r${k.round}`}`;
}

export function formatIntentKey(k: IntentKey): string {
  switch (k.kind) {
    case "approveBond":
    case "commitChallenge":
    case "challenge":
      return `${k.kind}:${roundId(k)}${k.top === undefined ? "" : `:top${k.top}`}${k.renew === undefined ? "" : `:renew${k.renew}`}`;
    case "receipt":
      return `receipt:${k.jobId}:${k.segment}${commitPart(k.commit)}`;
    case "reportTimeout":
    case "reopenJob":
      return `${k.kind}:${k.jobId}:${k.provider}:${k.nextSegment}`;
    case "resolve":
      return `resolve:${k.disputeId}${k.round === 1 ? "" : `:r${k.round}`}${k.settle ? ":settle" : ""}`;
    case "requestOpening":
      return `requestOpening:${k.jobId}:${k.step}`;
    case "recordKindResult":
      return `recordKindResult:${k.jobId}`;
    default:
      return `${k.kind}:${k.n}`;
  }
}

/** The typed key of `text`; IntentKeyError when it is not one formatIntentKey writes. */
export function parseIntentKey(text: string): IntentKey {
  const [kind, ...rest] = text.split(":");
  switch (kind) {
    case "approveBond":
    case "commitChallenge":
    case "challenge": {
      const [j, s, ...tail] = rest;
      const k: { kind: RoundKind; jobId: bigint; segment: number; commit?: string; round: number; top?: number; renew?: number } = { kind, jobId: bigUint(j, "job id", text), segment: uint(s, "segment", text), round: 1 };
      let part = tail.shift();
      if (part !== undefined && COMMIT.test(part)) {
        k.commit = part.slice(1);
        part = tail.shift();
      }
      if (part !== undefined && /^r[0-9]/.test(part)) {
        k.round = uint(part.slice(1), "round", text);
        if (k.round < 2) throw new IntentKeyError(`intent key ${JSON.stringify(text)}: round ${k.round} is written without its :r part`);
        part = tail.shift();
      }
      if (part !== undefined && kind === "approveBond" && part.startsWith("top")) {
        k.top = uint(part.slice(3), "approval number", text);
        part = tail.shift();
      } else if (part !== undefined && kind === "commitChallenge" && part.startsWith("renew")) {
        k.renew = uint(part.slice(5), "renewal number", text);
        part = tail.shift();
      }
      if (part !== undefined) throw new IntentKeyError(`intent key ${JSON.stringify(text)}: unexpected part ${JSON.stringify(part)}`);
      return k;
    }
    case "receipt": {
      if (rest.length !== 2 && rest.length !== 3) break;
      const k = { kind, jobId: bigUint(rest[0], "job id", text), segment: uint(rest[1], "segment", text) };
      if (rest.length === 2) return k;
      if (!COMMIT.test(rest[2]!)) throw new IntentKeyError(`intent key ${JSON.stringify(text)}: unexpected part ${JSON.stringify(rest[2])}`);
      return { ...k, commit: rest[2]!.slice(1) };
    }
    case "reportTimeout":
    case "reopenJob": {
      if (rest.length !== 3) break;
      if (!isAddress(rest[1]!)) throw new IntentKeyError(`intent key ${JSON.stringify(text)}: provider ${JSON.stringify(rest[1])} is not an address`);
      return { kind, jobId: bigUint(rest[0], "job id", text), provider: getAddress(rest[1]!), nextSegment: uint(rest[2], "next segment", text) };
    }
    case "resolve": {
      const settle = rest.at(-1) === "settle";
      if (settle) rest.pop();
      if (rest.length !== 1 && rest.length !== 2) break;
      const disputeId = bigUint(rest[0], "dispute id", text);
      if (rest.length === 1) return settle ? { kind, disputeId, round: 1, settle } : { kind, disputeId, round: 1 };
      if (!/^r[0-9]/.test(rest[1]!)) throw new IntentKeyError(`intent key ${JSON.stringify(text)}: unexpected part ${JSON.stringify(rest[1])}`);
      const round = uint(rest[1]!.slice(1), "round", text);
      if (round < 2) throw new IntentKeyError(`intent key ${JSON.stringify(text)}: round ${round} is written without its :r part`);
      return settle ? { kind, disputeId, round, settle } : { kind, disputeId, round };
    }
    case "requestOpening":
      if (rest.length !== 2) break;
      return { kind, jobId: bigUint(rest[0], "job id", text), step: uint(rest[1], "state", text) };
    case "recordKindResult":
      if (rest.length !== 1) break;
      return { kind, jobId: bigUint(rest[0], "job id", text) };
    case "claimStake":
    case "claimDispute":
    case "claimForfeit":
      if (rest.length !== 1) break;
      return { kind, n: uint(rest[0], "claim number", text) };
    default:
      throw new IntentKeyError(`intent key ${JSON.stringify(text)}: unknown kind ${JSON.stringify(kind)}`);
  }
  throw new IntentKeyError(`intent key ${JSON.stringify(text)}: wrong number of parts for ${kind}`);
}

/** The challenge round a key belongs to (`J:S[:cC][:rN]`), or undefined for a key outside a challenge round. */
export function roundOf(text: string): string | undefined {
  if (!(ROUND_KINDS as readonly string[]).includes(text.split(":")[0]!)) return undefined;
  const k = parseIntentKey(text);
  return k.kind === "approveBond" || k.kind === "commitChallenge" || k.kind === "challenge" ? roundId(k) : undefined;
}
