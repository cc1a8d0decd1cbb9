/**
 * What the rest of the server may ask of the device link: on-demand reads
 * over a device's websocket and the gateway's events. Services reach it
 * through `deps.deviceLink`; tests of the REST API without a gateway get
 * `offlineDeviceLink` (every device is "not connected").
 */
import type { REQUESTS, RequestMethod } from "@tern/protocol";
import type { z } from "zod";
import { ApiError } from "../http/errors.ts";
import type { GatewayEvents } from "./events.ts";

export type RequestParams<M extends RequestMethod> = z.input<(typeof REQUESTS)[M]["params"]>;
export type RequestResult<M extends RequestMethod> = z.infer<(typeof REQUESTS)[M]["result"]>;

/** A device's answer: its validated result, or the reason it gave (or a result that failed validation). */
export type DeviceAnswer<M extends RequestMethod> = { ok: true; result: RequestResult<M> } | { ok: false; error: string };

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** What a streamed request (ping, traceroute, dns-lookup) adds to a plain one. */
export interface LinkRequestStream {
  /** Output lines as the device sends them (`request-progress`); an agent before issue 19 sends none. */
  onProgress?: ((lines: string[]) => void) | undefined;
  /** Aborting stops the request on the device (`cancel`) and rejects with REQUEST_CANCELLED. */
  signal?: AbortSignal | undefined;
  /** Called once the request went out (to the device, or to the instance that holds its link). */
  onSent?: (() => void) | undefined;
}

export interface DeviceLink {
  /**
   * Sends `request {method, params}` to the device over its websocket,
   * whichever server instance holds it, and resolves with its validated
   * answer. Throws ApiError DEVICE_NOT_CONNECTED when no instance holds a link
   * to the device, DEVICE_TIMEOUT when no answer came in `timeoutMs`, and
   * VALIDATION_FAILED for params the protocol refuses. The caller checks that
   * the device belongs to its organization first. `stream`: see LinkRequestStream.
   */
  requestFromDevice<M extends RequestMethod>(
    deviceId: string,
    method: M,
    params: RequestParams<M>,
    timeoutMs?: number,
    stream?: LinkRequestStream,
  ): Promise<DeviceAnswer<M>>;
  /** True when this instance holds a welcomed link to the device (other instances: see device_sessions). */
  isConnectedHere(deviceId: string): boolean;
  readonly events: GatewayEvents;
}

export const notConnected = (deviceId: string) =>
  new ApiError("DEVICE_NOT_CONNECTED", `device ${deviceId} is not connected`, [{ path: "deviceId", message: "not connected" }]);

export const deviceTimeout = (deviceId: string, method: string, timeoutMs: number) =>
  new ApiError("DEVICE_TIMEOUT", `device ${deviceId} did not answer ${method} within ${timeoutMs} ms`);

/** A link with no devices behind it: for app tests that run without a gateway. */
export function offlineDeviceLink(events: GatewayEvents): DeviceLink {
  return {
    async requestFromDevice(deviceId) {
      throw notConnected(deviceId);
    },
    isConnectedHere: () => false,
    events,
  };
}
