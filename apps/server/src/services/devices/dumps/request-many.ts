/**
 * `POST /devices/dumps`: a diagnostic dump from each of many devices (by ids,
 * filter or tag), e.g. every router of a site before a support call. Each is
 * the single request's (request-dump.ts: audited, collected in the
 * background, a job once it ended); a device with a dump already pending
 * answers that one. At most MAX_DUMP_DEVICES devices.
 */
import { type DeviceDump, MAX_DUMP_DEVICES } from "@tern/protocol";
import type { AppDeps } from "../../../deps.ts";
import { ApiError } from "../../../http/errors.ts";
import type { ServiceCtx } from "../../context.ts";
import { type DeviceSelection, selectDeviceIds } from "../selection.ts";
import { requestDeviceDump } from "./request-dump.ts";

export async function requestDeviceDumps(
  ctx: ServiceCtx,
  deps: Pick<AppDeps, "deviceLink">,
  selection: DeviceSelection,
): Promise<{ dumps: DeviceDump[]; created: number; done: Promise<void> }> {
  const deviceIds = await selectDeviceIds(ctx, selection);
  if (deviceIds.length === 0)
    throw new ApiError("VALIDATION_FAILED", "the selection matches no device", [{ path: "filter", message: "no device" }]);
  if (deviceIds.length > MAX_DUMP_DEVICES)
    throw new ApiError(
      "DIAGNOSTIC_TOO_MANY_DEVICES",
      `the selection matches ${deviceIds.length} devices; dumps are asked of at most ${MAX_DUMP_DEVICES} at once: narrow it (e.g. by tag)`,
      [{ path: selection.deviceIds ? "deviceIds" : "filter", message: `at most ${MAX_DUMP_DEVICES} devices` }],
    );
  const dumps: DeviceDump[] = [];
  const collecting: Promise<void>[] = [];
  let created = 0;
  for (const id of deviceIds) {
    const one = await requestDeviceDump(ctx, deps, id);
    dumps.push(one.dump);
    collecting.push(one.done);
    if (one.created) created++;
  }
  return { dumps, created, done: Promise.all(collecting).then(() => undefined) };
}
