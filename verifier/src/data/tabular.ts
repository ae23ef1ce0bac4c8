/**
 * Tabular data sets by content id (docs/data.md "Your own data"): a CSV or JSONL file parsed by specified rules into
 * canonical bytes `pouw-tabular-1`, whose CIDv1 (raw, sha2-256, store/cidOf) a manifest names. The bytes carry their
 * own schema, so the trainer and every auditor rebuild the same rows, features, labels and split from the CID alone.
 *
 * Canonical bytes (little-endian):
 *   8 bytes   ASCII "POUWTAB1"
 *   uint32    L, length of the schema
 *   L bytes   the schema as RFC 8785 canonical JSON, UTF-8 (TabularSchema)
 *   rows x features float32, row-major, rows in file order
 *   classification (label type "class"): rows x uint8 class index (schema.label.classes[i] is class i)
 *   regression (label type "float32"): rows x float32 label value
 *
 * Parsing rules (one error per bad input, naming the data row, its line and the column):
 * - UTF-8 (invalid sequences refused); one leading BOM is dropped; lines end in LF or CRLF; a last line without
 *   a line end is read; one empty last line is the file's end, any other empty line is an error.
 * - CSV: first line is the header; fields separated by ","; a field may be quoted with `"` (`""` inside is a quote,
 *   line ends inside quotes belong to the field); every row has the header's field count.
 * - JSONL: one JSON object per line; its keys are the columns; every row has the same keys; without --columns the
 *   feature columns are the first row's keys other than the label, in code-point order (JSON objects are unordered).
 * - Feature cells: decimal text (decimal.ts DECIMAL_RE; JSONL: a JSON number, read from its source text) converted
 *   to the nearest float32, ties to even, once (decimal.ts); nothing else (empty, NaN, Infinity, out of range).
 * - Label cell: CSV its text, JSONL a string or a JSON number's source text; not empty. Classes are the distinct
 *   labels, in numeric order when every label is a canonical non-negative integer ("0", "7", "12"), otherwise in
 *   code-point order; the class index of a row is its label's position there.
 * - Regression (task "regression"): the label cell is a feature-like decimal (JSONL: a JSON number), rounded to
 *   float32 by the same rule; the schema's label type "float32" records the task.
 * - Split: the last `testRows` rows (after the rule `last:N` or `last:P%`) are the held-out set, the rest train.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import canonicalizeModule from "canonicalize";
import { z } from "zod";
import { InputError } from "../errors/index.ts";
import { cidOf } from "../store/index.ts";
import { decimalToFloat32, MAX_DECIMAL_CHARS } from "./decimal.ts";

const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

export const TABULAR_FORMAT = "pouw-tabular-1";
const MAGIC = new TextEncoder().encode("POUWTAB1");

/** Largest input file `pouw data add` reads (64 MiB); larger files are refused before parsing. */
export const DATA_MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Most feature columns (the tabular-mlp manifest's model.inputs bound). */
export const MAX_FEATURES = 4096;
/** Most classes (labels are stored as uint8). */
export const MAX_CLASSES = 256;
/** Default held-out rule. */
export const DEFAULT_SPLIT = "last:10%";
/** The only feature type: decimal text stored as float32. */
export const FEATURE_TYPES = ["float32"] as const;

export type DataFormat = "csv" | "jsonl";
/** What the label is: a class (softmax classifier) or a float32 value (mean-squared-error regression). */
export type TabularTask = "classification" | "regression";
export const TABULAR_TASKS: readonly TabularTask[] = ["classification", "regression"];

const ClassLabel = z.strictObject({ name: z.string().min(1), type: z.literal("class"), classes: z.array(z.string().min(1)).min(2).max(MAX_CLASSES) });
const ValueLabel = z.strictObject({ name: z.string().min(1), type: z.literal("float32") });

export const TabularSchema = z.strictObject({
  format: z.literal(TABULAR_FORMAT),
  source: z.enum(["csv", "jsonl"]),
  columns: z.array(z.strictObject({ name: z.string().min(1), type: z.enum(FEATURE_TYPES) })).min(1).max(MAX_FEATURES),
  /** type "class": classification; type "float32": regression (the label type is the task). */
  label: z.discriminatedUnion("type", [ClassLabel, ValueLabel]),
  rows: z.number().int().positive(),
  split: z.strictObject({ rule: z.literal("last"), testRows: z.number().int().positive() }),
});
export type TabularSchema = z.infer<typeof TabularSchema>;

export type TabularData = {
  schema: TabularSchema;
  /** [rows, features] row-major. */
  features: Float32Array;
  /** Class index per row (classification); all 0 for regression. */
  labels: Uint8Array;
  /** Label value per row (regression only). */
  targets?: Float32Array;
};

/** The task a schema's label type records. */
export function taskOf(schema: TabularSchema): TabularTask {
  return schema.label.type === "float32" ? "regression" : "classification";
}

/** What is wrong with an input file (DataFormatError.reason): one per rule of the format. */
export type DataFormatReason =
  | "oversize"
  | "not-utf8"
  | "empty-set"
  | "empty-line"
  | "ragged-row"
  | "non-numeric"
  | "unknown-type"
  | "missing-label"
  | "missing-column"
  | "duplicate-column"
  | "bad-quote"
  | "not-json"
  | "bad-label"
  | "too-many-classes"
  | "too-few-classes"
  | "bad-split"
  | "bad-option"
  | "bad-canonical";

/** An input file (or canonical bytes) breaks a rule of the format; `row` (1-based data row), `line` and `column` locate it. */
export class DataFormatError extends InputError {
  override name = "DataFormatError";
  override readonly code: string = "DATA_FORMAT";
  readonly reason: DataFormatReason;
  readonly row: number | undefined;
  readonly line: number | undefined;
  readonly column: string | undefined;
  constructor(reason: DataFormatReason, message: string, at: { row?: number; line?: number; column?: string } = {}) {
    const where = at.row !== undefined ? `data row ${at.row}${at.line !== undefined ? ` (line ${at.line})` : ""}${at.column !== undefined ? `, column ${JSON.stringify(at.column)}` : ""}: ` : "";
    super(`${where}${message}`);
    this.reason = reason;
    this.row = at.row;
    this.line = at.line;
    this.column = at.column;
  }
}

export type ParseOptions = {
  format: DataFormat;
  /** Label column (default "label"). */
  label?: string;
  /** Feature columns, each `NAME` or `NAME:TYPE` (TYPE float32); default every column but the label. */
  columns?: readonly string[];
  /** `last:N` or `last:P%` (default DEFAULT_SPLIT). */
  split?: string;
  /** classification (default): the label names classes; regression: the label is a float32 decimal. */
  task?: TabularTask;
};

/** Reads a data file: a regular file of at most `maxBytes` (DataFormatError "oversize" beyond; InputError if unreadable). */
export function readDataFile(path: string, maxBytes = DATA_MAX_FILE_BYTES): Uint8Array {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    throw new InputError(`cannot read data file ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, { cause: err });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new InputError(`data file ${path} is not a regular file`);
    if (st.size > maxBytes) throw new DataFormatError("oversize", `data file ${path} is ${st.size} bytes, over the ${maxBytes}-byte cap`);
    const buf = new Uint8Array(st.size);
    let at = 0;
    while (at < buf.length) {
      const n = readSync(fd, buf, at, buf.length - at, at);
      if (n === 0) break;
      at += n;
    }
    return buf.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}

/** Parses a file's bytes under the rules above; `maxBytes` is the same cap as readDataFile's. */
export function parseTabular(bytes: Uint8Array, options: ParseOptions, maxBytes = DATA_MAX_FILE_BYTES): TabularData {
  if (bytes.length > maxBytes) throw new DataFormatError("oversize", `data is ${bytes.length} bytes, over the ${maxBytes}-byte cap`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes); // drops one leading BOM
  } catch (err) {
    throw new DataFormatError("not-utf8", "the file is not valid UTF-8", {});
  }
  const table = options.format === "csv" ? csvTable(text) : jsonlTable(text);
  return buildTable(table, options);
}

/** A cell as read: decimal text, or (JSONL) a value of a type with no feature meaning. */
type Cell = { text: string; jsonString?: true } | { badType: string };
type RawTable = { source: DataFormat; header: string[]; rows: { line: number; cells: Map<string, Cell> }[] };

function lines(text: string): { line: number; text: string }[] {
  const out = text.split("\n").map((t, i) => ({ line: i + 1, text: t.endsWith("\r") ? t.slice(0, -1) : t }));
  if (out.length > 0 && out[out.length - 1]!.text === "" && text.endsWith("\n")) out.pop();
  if (out.length === 1 && out[0]!.text === "") out.pop();
  return out;
}

function checkDuplicates(names: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw new DataFormatError("duplicate-column", `${what} names column ${JSON.stringify(n)} twice`);
    seen.add(n);
  }
}

function csvTable(text: string): RawTable {
  // records with their starting line; quoted fields may span lines
  const records: { line: number; fields: string[] }[] = [];
  let i = 0;
  let line = 1;
  const n = text.length;
  while (i < n) {
    const startLine = line;
    const fields: string[] = [];
    for (;;) {
      let field = "";
      if (text[i] === '"') {
        i++;
        for (;;) {
          if (i >= n) throw new DataFormatError("bad-quote", `line ${startLine}: a quoted field is not closed`);
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === "\n") line++;
          field += c;
          i++;
        }
        const after = text[i];
        if (!(after === undefined || after === "," || after === "\n" || (after === "\r" && text[i + 1] === "\n"))) {
          throw new DataFormatError("bad-quote", `line ${line}: text after a closing quote`);
        }
      } else {
        while (i < n && text[i] !== "," && text[i] !== "\n" && !(text[i] === "\r" && text[i + 1] === "\n")) {
          if (text[i] === '"') throw new DataFormatError("bad-quote", `line ${line}: a quote inside an unquoted field`);
          field += text[i];
          i++;
        }
      }
      fields.push(field);
      if (i < n && text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "\r") i++;
      if (i < n && text[i] === "\n") {
        i++;
        line++;
      }
      break;
    }
    records.push({ line: startLine, fields });
  }
  if (records.length === 0) throw new DataFormatError("empty-set", "the file is empty (no header, no rows)");
  const header = records[0]!.fields;
  checkDuplicates(header, "the header");
  header.forEach((h) => {
    if (h === "") throw new DataFormatError("missing-column", "the header has an empty column name");
  });
  const rows = records.slice(1).map((r, k) => {
    if (r.fields.length === 1 && r.fields[0] === "") throw new DataFormatError("empty-line", "empty line", { row: k + 1, line: r.line });
    if (r.fields.length !== header.length) {
      throw new DataFormatError("ragged-row", `has ${r.fields.length} fields, the header has ${header.length}`, { row: k + 1, line: r.line });
    }
    return { line: r.line, cells: new Map(header.map((h, j): [string, Cell] => [h, { text: r.fields[j]! }])) };
  });
  return { source: "csv", header, rows };
}

/** A JSON number kept as its source text (JSON.parse's reviver context), so it is rounded once, to float32. */
class JsonNumber {
  readonly source: string;
  constructor(source: string) {
    this.source = source;
  }
}

function jsonlTable(text: string): RawTable {
  const rows: RawTable["rows"] = [];
  let header: string[] | undefined;
  for (const { line, text: t } of lines(text)) {
    const row = rows.length + 1;
    if (t === "") throw new DataFormatError("empty-line", "empty line", { row, line });
    let value: unknown;
    try {
      value = JSON.parse(t, function (this: unknown, _key: string, v: unknown, context?: { source?: string }) {
        return typeof v === "number" ? new JsonNumber(context?.source ?? String(v)) : v;
      });
    } catch (err) {
      throw new DataFormatError("not-json", `is not JSON (${err instanceof Error ? err.message : String(err)})`, { row, line });
    }
    if (typeof value !== "object" || value === null || Array.isArray(value) || value instanceof JsonNumber) {
      throw new DataFormatError("not-json", "is not a JSON object", { row, line });
    }
    const keys = Object.keys(value);
    header ??= [...keys].sort(codePointCompare);
    for (const k of keys) if (!header.includes(k)) throw new DataFormatError("ragged-row", `has key ${JSON.stringify(k)}, which the first row has not`, { row, line, column: k });
    const cells = new Map<string, Cell>();
    for (const h of header) {
      if (!Object.hasOwn(value, h)) throw new DataFormatError("ragged-row", "is missing the column", { row, line, column: h });
      const v = (value as Record<string, unknown>)[h];
      cells.set(h, v instanceof JsonNumber ? { text: v.source } : typeof v === "string" ? { text: v, jsonString: true } : { badType: v === null ? "null" : Array.isArray(v) ? "array" : typeof v });
    }
    rows.push({ line, cells });
  }
  if (!header) throw new DataFormatError("empty-set", "the file has no rows");
  return { source: "jsonl", header, rows };
}

function codePointCompare(a: string, b: string): number {
  const x = [...a].map((c) => c.codePointAt(0)!);
  const y = [...b].map((c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}

const CANONICAL_INT = /^(0|[1-9][0-9]*)$/;

/** The split rule's held-out count for `rows` rows (or text tokens, `unit` "tokens"). */
export function parseSplit(rule: string, rows: number, unit: "rows" | "tokens" = "rows"): number {
  const m = /^last:(?:([1-9][0-9]*)|([1-9][0-9]?)%)$/.exec(rule);
  if (!m) throw new DataFormatError("bad-split", `split rule ${JSON.stringify(rule)} is not last:N or last:P% (P in 1..99)`);
  const testRows = m[1] !== undefined ? Number(m[1]) : Math.floor((rows * Number(m[2])) / 100);
  if (testRows < 1) throw new DataFormatError("bad-split", `split ${rule} holds out no ${unit.slice(0, -1)} of ${rows}`);
  if (testRows >= rows) throw new DataFormatError("bad-split", `split ${rule} holds out ${testRows} of ${rows} ${unit}, leaving none to train on`);
  return testRows;
}

function buildTable(table: RawTable, options: ParseOptions): TabularData {
  const label = options.label ?? "label";
  if (!table.header.includes(label)) {
    throw new DataFormatError("missing-label", `no label column ${JSON.stringify(label)} (columns: ${table.header.map((h) => JSON.stringify(h)).join(", ")})`);
  }
  let columns: { name: string; type: "float32" }[];
  if (options.columns && options.columns.length > 0) {
    columns = options.columns.map((spec) => {
      const at = spec.lastIndexOf(":");
      const name = at < 0 ? spec : spec.slice(0, at);
      const type = at < 0 ? "float32" : spec.slice(at + 1);
      if (!(FEATURE_TYPES as readonly string[]).includes(type)) throw new DataFormatError("unknown-type", `column ${JSON.stringify(name)} has unknown type ${JSON.stringify(type)} (types: ${FEATURE_TYPES.join(", ")})`);
      if (name === label) throw new DataFormatError("bad-option", `column ${JSON.stringify(name)} is the label; it cannot also be a feature`);
      if (!table.header.includes(name)) throw new DataFormatError("missing-column", `no column ${JSON.stringify(name)} in the data (columns: ${table.header.map((h) => JSON.stringify(h)).join(", ")})`);
      return { name, type: "float32" as const };
    });
    checkDuplicates(columns.map((c) => c.name), "--columns");
  } else {
    columns = table.header.filter((h) => h !== label).map((name) => ({ name, type: "float32" as const }));
  }
  if (columns.length === 0) throw new DataFormatError("missing-column", "no feature column besides the label");
  if (columns.length > MAX_FEATURES) throw new DataFormatError("bad-option", `${columns.length} feature columns, over the ${MAX_FEATURES} cap`);
  const rows = table.rows.length;
  if (rows === 0) throw new DataFormatError("empty-set", "the file has a header but no data rows");
  const task = options.task ?? "classification";
  if (!TABULAR_TASKS.includes(task)) throw new DataFormatError("bad-option", `task ${JSON.stringify(task)} is not ${TABULAR_TASKS.join(" or ")}`);
  const features = new Float32Array(rows * columns.length);
  const targets = task === "regression" ? new Float32Array(rows) : undefined;
  const labelText: string[] = new Array(rows);
  table.rows.forEach((r, k) => {
    const row = k + 1;
    columns.forEach((c, j) => {
      const cell = r.cells.get(c.name)!;
      if ("badType" in cell) throw new DataFormatError("unknown-type", `a ${cell.badType} value has no feature type (float32 takes numbers)`, { row, line: r.line, column: c.name });
      if (cell.jsonString) throw new DataFormatError("non-numeric", `${JSON.stringify(cell.text.slice(0, 40))} is a JSON string, not a number (JSONL features are JSON numbers)`, { row, line: r.line, column: c.name });
      const v = decimalToFloat32(cell.text);
      if (!v.ok) {
        const why = v.reason === "out-of-range" ? "is out of the float32 range" : v.reason === "too-long" ? `is longer than ${MAX_DECIMAL_CHARS} characters` : "is not a decimal number";
        throw new DataFormatError("non-numeric", `${JSON.stringify(cell.text.slice(0, 40))} ${why}`, { row, line: r.line, column: c.name });
      }
      features[k * columns.length + j] = v.value;
    });
    const l = r.cells.get(label)!;
    if (targets) {
      if ("badType" in l) throw new DataFormatError("bad-label", `a ${l.badType} label (a regression label is a number)`, { row, line: r.line, column: label });
      if (l.jsonString) throw new DataFormatError("non-numeric", `${JSON.stringify(l.text.slice(0, 40))} is a JSON string, not a number (a regression label is a JSON number)`, { row, line: r.line, column: label });
      const v = decimalToFloat32(l.text);
      if (!v.ok) {
        const why = v.reason === "out-of-range" ? "is out of the float32 range" : v.reason === "too-long" ? `is longer than ${MAX_DECIMAL_CHARS} characters` : "is not a decimal number";
        throw new DataFormatError("non-numeric", `regression label ${JSON.stringify(l.text.slice(0, 40))} ${why}`, { row, line: r.line, column: label });
      }
      targets[k] = v.value;
      return;
    }
    if ("badType" in l) throw new DataFormatError("bad-label", `a ${l.badType} label (labels are strings or numbers)`, { row, line: r.line, column: label });
    if (l.text === "") throw new DataFormatError("bad-label", "empty label", { row, line: r.line, column: label });
    labelText[k] = l.text;
  });
  if (targets) {
    const testRows = parseSplit(options.split ?? DEFAULT_SPLIT, rows);
    const schema: TabularSchema = { format: TABULAR_FORMAT, source: table.source, columns, label: { name: label, type: "float32" }, rows, split: { rule: "last", testRows } };
    return { schema, features, labels: new Uint8Array(rows), targets };
  }
  const distinct = [...new Set(labelText)];
  const classes = distinct.every((t) => CANONICAL_INT.test(t)) ? distinct.sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0)) : distinct.sort(codePointCompare);
  if (classes.length > MAX_CLASSES) throw new DataFormatError("too-many-classes", `label ${JSON.stringify(label)} has ${classes.length} classes, over the ${MAX_CLASSES} cap`);
  if (classes.length < 2) throw new DataFormatError("too-few-classes", `label ${JSON.stringify(label)} has ${classes.length} class; a classifier needs at least 2`);
  const index = new Map(classes.map((c, i) => [c, i]));
  const labels = Uint8Array.from(labelText, (t) => index.get(t)!);
  const testRows = parseSplit(options.split ?? DEFAULT_SPLIT, rows);
  const schema: TabularSchema = { format: TABULAR_FORMAT, source: table.source, columns, label: { name: label, type: "class", classes }, rows, split: { rule: "last", testRows } };
  return { schema, features, labels };
}

/** The canonical bytes of a parsed data set (layout in the header). */
export function encodeTabular(data: TabularData): Uint8Array {
  const schemaBytes = new TextEncoder().encode(canonicalize(data.schema)!);
  const { rows } = data.schema;
  const width = data.schema.columns.length;
  const regression = data.schema.label.type === "float32";
  const out = new Uint8Array(MAGIC.length + 4 + schemaBytes.length + 4 * rows * width + (regression ? 4 * rows : rows));
  const view = new DataView(out.buffer);
  out.set(MAGIC, 0);
  view.setUint32(MAGIC.length, schemaBytes.length, true);
  out.set(schemaBytes, MAGIC.length + 4);
  let at = MAGIC.length + 4 + schemaBytes.length;
  for (let i = 0; i < rows * width; i++, at += 4) view.setFloat32(at, data.features[i]!, true);
  if (regression) {
    if (!data.targets || data.targets.length !== rows) throw new TypeError(`a regression data set needs ${rows} targets`);
    for (let i = 0; i < rows; i++, at += 4) view.setFloat32(at, data.targets[i]!, true);
  } else out.set(data.labels.subarray(0, rows), at);
  return out;
}

/**
 * Decodes canonical bytes, refusing anything encodeTabular would not have written (wrong magic or length, a schema
 * that does not parse or is not canonical, a label index outside the classes, a NaN or infinite feature or target).
 */
export function decodeTabular(bytes: Uint8Array): TabularData {
  const bad = (why: string) => new DataFormatError("bad-canonical", `not ${TABULAR_FORMAT} canonical bytes: ${why}`);
  if (bytes.length < MAGIC.length + 4 || !MAGIC.every((b, i) => bytes[i] === b)) throw bad("no POUWTAB1 header");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = view.getUint32(MAGIC.length, true);
  if (MAGIC.length + 4 + len > bytes.length) throw bad("schema length beyond the end");
  const schemaText = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(MAGIC.length + 4, MAGIC.length + 4 + len));
  let schemaValue: unknown;
  try {
    schemaValue = JSON.parse(schemaText);
  } catch {
    throw bad("schema is not JSON");
  }
  const parsed = TabularSchema.safeParse(schemaValue);
  if (!parsed.success) throw bad(`schema: ${parsed.error.issues[0]!.path.join(".")} ${parsed.error.issues[0]!.message}`);
  const schema = parsed.data;
  if (canonicalize(schema) !== schemaText) throw bad("schema is not canonical JSON");
  if (schema.split.testRows >= schema.rows) throw bad("split holds out every row");
  const width = schema.columns.length;
  const start = MAGIC.length + 4 + len;
  const label = schema.label;
  const labelBytes = label.type === "float32" ? 4 * schema.rows : schema.rows;
  if (bytes.length !== start + 4 * schema.rows * width + labelBytes) throw bad(`length ${bytes.length} does not fit ${schema.rows} rows of ${width} features`);
  const features = new Float32Array(schema.rows * width);
  for (let i = 0; i < features.length; i++) {
    const v = view.getFloat32(start + 4 * i, true);
    if (!Number.isFinite(v)) throw bad(`feature ${i} is not finite`);
    features[i] = v;
  }
  const labelsAt = start + 4 * features.length;
  if (label.type === "float32") {
    const targets = new Float32Array(schema.rows);
    for (let i = 0; i < schema.rows; i++) {
      const v = view.getFloat32(labelsAt + 4 * i, true);
      if (!Number.isFinite(v)) throw bad(`row ${i + 1}'s label is not finite`);
      targets[i] = v;
    }
    return { schema, features, labels: new Uint8Array(schema.rows), targets };
  }
  const labels = bytes.slice(labelsAt);
  for (let i = 0; i < labels.length; i++) if (labels[i]! >= label.classes.length) throw bad(`row ${i + 1}'s class ${labels[i]} is not among ${label.classes.length} classes`);
  return { schema, features, labels };
}

/** A parsed data set's canonical bytes and CID (what `pouw data add` publishes). */
export function tabularContent(data: TabularData): { bytes: Uint8Array; cid: string } {
  const bytes = encodeTabular(data);
  return { bytes, cid: cidOf(bytes) };
}
