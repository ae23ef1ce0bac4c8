/** Default share of the payment credited to the job's corpora at finalize: 10% (market/data-terms.ts attaches it). */
export const DEFAULT_DATA_SHARE_BPS = 1_000;
