/**
 * Typed errors for the off-chain side. Callers branch on the class (or `code`), never on message text.
 *
 * @example
 *   throw new ManifestError("steps must be a positive integer", { details: "field: training.steps" });
 */
export type PouwErrorOptions = {
  /** Longer explanation, shown after the short message. */
  details?: string;
  /** The underlying error, kept for logs. */
  cause?: unknown;
};

export class PouwError extends Error {
  override name = "PouwError";
  /** Stable machine-readable code, one per subclass. */
  readonly code: string = "POUW_ERROR";
  readonly shortMessage: string;
  readonly details: string | undefined;

  constructor(shortMessage: string, options: PouwErrorOptions = {}) {
    super(options.details ? `${shortMessage}\n\nDetails: ${options.details}` : shortMessage, {
      cause: options.cause,
    });
    this.shortMessage = shortMessage;
    this.details = options.details;
  }
}

/** A user-supplied input (flag, file, manifest field) is invalid. CLI exit code 2. */
export class InputError extends PouwError {
  override name = "InputError";
  override readonly code: string = "INPUT_ERROR";
}
