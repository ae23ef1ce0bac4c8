/**
 * Remote sources in the shared config: `--source` (repeatable, replaces the environment) or POUW_SOURCES
 * (comma-separated), validated once; the chain commands and `pouw audit` list the flag in their help.
 */
import { expect } from "chai";
import { buildProgram, main } from "../../verifier/src/cli/pouw.ts";
import { contentContext } from "../../verifier/src/cli/context.ts";
import { ConfigError, parseConfig, parseSources } from "../../verifier/src/config/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";

describe("config: remote sources", () => {
  it("reads --source flags in order, else POUW_SOURCES, trimming trailing slashes and duplicates", () => {
    const env = { POUW_SOURCES: " http://a.example:8090/ , https://b.example/pouw,," };
    expect(parseSources({}, env).sources).to.deep.equal(["http://a.example:8090", "https://b.example/pouw"]);
    expect(parseSources({ source: ["http://c.example/", "http://c.example"] }, env).sources).to.deep.equal(["http://c.example"]);
    expect(parseSources({}, {}).sources).to.deep.equal([]);
    expect(parseSources({}, {}).sourceTimeoutMs).to.equal(30_000);
    expect(parseSources({ sourceTimeout: "500" }, { POUW_SOURCE_TIMEOUT_MS: "9000" }).sourceTimeoutMs).to.equal(500);
    expect(parseSources({}, { POUW_SOURCE_TIMEOUT_MS: "9000" }).sourceTimeoutMs).to.equal(9000);
  });

  it("rejects a source that is not a plain http(s) base URL, naming it", () => {
    const bad: [string, RegExp][] = [
      ["ftp://a.example", /"ftp:\/\/a.example" must be an http\(s\) URL/],
      ["a.example:8090", /must be an http\(s\) URL/],
      ["http://a.example/?x=1", /must not have a query or fragment/],
      ["http://a.example/#x", /must not have a query or fragment/],
      ["http://user:pw@a.example", /must not carry credentials/],
    ];
    for (const [url, msg] of bad) {
      expect(() => parseSources({ source: [url] }, {}), url).to.throw(ConfigError, msg);
      expect(() => parseSources({}, { POUW_SOURCES: url }), url).to.throw(ConfigError, /^--source \/ POUW_SOURCES: /);
    }
    expect(() => parseSources({ source: Array.from({ length: 17 }, (_, i) => `http://h${i}.example`) }, {})).to.throw(ConfigError, /at most 16/);
    for (const t of ["0", "99", "abc", "1.5", "10000000"]) expect(() => parseSources({ sourceTimeout: t }, {}), t).to.throw(ConfigError, /--source-timeout/);
  });

  it("parseConfig carries the sources and puts the board next to the store", () => {
    const c = parseConfig({ source: ["http://p.example:8090"], store: "/tmp/x/store" }, {});
    expect(c.sources).to.deep.equal(["http://p.example:8090"]);
    expect(c.boardDir).to.equal("/tmp/x/board");
    expect(Object.isFrozen(c.sources)).to.equal(true);
  });

  it("the content context is the local store alone without sources, layered with them", async () => {
    const none = await contentContext(parseConfig({ store: "/tmp/x/store" }, {}));
    expect(none.store).to.be.instanceOf(LocalDirStore);
    expect(none.board.pointers.remotes).to.have.length(0);
    const two = await contentContext(parseConfig({ store: "/tmp/x/store", source: ["http://a.example", "http://b.example"] }, {}));
    expect(two.store).to.be.instanceOf(LayeredStore);
    expect((two.store as LayeredStore).remotes.map(String)).to.deep.equal(["http://a.example", "http://b.example"]);
    expect(two.board.pointers.describe()).to.equal("/tmp/x/board, http://a.example, http://b.example");
  });

  it("--ipfs, --ipfs-peer and --ipfs-listen (or POUW_IPFS*) parse into the node's config; bad ones are named", () => {
    expect(parseConfig({ stateDir: "/tmp/s" }, {}).ipfs).to.equal(undefined);
    const peer = "/ip4/127.0.0.1/tcp/4001/p2p/12D3KooWNugwCw4QU8wKbnEhGmGCsYsa2oRzfbNMBxWkvDeQXerR";
    const c = parseConfig({ stateDir: "/tmp/s", ipfs: true, ipfsPeer: [peer, peer] }, {});
    expect(c.ipfs).to.deep.equal({ dir: "/tmp/s/ipfs", listen: [], peers: [peer], timeoutMs: 30_000 });
    expect(parseConfig({ stateDir: "/tmp/s" }, { POUW_IPFS: "1", POUW_IPFS_PEERS: ` ${peer} `, POUW_IPFS_LISTEN: "/ip4/0.0.0.0/tcp/4001" }).ipfs).to.deep.equal({
      dir: "/tmp/s/ipfs",
      listen: ["/ip4/0.0.0.0/tcp/4001"],
      peers: [peer],
      timeoutMs: 30_000,
    });
    // the fetch timeout for absent content: --ipfs-timeout, else POUW_IPFS_TIMEOUT_MS, else the --source-timeout
    expect(parseConfig({ ipfs: true, sourceTimeout: "4000" }, {}).ipfs?.timeoutMs).to.equal(4_000);
    expect(parseConfig({ ipfs: true, sourceTimeout: "4000" }, { POUW_IPFS_TIMEOUT_MS: "2500" }).ipfs?.timeoutMs).to.equal(2_500);
    expect(parseConfig({ ipfs: true, ipfsTimeout: "1200" }, { POUW_IPFS_TIMEOUT_MS: "2500" }).ipfs?.timeoutMs).to.equal(1_200);
    expect(() => parseConfig({ ipfs: true, ipfsTimeout: "50" }, {})).to.throw(ConfigError, /--ipfs-timeout .* between 100 and 9999999, got "50"/);
    expect(() => parseConfig({ ipfs: true }, { POUW_IPFS_TIMEOUT_MS: "soon" })).to.throw(ConfigError, /POUW_IPFS_TIMEOUT_MS/);
    expect(() => parseConfig({ ipfsTimeout: "1000" }, {})).to.throw(ConfigError, /--ipfs-timeout needs --ipfs/);
    expect(() => parseConfig({ ipfsPeer: [peer] }, {})).to.throw(ConfigError, /--ipfs-peer needs --ipfs/);
    expect(() => parseConfig({ ipfs: true, ipfsPeer: ["/ip4/127.0.0.1/tcp/4001"] }, {})).to.throw(ConfigError, /\/p2p\//);
    expect(() => parseConfig({ ipfs: true, ipfsListen: ["/ip4/127.0.0.1/udp/1/quic"] }, {})).to.throw(ConfigError, /not a TCP multiaddr/);
    expect(() => parseConfig({}, { POUW_IPFS: "yes" })).to.throw(ConfigError, /POUW_IPFS/);
  });

  it("every command that reads content lists --source in its help, and serve documents every flag", async () => {
    const program = await buildProgram();
    const help = (path: string[]) => {
      let cmd = program;
      for (const name of path) cmd = cmd.commands.find((c) => c.name() === name)!;
      return cmd;
    };
    for (const path of [["auditor", "run"], ["buyer", "fetch"], ["provider", "run"], ["provider", "claim"], ["audit"]]) {
      expect(help(path).options.map((o) => o.long), path.join(" ")).to.include("--source");
    }
    const serve = help(["serve"]);
    expect(serve.options.map((o) => o.long)).to.include.members(["--host", "--port", "--max-connections", "--store", "--state-dir", "--log-level"]);
    for (const o of serve.options) expect(o.description, o.long).to.have.length.greaterThan(10);
  });

  it("bad --source, --port and --max-connections exit 2 with a one-line reason", async () => {
    const cases: [string[], RegExp][] = [
      [["auditor", "run", "--source", "ftp://x.example"], /^pouw: --source \/ POUW_SOURCES: "ftp:\/\/x.example" must be an http\(s\) URL$/],
      [["buyer", "fetch", "1", "--out", "/tmp/none", "--source", "http://x.example/?q"], /^pouw: --source \/ POUW_SOURCES: .* must not have a query or fragment$/],
      [["audit", "--manifest", "m.json", "--trace", "t", "--source-timeout", "5"], /^pouw: --source-timeout \/ POUW_SOURCE_TIMEOUT_MS: /],
      [["serve", "--port", "70000"], /^pouw: --port must be a TCP port 0\.\.65535/],
      [["serve", "--port", "-1"], /^pouw: --port must be a TCP port/],
      [["serve", "--max-connections", "0"], /^pouw: --max-connections must be a whole number >= 1/],
    ];
    for (const [args, reason] of cases) {
      let err = "";
      const write = process.stderr.write.bind(process.stderr);
      process.stderr.write = ((chunk: string) => ((err += chunk), true)) as typeof process.stderr.write;
      let code: number;
      try {
        code = await main(args);
      } finally {
        process.stderr.write = write;
      }
      expect(code, args.join(" ")).to.equal(2);
      expect(err.trim().split("\n"), args.join(" ")).to.have.length(1);
      expect(err.trim(), args.join(" ")).to.match(reason);
    }
  });
});
