/**
 * Publishing from the page: the manifest after posting, and a buyer's small dataset before quoting. Bytes go to the
 * content server this page is served from (`pouw serve --upload`: PUT /ipfs/<cid>, the server checks the body
 * against the CID and refuses a body over its `--upload-max-bytes`); when that server takes no uploads the page offers
 * a download named exactly `<cid>` (the file name a LocalDirStore holds it under) and the command that serves it.
 *
 * A dataset file named *.csv or *.jsonl is parsed in the page by the CLI's own parser (data/tabular.ts, the rules of
 * `pouw data add --format csv|jsonl` with its defaults: label column "label", classification, last 10% held out)
 * into the canonical pouw-tabular-1 bytes the engine loads; any other file is published as it is (canonical bytes
 * made by `pouw data add`). The CID then lands in the manifest on the page: the one corpus named by content id (no
 * `package`) gets it, with its row count, and a tabular-mlp model gets the data set's inputs and classes.
 *
 * INVARIANT: the CID the page writes into the manifest is the CID of the bytes it published (or offered for
 * download), computed in the page; a CID the server did not accept is never reported as published.
 */
import { DATA_MAX_FILE_BYTES, parseTabular, tabularContent, type TabularSchema } from "../../verifier/src/data/tabular.ts";
import { cidOf } from "../../verifier/src/store/index.ts";
import { esc, SOURCE } from "./page.ts";

/** The largest dataset file the page reads (the CLI's `pouw data add` cap): larger sets go through the CLI and a store. */
export const PAGE_DATASET_MAX_BYTES = DATA_MAX_FILE_BYTES;

export type PublishOutcome = { published: boolean; html: string };

/**
 * PUTs `bytes` to the content server this page is served from and says where the providers find them; a refusal is
 * said in words (over the server's size limit, no uploads, quota used), with the download fallback.
 */
export async function publishBytes(bytes: Uint8Array, cid: string, what: string): Promise<PublishOutcome> {
  if (cidOf(bytes) !== cid) throw new Error(`the ${what}'s bytes hash to ${cidOf(bytes)}, not ${cid}: not published`);
  let why: string;
  try {
    const res = await fetch(new URL(`ipfs/${cid}`, SOURCE), { method: "PUT", body: bytes as Uint8Array<ArrayBuffer>, headers: { "content-type": "application/octet-stream" } });
    if (res.ok) {
      return {
        published: true,
        html: `<span class="ok" id="${what}-published">published</span> the ${esc(what)} <code id="${what}-cid">${esc(cid)}</code> (${bytes.byteLength.toLocaleString("en")} bytes) to ${esc(SOURCE)}: providers fetch it from there with <code>--source ${esc(SOURCE)}</code>.`,
      };
    }
    const said = (await res.text()).trim().slice(0, 200);
    if (res.status === 405) why = "this server takes no uploads (start it with pouw serve --upload)";
    else if (res.status === 413) why = `the ${what} is too large for this server: ${said} (pouw serve --upload-max-bytes raises it)`;
    else if (res.status === 507) why = `this server takes no more uploads: ${said}`;
    else why = `the server answered ${res.status}: ${said}`;
  } catch (err) {
    why = `the server could not be reached (${(err as Error).message})`;
  }
  const href = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: "application/octet-stream" }));
  return {
    published: false,
    html:
      `<span id="${what}-unpublished">Not published: ${esc(why)}.</span> The providers fetch the ${esc(what)} by <code>${esc(cid)}</code>: ` +
      `<a id="${what}-link" download="${esc(cid)}" href="${href}">download it</a> (the file name is its CID) into your store directory (<code>.pouw/store/</code>) served by <code>pouw serve</code>.`,
  };
}

/** A dataset file made ready to publish: its canonical bytes, their CID, and (parsed from CSV/JSONL) its schema. */
export type PreparedDataset = { bytes: Uint8Array; cid: string; schema?: TabularSchema; source: string };

/** Reads the picked file: refused over the page's cap (before reading it); CSV/JSONL parsed into canonical bytes. */
export async function prepareDataset(file: File): Promise<PreparedDataset> {
  if (file.size > PAGE_DATASET_MAX_BYTES) {
    throw new Error(
      `The dataset ${file.name} is ${file.size.toLocaleString("en")} bytes, over the page's cap of ${PAGE_DATASET_MAX_BYTES.toLocaleString("en")} bytes: publish it with pouw data add and pouw serve instead.`,
    );
  }
  const raw = new Uint8Array(await file.arrayBuffer());
  const format = /\.csv$/i.test(file.name) ? "csv" : /\.jsonl$/i.test(file.name) ? "jsonl" : undefined;
  if (format === undefined) return { bytes: raw, cid: cidOf(raw), source: `${file.name} as it is` };
  // DataFormatError names the row and column of the first bad cell, as `pouw data add` does
  const data = parseTabular(raw, { format });
  const { bytes, cid } = tabularContent(data);
  return { bytes, cid, schema: data.schema, source: `${file.name} parsed as ${format} (pouw-tabular-1)` };
}

/** One line on what the parsed set holds. */
export function schemaLine(s: TabularSchema): string {
  const label = s.label.type === "class" ? `label ${JSON.stringify(s.label.name)} with ${s.label.classes.length} classes` : `label ${JSON.stringify(s.label.name)} a float32 value (regression)`;
  return `${s.rows} rows (${s.rows - s.split.testRows} train, ${s.split.testRows} held out), ${s.columns.length} features, ${label}`;
}

/**
 * The manifest text with the dataset's CID in its one corpus named by content id (and the row count and, for a
 * tabular-mlp, the inputs and classes the parsed set fixes), or why it was left as it is.
 */
export function withDataset(manifestText: string, ds: PreparedDataset): { text: string; changed: true } | { changed: false; why: string } {
  let m: { model?: Record<string, unknown>; corpora?: Record<string, unknown>[] };
  try {
    m = JSON.parse(manifestText) as typeof m;
  } catch {
    return { changed: false, why: "the manifest box holds no JSON manifest yet: paste one and publish again, or write the CID into its corpus" };
  }
  const byCid = Array.isArray(m.corpora) ? m.corpora.filter((c) => c !== null && typeof c === "object" && c.package === undefined) : [];
  if (byCid.length !== 1) return { changed: false, why: `the manifest has ${byCid.length} corpora named by content id (no package), not one: write the CID into the right corpus` };
  const corpus = byCid[0]!;
  corpus.contentId = ds.cid;
  const s = ds.schema;
  if (s) {
    corpus.declaredTokens = s.rows;
    if (m.model && m.model.arch === "tabular-mlp") {
      m.model.inputs = s.columns.length;
      if (s.label.type === "class") m.model.classes = s.label.classes.length;
    }
  }
  return { text: JSON.stringify(m, null, 2), changed: true };
}
