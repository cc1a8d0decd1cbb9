/**
 * On-demand reads (`request`/`response`) for any instance: when this instance
 * holds the device's link it asks directly; otherwise it finds the holder in
 * device_sessions and routes the request there over NOTIFY, and the holder
 * sends the answer back the same way (an answer too large for a NOTIFY
 * payload goes through gateway_replies). No holder with a fresh heartbeat:
 * DEVICE_NOT_CONNECTED; no answer in time: DEVICE_TIMEOUT.
 */
import { randomUUID } from "node:crypto";
import { type ErrorCode, issuesToDetails, REQUESTS, type RequestMethod, type Response } from "@tern/protocol";
import type { Logger } from "pino";
import { toJson } from "../db/json.ts";
import type { Db } from "../db/schema.ts";
import { ApiError, validationFailed } from "../http/errors.ts";
import type { ServerMetrics } from "../metrics/server-metrics.ts";
import { type Bus, MAX_NOTIFY_BYTES } from "./bus.ts";
import type { DeviceConnection } from "./connection.ts";
import { type DeviceAnswer, deviceTimeout, notConnected, type RequestParams } from "./device-link.ts";
import { sessionOwner } from "./sessions.ts";

export type RpcMessage =
  | {
      kind: "rpc-req";
      to: string;
      from: string;
      rid: string;
      deviceId: string;
      method: RequestMethod;
      params: Record<string, unknown>;
      timeoutMs: number;
    }
  | { kind: "rpc-res"; to: string; rid: string; stored?: boolean; response?: Response; code?: ErrorCode; message?: string };

interface Waiting {
  resolve(response: Response): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class RequestRouter {
  private readonly waiting = new Map<string, Waiting>();

  constructor(
    private readonly instanceId: string,
    private readonly db: Db,
    private readonly bus: Bus,
    private readonly local: (deviceId: string) => DeviceConnection | undefined,
    private readonly staleMs: number,
    private readonly metrics: ServerMetrics,
    private readonly logger: Logger,
  ) {}

  async request<M extends RequestMethod>(
    deviceId: string,
    method: M,
    params: RequestParams<M>,
    timeoutMs: number,
  ): Promise<DeviceAnswer<M>> {
    const spec = REQUESTS[method];
    if (!spec) throw validationFailed(`unknown request method ${String(method)}`, [{ path: "method", message: "unknown" }]);
    const parsed = spec.params.safeParse(params);
    if (!parsed.success) throw validationFailed(`invalid params for ${method}`, issuesToDetails(parsed.error.issues));
    let response: Response;
    try {
      const conn = this.local(deviceId);
      if (conn?.state === "ready") response = await conn.request(method, parsed.data, timeoutMs);
      else {
        const owner = await sessionOwner(this.db, deviceId, this.staleMs);
        if (!owner || owner === this.instanceId) throw notConnected(deviceId);
        response = await this.remote(owner, deviceId, method, parsed.data, timeoutMs);
      }
    } catch (err) {
      const code = err instanceof ApiError ? err.code : "INTERNAL";
      this.metrics.deviceRequests.inc({ method, outcome: code === "DEVICE_TIMEOUT" ? "timeout" : "not-connected" });
      throw err;
    }
    return this.validate(deviceId, method, response);
  }

  private validate<M extends RequestMethod>(deviceId: string, method: M, response: Response): DeviceAnswer<M> {
    if (!response.ok) {
      this.metrics.deviceRequests.inc({ method, outcome: "refused" });
      return { ok: false, error: response.error ?? "the device could not answer" };
    }
    const result = REQUESTS[method].result.safeParse(response.result);
    if (!result.success) {
      this.metrics.deviceRequests.inc({ method, outcome: "invalid" });
      this.logger.warn({ deviceId, method }, "device answered a request with an invalid result");
      const issue = result.error.issues[0];
      return { ok: false, error: `the device's answer is invalid: ${issue?.path.join(".")} ${issue?.message}` };
    }
    this.metrics.deviceRequests.inc({ method, outcome: "ok" });
    return { ok: true, result: result.data as DeviceAnswer<M> extends { result: infer R } ? R : never };
  }

  private remote(owner: string, deviceId: string, method: RequestMethod, params: Record<string, unknown>, timeoutMs: number) {
    const rid = randomUUID();
    return new Promise<Response>((resolve, reject) => {
      // The holder times out first and says so; this covers a holder that vanished.
      const timer = setTimeout(() => {
        this.waiting.delete(rid);
        reject(deviceTimeout(deviceId, method, timeoutMs));
      }, timeoutMs + 1_000);
      this.waiting.set(rid, { resolve, reject, timer });
      const message: RpcMessage = { kind: "rpc-req", to: owner, from: this.instanceId, rid, deviceId, method, params, timeoutMs };
      this.bus.publish("tern_gateway", JSON.stringify(message)).catch((err) => {
        clearTimeout(timer);
        this.waiting.delete(rid);
        reject(err);
      });
    });
  }

  /** A gateway message from the bus; ignores the ones for other instances. */
  onMessage(message: RpcMessage): void {
    if (message.to !== this.instanceId) return;
    if (message.kind === "rpc-req") void this.serve(message);
    else void this.settle(message);
  }

  private async serve(req: Extract<RpcMessage, { kind: "rpc-req" }>): Promise<void> {
    let reply: Extract<RpcMessage, { kind: "rpc-res" }>;
    try {
      const conn = this.local(req.deviceId);
      if (conn?.state !== "ready") throw notConnected(req.deviceId);
      const response = await conn.request(req.method, req.params, req.timeoutMs);
      reply = { kind: "rpc-res", to: req.from, rid: req.rid, response };
    } catch (err) {
      const code = err instanceof ApiError ? err.code : "INTERNAL";
      reply = { kind: "rpc-res", to: req.from, rid: req.rid, code, message: (err as Error).message };
    }
    try {
      let text = JSON.stringify(reply);
      if (Buffer.byteLength(text) > MAX_NOTIFY_BYTES) {
        await this.db
          .insertInto("gateway_replies")
          .values({ id: req.rid, payload: toJson(reply) })
          .execute();
        text = JSON.stringify({ kind: "rpc-res", to: req.from, rid: req.rid, stored: true } satisfies RpcMessage);
      }
      await this.bus.publish("tern_gateway", text);
    } catch (err) {
      this.logger.error({ err, rid: req.rid }, "could not send a routed request's answer");
    }
  }

  private async settle(res: Extract<RpcMessage, { kind: "rpc-res" }>): Promise<void> {
    const waiting = this.waiting.get(res.rid);
    if (!waiting) return;
    this.waiting.delete(res.rid);
    clearTimeout(waiting.timer);
    try {
      let reply = res;
      if (res.stored) {
        const row = await this.db.deleteFrom("gateway_replies").where("id", "=", res.rid).returning("payload").executeTakeFirst();
        if (!row) throw new ApiError("INTERNAL", "a routed answer was lost");
        reply = row.payload as typeof res;
      }
      if (reply.response) waiting.resolve(reply.response);
      else waiting.reject(new ApiError(reply.code ?? "INTERNAL", reply.message ?? "the device's instance could not answer"));
    } catch (err) {
      waiting.reject(err as Error);
    }
  }

  close(): void {
    for (const [rid, w] of this.waiting) {
      clearTimeout(w.timer);
      w.reject(new ApiError("DEVICE_NOT_CONNECTED", "server shutting down"));
      this.waiting.delete(rid);
    }
  }
}
