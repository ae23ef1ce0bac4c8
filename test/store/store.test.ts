import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, symlink, truncate, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CID } from "multiformats/cid";
import { CidMismatchError, cidOf, ContentNotFoundError, InvalidCidError, LocalDirStore, parseCid, UnreadableContentError, verifyCid, type ContentSource } from "../../verifier/src/store/index.ts";
import { LayeredStore } from "../../verifier/src/store/layered.ts";
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

  describe("hostile entries: the store directory is the provider's, so its entries are attacker input", () => {
    /** Runs `get` and returns its error and how long it took; the read must fail fast, typed, with bounded memory. */
    async function refusal(store: LocalDirStore, cid: string, options?: { maxBytes?: number }): Promise<{ err: UnreadableContentError; ms: number; heapGrowth: number }> {
      const heap = process.memoryUsage().rss;
      const t0 = performance.now();
      try {
        await store.get(cid, options);
      } catch (err) {
        const ms = performance.now() - t0;
        expect(err).to.be.instanceOf(UnreadableContentError);
        expect(err).to.be.instanceOf(ContentNotFoundError);
        return { err: err as UnreadableContentError, ms, heapGrowth: process.memoryUsage().rss - heap };
      }
      throw new Error("hostile entry was read");
    }
    const cid = cidOf(new TextEncoder().encode("a checkpoint"));

    it("refuses a CID file that is a symlink to /dev/zero within a second, without reading it", async () => {
      const store = new LocalDirStore(join(dir, "zero"));
      await mkdir(store.dir, { recursive: true });
      await symlink("/dev/zero", store.pathOf(cid));
      const r = await refusal(store, cid);
      expect(r.err.reason).to.equal("outside-store");
      expect(r.ms).to.be.lessThan(1000);
      expect(r.heapGrowth).to.be.lessThan(64 * 1024 * 1024);
      expect(await store.has(cid)).to.equal(false);
    });

    it("refuses a symlink to a regular file outside the store, accepts one inside it", async () => {
      const store = new LocalDirStore(join(dir, "links"));
      const bytes = new TextEncoder().encode("a checkpoint");
      await mkdir(join(store.dir, "blobs"), { recursive: true });
      await writeFile(join(dir, "outside.bin"), bytes);
      await symlink(join(dir, "outside.bin"), store.pathOf(cid));
      expect((await refusal(store, cid)).err.reason).to.equal("outside-store");
      await rm(store.pathOf(cid));
      await writeFile(join(store.dir, "blobs", "x"), bytes);
      await symlink(join(store.dir, "blobs", "x"), store.pathOf(cid));
      expect(Buffer.from(await store.get(cid)).equals(Buffer.from(bytes))).to.equal(true);
    });

    it("refuses a FIFO under a CID name at once instead of hanging on it", async () => {
      const store = new LocalDirStore(join(dir, "fifo"));
      await mkdir(store.dir, { recursive: true });
      execFileSync("mkfifo", [store.pathOf(cid)]);
      const r = await refusal(store, cid);
      expect(r.err.reason).to.equal("not-a-regular-file");
      expect(r.err.message).to.contain("FIFO");
      expect(r.ms).to.be.lessThan(1000);
    });

    it("refuses a symlink inside the store that points at a FIFO", async () => {
      const store = new LocalDirStore(join(dir, "fifo-link"));
      await mkdir(store.dir, { recursive: true });
      execFileSync("mkfifo", [join(store.dir, "pipe")]);
      await symlink(join(store.dir, "pipe"), store.pathOf(cid));
      expect((await refusal(store, cid)).err.reason).to.equal("not-a-regular-file");
    });

    it("refuses a file over the cap (the caller's, or the store's default) before reading it", async () => {
      const store = new LocalDirStore(join(dir, "big"), { maxBytes: 1 << 20 });
      await mkdir(store.dir, { recursive: true });
      // a sparse 8 GiB file: costs no disk, and would cost 8 GiB of memory if it were read
      await writeFile(store.pathOf(cid), "");
      await truncate(store.pathOf(cid), 8 * 1024 ** 3);
      const r = await refusal(store, cid);
      expect(r.err.reason).to.equal("too-large");
      expect(r.ms).to.be.lessThan(1000);
      expect(r.heapGrowth).to.be.lessThan(64 * 1024 * 1024);
      const small = await store.put(new Uint8Array(4096));
      expect((await refusal(store, small, { maxBytes: 4095 })).err.reason).to.equal("too-large");
      expect((await store.get(small, { maxBytes: 4096 })).length).to.equal(4096);
      expect(() => new LocalDirStore(dir, { maxBytes: -1 })).to.throw(InputError);
    });

    it("put replaces a planted entry, and a layered store re-fetches over it from a remote", async () => {
      const bytes = new TextEncoder().encode("a checkpoint");
      const local = new LocalDirStore(join(dir, "replace"));
      await mkdir(local.dir, { recursive: true });
      await symlink("/dev/zero", local.pathOf(cid));
      const remote: ContentSource = { get: async () => bytes, has: async () => true };
      const layered = new LayeredStore(local, [remote]);
      expect(Buffer.from(await layered.get(cid)).equals(Buffer.from(bytes))).to.equal(true);
      expect(Buffer.from(await local.get(cid)).equals(Buffer.from(bytes))).to.equal(true);
    });
  });
});
