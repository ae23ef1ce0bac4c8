/**
 * The bot database's schema: opens (or creates) the SQLite file with its durability settings, creates the tables
 * and adds the columns introduced after the first release to an older file. The tables are described in db.ts.
 */
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import type { DatabaseSync } from "node:sqlite";
import { dirname } from "node:path";

/**
 * Loads node:sqlite without its one-time "SQLite is an experimental feature" warning on stderr (the
 * CLI's stderr carries one-line reasons and logs; every other warning passes through).
 */
function loadSqlite(): typeof import("node:sqlite") {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === "string" ? warning : warning.message;
    if (/SQLite is an experimental feature/.test(text)) return;
    (emit as (...a: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return createRequire(import.meta.url)("node:sqlite") as typeof import("node:sqlite");
  } finally {
    process.emitWarning = emit;
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
  job_id TEXT PRIMARY KEY, buyer TEXT NOT NULL, manifest_uri TEXT NOT NULL, manifest_hash TEXT NOT NULL,
  segments INTEGER NOT NULL, steps_per_segment INTEGER NOT NULL, audit_rate REAL, provider TEXT, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS segments (
  job_id TEXT NOT NULL, segment INTEGER NOT NULL, trace_root TEXT NOT NULL, end_state_hash TEXT NOT NULL,
  state_hashes TEXT NOT NULL DEFAULT '[]',
  checkpoint_cid TEXT NOT NULL, loss_e6 TEXT NOT NULL, block TEXT NOT NULL, sampled INTEGER,
  audit TEXT NOT NULL DEFAULT 'unsampled', first_bad_step INTEGER, cost_ms REAL, flops REAL, detail TEXT,
  PRIMARY KEY (job_id, segment));
CREATE TABLE IF NOT EXISTS intents (
  id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, job_id TEXT, segment INTEGER,
  payload TEXT NOT NULL, status TEXT NOT NULL, tx_hash TEXT, raw_tx TEXT, nonce INTEGER, error TEXT,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS blocks (number INTEGER PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
  block INTEGER NOT NULL, log_index INTEGER NOT NULL, job_id TEXT, name TEXT NOT NULL, PRIMARY KEY (block, log_index));
CREATE TABLE IF NOT EXISTS receipts (
  job_id TEXT NOT NULL, segment INTEGER NOT NULL, verdict INTEGER NOT NULL, checks INTEGER NOT NULL,
  sampled_steps INTEGER NOT NULL, trace_root TEXT NOT NULL, signature TEXT NOT NULL, PRIMARY KEY (job_id, segment));
`;

// NOTE: node:sqlite rather than better-sqlite3: better-sqlite3 is a native addon that must be built
// for the exact Node ABI, and the offline install builds it for the bootstrap Node, not Node 22.
/** Opens the bot database at `path` (its folder created if missing): WAL, synchronous FULL, the schema and its migrations. */
export function openBotDatabase(path: string): DatabaseSync {
  mkdirSync(dirname(path), { recursive: true });
  const db = new (loadSqlite().DatabaseSync)(path);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec(SCHEMA);
  migrate(db);
  return db;
}

/** Columns added after the first release: added in place to an older database (SQLite ALTER TABLE ADD COLUMN). */
function migrate(db: DatabaseSync): void {
  const columns = (table: string) => new Set((db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name));
  const added: [table: string, name: string, decl: string][] = [
    ["intents", "attempts", "INTEGER NOT NULL DEFAULT 0"],
    ["intents", "retry_at", "INTEGER"],
    ["intents", "reverts", "INTEGER NOT NULL DEFAULT 0"],
    ["segments", "screen", "TEXT"],
    ["segments", "unavailable_since", "INTEGER"],
    ["intents", "mined_block", "INTEGER"],
    ["segments", "block_hash", "TEXT"],
    ["intents", "cancel", "INTEGER NOT NULL DEFAULT 0"],
  ];
  for (const [table, name, decl] of added) {
    if (!columns(table).has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${decl}`);
  }
}
