/**
 * The fake gateway as a process (benchmark load, trying the simulator out):
 *   npx tsx test-harness/src/simulator/fake-server/cli.ts [--port P] [--token T] [--status-interval MS]
 * Prints one JSON line `{"url": ...}` when listening; runs until SIGINT/SIGTERM.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { FakeServer } from "./server.ts";

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      port: { type: "string", default: "0" },
      token: { type: "string", default: "sim-registration-token" },
      "status-interval": { type: "string", default: "10000" },
      record: { type: "boolean", default: false },
    },
  });
  const server = await FakeServer.start({
    port: Number(values.port),
    tokens: [values.token],
    statusIntervalMs: Number(values["status-interval"]),
    record: values.record,
  });
  console.log(JSON.stringify({ url: server.url, pid: process.pid }));
  const stop = () => void server.stop().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) await main();
