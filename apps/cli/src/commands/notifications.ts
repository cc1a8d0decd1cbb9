/** tern notifications ls | ack */
import type { Command } from "@commander-js/extra-typings";
import { type Notification, ok } from "@tern/client";
import { usageError } from "../exit-codes.ts";
import { contextOf, positiveInt } from "./shared.ts";

const SEVERITIES = ["info", "warning", "critical"] as const;

export function registerNotifications(program: Command<[], { json?: boolean; org?: string }>): void {
  const notifications = program
    .command("notifications")
    .alias("notification")
    .description("Alerts raised about devices and tunnels");

  notifications
    .command("ls")
    .alias("list")
    .description("List notifications, most recent first")
    .option("--unread", "only unread ones")
    .option("--open", "only unresolved ones")
    .option("--severity <severity>", `only this severity (${SEVERITIES.join(", ")})`)
    .option("--limit <n>", "at most this many (default 50, at most 1000)", positiveInt)
    .action(async (opts, command) => {
      const ctx = contextOf(command);
      const tern = await ctx.connect();
      const filter: { key: string; op: string; val: unknown }[] = [];
      if (opts.unread) filter.push({ key: "status", op: "==", val: "unread" });
      if (opts.open) filter.push({ key: "resolved", op: "==", val: false });
      if (opts.severity) {
        if (!(SEVERITIES as readonly string[]).includes(opts.severity))
          throw usageError(`--severity: one of ${SEVERITIES.join(", ")}`);
        filter.push({ key: "severity", op: "==", val: opts.severity });
      }
      const rows = await ok(
        tern.api.GET("/api/notifications", {
          params: { query: { limit: opts.limit ?? 50, ...(filter.length ? { filter: JSON.stringify(filter) } : {}) } },
        }),
      );
      ctx.printer.list(
        rows,
        [
          { header: "severity", value: (n: Notification) => n.severity },
          { header: "title", value: (n) => n.title },
          { header: "count", value: (n) => n.count },
          { header: "status", value: (n) => (n.resolved ? `${n.status}, resolved` : n.status) },
          { header: "last seen", value: (n) => n.lastSeenAt },
          { header: "id", value: (n) => n.id },
        ],
        "no notifications",
      );
    });

  notifications
    .command("ack")
    .description("Acknowledge notifications: mark them read (and resolved with --resolve)")
    .argument("[id...]", "notification ids")
    .option("--all", "every unread notification of the organization")
    .option("--resolve", "also mark them resolved")
    .action(async (ids, opts, command) => {
      const ctx = contextOf(command);
      if (!opts.all === (ids.length === 0)) throw usageError("name notification ids or pass --all (one of them)");
      const tern = await ctx.connect();
      const body = { status: "read" as const, ...(opts.resolve ? { resolved: true as const } : {}) };
      const answer = opts.all
        ? await ok(
            tern.api.PUT("/api/notifications", {
              params: { query: { filter: JSON.stringify([{ key: "status", op: "==", val: "unread" }]) } },
              body,
            }),
          )
        : await ok(tern.api.PUT("/api/notifications", { body: { ...body, ids } }));
      ctx.printer.result(answer, (a) => `acknowledged ${a.updated} notification(s)`);
    });
}
