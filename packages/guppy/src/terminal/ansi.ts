/** ANSI styling, off when the stream is not a terminal or NO_COLOR is set. */
export interface Styles {
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  bold(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  cyan(text: string): string;
}

export function createStyles(enabled: boolean): Styles {
  const wrap = (open: number, close: number) => (text: string) =>
    enabled ? `\x1b[${open}m${text}\x1b[${close}m` : text;
  return {
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    bold: wrap(1, 22),
    italic: wrap(3, 23),
    underline: wrap(4, 24),
    cyan: wrap(36, 39),
  };
}

/** Colour on a terminal, unless NO_COLOR is set to anything but "" (no-color.org). */
export function colorEnabled(stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR;
}
