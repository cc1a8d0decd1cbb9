/** The worker side of child.ts: answer `{id, cmd, ...args}` messages with `{id, ok, result | error}`. */

type Handler = (args: Record<string, unknown>) => Promise<unknown> | unknown;

export function serve(handlers: Record<string, Handler>, readyMessage: Record<string, unknown>): void {
  if (!process.send) throw new Error("a bench worker must be started with an IPC channel (bench/child.ts)");
  process.on("message", async (m: { id: number; cmd: string } & Record<string, unknown>) => {
    const handler = handlers[m.cmd];
    try {
      if (!handler) throw new Error(`unknown command ${m.cmd}`);
      const result = await handler(m);
      process.send!({ id: m.id, ok: true, result });
    } catch (err) {
      process.send!({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  });
  // The parent going away must not leave a worker behind.
  process.on("disconnect", () => process.exit(0));
  process.on("SIGTERM", () => process.exit(0));
  process.send(readyMessage);
}

/** A full collection when the worker runs with --expose-gc, so RSS shows live data rather than garbage. */
export function collect(): void {
  (globalThis as { gc?: () => void }).gc?.();
}
