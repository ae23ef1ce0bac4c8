/**
 * `pouw dev advance` in-process through main(argv): against a local chain (Hardhat's in-process network over JSON-RPC, test/helpers/chain.ts) it moves the clock by SECONDS and mines
 * --blocks blocks (read back from the node, not from the command's own output); bad input exits 2 with one line; a
 * JSON-RPC endpoint whose chain id is not 31337 is refused with one line, exit 2, and is sent no dev method.
 */
import { expect } from "chai";
import { createServer, type Server } from "node:http";
import { runPouw } from "./in-process.ts";
import { rpc } from "../e2e/helpers.ts";
import { startLocalChain, type LocalChain } from "../helpers/chain.ts";

const run = runPouw;

const head = async (url: string) => {
  const b = (await rpc(url, "eth_getBlockByNumber", ["latest", false])) as { number: string; timestamp: string };
  return { number: Number(b.number), timestamp: Number(b.timestamp) };
};

describe("pouw dev advance (in-process)", function () {
  this.timeout(120_000);
  let node: LocalChain;
  before(async () => {
    node = await startLocalChain();
  });
  after(async () => node?.stop());

  it("adds SECONDS to the clock and mines one block; --blocks N mines N", async () => {
    const before = await head(node.url);
    let r = await run(["dev", "advance", "3601", "--rpc", node.url]);
    expect(r.code, r.stderr).to.equal(0);
    let after = await head(node.url);
    expect(after.number).to.equal(before.number + 1);
    expect(after.timestamp - before.timestamp).to.be.within(3601, 3601 + 60);
    expect(r.stdout).to.equal(`block ${after.number} at ${new Date(after.timestamp * 1000).toISOString().replace(/\.000Z$/, "Z")} (+${after.timestamp - before.timestamp} s, +1 block)\n`);
    expect(r.stderr).to.equal("");

    const mid = after;
    r = await run(["dev", "advance-time", "--blocks", "5", "--json", "--rpc", node.url]);
    expect(r.code, r.stderr).to.equal(0);
    after = await head(node.url);
    expect(after.number).to.equal(mid.number + 5);
    expect(after.timestamp - mid.timestamp).to.be.within(4, 4 + 60);
    const json = JSON.parse(r.stdout) as { chainId: number; seconds: number; blocks: number; before: { number: string }; after: { number: string; timestamp: string } };
    expect(json).to.deep.include({ chainId: 31337, seconds: 0, blocks: 5 });
    expect(json.before.number).to.equal(String(mid.number));
    expect(json.after).to.deep.equal({ number: String(after.number), timestamp: String(after.timestamp) });
  });

  it("exits 2 with one line on bad input", async () => {
    const start = await head(node.url);
    for (const [args, message] of [
      [["dev", "advance", "-5"], /^pouw: SECONDS must be a whole number from 0 to 315360000, got "-5"\n$/],
      [["dev", "advance", "1.5"], /^pouw: SECONDS must be a whole number/],
      [["dev", "advance", "10", "--blocks", "0"], /^pouw: --blocks must be a whole number from 1 to 100000, got "0"\n$/],
    ] as const) {
      const r = await run([...args, "--rpc", node.url]);
      expect(r.code, args.join(" ")).to.equal(2);
      expect(r.stderr, args.join(" ")).to.match(message);
    }
    expect(await head(node.url)).to.deep.equal(start);
  });

  it("refuses a chain whose id is not 31337 before sending any dev method", async () => {
    const methods: string[] = [];
    const server: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const msg = JSON.parse(body) as { id: number; method: string };
        methods.push(msg.method);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: msg.method === "eth_chainId" ? "0x1" : null }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const r = await run(["dev", "advance", "3600", "--rpc", url]);
      expect(r.code).to.equal(2);
      expect(r.stderr).to.equal(`pouw: pouw dev advance works only on the local dev chain (31337); ${url} is chain 1\n`);
      expect(r.stdout).to.equal("");
      expect(methods).to.deep.equal(["eth_chainId"]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
