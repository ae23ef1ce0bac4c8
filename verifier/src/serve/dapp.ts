/**
 * The buyer dApp's static files for `pouw serve --dapp` (dapp/build.ts writes them to dapp/dist).
 *
 * INVARIANT: the files are read once, at start, from a fixed list of names (the build's outputs); a request
 * is answered by looking its path up in that map, so no request text is ever joined into a file path.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { InputError } from "../errors/index.ts";

/** The build's outputs, each with its content type. */
export const DAPP_FILES: Readonly<Record<string, string>> = Object.freeze({
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "highs.wasm": "application/wasm",
  "detection.json": "application/json",
});

export type DappFile = { bytes: Uint8Array; type: string };
/** Request path ("/", "/app.js", ...) to the file served for it. */
export type DappFiles = ReadonlyMap<string, DappFile>;

export class DappFilesError extends InputError {
  override name = "DappFilesError";
  override readonly code: string = "DAPP_FILES";
}

/**
 * Reads the built dApp from `dir` and, when given, the deployment file served as /deployment.json (the page's
 * default deployment). A missing build file is a DappFilesError naming the fix (`npm run dapp:build`).
 */
export async function loadDappFiles(dir: string, o: { deploymentPath?: string } = {}): Promise<DappFiles> {
  const files = new Map<string, DappFile>();
  for (const [name, type] of Object.entries(DAPP_FILES)) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(join(dir, name));
    } catch (err) {
      throw new DappFilesError(`no dApp build at ${dir} (${name} missing): run \`npm run dapp:build\` first`, { cause: err });
    }
    files.set(`/${name}`, { bytes, type });
  }
  files.set("/", files.get("/index.html")!);
  if (o.deploymentPath !== undefined) {
    try {
      files.set("/deployment.json", { bytes: await readFile(o.deploymentPath), type: "application/json" });
    } catch (err) {
      throw new DappFilesError(`cannot read the deployment file ${o.deploymentPath} to serve as /deployment.json`, { cause: err });
    }
  }
  return files;
}

/**
 * Response headers of a dApp file. The page loads only its own files (the wallet is injected, not fetched) and
 * may fetch JSON from anywhere (a deployment or detection URL given as a parameter, the wallet's RPC is the wallet's).
 */
export function dappHeaders(f: DappFile): Record<string, string | number> {
  return {
    "content-type": f.type,
    "content-length": f.bytes.byteLength,
    "cache-control": "no-cache",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; connect-src *; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  };
}
