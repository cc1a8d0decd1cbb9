/** The text and HTML of a notification e-mail: short, readable in any client, every value escaped. */
import { NOTIFICATION_TITLES, type Notification } from "@tern/protocol";
import type { DeliveryContext, DeliveryEvent } from "./types.ts";

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

export function renderEmail(
  event: DeliveryEvent,
  notification: Notification | null,
  context: DeliveryContext = {},
): EmailContent {
  if (event === "test" || notification === null) {
    const text = "This is a test message from Tern: e-mail notifications reach this address.";
    return { subject: "[Tern] Test message", text: `${text}\n`, html: page("Test message", `<p>${escapeHtml(text)}</p>`) };
  }
  const n = notification;
  const title = n.title || NOTIFICATION_TITLES[n.eventType];
  const where = context.deviceName ? ` on ${context.deviceName}` : "";
  const resolved = event === "notification.resolved";
  const subject = resolved ? `[Tern] Resolved: ${title}${where}` : `[Tern] ${n.severity.toUpperCase()}: ${title}${where}`;
  const rows: [string, string][] = [
    ["Status", resolved ? "resolved" : "open"],
    ["Severity", n.severity],
    ["Details", n.details],
  ];
  if (context.organizationName) rows.push(["Organization", context.organizationName]);
  if (context.deviceName || n.deviceId) rows.push(["Device", context.deviceName ?? n.deviceId ?? ""]);
  if (n.targets.tunnelId) rows.push(["Tunnel", n.targets.tunnelId]);
  if (n.targets.interfaceId) rows.push(["Interface", n.targets.interfaceId]);
  if (n.targets.vrrpGroupId) rows.push(["VRRP group", n.targets.vrrpGroupId]);
  if (n.targets.bgpNeighbor) rows.push(["BGP neighbor", n.targets.bgpNeighbor]);
  rows.push(["Seen", n.count === 1 ? "once" : `${n.count} times`], ["First seen", n.createdAt], ["Last seen", n.lastSeenAt]);
  if (n.resolvedAt) rows.push(["Resolved at", n.resolvedAt]);
  rows.push(["Event", n.eventType], ["Notification id", n.id]);

  const heading = `${resolved ? "Resolved" : n.severity.toUpperCase()}: ${title}${where}`;
  const text = [heading, "", ...rows.map(([k, v]) => `${k}: ${v}`), ...(context.link ? ["", context.link] : []), ""].join("\n");
  const table = rows.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join("");
  const link = context.link ? `<p><a href="${escapeHtml(context.link)}">Open in Tern</a></p>` : "";
  return { subject, text, html: page(heading, `<table cellpadding="4">${table}</table>${link}`) };
}

function page(heading: string, body: string): string {
  return `<!doctype html><html><body style="font-family:sans-serif"><h2>${escapeHtml(heading)}</h2>${body}</body></html>`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
