/**
 * The human log format (`--log-format pretty`, the default on a terminal): `HH:MM:SS.mmm LEVEL module: msg key=value`,
 * strings with spaces quoted, objects as JSON; checked against hand-written lines, and end to end through a module logger.
 */
import { expect } from "chai";
import { configureLogging, logger, prettyDestination, prettyLine } from "../../verifier/src/log/index.ts";

describe("log: pretty format", () => {
  after(() => configureLogging({ level: "warn", format: "auto" }));

  it("formats a pino line as time, level, module, message and key=value fields", () => {
    const time = new Date(2026, 0, 2, 9, 8, 7, 6).getTime(); // local time, as printed
    const line = JSON.stringify({ level: 50, time, module: "bot", auditor: "0xAb", jobId: "1", shortfall: "token balance 0 < deposit 1.15", ok: false, n: 3, list: [1, 2], msg: "CANNOT CHALLENGE: short" });
    expect(prettyLine(line)).to.equal(`09:08:07.006 ERROR bot: CANNOT CHALLENGE: short auditor=0xAb jobId=1 shortfall="token balance 0 < deposit 1.15" ok=false n=3 list=[1,2]`);
    expect(prettyLine(JSON.stringify({ level: 30, time, msg: "heartbeat" }))).to.equal("09:08:07.006 INFO  heartbeat");
    expect(prettyLine(line, { color: true })).to.match(/^09:08:07\.006 \x1b\[31;1mERROR\x1b\[0m bot: /);
    expect(prettyLine("not json\n")).to.equal("not json");
  });

  it("module loggers write pretty lines through configureLogging", () => {
    const out: string[] = [];
    configureLogging({ level: "info", format: "pretty", stream: prettyDestination({ write: (s: string) => out.push(s) }) });
    const log = logger("bot").child({ jobId: "2" });
    log.debug("hidden");
    log.info({ segment: 0 }, "audit ok");
    expect(out).to.have.length(1);
    expect(out[0]).to.match(/^\d\d:\d\d:\d\d\.\d{3} INFO  bot: audit ok jobId=2 segment=0\n$/);
  });
});
