/** What every CLI command gets: resolved once from argv and the environment in main.ts. */
export interface CliContext {
  stateRoot: string;
  databaseUrl?: string;
  /** TERN_ADMIN_EMAIL / TERN_ADMIN_PASSWORD: the lab's first administrator (random when unset). */
  admin?: { email: string; password: string };
  /** The shell `exec` starts when given no command. */
  shell: string;
  out: (line: string) => void;
}
