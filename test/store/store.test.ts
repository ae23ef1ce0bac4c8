import { expect } from "chai";
import { mkdtemp, readFile, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CID } from "multiformats/cid";
import { CidMismatchError, cidOf, ContentNotFoundError, InvalidCidError, LocalDirStore, parseCid, verifyCid } from "../../verifier/src/store/index.ts";
import { InputError } from "../../verifier/src/errors/index.ts";

describe("store: CIDv1 content-addressed local directory store", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "pouw-store-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("computes the CID that `ipfs add --cid-version=1 --raw-leaves` gives (fixed vector)", () => {
    expect(cidOf(new TextEncoder().encode("hello\n"))).to.equal("bafkreicysg23kiwv34eg2d7qweipxwosdo2py4ldv42nbauguluen5v6am");
    expect(cidOf(new Uint8Array())).to.equal("bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku");
  });

  it("stores, finds and returns bytes by CID, idempotently", async () => {
    const store = new LocalDirStore(join(dir, "a"));
    const bytes = Uint8Array.from({ length: 1000 }, (_, i) => i % 251);
    const cid = await store.put(bytes);
    expect(cid).to.equal(cidOf(bytes));
    expect(await store.put(bytes)).to.equal(cid);
    expect(await store.has(cid)).to.equal(true);
    expect(Buffer.from(await store.get(cid)).equals(Buffer.from(bytes))).to.equal(true);
  });

  it("rejects a stored file whose bytes do not match its CID", async () => {
    const store = new LocalDirStore(join(dir, "b"));
    const cid = await store.put(new Uint8Array([1, 2, 3, 4]));
    const path = store.pathOf(cid);
    const bytes = await readFile(path);
    bytes[2]! ^= 1;
    await writeFile(path, bytes);
    try {
      await store.get(cid);
      expect.fail("tampered content was returned");
    } catch (err) {
      expect(err).to.be.instanceOf(CidMismatchError);
      expect((err as CidMismatchError).expected).to.equal(cid);
      expect((err as CidMismatchError).actual).to.equal(cidOf(bytes));
    }
  });

  it("reports a missing CID as ContentNotFoundError", async () => {
    const store = new LocalDirStore(join(dir, "c"));
    const cid = cidOf(new Uint8Array([9]));
    expect(await store.has(cid)).to.equal(false);
    try {
      await store.get(cid);
      expect.fail("missing content was returned");
    } catch (err) {
      expect(err).to.be.instanceOf(ContentNotFoundError);
    }
  });

  it("rejects strings that are not CIDv1 raw sha2-256 ids", () => {
    const v0 = CID.parse("QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o").toString();
    for (const bad of ["", "hello", v0, "../../etc/passwd"]) {
      expect(() => parseCid(bad), bad).to.throw(InvalidCidError);
    }
    expect(new InvalidCidError("x")).to.be.instanceOf(InputError);
  });

  it("verifyCid accepts matching bytes and rejects others", () => {
    const bytes = new Uint8Array([5, 6, 7]);
    verifyCid(cidOf(bytes), bytes);
    expect(() => verifyCid(cidOf(bytes), new Uint8Array([5, 6]))).to.throw(CidMismatchError);
  });
});
