/**
 * diagnosticEvents over a real fetch Response whose body arrives in chunks cut anywhere (inside a field, a line
 * ending, a multi-byte character), with comments and keep-alives between events, the run's `error` event, and
 * the ways a body can go wrong.
 */
import { describe, expect, it, vi } from "vitest";
import {
  type DiagnosticEvent,
  diagnosticEvents,
  type FleetDiagnosticEvent,
  fleetDiagnosticEvents,
  TernApiError,
} from "./index.ts";

const JOB = "0b8f2a52-3c1e-4d5f-9a6b-7c8d9e0f1a2b";
const DEVICE = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b";

/**
 * A Response whose body hands out these chunks one read at a time, then ends (or, `endless`, sends keep-alives
 * until cancelled, like a run still going on the router); `cancelled` records a cancel.
 */
function responseOf(chunks: (string | Uint8Array)[], endless = false) {
  const encoder = new TextEncoder();
  const state = { cancelled: false, served: 0 };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks[state.served++];
      if (next === undefined && endless) controller.enqueue(encoder.encode(": keep-alive\n\n"));
      else if (next === undefined) controller.close();
      else controller.enqueue(typeof next === "string" ? encoder.encode(next) : next);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { response: new Response(body, { headers: { "content-type": "text/event-stream" } }), state };
}

/** Cuts `text` into pieces of `size` bytes (so multi-byte characters are split too). */
function bytesIn(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

const sse = (event: unknown) => `data: ${JSON.stringify(event)}\n\n`;

async function collect(body: ReadableStream<Uint8Array>): Promise<{ events: DiagnosticEvent[]; error: unknown }> {
  const events: DiagnosticEvent[] = [];
  try {
    for await (const e of diagnosticEvents(body)) events.push(e);
    return { events, error: null };
  } catch (error) {
    return { events, error };
  }
}

const started = { type: "started", jobId: JOB, deviceId: DEVICE, kind: "ping", target: "192.0.2.1" } as const;

describe("diagnosticEvents", () => {
  it("yields each event once whole, however the chunks cut it, skipping comments and keep-alives", async () => {
    const text = [
      ": stream open\n\n",
      sse(started),
      ":\n\n", // a keep-alive
      sse({ type: "lines", lines: ["64 bytes from 192.0.2.1: icmp_seq=1 ttl=64 time=0.3 ms", "réponse ✓"] }),
      // CRLF line endings, and a data field split over two lines (joined with a newline).
      'data: {"type":"lines",\r\ndata: "lines":["second"]}\r\n\r\n',
      ": keep-alive\n",
      sse({ type: "result", jobId: JOB, result: { sent: 1, received: 1 } }),
    ].join("");
    for (const size of [1, 3, 7, 64, text.length]) {
      const { response, state } = responseOf(bytesIn(text, size));
      const { events, error } = await collect(response.body as ReadableStream<Uint8Array>);
      expect(error).toBeNull();
      expect(events).toEqual([
        started,
        { type: "lines", lines: ["64 bytes from 192.0.2.1: icmp_seq=1 ttl=64 time=0.3 ms", "réponse ✓"] },
        { type: "lines", lines: ["second"] },
        { type: "result", jobId: JOB, result: { sent: 1, received: 1 } },
      ]);
      expect(state.served).toBeGreaterThan(1);
    }
  });

  it("hands over the run's error event, typed with its code, as the last event", async () => {
    const { response } = responseOf([
      sse(started).slice(0, 20),
      sse(started).slice(20),
      sse({ type: "lines", lines: ["traceroute to 192.0.2.1"] }),
      sse({ type: "error", jobId: JOB, code: "DEVICE_TIMEOUT", message: "no answer from the device" }).slice(0, 30),
      sse({ type: "error", jobId: JOB, code: "DEVICE_TIMEOUT", message: "no answer from the device" }).slice(30),
    ]);
    const { events, error } = await collect(response.body as ReadableStream<Uint8Array>);
    expect(error).toBeNull();
    const last = events.at(-1);
    expect(events).toHaveLength(3);
    expect(last?.type).toBe("error");
    if (last?.type === "error") expect(last.code).toBe("DEVICE_TIMEOUT");
  });

  it("skips named events it does not know, and stops reading after the final event", async () => {
    const { response, state } = responseOf(
      [`event: progress\ndata: {"percent":50}\n\n${sse(started)}`, sse({ type: "result", jobId: JOB, result: null })],
      true,
    );
    const { events, error } = await collect(response.body as ReadableStream<Uint8Array>);
    expect(error).toBeNull();
    expect(events.map((e) => e.type)).toEqual(["started", "result"]);
    await vi.waitFor(() => expect(state.cancelled).toBe(true));
  });

  it("a body that ends before the result, or sends what is not an event, is UNEXPECTED_RESPONSE", async () => {
    for (const chunks of [
      [sse(started), sse({ type: "lines", lines: ["half"] })],
      [sse(started), "data: {not json\n\n"],
      [sse({ type: "finished", jobId: JOB })],
      [sse({ ...started, kind: "nmap" })],
    ]) {
      const { response } = responseOf(chunks);
      const { error } = await collect(response.body as ReadableStream<Uint8Array>);
      expect(error).toBeInstanceOf(TernApiError);
      expect((error as TernApiError).code).toBe("UNEXPECTED_RESPONSE");
    }
  });

  it("breaking out of the loop cancels the body (which closes the connection)", async () => {
    const { response, state } = responseOf([sse(started), sse({ type: "lines", lines: ["one"] })], true);
    for await (const event of diagnosticEvents(response.body as ReadableStream<Uint8Array>)) {
      expect(event.type).toBe("started");
      break;
    }
    await vi.waitFor(() => expect(state.cancelled).toBe(true));
  });
});

describe("fleetDiagnosticEvents", () => {
  it("reads every device's events (an offline device's error has no job) through to the summary, and stops there", async () => {
    const OTHER = "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d";
    const { response, state } = responseOf(
      [
        sse(started),
        sse({ type: "error", deviceId: OTHER, jobId: null, code: "DEVICE_NOT_CONNECTED", message: "not connected" }),
        sse({ type: "lines", deviceId: DEVICE, lines: ["PING 192.0.2.1"] }),
        sse({ type: "result", deviceId: DEVICE, jobId: JOB, result: { transmitted: 1 } }),
        sse({ type: "summary", devices: 2, succeeded: 1, failed: 1, cancelled: 0 }),
      ],
      true,
    );
    const events: FleetDiagnosticEvent[] = [];
    for await (const e of fleetDiagnosticEvents(response.body as ReadableStream<Uint8Array>)) events.push(e);
    expect(events.map((e) => e.type)).toEqual(["started", "error", "lines", "result", "summary"]);
    expect(events[1]).toMatchObject({ deviceId: OTHER, jobId: null, code: "DEVICE_NOT_CONNECTED" });
    // The stream would go on with keep-alives: the reader let go after the summary.
    expect(state.cancelled).toBe(true);
  });

  it("a single run's event without its device is not a fleet event: UNEXPECTED_RESPONSE", async () => {
    const { response } = responseOf([sse({ type: "lines", lines: ["no device"] })]);
    const read = async () => {
      for await (const _ of fleetDiagnosticEvents(response.body as ReadableStream<Uint8Array>));
    };
    await expect(read()).rejects.toMatchObject({ code: "UNEXPECTED_RESPONSE" });
  });
});
