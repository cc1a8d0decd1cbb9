/**
 * The simulator's fake gateway as the control server of one lab router's
 * agent: started inside the router's namespace (spawnWorker with an
 * `ip netns exec` prefix), it listens on that namespace's loopback, so
 * `tern-agent register --server <url>` and `tern-agent run` reach it without
 * any link out of the lab. It times `apply` → `apply-result` itself.
 */
import type { DeviceConfig } from "@tern/protocol";
import { FakeServer } from "../../simulator/fake-server/server.ts";
import { msSince } from "../stats.ts";
import { serve } from "./ipc.ts";

const TOKEN = "bench-token";
const server = await FakeServer.start({ record: false, statusIntervalMs: 1000, tokens: [TOKEN] });

function connectedDevice(): string | null {
  for (const d of server.devices.values()) if (d.link?.welcomed) return d.deviceId;
  return null;
}

serve(
  {
    /** Resolves with the device id once an agent has registered and said hello. */
    async waitDevice(args) {
      const deadline = Date.now() + Number(args.timeoutMs ?? 30_000);
      for (;;) {
        const id = connectedDevice();
        if (id) return { deviceId: id };
        if (Date.now() > deadline) throw new Error("no agent connected to the gateway in time");
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    /** Sends `apply` and times it until the agent's `apply-result` (the agent reconciles in between). */
    async apply(args) {
      const deviceId = connectedDevice();
      if (!deviceId) throw new Error("no agent connected");
      const t0 = process.hrtime.bigint();
      const result = await server.apply(deviceId, args.config as DeviceConfig, Number(args.timeoutMs ?? 120_000));
      return { ms: msSince(t0), result };
    },
  },
  { url: server.url, token: TOKEN },
);
