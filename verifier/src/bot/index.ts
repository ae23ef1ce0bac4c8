/** The challenger bot: a loop over its parts (bot.ts): indexer, auditor, gate, outbox, dispute rounds, on SQLite. */
export * from "./bot.ts";
export * from "./context.ts";
export * from "./db.ts";
export * from "./dispute/index.ts";
export * from "./intent-key.ts";
export * from "./sampler.ts";
export * from "./metrics.ts";
