/**
 * A commander action that loads its handler module only when the command runs: a family file (commands/*.ts) defines
 * its commands and flags with nothing heavier than commander, so `pouw <family> --help` and flag errors load no chain
 * action, engine, prover or LP solver (bench/cli.ts measures it; test/cli/startup.test.ts checks it).
 */
export function lazyAction<M extends Record<string, unknown>>(load: () => Promise<M>, name: keyof M & string): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const handler = (await load())[name];
    if (typeof handler !== "function") throw new Error(`command handler ${name} is missing from its module`);
    await (handler as (...a: unknown[]) => unknown)(...args);
  };
}
