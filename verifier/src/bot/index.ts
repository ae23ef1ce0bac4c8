/** The challenger bot: event scan, private sampling, checks, receipts, challenges, deadlines, intents (SQLite). */
export * from "./bot.ts";
export * from "./checks.ts";
export * from "./db.ts";
export * from "./dispute.ts";
export * from "./sampler.ts";
export * from "./metrics.ts";
