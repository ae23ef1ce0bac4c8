/**
 * The bot's dispute step lives in ./dispute/ (one file per round: challenge, panel, resolve, claim); this path is kept
 * so that the bot's other parts import it from one place.
 */
export * from "./dispute/index.ts";
