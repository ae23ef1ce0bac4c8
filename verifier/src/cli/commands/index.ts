import type { Command } from "commander";
import { registerAudit } from "./audit.ts";
import { registerDispute } from "./dispute.ts";
import { registerPolicy } from "./policy.ts";
import { registerQuote } from "./quote.ts";
import { registerTrain } from "./train.ts";

/**
 * Every `pouw` sub-command registers itself here, one import and one call per command file.
 * Keep this list sorted; each command lives in its own file under this folder.
 */
export function registerCommands(program: Command): void {
  registerAudit(program);
  registerDispute(program);
  registerPolicy(program);
  registerQuote(program);
  registerTrain(program);
}
