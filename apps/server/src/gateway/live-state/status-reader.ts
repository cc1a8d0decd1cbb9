/**
 * The DeviceStatusReader the server installs (AppDeps.deviceStatus): the
 * interface and BGP status reads answer from the device's last status message
 * (`source: "reported"`, `reportedAt` = when the server received it), or with
 * `live` ask the device over its link, whichever instance holds it
 * (`source: "live"`). A device that is not connected is DEVICE_NOT_CONNECTED
 * (409), one that does not answer in time DEVICE_TIMEOUT (504), and one that
 * answers with a refusal CONFLICT with its reason.
 */
import type { RequestMethod } from "@tern/protocol";
import type { AppDeps } from "../../deps.ts";
import { ApiError } from "../../http/errors.ts";
import type { DeviceStatusReader } from "../../services/devices/status.ts";
import type { DeviceAnswer, RequestParams, RequestResult } from "../device-link.ts";
import { readDeviceLiveState } from "./readers.ts";

async function ask<M extends RequestMethod>(
  deps: Pick<AppDeps, "deviceLink" | "config">,
  deviceId: string,
  method: M,
  params: RequestParams<M>,
): Promise<RequestResult<M>> {
  const answer: DeviceAnswer<M> = await deps.deviceLink.requestFromDevice(
    deviceId,
    method,
    params,
    deps.config.TERN_DEVICE_READ_TIMEOUT_MS,
  );
  if (!answer.ok)
    throw new ApiError("CONFLICT", `the device could not answer ${method}: ${answer.error}`, [
      { path: "live", message: answer.error },
    ]);
  return answer.result;
}

export function liveStatusReader(deps: Pick<AppDeps, "deviceLink" | "config">): DeviceStatusReader {
  return {
    async interfaceState(ctx, device, iface, options) {
      if (options.live) {
        const state = await ask(deps, device.id, "interface-status", { devId: iface.devId });
        return { source: "live", state, reportedAt: new Date() };
      }
      const reported = (await readDeviceLiveState(ctx.db, device.orgId, device.id))?.reported;
      const state = reported?.interfaces.find((i) => i.devId === iface.devId);
      return reported && state ? { source: "reported", state, reportedAt: reported.receivedAt } : null;
    },
    async bgpState(ctx, device, options) {
      if (options.live) {
        const state = await ask(deps, device.id, "bgp-status", {});
        return { source: "live", state, reportedAt: new Date() };
      }
      const reported = (await readDeviceLiveState(ctx.db, device.orgId, device.id))?.reported;
      return reported?.bgp ? { source: "reported", state: reported.bgp, reportedAt: reported.receivedAt } : null;
    },
  };
}
