/**
 * A user mistake in configuration or input. Its message is one line that names what is wrong
 * and where; callers print it as is (never with a stack trace).
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export function isConfigError(error: unknown): error is ConfigError {
  return error instanceof ConfigError;
}
