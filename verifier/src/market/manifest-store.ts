/**
 * Manifests travel through the content store: the buyer stores the manifest's canonical JSON and puts
 * `cid:<CID>` on chain as the manifest URI; whoever reads it checks the bytes against the CID (the store
 * does) and the parsed manifest against the on-chain manifestHash.
 */
import type { Hex } from "viem";
import { InputError, PouwError } from "../errors/index.ts";
// NOTE: ml/manifest.ts, not ml/index.ts: the dApp bundles this file, and the engine (tfjs) must stay out of it
import { canonicalManifest, manifestHash, parseManifestJson, type Manifest } from "../ml/manifest.ts";
import type { ContentStore } from "../store/index.ts";

export class ManifestMismatchError extends PouwError {
  override name = "ManifestMismatchError";
  override readonly code: string = "MANIFEST_MISMATCH";
}

export const MANIFEST_URI_PREFIX = "cid:";

export async function publishManifest(store: Pick<ContentStore, "put">, manifest: Manifest): Promise<{ uri: string; hash: Hex }> {
  const cid = await store.put(new TextEncoder().encode(canonicalManifest(manifest)));
  return { uri: `${MANIFEST_URI_PREFIX}${cid}`, hash: manifestHash(manifest) };
}

export type FetchManifestOptions = {
  /**
   * For a linear-tile (circuit-class) manifest: checks the job's on-chain manifest hash against the document's circuit
   * terms (market/circuit-job.ts circuitJobCheck, which throws CircuitTermsMismatchError) and returns it. Without it a
   * linear-tile manifest is refused: its job hash is not manifestHash(document).
   */
  circuitHash?: (manifest: Manifest) => Promise<Hex>;
};

export async function fetchManifest(store: ContentStore, uri: string, expectedHash: Hex, opts: FetchManifestOptions = {}): Promise<Manifest> {
  if (!uri.startsWith(MANIFEST_URI_PREFIX)) throw new InputError(`manifest URI ${JSON.stringify(uri)} is not a content-store URI (cid:<CID>)`);
  const bytes = await store.get(uri.slice(MANIFEST_URI_PREFIX.length));
  const manifest = parseManifestJson(new TextDecoder().decode(bytes));
  if (manifest.model.arch === "linear-tile") {
    if (!opts.circuitHash) throw new ManifestMismatchError(`manifest at ${uri} is linear-tile (circuit class): its job hash commits its circuit terms, which this reader does not check`);
    const h = await opts.circuitHash(manifest);
    if (h !== expectedHash) throw new ManifestMismatchError(`manifest at ${uri} with its circuit terms hashes to ${h}, but the job commits ${expectedHash}`);
    return manifest;
  }
  const h = manifestHash(manifest);
  if (h !== expectedHash) throw new ManifestMismatchError(`manifest at ${uri} hashes to ${h}, but the job commits ${expectedHash}`);
  return manifest;
}
