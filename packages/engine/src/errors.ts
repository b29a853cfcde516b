/** Errors the engine raises for the operator (not the model): each names the thing and the fix. */

/** Invalid command line, configuration or credentials: `crystal run` exits 1 (CLI-2). */
export class UsageError extends Error {
  override readonly name: string = 'UsageError';
}

export class ConfigError extends UsageError {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    readonly keyPath: string | undefined,
    readonly line: number | undefined,
    readonly expectation: string,
  ) {
    super(`${file}${line === undefined ? '' : `:${line}`}: ${keyPath ? `${keyPath}: ` : ''}${expectation}`);
  }
}

export class CredentialsError extends UsageError {
  override readonly name = 'CredentialsError';
}
