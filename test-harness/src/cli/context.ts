/** What every CLI command gets: resolved once from argv and the environment in main.ts. */
export interface CliContext {
  stateRoot: string;
  databaseUrl?: string;
  /** The shell `exec` starts when given no command. */
  shell: string;
  out: (line: string) => void;
}
