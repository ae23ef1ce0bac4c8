/**
 * Per-example outputs of an evaluate job and their Merkle commitment (pure).
 *
 *   output(i)  = { logitsHash: keccak256(float32 LE logits of example i), loss: float32 of example i }
 *   record(i)  = logitsHash (32 bytes) || loss (4 bytes, float32 LE)            -> outputs.bin, 36 bytes each
 *   leaf(i)    = keccak256(abi.encodePacked(uint64 i, bytes32 logitsHash, uint32 lossBits))
 *   root       = OpenZeppelin SimpleMerkleTree root over leaf(0..N-1) in example order (no sorting)
 *
 * lossBits is the float32's IEEE bit pattern as a big-endian uint32 (abi.encodePacked), so the leaf is
 * checkable on chain (MerkleProof.verify) and a float is never compared by value. Leaves have 44-byte
 * preimages and inner nodes 64-byte ones, so a leaf can never pass as an inner node (as in trace/).
 */
import { SimpleMerkleTree } from "@openzeppelin/merkle-tree";
import { encodePacked, keccak256, type Hex } from "viem";
import { InputError } from "../errors/index.ts";

export const OUTPUT_RECORD_BYTES = 36;

export type ExampleOutput = { logitsHash: Hex; lossBits: number };

export class OutputsFileError extends InputError {
  override name = "OutputsFileError";
  override readonly code: string = "OUTPUTS_FILE";
}

/** The float32 bit pattern of `x` (x is rounded to float32 first). */
export function float32Bits(x: number): number {
  const v = new DataView(new ArrayBuffer(4));
  v.setFloat32(0, x, true);
  return v.getUint32(0, true);
}

export function bitsToFloat32(bits: number): number {
  const v = new DataView(new ArrayBuffer(4));
  v.setUint32(0, bits, true);
  return v.getFloat32(0, true);
}

export function outputLeaf(index: number, o: ExampleOutput): Hex {
  return keccak256(encodePacked(["uint64", "bytes32", "uint32"], [BigInt(index), o.logitsHash, o.lossBits]));
}

export function encodeOutputs(outputs: readonly ExampleOutput[]): Uint8Array {
  const out = new Uint8Array(outputs.length * OUTPUT_RECORD_BYTES);
  const view = new DataView(out.buffer);
  outputs.forEach((o, i) => {
    out.set(Buffer.from(o.logitsHash.slice(2), "hex"), i * OUTPUT_RECORD_BYTES);
    view.setUint32(i * OUTPUT_RECORD_BYTES + 32, o.lossBits, true);
  });
  return out;
}

export function decodeOutputs(bytes: Uint8Array): ExampleOutput[] {
  if (bytes.length === 0 || bytes.length % OUTPUT_RECORD_BYTES !== 0) throw new OutputsFileError(`outputs file has ${bytes.length} bytes, not a positive multiple of ${OUTPUT_RECORD_BYTES}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const outputs: ExampleOutput[] = [];
  for (let off = 0; off < bytes.length; off += OUTPUT_RECORD_BYTES) {
    outputs.push({ logitsHash: `0x${Buffer.from(bytes.subarray(off, off + 32)).toString("hex")}` as Hex, lossBits: view.getUint32(off + 32, true) });
  }
  return outputs;
}

/** The Merkle tree over the outputs' leaves (example order). */
export class OutputsTree {
  readonly leaves: readonly Hex[];
  private readonly tree: SimpleMerkleTree;
  constructor(outputs: readonly ExampleOutput[]) {
    if (outputs.length === 0) throw new InputError("an evaluation needs at least one example");
    this.leaves = outputs.map((o, i) => outputLeaf(i, o));
    this.tree = SimpleMerkleTree.of([...this.leaves], { sortLeaves: false });
  }
  get root(): Hex {
    return this.tree.root as Hex;
  }
  proof(index: number): Hex[] {
    if (!Number.isInteger(index) || index < 0 || index >= this.leaves.length) throw new InputError(`example ${index} is outside 0..${this.leaves.length - 1}`);
    return this.tree.getProof(index) as Hex[];
  }
}

/** A claimed output of one example with its proof against the committed root. */
export type ExampleClaim = { index: number; output: ExampleOutput; proof: Hex[] };

export function exampleClaim(outputs: readonly ExampleOutput[], index: number): ExampleClaim {
  const tree = new OutputsTree(outputs);
  return { index, output: outputs[index]!, proof: tree.proof(index) };
}

/** Whether the claimed output of example `index` is the one committed under `root`. */
export function verifyExampleClaim(root: Hex, claim: ExampleClaim): boolean {
  return SimpleMerkleTree.verify(root, outputLeaf(claim.index, claim.output), [...claim.proof]);
}
