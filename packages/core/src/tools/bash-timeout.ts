/**
 * Longest timeout of one bash tool call, in seconds (24 h): the most `timeout_seconds` and
 * GUPPY_BASH_TIMEOUT_SECONDS may ask for. Well inside what a Node timer can wait (2^31 − 1 ms,
 * ~24.8 days); a longer wait would fire at once.
 */
export const MAX_BASH_TIMEOUT_SECONDS = 86_400;
