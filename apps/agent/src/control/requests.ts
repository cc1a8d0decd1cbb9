/**
 * On-demand reads (`request` messages from the server, and the local
 * troubleshooting page): params and results are checked against REQUESTS of
 * the protocol, so both sides agree on every shape.
 */
import {
  type AgentAction,
  type DeviceActionResult,
  type DeviceConfig,
  emptyDeviceConfig,
  REQUESTS,
  type RequestMethod,
} from "@tern/protocol";
import type * as z from "zod";
import { BgpDriver } from "../drivers/bgp/index.ts";
import type { Driver, DriverContext, DriverName } from "../drivers/driver.ts";
import { AgentError, formatIssues } from "../errors.ts";
import type { TunnelQualitySource } from "../status/tunnel-quality.ts";
import type { UpgradeReceiver } from "../upgrade/receiver.ts";
import { runDnsLookup } from "./diagnostics/dns.ts";
import { readLogTail } from "./diagnostics/logs.ts";
import { runPing } from "./diagnostics/ping.ts";
import type { StreamContext } from "./diagnostics/stream-context.ts";
import { runTraceroute } from "./diagnostics/traceroute.ts";
import { createDump, type DumpSource, readDumpChunk } from "./dump-requests.ts";

export interface RequestDeps {
  drivers: Driver[];
  context: DriverContext;
  current(): DeviceConfig | null;
  tunnels: TunnelQualitySource;
  /** Where the server's dump requests make and read archives; none: they are refused. */
  dumps?: DumpSource;
  /** Carries out `device-action` requests (daemon/device-actions.ts); none: they are refused. */
  actions?: { run(action: AgentAction): Promise<DeviceActionResult> };
  /** Receives agent upgrades (upgrade/receiver.ts); none: they are refused. */
  upgrades?: UpgradeReceiver;
  /** The agent's log file for `log-read`; none: it answers no lines. */
  logFile?: string | null;
}

/** How a request is run: its id (so `cancel` can name it) and where its output lines go as they come. */
export interface RequestRun {
  id?: string;
  onLine?(line: string): void;
  /** The child's pid once started (tests). */
  onStart?(pid: number): void;
}

export class RequestHandler {
  /** Requests running now by id, so a `cancel` can stop them. */
  private readonly running = new Map<string, AbortController>();

  constructor(private readonly deps: RequestDeps) {}

  /** Validates params, runs the request, validates the result. Throws AgentError with a code. */
  async handle(method: string, params: unknown, run: RequestRun = {}): Promise<unknown> {
    if (!Object.hasOwn(REQUESTS, method))
      throw new AgentError("INVALID_REQUEST", `unknown request method ${JSON.stringify(method)}`);
    const spec = REQUESTS[method as RequestMethod];
    const parsed = spec.params.safeParse(params ?? {});
    if (!parsed.success) throw new AgentError("INVALID_REQUEST", `${method}: ${formatIssues(parsed.error.issues)}`);
    const abort = new AbortController();
    if (run.id) this.running.set(run.id, abort);
    const stream: StreamContext = { onLine: run.onLine ?? (() => {}), signal: abort.signal, onStart: run.onStart };
    let result: unknown;
    try {
      result = await this.run(method as RequestMethod, parsed.data, stream);
    } finally {
      if (run.id && this.running.get(run.id) === abort) this.running.delete(run.id);
    }
    const checked = spec.result.safeParse(result);
    if (!checked.success)
      throw new AgentError("INTERNAL", `${method}: result does not match the protocol: ${formatIssues(checked.error.issues)}`);
    return checked.data;
  }

  private get config(): DeviceConfig {
    return this.deps.current() ?? emptyDeviceConfig("none");
  }

  private driver(name: DriverName): Driver | undefined {
    return this.deps.drivers.find((d) => d.name === name);
  }

  private dumpSource(): DumpSource {
    if (!this.deps.dumps) throw new AgentError("INVALID_REQUEST", "this agent does not make dumps on request");
    return this.deps.dumps;
  }

  private upgrades(): UpgradeReceiver {
    if (!this.deps.upgrades) throw new AgentError("INVALID_REQUEST", "this agent does not take upgrades");
    return this.deps.upgrades;
  }

  /** Stops the request `id` if it runs; true when it did. */
  cancel(id: string): boolean {
    const abort = this.running.get(id);
    abort?.abort();
    return abort !== undefined;
  }

  private async run(method: RequestMethod, params: Record<string, unknown>, stream: StreamContext): Promise<unknown> {
    const { context, tunnels } = this.deps;
    switch (method) {
      case "interface-status": {
        // The links driver observes every interface of the config (all Ethernet links without one).
        const devId = String(params.devId);
        const part = (await this.driver("links")?.observe?.(this.config, context)) ?? {};
        const found = (part.interfaces ?? []).find((i) => i.devId === devId || i.name === devId);
        if (!found) throw new AgentError("NOT_FOUND", `no interface with devId ${devId}`);
        return found;
      }
      case "bgp-status": {
        const bgp = this.driver("bgp");
        const state = bgp instanceof BgpDriver ? await bgp.status(this.config, context) : null;
        return state ?? { running: false, routerId: "", localASN: null, neighbors: [] };
      }
      case "tunnel-quality":
        return tunnels.report();
      case "ping":
        return runPing(params as z.infer<typeof REQUESTS.ping.params>, stream);
      case "traceroute":
        return runTraceroute(params as z.infer<typeof REQUESTS.traceroute.params>, stream);
      case "dns-lookup":
        return runDnsLookup(params as z.infer<(typeof REQUESTS)["dns-lookup"]["params"]>, stream);
      case "log-read":
        return readLogTail(this.deps.logFile ?? null, params as z.infer<(typeof REQUESTS)["log-read"]["params"]>);
      case "cancel":
        return { stopped: this.cancel(String(params.id)) };
      case "dump-create":
        return createDump(this.dumpSource());
      case "dump-read":
        return readDumpChunk(this.dumpSource(), params as { name: string; offset: number; length: number });
      case "device-action": {
        if (!this.deps.actions) throw new AgentError("INVALID_REQUEST", "this agent does not carry out device actions");
        return this.deps.actions.run(params.action as AgentAction);
      }
      case "upgrade-begin":
        return this.upgrades().begin(params as Parameters<UpgradeReceiver["begin"]>[0]);
      case "upgrade-chunk":
        return this.upgrades().chunk(params as Parameters<UpgradeReceiver["chunk"]>[0]);
      case "upgrade-install":
        return this.upgrades().install(params as Parameters<UpgradeReceiver["install"]>[0]);
    }
  }
}
