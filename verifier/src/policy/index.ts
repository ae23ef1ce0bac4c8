/**
 * Economics: closed forms that size stakes, audit rates and bonds, the cheapest-contract optimiser
 * over the measured detection matrix, and the quote a buyer's job policy comes from.
 * See docs/economics.md for the model, the assumptions and where each conclusion flips.
 */
export * from "./params.ts";
export * from "./formulas.ts";
export * from "./bonds.ts";
export * from "./detection.ts";
export * from "./contract.ts";
export * from "./contract-lp.ts";
export * from "./quote.ts";
export * from "./compute.ts";
export * from "./registry.ts";
export * from "./challenge.ts";
export * from "./step-sampling.ts";
