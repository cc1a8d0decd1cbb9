/** tern devices ls | show | approve | delete (and ping | traceroute | resolve | logs: device-diagnostics.ts) */
import type { Command } from "@commander-js/extra-typings";
import { type Device, type DeviceSummary, ok } from "@tern/client";
import { usageError } from "../exit-codes.ts";
import { renderFields, renderTable } from "../support/output.ts";
import { resolveDevice } from "../support/resolve.ts";
import { registerDeviceDiagnostics } from "./device-diagnostics.ts";
import { confirm, contextOf, positiveInt, reportJobs, seconds } from "./shared.ts";

const addresses = (d: DeviceSummary, type: "WAN" | "LAN") =>
  d.interfaces
    .filter((i) => i.type === type && i.IPv4)
    .map((i) => `${i.name} ${i.IPv4}${i.IPv4Mask != null ? `/${i.IPv4Mask}` : ""}`);

export function registerDevices(program: Command<[], { json?: boolean; org?: string }>): void {
  const devices = program
    .command("devices")
    .alias("device")
    .description("Edge routers: list, inspect, approve, delete; ping, traceroute, resolve and logs from the router");

  devices
    .command("ls")
    .alias("list")
    .description("List devices")
    .option("--pending", "only devices waiting for approval")
    .option("--connected", "only connected devices")
    .option("--name <text>", "only devices whose name contains this")
    .option("--limit <n>", "at most this many (default 100, at most 1000)", positiveInt)
    .action(async (opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const filter: { key: string; op: string; val: unknown }[] = [];
      if (opts.pending) filter.push({ key: "isApproved", op: "==", val: false });
      if (opts.connected) filter.push({ key: "isConnected", op: "==", val: true });
      if (opts.name) filter.push({ key: "name", op: "contains", val: opts.name });
      const rows = (await ok(
        tern.api.GET("/api/devices", {
          params: {
            query: {
              response: "summary",
              sort: "name",
              limit: opts.limit ?? 100,
              ...(filter.length ? { filter: JSON.stringify(filter) } : {}),
            },
          },
        }),
      )) as DeviceSummary[];
      ctx.printer.list(
        rows,
        [
          { header: "name", value: (d) => d.name },
          { header: "hostname", value: (d) => d.hostname },
          { header: "approved", value: (d) => d.isApproved },
          { header: "connected", value: (d) => d.isConnected },
          { header: "wan", value: (d) => addresses(d, "WAN") },
          { header: "notifications", value: (d) => d.pendingNotifications },
          { header: "id", value: (d) => d.id },
        ],
        opts.pending ? "no devices waiting for approval" : "no devices: create a registration token and enrol a router",
      );
    });

  devices
    .command("show")
    .description("Show one device with its interfaces")
    .argument("<device>", "id or exact name")
    .action(async (ref, _opts, command) => {
      const ctx = contextOf(command);
      const device = await resolveDevice(await ctx.connect(), ref);
      ctx.printer.result(device, (d: Device) =>
        [
          renderFields([
            ["Name", d.name],
            ["ID", d.id],
            ["Hostname", d.hostname],
            ["Description", d.description],
            ["Approved", d.isApproved],
            ["Connected", d.isConnected],
            ["Last connected", d.lastConnectedAt],
            ["Agent", d.versions.agent],
            ["Config applied", d.desiredHash === d.appliedHash ? "yes (in sync)" : `no (applied ${d.appliedHash ?? "nothing"})`],
            ["Notifications", d.pendingNotifications],
          ]),
          "",
          renderTable(
            [
              { header: "interface", value: (i: Device["interfaces"][number]) => i.name },
              { header: "type", value: (i) => i.type },
              { header: "assigned", value: (i) => i.isAssigned },
              { header: "ipv4", value: (i) => (i.IPv4 ? `${i.IPv4}/${i.IPv4Mask ?? ""}` : "") },
              { header: "dhcp", value: (i) => i.dhcp },
              { header: "public", value: (i) => (i.PublicIP ? `${i.PublicIP}:${i.PublicPort ?? ""}` : "") },
              { header: "id", value: (i) => i.id },
            ],
            d.interfaces,
          ),
        ].join("\n"),
      );
    });

  devices
    .command("approve")
    .description("Approve devices waiting for approval, optionally assigning their WAN and LAN interfaces")
    .argument("<device...>", "ids or exact names")
    .option("--wan <interface>", "assign this interface as WAN (e.g. eth0)")
    .option("--lan <interface>", "assign this interface as LAN (e.g. eth1)")
    .option("--wait", "wait for the configuration jobs, with progress")
    .option("--timeout <seconds>", "with --wait: give up after this long (default 300)", seconds)
    .action(async (refs, opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const jobIds: string[] = [];
      const approved: { id: string; name: string }[] = [];
      for (const ref of refs) {
        const device = await resolveDevice(tern, ref);
        const interfaces = [
          ...(opts.wan ? [assign(device, opts.wan, "WAN")] : []),
          ...(opts.lan ? [assign(device, opts.lan, "LAN")] : []),
        ];
        const answer = await ok(
          tern.api.PUT("/api/devices/{id}", {
            params: { path: { id: device.id } },
            body: { isApproved: true, ...(interfaces.length ? { interfaces } : {}) },
          }),
        );
        // 202 with the configuration jobs, or 200 with the device when nothing changed.
        if ("jobIds" in answer) jobIds.push(...answer.jobIds);
        approved.push({ id: device.id, name: device.name });
        if (!ctx.printer.json) ctx.printer.note(`approved ${device.name} (${device.id})`);
      }
      await reportJobs(ctx, jobIds, opts, { approved });
    });

  devices
    .command("delete")
    .alias("rm")
    .description("Delete devices (the router stops being managed)")
    .argument("<device...>", "ids or exact names")
    .option("-y, --yes", "do not ask for confirmation")
    .option("--wait", "wait for the jobs that remove its tunnels from other devices")
    .option("--timeout <seconds>", "with --wait: give up after this long (default 300)", seconds)
    .action(async (refs, opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const targets = [];
      for (const ref of refs) targets.push(await resolveDevice(tern, ref));
      await confirm(`Delete ${targets.map((d) => d.name).join(", ")}`, opts.yes);
      const jobIds: string[] = [];
      for (const device of targets) {
        const answer = await ok(tern.api.DELETE("/api/devices/{id}", { params: { path: { id: device.id } } }));
        if (answer && "jobIds" in answer) jobIds.push(...answer.jobIds);
        if (!ctx.printer.json) ctx.printer.note(`deleted ${device.name} (${device.id})`);
      }
      await reportJobs(ctx, jobIds, opts, { deleted: targets.map((d) => ({ id: d.id, name: d.name })) });
    });

  registerDeviceDiagnostics(devices as never);
}

function assign(device: Device, name: string, type: "WAN" | "LAN") {
  const found = device.interfaces.find((i) => i.name === name || i.devId === name);
  if (!found)
    throw usageError(
      `device ${device.name} has no interface "${name}" (it has ${device.interfaces.map((i) => i.name).join(", ")})`,
    );
  return { devId: found.devId, name: found.name, type, isAssigned: true };
}
