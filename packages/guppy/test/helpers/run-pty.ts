import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { guppyBin } from "./run-cli.js";

/** `guppy <args>` in a pseudo-terminal (util-linux `script`): stdin and stdout are a TTY. */
export interface PtyCli {
  child: ChildProcessWithoutNullStreams;
  /** Everything the terminal showed so far (echoed keys included). */
  output(): string;
  /** Types `text` (a line ends with "\r", as Enter sends it). */
  type(text: string): void;
  /** Resolves once the output matches `pattern` (rejects after `timeoutMs`, with the output). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Resolves to the exit code once guppy (and `script`) ended. */
  exited(timeoutMs?: number): Promise<number | null>;
}

export function runPty(args: string[], env: NodeJS.ProcessEnv): PtyCli {
  const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
  const command = [process.execPath, guppyBin, ...args].map(quote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    env: { TERM: "xterm-256color", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  const waiters = new Set<() => void>();
  child.stdout.on("data", (d) => {
    out += d;
    for (const w of waiters) w();
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  let code: number | null | undefined;
  const closed = new Promise<number | null>((resolve) =>
    child.on("close", (c) => {
      code = c;
      resolve(c);
    }),
  );
  return {
    child,
    output: () => out,
    type: (text) => child.stdin.write(text),
    waitFor: (pattern, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(out)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${pattern} in the terminal's output:\n${out}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    exited: (timeoutMs = 20_000) => {
      if (code !== undefined) return Promise.resolve(code);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          reject(new Error(`guppy ${args.join(" ")} did not exit:\n${out}`));
        }, timeoutMs);
        void closed.then((c) => {
          clearTimeout(timer);
          resolve(c);
        });
      });
    },
  };
}
