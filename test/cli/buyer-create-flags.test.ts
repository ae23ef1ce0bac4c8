/**
 * `pouw buyer create`'s quote flags refuse bad values before anything is read from a chain or sent: each is a one-line
 * exit 2 naming the flag (no RPC is configured here, so reaching the chain would fail differently); so is a payment
 * below what the job's compute is worth (naming both, and the two ways on).
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
    // tiny's 7,317,504 FLOPs at 0.01 tokens per TFLOP are worth 73,175,040,000 wei; 10^10 wei is below it
    [["--pay", "0.00000001"], /the payment 1e-8 tokens \(10000000000 wei\) is below what the job's compute is worth: 7318000 FLOPs at 0\.01 tokens per TFLOP = 7\.318e-8 tokens \(73175040000 wei\).*--pay compute.*--allow-underpriced/],
  ] as const) {
    it(`exit 2 for ${flags.join(" ")}`, async () => {
      const r = await create(...flags);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr).to.match(re);
    });
  }
});
