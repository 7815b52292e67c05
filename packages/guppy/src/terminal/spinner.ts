const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

export interface Spinner {
  start(label: string): void;
  stop(): void;
  readonly active: boolean;
}

/** A one-line spinner redrawn in place; does nothing when the stream is not a terminal. */
export function createSpinner(
  stream: NodeJS.WriteStream,
  enabled = Boolean(stream.isTTY),
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
        stream.write(`\r\x1b[2m${frames[frame++ % frames.length]} ${label}\x1b[22m\x1b[K`);
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
