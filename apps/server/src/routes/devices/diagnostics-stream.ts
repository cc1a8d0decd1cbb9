/** The SSE answer of the diagnostics routes: the run's events as `data:` lines; the client leaving cancels the run. */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import { requestCtx } from "../../http/request-ctx.ts";
import { type DiagnosticInput, runDiagnostic } from "../../services/devices/diagnostics/run-diagnostic.ts";

export async function streamDiagnostic(c: Context, deviceId: string, input: DiagnosticInput): Promise<Response> {
  const abort = new AbortController();
  // The client went away (connection closed): stop the command on the router.
  c.req.raw.signal.addEventListener("abort", () => abort.abort(), { once: true });
  const run = await runDiagnostic(requestCtx(c as never), c.get("deps"), deviceId, input, abort.signal);
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
