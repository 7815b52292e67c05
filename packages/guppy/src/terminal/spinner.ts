import { colorEnabled, createStyles, type Styles } from "./ansi.js";

const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface Spinner {
  start(label: string): void;
  stop(): void;
  readonly active: boolean;
}

/**
 * A one-line spinner redrawn in place; does nothing when the stream is not a terminal. It is dim
 * unless colour is off for the stream (NO_COLOR): `styles` decides, as for the rest of the output.
 */
export function createSpinner(
  stream: NodeJS.WriteStream,
  enabled = Boolean(stream.isTTY),
  styles: Styles = createStyles(colorEnabled(stream)),
): Spinner {
  let timer: NodeJS.Timeout | undefined;
  let frame = 0;
  return {
    get active() {
      return timer !== undefined;
    },
    start(label) {
      if (!enabled || timer) return;
      const draw = () => {
        // \r and "erase to the end of the line" redraw it in place; they are not colour.
        stream.write(`\r${styles.dim(`${frames[frame++ % frames.length]} ${label}`)}\x1b[K`);
      };
      draw();
      timer = setInterval(draw, 80);
    },
    stop() {
      if (!timer) return;
      clearInterval(timer);
      timer = undefined;
      stream.write("\r\x1b[K");
    },
  };
}
