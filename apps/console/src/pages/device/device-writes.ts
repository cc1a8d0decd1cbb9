/** Writes of the device page: its tags and remote actions (POST /api/devices/{id}/actions). */
import { ok } from "@tern/client";
import { tern } from "../../api/tern.ts";

export type DeviceAction = "sync" | "restart-agent" | "stop" | "start" | "reset";

export async function setDeviceTags(id: string, tags: string[]): Promise<void> {
  await ok(tern.api.PUT("/api/devices/{id}", { params: { path: { id } }, body: { tags } }));
}

/** Starts the action; resolves with its job id. `reset` is sent with its confirmation (the dialog asked). */
export async function runDeviceAction(id: string, action: DeviceAction): Promise<string> {
  const answer = await ok(
    tern.api.POST("/api/devices/{id}/actions", {
      params: { path: { id } },
      body: action === "reset" ? { action, confirm: true } : { action },
    }),
  );
  return answer.jobIds[0] ?? "";
}
