/** An inference job's manifest with its kind (docs/kinds.md): the one type the market, the quote and the policy share. */
import type { EvaluateManifest } from "../evaluate/index.ts";
import type { GenerateManifest } from "./generate.ts";

export type KindManifest = { kind: "evaluate"; manifest: EvaluateManifest } | { kind: "generate"; manifest: GenerateManifest };
