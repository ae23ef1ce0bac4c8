/** Default share of the payment credited to the job's corpora at finalize: 10% (market/data-terms.ts attaches it). */
export const DEFAULT_DATA_SHARE_BPS = 1_000;

/**
 * The largest data share `pouw provider accept` takes without `--max-data-share-bps`: 25%. A buyer may name its own
 * corpus and set the share to 100%, so that the whole payment comes back to it at finalize and the provider trains
 * for nothing; the contract allows any share a buyer posts, so the provider's side refuses what it was not offered.
 */
export const DEFAULT_MAX_DATA_SHARE_BPS = 2_500;
