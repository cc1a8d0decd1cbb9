/** tern tunnels ls | create, tern peers ls */
import type { Command } from "@commander-js/extra-typings";
import { ok, type Peer, type TunnelCreate, type TunnelSummary } from "@tern/client";
import { usageError } from "../exit-codes.ts";
import { resolveDevice, resolvePeer, tunnelInterface } from "../support/resolve.ts";
import { contextOf, positiveInt, reportJobs, seconds } from "./shared.ts";

const STATUSES = ["Connected", "Not Connected", "Pending", "N/A"] as const;

export function registerTunnels(program: Command<[], { json?: boolean; org?: string }>): void {
  const tunnels = program.command("tunnels").alias("tunnel").description("IPsec tunnels between devices, or to peers");

  tunnels
    .command("ls")
    .alias("list")
    .description("List tunnels with their status")
    .option("--device <device>", "only tunnels with this device at either end (id or name)")
    .option("--status <status>", `only tunnels in this status (${STATUSES.join(", ")})`)
    .option("--limit <n>", "at most this many (default 100, at most 1000)", positiveInt)
    .action(async (opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const filter: { key: string; op: string; val: unknown }[] = [];
      if (opts.device) filter.push({ key: "device.id", op: "==", val: (await resolveDevice(tern, opts.device)).id });
      if (opts.status) {
        const status = STATUSES.find((s) => s.toLowerCase() === opts.status!.toLowerCase());
        if (!status) throw usageError(`--status: one of ${STATUSES.join(", ")}`);
        filter.push({ key: "status", op: "==", val: status });
      }
      const rows = (await ok(
        tern.api.GET("/api/tunnels", {
          params: {
            query: {
              response: "summary",
              sort: "num",
              limit: opts.limit ?? 100,
              ...(filter.length ? { filter: JSON.stringify(filter) } : {}),
            },
          },
        }),
      )) as TunnelSummary[];
      ctx.printer.list(
        rows,
        [
          { header: "num", value: (t) => t.num },
          { header: "a", value: (t) => t.deviceA.name },
          { header: "b / peer", value: (t) => t.deviceB?.name ?? (t.peer ? `peer ${t.peer.name}` : "") },
          { header: "status", value: (t) => t.status },
          { header: "waiting for", value: (t) => (t.isPending ? t.pendingReason : "") },
          { header: "id", value: (t) => t.id },
        ],
        "no tunnels: create one with `tern tunnels create <device-a> <device-b>`",
      );
    });

  tunnels
    .command("create")
    .description("Create a tunnel between two devices' WAN interfaces (or from a device to a peer with --peer)")
    .argument("<device-a>", "id or exact name")
    .argument("[device-b]", "id or exact name")
    .option("--peer <peer>", "instead of device B: a peer (id or name)")
    .option("--interface-a <interface>", "interface on device A (default: its first assigned WAN)")
    .option("--interface-b <interface>", "interface on device B (default: its first assigned WAN)")
    .option("--description <text>", "description of the tunnel")
    .option("--wait", "wait for the configuration jobs, with progress")
    .option("--timeout <seconds>", "with --wait: give up after this long (default 300)", seconds)
    .action(async (refA, refB, opts, command) => {
      const ctx = contextOf(command);
      if (!refB === !opts.peer) throw usageError("name device B or --peer (one of them)");
      const tern = await ctx.connect();
      const a = await resolveDevice(tern, refA);
      const body: TunnelCreate = {
        deviceA: a.id,
        interfaceA: tunnelInterface(a, opts.interfaceA).id,
        ...(opts.description ? { description: opts.description } : {}),
      };
      if (refB) {
        const b = await resolveDevice(tern, refB);
        body.deviceB = b.id;
        body.interfaceB = tunnelInterface(b, opts.interfaceB).id;
      } else {
        body.peer = (await resolvePeer(tern, opts.peer!)).id;
      }
      const created = await ok(tern.api.POST("/api/tunnels", { body }));
      if (!ctx.printer.json) for (const t of created.tunnels) ctx.printer.note(`created tunnel ${t.num} (${t.id})`);
      await reportJobs(ctx, created.jobIds, opts, { tunnels: created.tunnels });
    });

  const peers = program.command("peers").alias("peer").description("IPsec peers: gateways outside Tern that tunnels can reach");
  peers
    .command("ls")
    .alias("list")
    .description("List peers")
    .option("--limit <n>", "at most this many (default 100, at most 1000)", positiveInt)
    .action(async (opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const rows = await ok(tern.api.GET("/api/peers", { params: { query: { sort: "name", limit: opts.limit ?? 100 } } }));
      ctx.printer.list(
        rows,
        [
          { header: "name", value: (p: Peer) => p.name },
          { header: "remote ip", value: (p) => p.remoteIP },
          { header: "remote id", value: (p) => p.remoteId },
          { header: "ike", value: (p) => `${p.ikeCryptoAlg}-${p.ikeKeySize} ${p.ikeIntegAlg} ${p.ikeDhGroup}` },
          { header: "tunnels", value: (p) => p.tunnels },
          { header: "id", value: (p) => p.id },
        ],
        "no peers",
      );
    });
}
