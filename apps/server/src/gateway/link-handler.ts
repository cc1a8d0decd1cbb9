/**
 * What each device message means. `hello` is checked (protocol version,
 * machine id, the device key's signature of the link's challenge), recorded
 * with the session in one transaction (which checks again that the device is
 * approved and still holds the key the hello proved), answered with
 * `welcome`, and the device's jobs are settled by the hash it reports before
 * anything is sent. Results go to the job engine, statuses to ingestion,
 * responses to the request waiting for them; anything that names an id this
 * link never sent is refused with an `error` message.
 */
import {
  CLOSE_CODES,
  type DeviceConfig,
  type DeviceMessage,
  type Hello,
  PROTOCOL_VERSION,
  type Rekey,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@tern/protocol";
import type { AppDeps } from "../deps.ts";
import type { JobEngine } from "../jobs/job-engine.ts";
import { openDesiredConfig } from "../services/desired-config-seal.ts";
import { rekeyDevice } from "../services/devices/identity/link-identity.ts";
import { checkHelloProof } from "../services/devices/identity/link-proof.ts";
import { SERVER_VERSION } from "../version.ts";
import type { Bus } from "./bus.ts";
import type { ConnectionHooks, DeviceConnection } from "./connection.ts";
import type { GatewayEvents } from "./events.ts";
import { helloBatcher } from "./hello-batch.ts";
import { linkEndBatcher } from "./link-end-batch.ts";
import { ingestStatus, type StatusIngestDeps } from "./live-state/ingest-status.ts";
import { initialHistory } from "./live-state/public-address.ts";
import { initialWanAddresses } from "./live-state/wan-address.ts";
import type { GatewayOptions } from "./options.ts";

export interface LinkContext {
  deps: AppDeps;
  options: GatewayOptions;
  instanceId: string;
  engine: JobEngine;
  events: GatewayEvents;
  bus: Bus;
  ingest: StatusIngestDeps;
  /** The welcomed link of each device on this instance. */
  links: Map<string, DeviceConnection>;
  /** Work that must finish before shutdown (disconnect bookkeeping). */
  track(work: Promise<void>): void;
}

export class LinkHandler implements ConnectionHooks {
  /** Hellos of devices arriving together share one transaction (hello-batch.ts). */
  private readonly hellos: ReturnType<typeof helloBatcher>;
  private readonly ends: ReturnType<typeof linkEndBatcher>;

  constructor(private readonly ctx: LinkContext) {
    this.hellos = helloBatcher(ctx.deps, ctx.instanceId);
    this.ends = linkEndBatcher(ctx.deps.db);
  }

  onMessage(conn: DeviceConnection, msg: DeviceMessage): void {
    if (conn.state === "hello") {
      if (msg.type === "hello") {
        this.hello(conn, msg);
        return;
      }
      conn.reject("hello-required", "HELLO_REQUIRED", `the first message must be hello, not ${msg.type}`);
      conn.close(CLOSE_CODES.badMessage, "hello expected first");
      return;
    }
    if (conn.state === "welcoming") {
      conn.early ??= [];
      conn.early.push(msg);
      return;
    }
    this.handle(conn, msg);
  }

  private handle(conn: DeviceConnection, msg: DeviceMessage): void {
    switch (msg.type) {
      case "hello":
        conn.reject("invalid", "BAD_MESSAGE", "hello was already received on this link");
        return;
      case "apply-result":
        void conn.serial("apply-result", () => this.ctx.engine.onApplyResult(conn, msg));
        return;
      case "status":
        ingestStatus(conn, msg, this.ctx.ingest);
        return;
      case "response":
        if (!conn.takeResponse(msg)) {
          conn.reject(
            "unknown-id",
            "UNKNOWN_ID",
            `response ${msg.id.slice(0, 80)}: no request of that id is waiting on this link`,
          );
        }
        return;
      case "request-progress":
        // A request that timed out already: its late lines are dropped quietly (its response is not).
        conn.takeProgress(msg);
        return;
      case "rekey":
        void conn.serial("rekey", () => this.rekey(conn, msg));
        return;
      case "error":
        conn.fault("device-error", `the device reported an error: ${msg.code}: ${msg.message.slice(0, 500)}`);
        return;
    }
  }

  private hello(conn: DeviceConnection, hello: Hello): void {
    if (!(SUPPORTED_PROTOCOL_VERSIONS as readonly number[]).includes(hello.protocolVersion)) {
      const accepted = SUPPORTED_PROTOCOL_VERSIONS.join(", ");
      const text = `protocol version ${hello.protocolVersion} is not supported; this server accepts ${accepted}`;
      conn.reject("protocol-version", "UNSUPPORTED_PROTOCOL_VERSION", text);
      conn.close(CLOSE_CODES.protocolVersion, `unsupported protocol version ${hello.protocolVersion}; accepted: ${accepted}`);
      return;
    }
    if (hello.machineId !== conn.device.machineId) {
      conn.reject("machine-id", "UNAUTHENTICATED", "the machine id does not match the device this token belongs to");
      conn.close(CLOSE_CODES.unauthenticated, "machine id does not match this device token");
      return;
    }
    const proof = checkHelloProof(
      hello,
      {
        deviceId: conn.deviceId,
        nonce: conn.challengeNonce,
        host: conn.challengeHost,
        publicKey: conn.device.publicKey,
      },
      this.ctx.options.deviceHosts,
    );
    if (!proof.ok) {
      conn.reject("identity", "IDENTITY_PROOF_INVALID", proof.message);
      conn.close(CLOSE_CODES.unauthenticated, "device identity not proven");
      return;
    }
    // The key the device proved is most often the one on record: keep that instance.
    conn.publicKey = proof.publicKey === conn.device.publicKey ? conn.device.publicKey : proof.publicKey;
    conn.state = "welcoming";
    conn.challengeHost = "";
    conn.helloDone();
    // Kept for the session's columns; its proof is checked and done with.
    const { proof: _proof, ...kept } = hello;
    // Its machine id is the device's (checked above): the instance on record is kept, not the message's copy.
    conn.hello = { ...kept, machineId: conn.device.machineId };
    conn.appliedHash = hello.appliedHash;
    void conn.serial("hello", () => this.welcome(conn, hello));
  }

  private async welcome(conn: DeviceConnection, hello: Hello): Promise<void> {
    const { deps, engine, instanceId } = this.ctx;
    const found = await this.hellos.submit(conn);
    if (found.kind === "identity") {
      conn.reject("identity", "IDENTITY_PROOF_INVALID", "the device's key changed while this link said hello");
      conn.close(CLOSE_CODES.unauthenticated, "device identity not proven");
      return;
    }
    if (found.kind === "gone") {
      if (conn.state !== "welcoming") return;
      if (found.deleted) conn.close(CLOSE_CODES.deviceDeleted, "device deleted");
      else conn.close(CLOSE_CODES.notApproved, "device not approved");
      return;
    }
    if (conn.state === "closed") {
      // The link went away while its hello was being recorded: undo the session (and the apply it started).
      await this.endLink(conn, 1006, "closed during hello", found.apply?.applyId);
      return;
    }
    // Its session is open: the hello's columns are written.
    conn.hello = null;
    conn.tunnelSides = found.tunnels;
    conn.tunnelSidesLoadedAt = Date.now();
    conn.publicAddresses = initialHistory(found.interfaces as never, found.storedAddresses);
    conn.wanAddresses = initialWanAddresses(found.interfaces as never);

    const previous = this.ctx.links.get(conn.deviceId);
    if (previous && previous !== conn) previous.close(CLOSE_CODES.replaced, "replaced by a newer connection of this device");
    // (The other instances were told of the new session by the hello's transaction.)
    this.ctx.links.set(conn.deviceId, conn);

    conn.state = "ready";
    conn.welcomed = true;
    conn.admittedNow();
    deps.metrics.connectedDevices.inc();
    conn.send({
      type: "welcome",
      deviceId: conn.deviceId,
      protocolVersion: PROTOCOL_VERSION,
      serverVersion: SERVER_VERSION,
      statusIntervalMs: found.apply
        ? (JSON.parse(found.apply.configJson) as DeviceConfig).monitoring.statusIntervalMs
        : this.statusInterval(conn.deviceId, found.desiredSealed),
    });
    conn.logger.info({ agent: hello.agentVersion, applied: hello.appliedHash, remote: conn.remoteAddress }, "device connected");
    this.ctx.events.emit("device-connected", {
      deviceId: conn.deviceId,
      orgId: conn.orgId,
      instanceId,
      agentVersion: hello.agentVersion,
      appliedHash: hello.appliedHash,
    });
    engine.report(conn, found.settled);
    // The first apply went out of the hello's transaction: sent before any early message is handled.
    if (found.apply) await engine.send(conn, { kind: "send", ...found.apply, settled: found.settled });
    const early = conn.early ?? [];
    conn.early = null;
    for (const msg of early) this.handle(conn, msg);
    // Nothing started and nothing to look at (it runs its desired config, nothing queued meanwhile): no
    // dispatch transaction. Otherwise the dispatcher decides (drift, no config, a job queued since).
    const converged = found.desiredSealed !== null && conn.appliedHash === found.desiredHash;
    if (found.apply || (converged && !conn.wokenSinceSend)) return;
    await engine.dispatch(conn);
  }

  /** Replaces the device's key; the link stays up (it proved the old key, and the re-key the new one). */
  private async rekey(conn: DeviceConnection, msg: Rekey): Promise<void> {
    if (conn.state !== "ready" || !conn.publicKey) return;
    const outcome = await rekeyDevice(this.ctx.deps, conn.device, { nonce: conn.challengeNonce, publicKey: conn.publicKey }, msg);
    if (!outcome.ok) {
      conn.reject("identity", "IDENTITY_PROOF_INVALID", outcome.message);
      return;
    }
    conn.publicKey = msg.publicKey;
    conn.logger.info("device key replaced");
    conn.send({ type: "rekeyed", publicKey: msg.publicKey });
  }

  /** The config's status period, else the server's default. */
  private statusInterval(deviceId: string, sealed: string | null): number {
    if (!sealed) return this.ctx.options.statusIntervalMs;
    return openDesiredConfig(this.ctx.deps.keyring, deviceId, sealed).monitoring.statusIntervalMs;
  }

  onClose(conn: DeviceConnection, code: number, reason: string): void {
    if (this.ctx.links.get(conn.deviceId) === conn) this.ctx.links.delete(conn.deviceId);
    if (!conn.welcomed) return;
    this.ctx.deps.metrics.connectedDevices.dec();
    conn.logger.info({ code, reason }, "device link closed");
    this.ctx.track(conn.serial("close", () => this.endLink(conn, code, reason)));
  }

  /**
   * The link's jobs in flight go back to the queue and its session ends (when it is still its own), in a
   * transaction shared with the other links that close meanwhile (link-end-batch.ts).
   */
  private async endLink(conn: DeviceConnection, code: number, reason: string, startedApply?: string): Promise<void> {
    const inFlight = this.ctx.engine.releaseLink(conn);
    const applyIds = [inFlight, startedApply].filter((a): a is string => typeof a === "string");
    const disconnected = await this.ends.submit({ conn, applyIds });
    if (disconnected) {
      this.ctx.events.emit("device-disconnected", {
        deviceId: conn.deviceId,
        orgId: conn.orgId,
        reason: reason || `closed with code ${code}`,
      });
    }
  }
}
