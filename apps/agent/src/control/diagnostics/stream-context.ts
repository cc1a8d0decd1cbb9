/** What a streamed diagnostic gets from the request that runs it. */
export interface StreamContext {
  /** One line of output, as it comes (sent to the server in `request-progress`). */
  onLine(line: string): void;
  /** Aborted when the server cancels the request. */
  signal?: AbortSignal | undefined;
  /** The child's pid once started (tests). */
  onStart?(pid: number): void;
}
