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
import { BgpDriver } from "../drivers/bgp/index.ts";
import type { Driver, DriverContext, DriverName } from "../drivers/driver.ts";
import { AgentError, formatIssues } from "../errors.ts";
import type { TunnelQualitySource } from "../status/tunnel-quality.ts";
import type { UpgradeReceiver } from "../upgrade/receiver.ts";
import { ping, traceroute } from "./diagnostics.ts";
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
}

export class RequestHandler {
  constructor(private readonly deps: RequestDeps) {}

  /** Validates params, runs the request, validates the result. Throws AgentError with a code. */
  async handle(method: string, params: unknown): Promise<unknown> {
    if (!Object.hasOwn(REQUESTS, method))
      throw new AgentError("INVALID_REQUEST", `unknown request method ${JSON.stringify(method)}`);
    const spec = REQUESTS[method as RequestMethod];
    const parsed = spec.params.safeParse(params ?? {});
    if (!parsed.success) throw new AgentError("INVALID_REQUEST", `${method}: ${formatIssues(parsed.error.issues)}`);
    const result = await this.run(method as RequestMethod, parsed.data);
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

  private async run(method: RequestMethod, params: Record<string, unknown>): Promise<unknown> {
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
        return ping(context.runner, params as { target: string; count: number; source?: string });
      case "traceroute":
        return traceroute(context.runner, params as { target: string });
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
