/**
 * `pouw serve --dapp`: the buyer dApp's files from a fixed map loaded at start (serve/dapp.ts), beside the
 * content store. Only the build's file names are served, with their content types and a CSP; a file the
 * directory also holds is not; traversal attempts are refused before any lookup; a missing build names the fix.
 */
import { expect } from "chai";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DappFilesError, loadDappFiles } from "../../verifier/src/serve/dapp.ts";
import { startContentServer, type ContentServer } from "../../verifier/src/serve/index.ts";
import { LocalDirStore } from "../../verifier/src/store/index.ts";

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: string };

function raw(base: string, method: string, path: string): Promise<Raw> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("serve --dapp: the buyer dApp's static files", () => {
  let dir: string;
  let server: ContentServer;
  let cid: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pouw-serve-dapp-"));
    const dist = join(dir, "dist");
    await mkdir(dist);
    for (const [name, text] of [["index.html", "<!doctype html>page"], ["app.js", "console.log(1)"], ["highs.wasm", "\0asm"], ["detection.json", "{}"], ["secret.txt", "not a build file"]]) {
      await writeFile(join(dist, name!), text!);
    }
    await writeFile(join(dir, "deployment.json"), '{"format":"pouw-deployment-1"}');
    const store = new LocalDirStore(join(dir, "store"));
    cid = await store.put(new TextEncoder().encode("content"));
    server = await startContentServer({ store, dapp: await loadDappFiles(dist, { deploymentPath: join(dir, "deployment.json") }) });
    // INVARIANT under test: the files were read at start; a later change on disk is not served
    await writeFile(join(dist, "app.js"), "changed");
  });
  after(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("serves the page at / and each build file with its content type and a CSP", async () => {
    const expected: [string, string, string][] = [
      ["/", "text/html; charset=utf-8", "<!doctype html>page"],
      ["/index.html", "text/html; charset=utf-8", "<!doctype html>page"],
      ["/app.js", "text/javascript; charset=utf-8", "console.log(1)"],
      ["/highs.wasm", "application/wasm", "\0asm"],
      ["/detection.json", "application/json", "{}"],
      ["/deployment.json", "application/json", '{"format":"pouw-deployment-1"}'],
    ];
    for (const [path, type, body] of expected) {
      const r = await raw(server.url, "GET", path);
      expect(r.status, path).to.equal(200);
      expect(r.headers["content-type"], path).to.equal(type);
      expect(r.headers["x-content-type-options"]).to.equal("nosniff");
      expect(r.headers["content-security-policy"]).to.contain("script-src 'self' 'wasm-unsafe-eval'");
      expect(r.body, path).to.equal(body);
    }
    const head = await raw(server.url, "HEAD", "/app.js");
    expect([head.status, head.body, head.headers["content-length"]]).to.deep.equal([200, "", "14"]);
  });

  it("serves nothing outside the map: other files, traversal, encoded names, other methods", async () => {
    expect((await raw(server.url, "GET", "/secret.txt")).status).to.equal(404);
    expect((await raw(server.url, "GET", "/dist/app.js")).status).to.equal(404);
    for (const path of ["/../deployment.json", "/%2e%2e/deployment.json", "/app.js/", "//app.js", "/./app.js", "/app%2ejs"]) {
      expect((await raw(server.url, "GET", path)).status, path).to.equal(400);
    }
    expect((await raw(server.url, "POST", "/")).status).to.equal(405);
    // the content store is still served beside it
    const c = await raw(server.url, "GET", `/ipfs/${cid}`);
    expect([c.status, c.body]).to.deep.equal([200, "content"]);
  });

  it("refuses to start without a build, naming the fix", async () => {
    try {
      await loadDappFiles(join(dir, "no-such-dist"));
      expect.fail("expected DappFilesError");
    } catch (err) {
      expect(err).to.be.instanceOf(DappFilesError);
      expect((err as DappFilesError).shortMessage).to.equal(`no dApp build at ${join(dir, "no-such-dist")} (index.html missing): run \`npm run dapp:build\` first`);
    }
  });
});
