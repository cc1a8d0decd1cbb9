/**
 * `POST /devices/diagnostics`: one diagnostic (ping, traceroute, DNS lookup)
 * on many devices chosen by ids, filter or tag, streamed as one stream whose
 * events each name their device. Each device's run is an ordinary single run
 * (run-diagnostic.ts: audited, recorded as a job); at most
 * DIAGNOSTIC_DEVICES_IN_FLIGHT run at once. A device that is offline does not
 * fail the whole: its `error` event says DEVICE_NOT_CONNECTED (its failed run
 * is a job too) and the others go on. The stream ends with a `summary`.
 */
import { DIAGNOSTIC_DEVICES_IN_FLIGHT, type FleetDiagnosticStreamEvent, MAX_DIAGNOSTIC_DEVICES } from "@tern/protocol";
import type { AppDeps } from "../../../deps.ts";
import { ApiError } from "../../../http/errors.ts";
import type { ServiceCtx } from "../../context.ts";
import { type DeviceSelection, selectDeviceIds } from "../selection.ts";
import { EventQueue } from "./event-queue.ts";
import { type DiagnosticInput, runDiagnostic } from "./run-diagnostic.ts";

/** A single run's event with its device, or the fleet run's closing summary (the protocol's schema). */
export type FleetDiagnosticEvent = FleetDiagnosticStreamEvent;

export interface FleetDiagnosticRun {
  deviceIds: string[];
  events: AsyncGenerator<FleetDiagnosticEvent>;
  /** Settles when every device's run ended and was recorded (tests). */
  done: Promise<void>;
}

/** Resolves the devices (400 DIAGNOSTIC_TOO_MANY_DEVICES beyond the cap, 400 when none) and starts the runs. */
export async function runDiagnosticOnDevices(
  ctx: ServiceCtx,
  deps: Pick<AppDeps, "deviceLink">,
  selection: DeviceSelection,
  input: DiagnosticInput,
  signal: AbortSignal,
): Promise<FleetDiagnosticRun> {
  const deviceIds = await selectDeviceIds(ctx, selection);
  if (deviceIds.length === 0)
    throw new ApiError("VALIDATION_FAILED", "the selection matches no device", [{ path: "filter", message: "no device" }]);
  if (deviceIds.length > MAX_DIAGNOSTIC_DEVICES)
    throw new ApiError(
      "DIAGNOSTIC_TOO_MANY_DEVICES",
      `the selection matches ${deviceIds.length} devices; a diagnostic runs on at most ${MAX_DIAGNOSTIC_DEVICES} at once: narrow it (e.g. by tag)`,
      [{ path: selection.deviceIds ? "deviceIds" : "filter", message: `at most ${MAX_DIAGNOSTIC_DEVICES} devices` }],
    );

  const queue = new EventQueue<FleetDiagnosticEvent>();
  const tally = { succeeded: 0, failed: 0, cancelled: 0 };
  const pending = [...deviceIds];

  const runOne = async (deviceId: string): Promise<void> => {
    if (signal.aborted) {
      tally.cancelled++;
      return;
    }
    let run: Awaited<ReturnType<typeof runDiagnostic>>;
    try {
      run = await runDiagnostic(ctx, deps, deviceId, input, signal);
    } catch (err) {
      // Offline (or refused before it went out): recorded as a failed job by runDiagnostic; the others go on.
      tally.failed++;
      const code = err instanceof ApiError ? err.code : "INTERNAL";
      queue.push({ type: "error", deviceId, jobId: null, code, message: (err as Error).message });
      return;
    }
    let ok = false;
    for await (const event of run.events) {
      if (event.type === "result") ok = true;
      queue.push({ ...event, deviceId });
    }
    await run.done;
    if (ok) tally.succeeded++;
    else if (signal.aborted) tally.cancelled++;
    else tally.failed++;
  };

  const worker = async () => {
    for (let id = pending.shift(); id !== undefined; id = pending.shift()) await runOne(id);
  };
  const done = Promise.all(Array.from({ length: Math.min(DIAGNOSTIC_DEVICES_IN_FLIGHT, deviceIds.length) }, worker))
    .then(() => {
      queue.push({ type: "summary", devices: deviceIds.length, ...tally });
    })
    .catch((err: unknown) => {
      ctx.logger.error({ err }, "a fleet diagnostic failed");
      queue.push({ type: "summary", devices: deviceIds.length, ...tally });
    })
    .finally(() => queue.close());
  return { deviceIds, events: queue.drain(), done };
}
