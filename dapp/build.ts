/**
 * Builds the buyer dApp (dapp/src) into static files: `npm run dapp:build` writes dapp/dist, `npm run dapp`
 * rebuilds on change and serves it with esbuild's dev server (the deployment file copied in as deployment.json).
 *
 *   dist/index.html     the page
 *   dist/app.js         the bundle (viem, zod, the manifest schema, the policy code, chain actions)
 *   dist/highs.wasm     the HiGHS solver the quote's optimiser runs (loaded next to app.js)
 *   dist/detection.json the measured detection matrix the quote reads (bench/results/detection.json)
 *
 * The bundle imports verifier/src modules as they are: `node:*` built-ins resolve to dapp/src/shims/node.ts
 * (the file helpers those modules carry are never called in the page) and verifier/src/log to a console logger.
 *
 * Usage: node dapp/build.ts [--out DIR] [--serve] [--port N] [--deployment FILE]
 */
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

const DAPP = dirname(fileURLToPath(import.meta.url));
const ROOT = join(DAPP, "..");
export const DEFAULT_DAPP_DIST = join(DAPP, "dist");

/** The browser stand-ins (`node:*` and the logger); test/dapp/browser-hash.test.ts bundles with them too. */
export const browserShims: esbuild.Plugin = {
  name: "pouw-browser-shims",
  setup(build) {
    build.onResolve({ filter: /^node:/ }, () => ({ path: join(DAPP, "src/shims/node.ts") }));
    build.onResolve({ filter: /\/log\/index\.ts$/ }, (args) => {
      const target = resolve(args.resolveDir, args.path);
      return target === join(ROOT, "verifier/src/log/index.ts") ? { path: join(DAPP, "src/shims/log.ts") } : undefined;
    });
  },
};

function options(outdir: string): esbuild.BuildOptions {
  return {
    entryPoints: [join(DAPP, "src/main.ts")],
    outfile: join(outdir, "app.js"),
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
    define: { "process.env.NODE_ENV": '"production"' },
    plugins: [browserShims],
  };
}

async function copyStatic(outdir: string, deployment?: string): Promise<void> {
  await mkdir(outdir, { recursive: true });
  await copyFile(join(DAPP, "index.html"), join(outdir, "index.html"));
  await copyFile(join(ROOT, "node_modules/highs/build/highs.wasm"), join(outdir, "highs.wasm"));
  await copyFile(join(ROOT, "bench/results/detection.json"), join(outdir, "detection.json"));
  if (deployment) await writeFile(join(outdir, "deployment.json"), await readFile(deployment));
}

/** One production build into `outdir` (default dapp/dist). Returns the files written. */
export async function buildDapp(o: { outdir?: string } = {}): Promise<{ outdir: string; files: string[] }> {
  const outdir = o.outdir ?? DEFAULT_DAPP_DIST;
  await copyStatic(outdir);
  await esbuild.build(options(outdir));
  return { outdir, files: ["index.html", "app.js", "highs.wasm", "detection.json"] };
}

async function main(argv: string[]): Promise<void> {
  const flag = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const outdir = resolve(flag("--out") ?? DEFAULT_DAPP_DIST);
  if (!argv.includes("--serve")) {
    const r = await buildDapp({ outdir });
    process.stdout.write(`dapp built: ${r.files.map((f) => join(outdir, f)).join(", ")}\n`);
    return;
  }
  const wanted = flag("--deployment") ?? join(ROOT, ".pouw/deployment.json");
  const deployment = await readFile(wanted).then(() => wanted, () => undefined);
  if (deployment === undefined && flag("--deployment") !== undefined) throw new Error(`cannot read the deployment file ${wanted}`);
  await copyStatic(outdir, deployment);
  const ctx = await esbuild.context({ ...options(outdir), minify: false, sourcemap: "inline" });
  await ctx.watch();
  const { hosts, port } = await ctx.serve({ servedir: outdir, host: "127.0.0.1", port: Number(flag("--port") ?? 8091) });
  const from = deployment ? `deployment.json from ${deployment}` : `no deployment file at ${wanted}: open the page with ?deployment=<url>`;
  process.stdout.write(`dapp dev server at http://${hosts[0]}:${port}/ (rebuilds on change; ${from}; Ctrl-C stops)\n`);
  const stop = () => void ctx.dispose().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`dapp: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
