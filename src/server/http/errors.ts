// In charge of the one error type every module throws. Each API surface renders it in its own
// wire format in exactly one place (identity: GoTrue bodies; data API: PostgREST bodies).
export interface HttpErrorOptions {
  /** machine-readable code, stable across releases (e.g. invalid_credentials, PGRST116) */
  code: string;
  /** a list of objects where PostgREST answers one (the candidates of an ambiguous embed) */
  details?: string | Record<string, string>[] | null;
  hint?: string | null;
  headers?: Record<string, string>;
  cause?: unknown;
}

export class HttpError extends Error {
  override name = 'HttpError';
  readonly status: number;
  readonly code: string;
  readonly details: string | Record<string, string>[] | null;
  readonly hint: string | null;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, options: HttpErrorOptions) {
    super(message, { cause: options.cause });
    this.status = status;
    this.code = options.code;
    this.details = options.details ?? null;
    this.hint = options.hint ?? null;
    this.headers = options.headers ?? {};
  }
}

/**
 * Structural rather than `instanceof`: the Next.js bundle carries its own copy of this module, and
 * errors thrown by the server's services (loaded outside the bundle) must still be recognised.
 */
export function isHttpError(error: unknown): error is HttpError {
  if (error instanceof HttpError) return true;
  const e = error as { name?: unknown; status?: unknown; code?: unknown } | null;
  return (
    !!e &&
    typeof e === 'object' &&
    e.name === 'HttpError' &&
    typeof e.status === 'number' &&
    typeof e.code === 'string'
  );
}
