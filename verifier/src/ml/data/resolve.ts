import { createRequire } from "node:module";
import { dirname } from "node:path";
import { DataError } from "../errors.ts";

const require = createRequire(import.meta.url);

/** Directory of an installed npm package; DataError when it is not installed. */
export function packageDir(name: string): string {
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name)) throw new DataError(`data package name ${JSON.stringify(name)} is not an npm package name`);
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch (err) {
    throw new DataError(`data package '${name}' is not installed (npm install ${name})`, { cause: err });
  }
}
