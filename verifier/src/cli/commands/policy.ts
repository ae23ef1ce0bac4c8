/**
 * `pouw policy <name> --<param> <value> ... [--json]`: evaluates one closed form of the economics
 * (verifier/src/policy) and prints every output under its name in the formula.
 */
import type { Command } from "commander";
import { FORMULAS, parseFormulaArgs, type FormulaSpec } from "../../policy/index.ts";

function describe(spec: FormulaSpec): string {
  const params = spec.params.map((p) => `  --${p.name.padEnd(5)} ${p.meaning} [${p.unit}]`).join("\n");
  const outputs = spec.outputs.map((o) => `  ${o.name.padEnd(14)} ${o.meaning}`).join("\n");
  return `${spec.summary}\n\n  ${spec.formula}\n\nParameters:\n${params}\n\nOutputs:\n${outputs}`;
}

function format(v: number | boolean | string): string {
  return typeof v === "number" ? String(Number(v.toPrecision(12))) : String(v);
}

export function registerPolicy(program: Command): void {
  const policy = program
    .command("policy")
    .description("evaluate a closed form of the economics by name (see docs/economics.md)")
    .showHelpAfterError(false)
    .addHelpText("after", `\nFormulas:\n${FORMULAS.map((f) => `  ${f.name.padEnd(18)} ${f.formula}`).join("\n")}`);
  for (const spec of FORMULAS) {
    const cmd = policy
      .command(spec.name)
      .summary(spec.summary)
      .description(describe(spec))
      .showHelpAfterError(false)
      .option("--json", "print the inputs and outputs as one JSON object");
    for (const p of spec.params) cmd.option(`--${p.name} <${p.unit.split(" ")[0]}>`, `${p.meaning} [${p.unit}]`);
    cmd.action((opts: Record<string, string | boolean | undefined>) => {
      const raw: Record<string, string | undefined> = {};
      for (const p of spec.params) raw[p.name] = opts[p.name] as string | undefined;
      const inputs = parseFormulaArgs(spec, raw);
      const outputs = spec.evaluate(inputs);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ formula: spec.name, inputs, ...outputs })}\n`);
        return;
      }
      process.stdout.write(`${spec.name}: ${spec.formula}\n`);
      for (const o of spec.outputs) {
        process.stdout.write(`  ${o.name} = ${format(outputs[o.name]!)}    (${o.meaning})\n`);
      }
    });
  }
}
