/**
 * `pouw buyer create`'s quote flags refuse bad values before anything is read from a chain or sent: each is a one-line
 * exit 2 naming the flag (no RPC is configured here, so reaching the chain would fail differently).
 */
import { expect } from "chai";
import { runPouw } from "../helpers/cli.ts";

describe("cli: buyer create --margin / --integrity-value refuse bad input before any transaction", function () {
  this.timeout(60_000);
  const create = (...flags: string[]) => runPouw(["buyer", "create", "--manifest", "examples/tiny.json", "--private-key", `0x${"11".repeat(32)}`, "--rpc", "http://127.0.0.1:1", ...flags]);

  for (const [flags, re] of [
    [["--margin", "0"], /--margin must be a number > 0 \(a quote never stops at break-even\), got "0"/],
    [["--margin", "abc"], /--margin must be a number > 0/],
    [["--integrity-value", "-1"], /--integrity-value must be a token amount >= 0, got "-1"/],
    [["--integrity-value", "1", "--stake", "2"], /contradict --stake and --no-quote/],
  ] as const) {
    it(`exit 2 for ${flags.join(" ")}`, async () => {
      const r = await create(...flags);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.match(re);
    });
  }
});
