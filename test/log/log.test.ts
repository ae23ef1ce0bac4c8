/**
 * Module loggers are taken at import, before the CLI parses --log-level: they must follow setLogLevel
 * (they did not: `pouw serve --log-level debug` logged no request, `--source` fall-throughs were silent).
 */
import { expect } from "chai";
import { logger, setLogLevel } from "../../verifier/src/log/index.ts";

describe("log: module loggers follow setLogLevel", () => {
  after(() => setLogLevel("warn"));

  it("a logger taken before setLogLevel logs at the level set later, and its children too", () => {
    setLogLevel("warn");
    const early = logger("early");
    expect(early.isLevelEnabled("debug")).to.equal(false);
    setLogLevel("debug");
    expect(early.isLevelEnabled("debug")).to.equal(true);
    expect(early.level).to.equal("debug");
    expect(early.child({ job: 1 }).isLevelEnabled("debug")).to.equal(true);
    setLogLevel("error");
    expect(early.isLevelEnabled("warn")).to.equal(false);
    expect(logger("late").isLevelEnabled("error")).to.equal(true);
  });
});
