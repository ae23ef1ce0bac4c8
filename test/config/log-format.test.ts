/** --log-format / POUW_LOG_FORMAT and a command's own log-level default (`pouw auditor run` logs at info). */
import { expect } from "chai";
import { ConfigError, parseConfig } from "../../verifier/src/config/index.ts";

describe("config: log format and per-command level default", () => {
  it("defaults to auto; flag beats env; rejects other values naming the flag", () => {
    expect(parseConfig({}, {}).logFormat).to.equal("auto");
    expect(parseConfig({}, { POUW_LOG_FORMAT: "json" }).logFormat).to.equal("json");
    expect(parseConfig({ logFormat: "pretty" }, { POUW_LOG_FORMAT: "json" }).logFormat).to.equal("pretty");
    expect(() => parseConfig({ logFormat: "xml" }, {})).to.throw(ConfigError, /^--log-format \/ POUW_LOG_FORMAT: /);
  });

  it("a command's default level sits below the flag and the environment", () => {
    expect(parseConfig({}, {}).logLevel).to.equal("warn");
    expect(parseConfig({}, {}, { logLevel: "info" }).logLevel).to.equal("info");
    expect(parseConfig({}, { POUW_LOG_LEVEL: "error" }, { logLevel: "info" }).logLevel).to.equal("error");
    expect(parseConfig({ logLevel: "debug" }, { POUW_LOG_LEVEL: "error" }, { logLevel: "info" }).logLevel).to.equal("debug");
  });
});
