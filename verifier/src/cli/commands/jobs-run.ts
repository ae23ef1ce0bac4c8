/**
 * The handlers of `pouw jobs` (jobs.ts defines the commands and flags and loads this module only when one runs,
 * so `--help` and flag errors load no chain, engine or solver): each parses its arguments, calls the flow, renders.
 */
import { getAddress, type Address } from "viem";
import { chainDate, getJobs, type JobStatusName } from "../../chain/index.ts";
import { InputError } from "../../errors/index.ts";
import { fmt, parseAddress, readContext, type ReadFlags } from "../context.ts";
import { panelPoolCheck, panelPoolJson } from "../../market/panel-pool.ts";
import { LISTED_JOB_STATUS as LISTED } from "../../chain/enums.ts";

type Opts = ReadFlags & { status?: string; buyer?: string; provider?: string; limit: string; json?: boolean };

/** `open,committed` -> ["Open", "Committed"]; `all` -> every status. */
export function parseStatuses(text: string): JobStatusName[] {
  const out: JobStatusName[] = [];
  for (const word of text.split(",").map((w) => w.trim().toLowerCase())) {
    if (word === "all") return [...LISTED];
    const s = LISTED.find((x) => x.toLowerCase() === word);
    if (!s) throw new InputError(`--status must be a comma-separated list of ${LISTED.map((x) => x.toLowerCase()).join(", ")} or all, got ${JSON.stringify(word)}`);
    if (!out.includes(s)) out.push(s);
  }
  return out;
}

/** `jobs`'s handler (the definitions and flags are in jobs.ts). */
export const jobs = async (opts: Opts) => {
  const statuses = opts.status === undefined ? undefined : parseStatuses(opts.status);
  if (!/^[1-9][0-9]{0,4}$/.test(opts.limit)) throw new InputError(`--limit must be a whole number from 1 to 99999, got ${JSON.stringify(opts.limit)}`);
  const buyer = opts.buyer === undefined ? undefined : getAddress(parseAddress("--buyer", opts.buyer));
  const provider = opts.provider === undefined ? undefined : getAddress(parseAddress("--provider", opts.provider));
  const ctx = await readContext(opts);
  const d = ctx.deployment;
  const filtered = buyer !== undefined || provider !== undefined;
  // with a party filter, read the whole listing and cut after filtering
  const { jobCount, jobs: all } = await getJobs(ctx.clients.public, { jobMarket: d.jobMarket, ...(statuses ? { statuses } : {}), limit: filtered ? Number.MAX_SAFE_INTEGER : Number(opts.limit) });
  const same = (a: Address, b: Address | undefined) => b === undefined || getAddress(a) === b;
  const jobs = all.filter((j) => same(j.buyer, buyer) && same(j.provider, provider)).slice(0, Number(opts.limit));
  const panel = await panelPoolCheck(ctx.clients.public, d);
  if (panel?.warning) process.stderr.write(`pouw: ${panel.warning}\n`);
  const none = "0x0000000000000000000000000000000000000000";
  if (opts.json) {
    process.stdout.write(
      JSON.stringify({
        jobMarket: getAddress(d.jobMarket),
        token: { address: getAddress(d.token), symbol: ctx.symbol },
        jobCount: jobCount.toString(),
        jobs: jobs.map((j) => ({
          jobId: j.jobId.toString(),
          status: j.status,
          buyer: getAddress(j.buyer),
          provider: j.provider === none ? null : getAddress(j.provider),
          nextSegment: j.nextSegment,
          segments: j.policy.segments,
          openDisputes: j.openDisputes,
          payment: j.payment.toString(),
          requiredStake: j.policy.requiredStake.toString(),
          deadline: j.deadline === 0n ? null : chainDate(j.deadline),
        })),
        panelPool: panelPoolJson(panel),
      }) + "\n",
    );
    return;
  }
  if (jobs.length === 0) {
    process.stdout.write(`no ${statuses ? `${statuses.join("/")} ` : ""}jobs${filtered ? " for that party" : ""} (the market has ${jobCount})\n`);
    return;
  }
  const rows = jobs.map((j) => [
    j.jobId.toString(),
    j.status,
    `${j.nextSegment}/${j.policy.segments}`,
    `${fmt(j.payment)} ${ctx.symbol}`,
    `${fmt(j.policy.requiredStake)} ${ctx.symbol}`,
    getAddress(j.buyer),
    j.provider === none ? "-" : getAddress(j.provider),
    j.deadline === 0n ? "-" : chainDate(j.deadline),
  ]);
  const head = ["job", "status", "segments", "payment", "stake", "buyer", "provider", "deadline"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ");
  process.stdout.write([line(head), ...rows.map(line)].join("\n") + "\n");
};
