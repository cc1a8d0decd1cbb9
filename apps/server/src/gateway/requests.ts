/**
 * On-demand reads (`request`/`response`) for any instance: when this instance
 * holds the device's link it asks directly; otherwise it finds the holder in
 * device_sessions and routes the request there over NOTIFY, and the holder
 * sends the answer back the same way (an answer too large for a NOTIFY
 * payload goes through gateway_replies). No holder with a fresh heartbeat:
 * DEVICE_NOT_CONNECTED; no answer in time: DEVICE_TIMEOUT.
 *
 * Streamed requests (ping, traceroute, dns-lookup) hand their output lines to
 * `onProgress` as the device sends them; through another instance they travel
 * as `rpc-progress` NOTIFYs, and the caller going away (`signal`) sends the
 * holder `rpc-cancel`, which sends the device `cancel`.
 */
import { randomUUID } from "node:crypto";
import { type ErrorCode, issuesToDetails, REQUESTS, type RequestMethod, type Response } from "@tern/protocol";
import type { Logger } from "pino";
import { toJson } from "../db/json.ts";
import type { Db } from "../db/schema.ts";
import { ApiError, validationFailed } from "../http/errors.ts";
import type { ServerMetrics } from "../metrics/server-metrics.ts";
import { type Bus, MAX_NOTIFY_BYTES } from "./bus.ts";
import type { DeviceConnection, RequestStream } from "./connection.ts";
import { type DeviceAnswer, deviceTimeout, type LinkRequestStream, notConnected, type RequestParams } from "./device-link.ts";
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
      /** The caller wants the output lines as they come (rpc-progress). */
      stream?: boolean;
    }
  | { kind: "rpc-res"; to: string; rid: string; stored?: boolean; response?: Response; code?: ErrorCode; message?: string }
  | { kind: "rpc-progress"; to: string; rid: string; lines: string[] }
  | { kind: "rpc-cancel"; to: string; rid: string };

interface Waiting {
  resolve(response: Response): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
  onProgress?: ((lines: string[]) => void) | undefined;
}

export class RequestRouter {
  private readonly waiting = new Map<string, Waiting>();
  /** Streamed requests this instance runs for others, by rid, so their `rpc-cancel` can stop them. */
  private readonly serving = new Map<string, AbortController>();

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
    stream: LinkRequestStream = {},
  ): Promise<DeviceAnswer<M>> {
    const spec = REQUESTS[method];
    if (!spec) throw validationFailed(`unknown request method ${String(method)}`, [{ path: "method", message: "unknown" }]);
    const parsed = spec.params.safeParse(params);
    if (!parsed.success) throw validationFailed(`invalid params for ${method}`, issuesToDetails(parsed.error.issues));
    let response: Response;
    try {
      const conn = this.local(deviceId);
      if (conn?.state === "ready") response = await conn.request(method, parsed.data, timeoutMs, stream);
      else {
        const owner = await sessionOwner(this.db, deviceId, this.staleMs);
        if (!owner || owner === this.instanceId) throw notConnected(deviceId);
        response = await this.remote(owner, deviceId, method, parsed.data, timeoutMs, stream);
      }
    } catch (err) {
      const code = err instanceof ApiError ? err.code : "INTERNAL";
      const outcome = code === "DEVICE_TIMEOUT" ? "timeout" : code === "REQUEST_CANCELLED" ? "cancelled" : "not-connected";
      this.metrics.deviceRequests.inc({ method, outcome });
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

  private remote(
    owner: string,
    deviceId: string,
    method: RequestMethod,
    params: Record<string, unknown>,
    timeoutMs: number,
    stream: LinkRequestStream,
  ) {
    const rid = randomUUID();
    return new Promise<Response>((resolve, reject) => {
      // The holder times out first and says so; this covers a holder that vanished.
      const timer = setTimeout(() => {
        this.waiting.delete(rid);
        reject(deviceTimeout(deviceId, method, timeoutMs));
      }, timeoutMs + 1_000);
      this.waiting.set(rid, { resolve, reject, timer, onProgress: stream.onProgress });
      const message: RpcMessage = {
        kind: "rpc-req",
        to: owner,
        from: this.instanceId,
        rid,
        deviceId,
        method,
        params,
        timeoutMs,
        ...(stream.onProgress || stream.signal ? { stream: true } : {}),
      };
      this.bus.publish("tern_gateway", JSON.stringify(message)).then(
        () => stream.onSent?.(),
        (err) => {
          clearTimeout(timer);
          this.waiting.delete(rid);
          reject(err);
        },
      );
      const signal = stream.signal;
      if (!signal) return;
      const onAbort = () => {
        if (!this.waiting.delete(rid)) return;
        clearTimeout(timer);
        reject(new ApiError("REQUEST_CANCELLED", `${method} was cancelled by its caller`));
        const cancel: RpcMessage = { kind: "rpc-cancel", to: owner, rid };
        this.bus.publish("tern_gateway", JSON.stringify(cancel)).catch(() => undefined);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** A gateway message from the bus; ignores the ones for other instances. */
  onMessage(message: RpcMessage): void {
    if (message.to !== this.instanceId) return;
    if (message.kind === "rpc-req") void this.serve(message);
    else if (message.kind === "rpc-progress") this.waiting.get(message.rid)?.onProgress?.(message.lines);
    else if (message.kind === "rpc-cancel") this.serving.get(message.rid)?.abort();
    else void this.settle(message);
  }

  /** Sends a served request's lines back to its caller, split so each NOTIFY stays within its size limit. */
  private forwardProgress(req: Extract<RpcMessage, { kind: "rpc-req" }>, lines: string[]): void {
    const publish = (part: string[]) => {
      const text = JSON.stringify({ kind: "rpc-progress", to: req.from, rid: req.rid, lines: part } satisfies RpcMessage);
      if (Buffer.byteLength(text) <= MAX_NOTIFY_BYTES || part.length === 1) {
        // One line always fits (PROGRESS_LINE_CHARS): a lone line too large is cut rather than lost.
        const safe =
          Buffer.byteLength(text) <= MAX_NOTIFY_BYTES
            ? text
            : JSON.stringify({ kind: "rpc-progress", to: req.from, rid: req.rid, lines: [part[0]!.slice(0, 200)] });
        this.bus.publish("tern_gateway", safe).catch((err) => this.logger.warn({ err, rid: req.rid }, "progress not forwarded"));
        return;
      }
      const half = Math.ceil(part.length / 2);
      publish(part.slice(0, half));
      publish(part.slice(half));
    };
    publish(lines);
  }

  private async serve(req: Extract<RpcMessage, { kind: "rpc-req" }>): Promise<void> {
    let reply: Extract<RpcMessage, { kind: "rpc-res" }>;
    try {
      const conn = this.local(req.deviceId);
      if (conn?.state !== "ready") throw notConnected(req.deviceId);
      let stream: RequestStream = {};
      if (req.stream) {
        const abort = new AbortController();
        this.serving.set(req.rid, abort);
        stream = { signal: abort.signal, onProgress: (lines) => this.forwardProgress(req, lines) };
      }
      const response = await conn.request(req.method, req.params, req.timeoutMs, stream);
      reply = { kind: "rpc-res", to: req.from, rid: req.rid, response };
    } catch (err) {
      const code = err instanceof ApiError ? err.code : "INTERNAL";
      reply = { kind: "rpc-res", to: req.from, rid: req.rid, code, message: (err as Error).message };
    } finally {
      this.serving.delete(req.rid);
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
    for (const abort of this.serving.values()) abort.abort();
    for (const [rid, w] of this.waiting) {
      clearTimeout(w.timer);
      w.reject(new ApiError("DEVICE_NOT_CONNECTED", "server shutting down"));
      this.waiting.delete(rid);
    }
  }
}
