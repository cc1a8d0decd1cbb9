/**
 * Writes of the devices pages. Approval in bulk is one POST /api/devices/approve
 * (the same checks as one approval, per device); a device it refused comes back
 * with the code PUT /api/devices/{id} would answer.
 */
import { ok } from "@tern/client";
import { tern } from "../../api/tern.ts";

export async function approveDevice(id: string): Promise<void> {
  await ok(tern.api.PUT("/api/devices/{id}", { params: { path: { id } }, body: { isApproved: true } }));
}

/** Approves the devices; resolves with the ones refused and why (empty when all were approved). */
export async function approveDevices(ids: string[]): Promise<{ id: string; error: string }[]> {
  const answer = await ok(tern.api.POST("/api/devices/approve", { body: { deviceIds: ids } }));
  return answer.results.filter((r) => r.status === "refused").map((r) => ({ id: r.id, error: r.error ?? r.code ?? "refused" }));
}

export async function deleteDevice(id: string): Promise<void> {
  await ok(tern.api.DELETE("/api/devices/{id}", { params: { path: { id } } }));
}
