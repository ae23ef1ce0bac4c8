/** `pouw ARGS` in this process: moved to test/helpers/cli.ts (the one CLI helper); re-exported for existing callers. */
export { runPouw, type PouwRun } from "../helpers/cli.ts";
