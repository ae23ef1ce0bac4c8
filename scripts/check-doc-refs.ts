/**
 * Every reference a reader can follow must resolve: relative Markdown links (and their #anchors), file paths in
 * backticks in Markdown, file paths named in source comments, and `docs/x.md "Section"` references to a heading.
 *
 *   node scripts/check-doc-refs.ts          # one line per broken reference, exit 1 if any
 *
 * Resolution rules (a reference resolves if any holds):
 * - the path exists relative to the repository root or to the referring file's folder;
 * - it is the tail of a tracked file's path on a folder boundary (`bot/dispute.ts` names verifier/src/bot/dispute.ts),
 *   as docs name files relative to the area they describe;
 * - it is a placeholder (a folder in capitals such as `OUT/`, `DIR/`, `STATE_DIR/`, or `<...>`, `*`, `$`);
 * - it is a file the project's own commands write (OUTPUTS below, each with the command that writes it).
 * A section reference `docs/x.md "Title"` (also `docs/x.md, "Title"` and `docs/x.md ("Title"`) resolves when x.md has
 * a heading, or a paragraph that opens in bold, whose text contains Title (case-insensitive; a Title broken over
 * comment lines is joined first).
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

/** Files the project writes at run time, named in docs as what a command produces. */
export const OUTPUTS: ReadonlyMap<string, string> = new Map([
  ["deployment.json", "pouw deploy (in the state directory)"],
  ["provenance.json", "pouw buyer fetch"],
  ["steps.json", "pouw train (trace directory)"],
  ["trace.json", "pouw train (trace directory)"],
  ["evaluation.json", "pouw evaluate"],
  ["report.json", "npm run demo (demo-out/)"],
  ["attested-devices.json", "pouw attest (state directory)"],
  ["step_i.zkey", "npm run zk:setup (intermediate key, not committed)"],
]);

/** Folders the project's commands write into: a path under one names an output, not a source. */
const OUTPUT_DIRS = ["demo-out/"];

/** Paths inside an npm dependency (`viem/errors/node.ts`, chart.js's `dist/...`) are the package's, not ours. */
const PACKAGE_PATH = /^(?:dist\/|node_modules\/|@|viem\/|hardhat\/|snarkjs\/|circomlib\/)/;

const FILE_EXT = "(?:ts|sol|md|json|circom|cjs|mjs|js|py|sh|wasm|zkey|r1cs|html|css)";
const BACKTICK_PATH = new RegExp("`(\\.{0,2}/?[A-Za-z0-9_@][A-Za-z0-9_./@<>$*-]*\\." + FILE_EXT + ")`", "g");
const COMMENT_PATH = new RegExp("(?<![A-Za-z0-9_./@-])((?:\\.{1,2}/)?[A-Za-z0-9_@-]+(?:/[A-Za-z0-9_.@-]+)*\\." + FILE_EXT + ")(?![A-Za-z0-9_])", "g");
const MD_LINK = /\]\(([^)\s]+)\)/g;
const SECTION_REF = /(docs\/[A-Za-z0-9_-]+\.md),? \(?"([^"]+)"/g;

export interface BrokenRef {
  file: string;
  line: number;
  ref: string;
  why: string;
}

export interface RepoIndex {
  root: string;
  tracked: readonly string[];
}

export function repoIndex(root: string): RepoIndex {
  const out = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { cwd: root, encoding: "utf8" });
  return { root, tracked: out.split("\n").filter((l) => l !== "") };
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");
}

function headings(text: string, boldLeads = false): string[] {
  const hs: string[] = [];
  let fenced = false;
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (m) hs.push(m[1]!);
    const b = boldLeads ? /^(?:[-*] )?\*\*(.+?)\*\*/.exec(line) : null;
    if (b) hs.push(b[1]!);
  }
  return hs;
}

function isPlaceholder(ref: string): boolean {
  const name = ref.split("/").at(-1)!;
  return (
    /[<>*$]/.test(ref) ||
    ref.split("/").slice(0, -1).some((seg) => /^[A-Z][A-Z0-9_]*$/.test(seg)) ||
    /-(?:[A-Z]+|N)\.[a-z]+$/.test(name) || // job-JOB.html, job-N.html: one file per job
    OUTPUTS.has(name) ||
    OUTPUT_DIRS.some((d) => ref.startsWith(d)) ||
    PACKAGE_PATH.test(ref)
  );
}

function resolvesPath(ix: RepoIndex, from: string, ref: string): boolean {
  const clean = ref.replace(/^\.\//, "");
  if (existsSync(join(ix.root, clean))) return true;
  if (existsSync(join(ix.root, dirname(from), ref))) return true;
  const norm = normalize(clean);
  if (norm.startsWith("..")) return false;
  return ix.tracked.some((t) => t === norm || t.endsWith("/" + norm));
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split("\n").length;
}

function checkSection(ix: RepoIndex, file: string, text: string, out: BrokenRef[]): void {
  for (const m of text.matchAll(SECTION_REF)) {
    const doc = m[1]!;
    const rawTitle = m[2]!;
    const path = join(ix.root, doc);
    if (!existsSync(path)) continue; // reported as a missing file by the path rules
    const title = rawTitle.replace(/\s*\n\s*(?:\*|\/\/|#)?\s*/g, " ");
    const want = title.toLowerCase();
    const found = headings(readFileSync(path, "utf8"), true).some((h) =>
      h.toLowerCase().replace(/[`*]/g, "").includes(want),
    );
    if (!found) out.push({ file, line: lineOf(text, m.index), ref: `${doc} "${title}"`, why: "no such heading" });
  }
}

/** Broken references in one Markdown file. */
export function checkMarkdown(ix: RepoIndex, file: string, text: string): BrokenRef[] {
  const out: BrokenRef[] = [];
  // Fenced code is commands and output, not references, except paths in backticks, which never occur there.
  const prose = text.replace(/^\s*```[\s\S]*?^\s*```/gm, (block) => block.replace(/[^\n]/g, " "));
  for (const m of prose.matchAll(MD_LINK)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target)) continue; // http:, https:, mailto:
    const [path = "", anchor] = target.split("#", 2);
    const line = lineOf(prose, m.index);
    const targetFile = path === "" ? file : normalize(join(dirname(file), path));
    if (path !== "" && !existsSync(join(ix.root, targetFile))) {
      out.push({ file, line, ref: target, why: "no such file" });
      continue;
    }
    if (anchor !== undefined && targetFile.endsWith(".md")) {
      const slugs = headings(readFileSync(join(ix.root, targetFile), "utf8")).map(slug);
      if (!slugs.includes(anchor)) out.push({ file, line, ref: target, why: "no such heading" });
    }
  }
  for (const m of prose.matchAll(BACKTICK_PATH)) {
    const ref = m[1]!;
    if (isPlaceholder(ref)) continue;
    if (!resolvesPath(ix, file, ref)) out.push({ file, line: lineOf(prose, m.index), ref, why: "no such file" });
  }
  checkSection(ix, file, prose, out);
  return out;
}

/** Broken references in the comments of one source file (imports are the compiler's business). */
export function checkSource(ix: RepoIndex, file: string, text: string): BrokenRef[] {
  const out: BrokenRef[] = [];
  const lines = text.split("\n");
  lines.forEach((raw, i) => {
    const t = raw.trim();
    const comment = t.startsWith("//") || t.startsWith("*") || t.startsWith("/*") || t.startsWith("#") ? t : /\s\/\/\s(.*)$/.exec(t)?.[1];
    if (comment === undefined) return;
    for (const m of comment.matchAll(COMMENT_PATH)) {
      const ref = m[1]!;
      if (!ref.includes("/") && !/\.(md|sol|circom)$/.test(ref)) continue; // a bare `x.ts` in prose is too loose to check
      if (/^\d/.test(ref) || isPlaceholder(ref)) continue;
      if (!resolvesPath(ix, file, ref)) out.push({ file, line: i + 1, ref, why: "no such file" });
    }
  });
  const joined = lines.join("\n");
  checkSection(ix, file, joined, out);
  return out;
}

const SOURCE_DIRS = ["verifier/src/", "scripts/", "bench/", "contracts/", "dapp/src/", "circuits/"];
/** Markdown a reader of the project follows; test fixtures' notes cite their upstream sources instead. */
const isProjectDoc = (f: string) => f.endsWith(".md") && !f.startsWith("test/");
/** This file names example references in its own comments. */
const SELF = "scripts/check-doc-refs.ts";

export function checkRepo(root: string): BrokenRef[] {
  const ix = repoIndex(root);
  const out: BrokenRef[] = [];
  for (const f of ix.tracked) {
    if (!existsSync(join(root, f))) continue;
    if (f === SELF) continue;
    if (isProjectDoc(f)) out.push(...checkMarkdown(ix, f, readFileSync(join(root, f), "utf8")));
    else if (SOURCE_DIRS.some((d) => f.startsWith(d)) && /\.(ts|sol|circom)$/.test(f) && !f.startsWith("verifier/src/chain/abi/")) {
      out.push(...checkSource(ix, f, readFileSync(join(root, f), "utf8")));
    }
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const broken = checkRepo(join(import.meta.dirname, ".."));
  for (const b of broken) console.log(`${b.file}:${b.line}: ${b.ref}: ${b.why}`);
  console.log(broken.length === 0 ? "doc references: all resolve" : `doc references: ${broken.length} broken`);
  process.exit(broken.length === 0 ? 0 : 1);
}
