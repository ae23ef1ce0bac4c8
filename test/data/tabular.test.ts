/**
 * The buyer's own data (verifier/src/data): decimal text -> float32 rounded once from the exact decimal (a double-rounding
 * vector), canonical bytes against a hand-written layout, and one DataFormatError per malformed input, naming the row,
 * line and column.
 */
import { expect } from "chai";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  DataFormatError,
  decimalToFloat32,
  decodeTabular,
  encodeTabular,
  parseTabular,
  readDataFile,
  tabularContent,
  type DataFormatReason,
  type ParseOptions,
} from "../../verifier/src/data/index.ts";
import { cidOf } from "../../verifier/src/store/index.ts";
import { tempDir } from "../ml/helpers.ts";

const utf8 = (s: string) => new TextEncoder().encode(s);

function fails(text: string | Uint8Array, options: ParseOptions, reason: DataFormatReason, where: { row?: number; line?: number; column?: string }, message: RegExp, maxBytes?: number): void {
  let caught: unknown;
  try {
    parseTabular(typeof text === "string" ? utf8(text) : text, options, maxBytes);
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected a ${reason} error`).to.be.instanceOf(DataFormatError);
  const e = caught as DataFormatError;
  expect(e.reason).to.equal(reason);
  expect(e.row).to.equal(where.row);
  expect(e.line).to.equal(where.line);
  expect(e.column).to.equal(where.column);
  expect(e.message).to.match(message);
  expect(e.message).to.not.include("\n");
}

describe("data sets by content id: parsing and canonical bytes", () => {
  describe("decimal text -> float32", () => {
    it("rounds the exact decimal once where Math.fround(Number(text)) rounds twice", () => {
      // 1 + 2^-24 is the midpoint between 1 and 1 + 2^-23; this decimal is 1e-24 above it, and its nearest float64 IS
      // the midpoint, so fround's tie-to-even gives 1 while the nearest float32 is 1 + 2^-23
      const text = "1.000000059604644775390626";
      expect(Math.fround(Number(text))).to.equal(1);
      expect(decimalToFloat32(text)).to.deep.equal({ ok: true, value: 1 + 2 ** -23 });
      expect(decimalToFloat32("-" + text)).to.deep.equal({ ok: true, value: -(1 + 2 ** -23) });
      // just below the midpoint, and the exact midpoint (a true tie: even mantissa, 1)
      expect(decimalToFloat32("1.000000059604644775390624")).to.deep.equal({ ok: true, value: 1 });
      expect(decimalToFloat32("1.000000059604644775390625")).to.deep.equal({ ok: true, value: 1 });
      // the tie above 1 + 2^-23 goes up to the even neighbour 1 + 2^-22
      expect(decimalToFloat32("1.000000178813934326171875")).to.deep.equal({ ok: true, value: 1 + 2 ** -22 });
    });

    it("agrees with fround where there is no midpoint, keeps -0, and refuses what is not a finite decimal", () => {
      for (const t of ["0.1", "3.14159", "-2.5e-3", "1e-45", "123456789", ".5", "7."]) expect(decimalToFloat32(t)).to.deep.equal({ ok: true, value: Math.fround(Number(t)) });
      expect(Object.is((decimalToFloat32("-0") as { value: number }).value, -0)).to.equal(true);
      expect(decimalToFloat32("1e39")).to.deep.equal({ ok: false, reason: "out-of-range" });
      for (const t of ["", " 1", "1 ", "NaN", "Infinity", "0x10", "1,5", "1e", "+"]) expect(decimalToFloat32(t), t).to.deep.equal({ ok: false, reason: "not-decimal" });
      expect(decimalToFloat32("1".repeat(65))).to.deep.equal({ ok: false, reason: "too-long" });
    });
  });

  describe("canonical bytes", () => {
    it("lays out magic, schema, float32 rows and class indices as specified", () => {
      const d = parseTabular(utf8("b,a,label\n1.5,-2,yes\n0.25,4,no\n3,0,yes\n"), { format: "csv", split: "last:1" });
      expect(d.schema).to.deep.equal({
        format: "pouw-tabular-1",
        source: "csv",
        columns: [{ name: "b", type: "float32" }, { name: "a", type: "float32" }],
        label: { name: "label", type: "class", classes: ["no", "yes"] },
        rows: 3,
        split: { rule: "last", testRows: 1 },
      });
      const schema = '{"columns":[{"name":"b","type":"float32"},{"name":"a","type":"float32"}],"format":"pouw-tabular-1","label":{"classes":["no","yes"],"name":"label","type":"class"},"rows":3,"source":"csv","split":{"rule":"last","testRows":1}}';
      const expected = new Uint8Array(8 + 4 + schema.length + 4 * 6 + 3);
      const view = new DataView(expected.buffer);
      expected.set(utf8("POUWTAB1"));
      view.setUint32(8, schema.length, true);
      expected.set(utf8(schema), 12);
      [1.5, -2, 0.25, 4, 3, 0].forEach((v, i) => view.setFloat32(12 + schema.length + 4 * i, v, true));
      expected.set([1, 0, 1], 12 + schema.length + 24);
      const { bytes, cid } = tabularContent(d);
      expect(bytes).to.deep.equal(expected);
      expect(cid).to.equal(cidOf(expected));
      const back = decodeTabular(bytes);
      expect(back.schema).to.deep.equal(d.schema);
      expect(Array.from(back.features)).to.deep.equal([1.5, -2, 0.25, 4, 3, 0]);
      expect(Array.from(back.labels)).to.deep.equal([1, 0, 1]);
    });

    it("gives a CSV and the same rows as JSONL the same features; numeric labels sort numerically", () => {
      const csv = parseTabular(utf8("a,b,y\n1,2,10\n3,4,9\n5,6,10\n"), { format: "csv", label: "y", split: "last:1" });
      // JSONL columns are the first row's keys in code-point order, whatever order a line writes them in
      const jsonl = parseTabular(utf8('{"y":10,"b":2,"a":1}\n{"a":3,"b":4,"y":"9"}\r\n{"b":6,"a":5,"y":10}'), { format: "jsonl", label: "y", split: "last:1" });
      expect(csv.schema.label).to.deep.include({ type: "class", classes: ["9", "10"] });
      expect(jsonl.schema.label).to.deep.include({ type: "class", classes: ["9", "10"] });
      expect(Array.from(jsonl.features)).to.deep.equal(Array.from(csv.features));
      expect(Array.from(jsonl.labels)).to.deep.equal([1, 0, 1]);
      expect(jsonl.schema.source).to.equal("jsonl");
    });

    it("drops a BOM, reads CRLF and quoted fields, and reads a last line without a line end", () => {
      const d = parseTabular(utf8('\uFEFFx,"the ""label"""\r\n"1.5",a\r\n2,"b,c"'), { format: "csv", label: 'the "label"', split: "last:1" });
      expect(d.schema.columns).to.deep.equal([{ name: "x", type: "float32" }]);
      expect(d.schema.label).to.deep.include({ type: "class", classes: ["a", "b,c"] });
      expect(Array.from(d.features)).to.deep.equal([1.5, 2]);
    });

    it("refuses canonical bytes with a changed length, a bad class index or a non-canonical schema", () => {
      const { bytes } = tabularContent(parseTabular(utf8("a,label\n1,x\n2,y\n"), { format: "csv", split: "last:1" }));
      expect(() => decodeTabular(bytes.subarray(0, bytes.length - 1))).to.throw(DataFormatError, /does not fit 2 rows/);
      const badLabel = bytes.slice();
      badLabel[badLabel.length - 1] = 2;
      expect(() => decodeTabular(badLabel)).to.throw(DataFormatError, /class 2 is not among 2 classes/);
      const spaced = bytes.slice();
      spaced[12] = 0x20; // the schema's "{" becomes a space
      expect(() => decodeTabular(spaced)).to.throw(DataFormatError, /not pouw-tabular-1 canonical bytes/);
    });
  });

  describe("one clear error per malformed input", () => {
    const csv: ParseOptions = { format: "csv", split: "last:1" };
    const jsonl: ParseOptions = { format: "jsonl", split: "last:1" };

    it("ragged CSV row", () => fails("a,b,label\n1,2,x\n3,y\n", csv, "ragged-row", { row: 2, line: 3 }, /data row 2 \(line 3\): has 2 fields, the header has 3/));
    it("ragged JSONL row (missing key)", () => fails('{"a":1,"label":"x"}\n{"label":"y"}\n', jsonl, "ragged-row", { row: 2, line: 2, column: "a" }, /data row 2 \(line 2\), column "a": is missing/));
    it("ragged JSONL row (extra key)", () => fails('{"a":1,"label":"x"}\n{"a":1,"b":2,"label":"y"}\n', jsonl, "ragged-row", { row: 2, line: 2, column: "b" }, /has key "b"/));
    it("non-numeric cell", () => fails("a,b,label\n1,2,x\n3,abc,y\n", csv, "non-numeric", { row: 2, line: 3, column: "b" }, /column "b": "abc" is not a decimal number/));
    it("empty cell", () => fails("a,b,label\n1,,x\n3,4,y\n", csv, "non-numeric", { row: 1, line: 2, column: "b" }, /"" is not a decimal number/));
    it("out-of-range cell", () => fails("a,label\n1e39,x\n3,y\n", csv, "non-numeric", { row: 1, line: 2, column: "a" }, /out of the float32 range/));
    it("JSONL string where a number belongs", () => fails('{"a":"1","label":"x"}\n{"a":2,"label":"y"}\n', jsonl, "non-numeric", { row: 1, line: 1, column: "a" }, /column "a": "1" is a JSON string, not a number/));
    it("unknown type of a JSONL value", () => fails('{"a":1,"label":"x"}\n{"a":true,"label":"y"}\n', jsonl, "unknown-type", { row: 2, line: 2, column: "a" }, /a boolean value has no feature type/));
    it("unknown type in --columns", () => fails("a,label\n1,x\n2,y\n", { ...csv, columns: ["a:date"] }, "unknown-type", {}, /column "a" has unknown type "date"/));
    it("empty set (header only)", () => fails("a,label\n", csv, "empty-set", {}, /no data rows/));
    it("empty set (empty file)", () => fails("", jsonl, "empty-set", {}, /no rows/));
    it("empty line inside the data", () => fails("a,label\n1,x\n\n2,y\n", csv, "empty-line", { row: 2, line: 3 }, /empty line/));
    it("missing label column", () => fails("a,b\n1,2\n3,4\n", csv, "missing-label", {}, /no label column "label" \(columns: "a", "b"\)/));
    it("missing feature column named in --columns", () => fails("a,label\n1,x\n2,y\n", { ...csv, columns: ["z"] }, "missing-column", {}, /no column "z"/));
    it("duplicate column names in the header", () => fails("a,a,label\n1,2,x\n3,4,y\n", csv, "duplicate-column", {}, /names column "a" twice/));
    it("duplicate column names in --columns", () => fails("a,b,label\n1,2,x\n3,4,y\n", { ...csv, columns: ["a", "a:float32"] }, "duplicate-column", {}, /--columns names column "a" twice/));
    it("empty label", () => fails("a,label\n1,\n2,y\n", csv, "bad-label", { row: 1, line: 2, column: "label" }, /empty label/));
    it("one class only", () => fails("a,label\n1,x\n2,x\n", csv, "too-few-classes", {}, /has 1 class/));
    it("unclosed quote", () => fails('a,label\n1,"x\n', csv, "bad-quote", {}, /line 2: a quoted field is not closed/));
    it("invalid UTF-8", () => fails(new Uint8Array([0x61, 0x2c, 0x62, 0x0a, 0xff, 0x2c, 0x31, 0x0a]), csv, "not-utf8", {}, /not valid UTF-8/));
    it("a JSONL line that is not JSON", () => fails('{"a":1,"label":"x"}\n{"a":2,\n', jsonl, "not-json", { row: 2, line: 2 }, /data row 2 \(line 2\): is not JSON/));
    it("a split that leaves no training rows", () => fails("a,label\n1,x\n2,y\n", { ...csv, split: "last:2" }, "bad-split", {}, /leaving none to train on/));
    it("a split rule that is not one", () => fails("a,label\n1,x\n2,y\n", { ...csv, split: "first:1" }, "bad-split", {}, /is not last:N or last:P%/));
    it("oversize bytes", () => fails("a,label\n1,x\n2,y\n", csv, "oversize", {}, /over the 10-byte cap/, 10));

    it("oversize file, refused before it is read", async () => {
      const dir = await tempDir("data-oversize");
      const path = join(dir, "big.csv");
      await writeFile(path, "a,label\n" + "1,x\n".repeat(100));
      expect(() => readDataFile(path, 100)).to.throw(DataFormatError, /is 408 bytes, over the 100-byte cap/);
      expect(readDataFile(path, 408).length).to.equal(408);
    });
  });

  it("round-trips a parsed set through encode and decode unchanged", () => {
    const d = parseTabular(utf8("p,q,label\n0.1,-0.2,a\n1e-3,5,b\n7,8,c\n"), { format: "csv", split: "last:34%" });
    expect(d.schema.split.testRows).to.equal(1);
    const back = decodeTabular(encodeTabular(d));
    expect(back).to.deep.equal(d);
  });
});
