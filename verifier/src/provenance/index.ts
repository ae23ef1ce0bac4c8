/** Provenance records: build, write, anchor and verify (docs/data.md). */
export {
  PROVENANCE_FORMAT,
  PROVENANCE_FILE,
  ProvenanceRecord,
  buildProvenanceRecord,
  canonicalRecordBytes,
  recordHash,
  parseProvenanceRecord,
  parseProvenanceBytes,
  provenanceCorpora,
  recordManifest,
  type BuildProvenanceInput,
  type SignedReceipt,
  type ProvenanceCorpus,
  type ProvenanceSegment,
  type ProvenanceReceipt,
} from "./record.ts";
export { writeProvenance, readInputFile } from "./io.ts";
export { verifyProvenance, assertProvenance, provenanceVerdict, packageCorpusBytes, type ProvenanceReport, type ProvenanceCheck, type CheckStatus, type CorpusBytesLoader, type VerifyProvenanceInput } from "./verify.ts";
export { contentDigestOf, type ProvenanceChain, type ChainJob, type ChainCorpus, type ChainJobCorpus, type ChainAnchor } from "./chain.ts";
export { viemProvenanceChain, type ViemProvenanceChainOptions } from "../chain/provenanceChain.ts";
export { anchorProvenance, type AnchorProvenanceParameters } from "../chain/anchorProvenance.ts";
export { weightsStateHash, stateSpecsOf } from "./weights.ts";
export { ProvenanceRecordError, ProvenanceBuildError, ProvenanceMismatchError } from "./errors.ts";
