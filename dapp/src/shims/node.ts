/**
 * The browser build's stand-in for the node: built-ins that modules the dApp bundles import for their file
 * helpers (chain/deployment.ts readDeployment, ml/manifest.ts readManifestText, policy's loaders, the store's
 * disk code). The dApp never calls those helpers; if one is called anyway it fails loudly instead of
 * half-working. dapp/build.ts resolves every `node:*` import here.
 */
const unavailable = (name: string) => (): never => {
  throw new Error(`${name} is not available in the browser`);
};
export const readFile = unavailable("readFile");
export const writeFile = unavailable("writeFile");
export const mkdir = unavailable("mkdir");
export const lstat = unavailable("lstat");
export const open = unavailable("open");
export const realpath = unavailable("realpath");
export const rename = unavailable("rename");
export const readFileSync = unavailable("readFileSync");
export const openSync = unavailable("openSync");
export const readSync = unavailable("readSync");
export const closeSync = unavailable("closeSync");
export const fstatSync = unavailable("fstatSync");
export const readdirSync = unavailable("readdirSync");
export const createHash = unavailable("createHash");
export const randomBytes = unavailable("randomBytes");
export const createRequire = unavailable("createRequire");
export const fileURLToPath = unavailable("fileURLToPath");
export const join = unavailable("join");
export const resolve = unavailable("resolve");
export const dirname = unavailable("dirname");
export const sep = "/";
export const constants = {};
export default {};
