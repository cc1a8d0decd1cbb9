/**
 * Device simulator on the command line:
 *   npx tsx test-harness/src/simulator/cli.ts --server URL --token T --count N [options]
 * Prints a progress line every `--progress-ms`; `--json` prints them as JSON
 * lines for a parent process (the benchmarks) to read. See docs/simulator.md.
 */

import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { AdminCredentials } from "./approve.ts";
import { Simulator } from "./fleet.ts";
import { MemoryFloor } from "./memory-figures.ts";
import { type SimulatorInput, SimulatorOptionsError } from "./options.ts";

const USAGE = `usage: cli.ts --server URL --token TOKEN --count N [options]
  --start-index I        first device index (several processes: disjoint ranges)   [0]
  --prefix P             machine id prefix (ids are P-000123)                      [tern-sim]
  --concurrency C        registrations / handshakes in flight                      [100]
  --status-interval MS   status period; default: the server's welcome value
  --tunnels N            synthetic tunnel ids reported before any config           [0]
  --loss PCT --rtt MS --jitter MS --down   figures reported for every tunnel
  --apply-delay MS       answer apply after this delay                             [0]
  --fail-driver NAME     fail this driver and roll back on every apply
  --never-answer         never answer apply (job time-out tests)
  --no-reconnect         stay disconnected when the server closes
  --register-only        register the devices and exit (0 when all registered): an admin approves
                         them, then a second run without it connects them (same keys: same devices)
  --admin-email E        with --admin-password: approve the registered fleet (POST /api/devices/approve)
  --admin-password P     (or TERN_SIM_ADMIN_PASSWORD in the environment)
  --admin-token T        an administrator's API token instead of e-mail and password
  --approval-wait S      keep retrying devices not approved yet this long                [120]
  --duration S           stop after S seconds; default: run until Ctrl-C
  --progress-ms MS       progress line period                                      [1000]
  --json                 progress and summary as JSON lines`;

function num(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new SimulatorOptionsError(`--${name} must be a number, got "${v}"`);
  return n;
}

function adminOf(values: { "admin-email"?: string; "admin-password"?: string; "admin-token"?: string }): AdminCredentials | null {
  if (values["admin-token"]) return { token: values["admin-token"] };
  const password = values["admin-password"] ?? process.env.TERN_SIM_ADMIN_PASSWORD;
  if (values["admin-email"] && password) return { email: values["admin-email"], password };
  if (values["admin-email"]) throw new SimulatorOptionsError("--admin-email needs --admin-password (or TERN_SIM_ADMIN_PASSWORD)");
  return null;
}

export function parseCli(argv: string[]): {
  input: SimulatorInput;
  durationS: number | null;
  progressMs: number;
  json: boolean;
  registerOnly: boolean;
} {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      server: { type: "string" },
      token: { type: "string" },
      count: { type: "string" },
      "start-index": { type: "string" },
      prefix: { type: "string" },
      concurrency: { type: "string" },
      "status-interval": { type: "string" },
      tunnels: { type: "string" },
      loss: { type: "string" },
      rtt: { type: "string" },
      jitter: { type: "string" },
      down: { type: "boolean" },
      "apply-delay": { type: "string" },
      "fail-driver": { type: "string" },
      "never-answer": { type: "boolean" },
      "no-reconnect": { type: "boolean" },
      "register-only": { type: "boolean" },
      "admin-email": { type: "string" },
      "admin-password": { type: "string" },
      "admin-token": { type: "string" },
      "approval-wait": { type: "string" },
      duration: { type: "string" },
      "progress-ms": { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) throw new SimulatorOptionsError(USAGE);
  if (!values.server || !values.token || !values.count)
    throw new SimulatorOptionsError(`--server, --token and --count are required\n${USAGE}`);
  const metrics = {
    ...(values.down ? { up: false } : {}),
    ...(values.loss !== undefined ? { loss: num(values.loss, "loss") } : {}),
    ...(values.rtt !== undefined ? { rtt: num(values.rtt, "rtt") } : {}),
    ...(values.jitter !== undefined ? { jitter: num(values.jitter, "jitter") } : {}),
  };
  return {
    input: {
      server: values.server,
      token: values.token,
      count: num(values.count, "count")!,
      startIndex: num(values["start-index"], "start-index"),
      machinePrefix: values.prefix,
      concurrency: num(values.concurrency, "concurrency"),
      statusIntervalMs: num(values["status-interval"], "status-interval") ?? null,
      syntheticTunnels: num(values.tunnels, "tunnels"),
      metrics: Object.keys(metrics).length > 0 ? metrics : undefined,
      apply: {
        delayMs: num(values["apply-delay"], "apply-delay"),
        failDriver: values["fail-driver"] ?? null,
        neverAnswer: values["never-answer"] ?? false,
      },
      reconnect: !values["no-reconnect"],
      admin: adminOf(values),
      approvalWaitMs: (num(values["approval-wait"], "approval-wait") ?? 120) * 1000,
      failFast: false,
    } as SimulatorInput,
    durationS: num(values.duration, "duration") ?? null,
    progressMs: num(values["progress-ms"], "progress-ms") ?? 1000,
    json: values.json ?? false,
    registerOnly: values["register-only"] ?? false,
  };
}

/** Resident memory after a collection when `--expose-gc` allows one, so the figure is live data, not garbage. */
function memory(): { rssBytes: number; heapUsedBytes: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed };
}

async function main(): Promise<number> {
  let cli: ReturnType<typeof parseCli>;
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  // Replaced by the figure after device 0 is up, so module loading and warm-up are not counted per device.
  // The floor of the readings: the per-device figures are growth over the lowest, never negative.
  let floor = new MemoryFloor();
  let before = floor.see(memory());
  let warm = 0;
  const t0 = performance.now();
  const print = (kind: string, fleet: Simulator | null, extra: Record<string, unknown> = {}) => {
    const mem = memory();
    const stats = fleet?.stats();
    const extraDevices = stats ? stats.ready - warm : 0;
    const { rssBytes: perDevice, heapUsedBytes: heapPerDevice } = floor.perDevice(mem, extraDevices);
    before = floor.see(mem);
    const line = {
      kind,
      elapsedMs: Math.round(performance.now() - t0),
      ...stats,
      ...mem,
      before,
      bytesPerDevice: perDevice,
      heapBytesPerDevice: heapPerDevice,
      ...extra,
    };
    if (cli.json) console.log(JSON.stringify(line));
    else if (stats) {
      console.log(
        `${(line.elapsedMs / 1000).toFixed(1)}s ${kind}: registered ${stats.registered}/${stats.devices} ready ${stats.ready} ` +
          `closed ${stats.closed} status ${stats.statusSent} applied ${stats.applied} failures ${stats.failures} ` +
          `rss ${(mem.rssBytes / 2 ** 20).toFixed(1)} MB${perDevice === null ? "" : ` (${perDevice} B/device, heap ${heapPerDevice} B/device)`}`,
      );
    } else console.log(`${kind} ${JSON.stringify(extra)}`);
    if (!cli.json && typeof extra.error === "string") console.error(`error: ${extra.error}`);
  };

  let fleet: Simulator | null = null;
  const progress = setInterval(() => print("progress", fleet), cli.progressMs);
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    clearInterval(progress);
    print("summary", fleet, { failureSamples: fleet?.failures.slice(0, 5) ?? [] });
    await fleet?.stop();
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  try {
    fleet = Simulator.create(cli.input);
    if (cli.registerOnly) {
      // Unapproved devices' links are refused (403) until an admin approves them: stop after registering.
      await fleet.registerAll();
      const all = fleet.stats().registered === fleet.size;
      if (!all) print("error", fleet, { error: fleet.failures[0]?.error ?? "not every device registered" });
      await stop(all ? 0 : 1);
      return all ? 0 : 1;
    }
    if (fleet.size > 1) {
      await fleet.device(0).register();
      await fleet.device(0).connect();
      floor = new MemoryFloor();
      before = floor.see(memory());
      warm = 1;
    }
    await fleet.registerAll();
    await fleet.connectAll();
    print("connected", fleet);
  } catch (err) {
    print("error", fleet, { error: (err as Error).message });
    await stop(1);
    return 1;
  }
  if (cli.durationS !== null) setTimeout(() => void stop(0), cli.durationS * 1000);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const code = await main();
  if (code !== 0) process.exit(code);
}
