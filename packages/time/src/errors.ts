/**
 * The one error type users see. The CLI prints `tickwise: file:line: message`
 * and exits with `exitCode` (2 = bad usage or input). Anything else that
 * escapes is a bug and is printed as one.
 */
export class TickwiseError extends Error {
  /** Stable machine-readable code, e.g. `invalid-duration`. */
  readonly code: string;
  /** The input file the problem is in, when there is one. */
  readonly file: string | undefined;
  /** 1-based line in `file`, when known. */
  readonly line: number | undefined;
  /** Process exit code the CLI should use. */
  readonly exitCode: number;

  constructor(
    code: string,
    message: string,
    opts: { file?: string | undefined; line?: number | undefined; exitCode?: number; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'TickwiseError';
    this.code = code;
    this.file = opts.file;
    this.line = opts.line;
    this.exitCode = opts.exitCode ?? 2;
  }

  /** `file:line: message`, the form the CLI prints. */
  where(): string {
    const loc = this.file === undefined ? '' : this.line === undefined ? `${this.file}: ` : `${this.file}:${this.line}: `;
    return loc + this.message;
  }
}

/** True for a {@link TickwiseError}. */
export function isTickwiseError(e: unknown): e is TickwiseError {
  return e instanceof TickwiseError;
}
