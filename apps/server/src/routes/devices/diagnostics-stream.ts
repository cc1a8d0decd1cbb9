/** The SSE answer of the diagnostics routes: a run's events as `data:` lines; the client leaving cancels the run. */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { requestCtx } from "../../http/request-ctx.ts";
import type { ServiceCtx } from "../../services/context.ts";
import { type DiagnosticInput, runDiagnostic } from "../../services/devices/diagnostics/run-diagnostic.ts";

/** Starts a run with an abort signal (errors before it streams are ordinary JSON answers) and streams its events. */
export async function streamRun(
  c: Context,
  start: (ctx: ServiceCtx, signal: AbortSignal) => Promise<{ events: AsyncIterable<unknown> }>,
): Promise<Response> {
  const abort = new AbortController();
  // The client went away (connection closed): stop the command on the router.
  c.req.raw.signal.addEventListener("abort", () => abort.abort(), { once: true });
  const run = await start(requestCtx(c as never), abort.signal);
  c.header("cache-control", "no-store");
  // Proxies that buffer responses (nginx) must pass the stream through.
  c.header("x-accel-buffering", "no");
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => abort.abort());
    for await (const event of run.events) {
      if (stream.aborted) continue;
      await stream.writeSSE({ data: JSON.stringify(event) });
    }
  });
}

export function streamDiagnostic(c: Context, deviceId: string, input: DiagnosticInput): Promise<Response> {
  return streamRun(c, (ctx, signal) => runDiagnostic(ctx, c.get("deps"), deviceId, input, signal));
}
