/**
 * Writes of the devices pages. Approval in bulk uses POST /api/devices/approve
 * when the server has it, else approves device by device (PUT /api/devices/{id}
 * with isApproved), which every server has.
 */
import { apiErrorFrom, ok } from "@tern/client";
import { tern } from "../../api/tern.ts";

export async function approveDevice(id: string): Promise<void> {
  await ok(tern.api.PUT("/api/devices/{id}", { params: { path: { id } }, body: { isApproved: true } }));
}

export async function approveDevices(ids: string[]): Promise<void> {
  const query = tern.org ? `?org=${encodeURIComponent(tern.org)}` : "";
  const response = await tern.raw(`/api/devices/approve${query}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ids }),
  });
  if (response.ok) {
    await response.body?.cancel();
    return;
  }
  const text = await response.text();
  if (response.status !== 404 && response.status !== 405) throw apiErrorFrom(response.status, parse(text));
  // No bulk route on this server: one by one, a few at a time.
  for (let i = 0; i < ids.length; i += 8) await Promise.all(ids.slice(i, i + 8).map(approveDevice));
}

export async function deleteDevice(id: string): Promise<void> {
  await ok(tern.api.DELETE("/api/devices/{id}", { params: { path: { id } } }));
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
