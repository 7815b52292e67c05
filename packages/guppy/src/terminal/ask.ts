import { createInterface } from "node:readline";
import { StringDecoder } from "node:string_decoder";

/** Questions on the terminal, one at a time (guppy setup). */
export interface Asker {
  /** One typed line, trimmed. */
  ask(question: string): Promise<string>;
  /** A secret (an API key, a bot token): read with nothing echoed, trimmed. */
  askHidden(question: string): Promise<string>;
}

/** Ctrl+C or Ctrl+D at a question: the user left. */
export class AnswerCancelled extends Error {
  override readonly name = "AnswerCancelled";
  constructor() {
    super("cancelled");
  }
}

/** Paste markers and other escape sequences a terminal may send inside a pasted key. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences are the point
const ESCAPES = /\x1b\[[0-9;]*[~A-Za-z]/g;

/**
 * Questions on a terminal (stdin a TTY). Each question has a readline of its own, closed once
 * answered, so a hidden question can take the terminal in raw mode without readline echoing.
 */
export function createTerminalAsker(
  input: NodeJS.ReadStream = process.stdin,
  output: NodeJS.WriteStream = process.stdout,
): Asker {
  return {
    ask: (question) =>
      new Promise((resolve, reject) => {
        const rl = createInterface({ input, output, terminal: true });
        let answered = false;
        rl.on("SIGINT", () => {
          output.write("\n");
          rl.close();
        });
        rl.on("close", () => {
          if (!answered) reject(new AnswerCancelled());
        });
        rl.question(question, (answer) => {
          answered = true;
          rl.close();
          resolve(answer.trim());
        });
      }),
    askHidden: (question) => readHidden(question, input, output),
  };
}

/**
 * Reads a line in raw mode, echoing nothing (not even stars: the key's length stays private).
 * Backspace and Ctrl+U edit it; Enter ends it; Ctrl+C, or Ctrl+D on an empty line, cancels.
 */
function readHidden(
  question: string,
  input: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
): Promise<string> {
  output.write(question);
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder("utf8");
    const wasRaw = input.isRaw;
    let value = "";
    const finish = (result: string | undefined) => {
      input.off("data", onData);
      input.setRawMode(wasRaw);
      input.pause();
      output.write("\n");
      if (result === undefined) reject(new AnswerCancelled());
      else resolve(result.trim());
    };
    const onData = (chunk: Buffer) => {
      for (const char of decoder.write(chunk).replace(ESCAPES, "")) {
        if (char === "\r" || char === "\n") return finish(value);
        if (char === "\x03") return finish(undefined);
        if (char === "\x04") return finish(value === "" ? undefined : value);
        if (char === "\x7f" || char === "\b") value = value.slice(0, -1);
        else if (char === "\x15") value = "";
        else if (char >= " ") value += char;
      }
    };
    input.setRawMode(true);
    input.on("data", onData);
    input.resume();
  });
}
