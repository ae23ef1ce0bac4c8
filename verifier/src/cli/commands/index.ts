import type { Command } from "commander";
import { registerAudit } from "./audit.ts";
import { registerAuditor } from "./auditor.ts";
import { registerBuyer } from "./buyer.ts";
import { registerCorpus } from "./corpus.ts";
import { registerDeploy } from "./deploy.ts";
import { registerDev } from "./dev.ts";
import { registerDispute } from "./dispute.ts";
import { registerEvaluate } from "./evaluate.ts";
import { registerPolicy } from "./policy.ts";
import { registerProvenance } from "./provenance.ts";
import { registerProvider } from "./provider.ts";
import { registerQuote } from "./quote.ts";
import { registerServe } from "./serve.ts";
import { registerTrain } from "./train.ts";

/**
 * Every `pouw` sub-command registers itself here, one import and one call per command file.
 * Keep this list sorted; each command lives in its own file under this folder.
 */
export function registerCommands(program: Command): void {
  registerAudit(program);
  registerAuditor(program);
  registerBuyer(program);
  registerCorpus(program);
  registerDeploy(program);
  registerDev(program);
  registerDispute(program);
  registerEvaluate(program);
  registerPolicy(program);
  registerProvenance(program);
  registerProvider(program);
  registerQuote(program);
  registerServe(program);
  registerTrain(program);
}
