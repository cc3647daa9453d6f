import { TickwiseError } from '@tickwise/time';

/**
 * A provenance problem with one file: not ELF, truncated, unreadable.
 * A {@link TickwiseError} whose `file` is the path, so the CLI prints
 * `tickwise: <path>: <message>` and exits 2.
 */
export class ProvenanceError extends TickwiseError {
  /** The file the problem is in. */
  readonly path: string;

  constructor(code: string, path: string, message: string, opts: { cause?: unknown } = {}) {
    super(code, message, { file: path, cause: opts.cause });
    this.name = 'ProvenanceError';
    this.path = path;
  }
}

/** True for a {@link ProvenanceError}. */
export function isProvenanceError(e: unknown): e is ProvenanceError {
  return e instanceof ProvenanceError;
}
