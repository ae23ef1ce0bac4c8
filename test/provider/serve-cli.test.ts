/**
 * `pouw provider serve|defend|run`'s parsing and rendering without a chain: bad flags are one clear error naming the
 * value, `run` says what it leaves to the service, and a pass renders one line per action.
 */
import { expect } from "chai";
import { InputError } from "../../verifier/src/errors/index.ts";
import { leftToService, parseIntervalSeconds, parseOpeningMode, passLines } from "../../verifier/src/cli/commands/provider-run.ts";
import type { ServePass } from "../../verifier/src/provider/serve.ts";

describe("provider serve: flags and rendering", () => {
  it("parses --openings and refuses anything but recompute or kept, naming the value", () => {
    expect(parseOpeningMode(undefined)).to.equal("recompute");
    expect(parseOpeningMode("kept")).to.equal("kept");
    expect(() => parseOpeningMode("replay")).to.throw(InputError, "--openings replay: must be recompute or kept");
  });

  it("parses --interval in seconds and refuses a non-positive or non-numeric one", () => {
    expect(parseIntervalSeconds(undefined)).to.equal(15_000);
    expect(parseIntervalSeconds("0.5")).to.equal(500);
    for (const bad of ["0", "-3", "soon", "90000"]) expect(() => parseIntervalSeconds(bad), bad).to.throw(InputError, `--interval ${bad}:`);
  });

  it("run leaves a Committed job to the service until its deadline, and a Finalized one to nobody", () => {
    const left = leftToService({ status: "Committed", deadline: 1_800_000_000n }, true);
    expect(left?.until).to.equal("2027-01-15T08:00:00Z");
    expect(left?.duties[0]).to.match(/^answer state openings/);
    expect(leftToService({ status: "Committed", deadline: 1_800_000_000n }, false)?.duties.some((d) => d.includes("openings"))).to.equal(false);
    expect(leftToService({ status: "Active", deadline: 1_800_000_000n }, true)?.until).to.match(/^the challenge window after the last commit/);
    expect(leftToService({ status: "Finalized", deadline: 1_800_000_000n }, true)).to.equal(null);
  });

  it("renders one line per opening, dispute action and failure", () => {
    const pass: ServePass = {
      at: 1_800_000_000,
      remaining: 1,
      openingsDeployed: true,
      jobs: [
        {
          jobId: 3n,
          status: "Committed",
          deadline: 1_800_086_400,
          openings: {
            answered: [{ jobId: 3n, segment: 1, step: 6, mode: "recompute", stateHash: "0x01", checkpointCid: "bafyx", bytes: 10, stepsReplayed: 2, cpuMs: 12.4, wallMs: 20, gasUsed: 1n, transactionHash: "0x02" }],
            failed: [{ step: 2, reason: "expired at 5" }],
          },
          disputes: [{ disputeId: 7n, step: 6, action: "appealed", reason: "valid", open: true, bond: 5n }],
          remaining: "1 open dispute(s)",
        },
      ],
    };
    expect(passLines(pass)).to.deep.equal([
      "job 3: opening of state 6 answered (recompute, 2 steps replayed, 12 ms CPU, checkpoint bafyx)",
      "job 3: opening of state 2 NOT answered: expired at 5",
      "job 3 dispute 7 step 6: appealed: valid",
    ]);
  });
});
