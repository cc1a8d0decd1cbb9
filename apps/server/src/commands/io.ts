/** What a `tern-server` command gets from its process: the environment, the streams, the terminal. */
export interface CliIo {
  env: Record<string, string | undefined>;
  out(text: string): void;
  err(text: string): void;
  /** All of stdin as text (passwords piped in); undefined when stdin is a terminal. */
  readStdin(): Promise<string | undefined>;
  /** Asks on the terminal without echo; null when there is no terminal to ask on. */
  promptSecret(question: string): Promise<string | null>;
  /** Whether standard output is a terminal (the first administrator's password is printed only there). */
  stdoutIsTTY?: boolean;
  /** The directory relative paths are taken from (npm start runs in apps/server; INIT_CWD is where npm was run). */
  cwd: string;
}

/** Exit codes every command keeps: scripts can rely on them. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;
