/** The simulator's fake gateway as a worker: load target for the simulator's own footprint. */
import { FakeServer } from "../../simulator/fake-server/server.ts";
import { serve } from "./ipc.ts";

const statusIntervalMs = Number(process.argv[2] ?? 10_000);
const server = await FakeServer.start({ record: false, statusIntervalMs, tokens: ["bench-token"] });
serve(
  { stats: () => ({ devices: server.devices.size, connected: server.connectedCount }) },
  { url: server.url, token: "bench-token" },
);
