/** Schemas of the remote-action and tag routes (protocol device-actions.ts), named for the OpenAPI document. */
import { z } from "@hono/zod-openapi";
import { DeviceActionRequest, DevicesActionRequest, DeviceTagsBulk, DeviceTagsBulkResult, Id } from "@tern/protocol";
import { DEVICE_SELECTION_KEYS } from "../../services/devices/selection.ts";

export const DeviceActionRequestSchema = DeviceActionRequest.meta({ id: "DeviceActionRequest" });
export const DevicesActionRequestSchema = DevicesActionRequest.meta({ id: "DevicesActionRequest" });
export const DeviceTagsBulkSchema = DeviceTagsBulk.meta({ id: "DeviceTagsBulk" });
export const DeviceTagsBulkResultSchema = DeviceTagsBulkResult.meta({ id: "DeviceTagsBulkResult" });

export const DevicesActionResultSchema = z
  .object({
    action: z.string(),
    jobGroup: Id.nullable().meta({ description: "Every job created: GET /api/jobs?group=<jobGroup>; null when none was" }),
    jobs: z.number().int().min(0),
    skipped: z
      .array(z.object({ id: Id, reason: z.string() }))
      .meta({ description: "Selected devices that got no job (not approved)" }),
  })
  .meta({ id: "DevicesActionResult" });

export const ACTIONS_DESCRIPTION = [
  "Actions, each tracked as a job of the action's type: `sync` (send the desired configuration again, forced, even when the device reports its hash), `restart-agent` (the agent exits cleanly and its supervisor starts it again), `stop` (the router's data plane — tunnels, routing, DHCP, VRRP and the agent's kernel state — is taken down; the agent stays connected and reports `dataPlane: stopped`), `start` (the agent re-applies its configuration; config jobs held while stopped go out), `reset` (the agent tears down everything it applied and forgets its configuration; the server withdraws the device's approval: see docs/server.md; needs `confirm: true`, else 400 CONFIRMATION_REQUIRED).",
  "Permissions: `sync`, `restart-agent`, `stop`, `start` need `put` on devices; `reset` needs `del` on devices (owners and managers): 403 FORBIDDEN otherwise.",
  "`sync` is a config job and follows the job engine (it waits while the device is offline or stopped). The others are sent at once: a device that is not connected fails its job (`error.reason: not-connected`), no answer within TERN_JOB_TIMEOUT_MS fails it (`timeout`), an agent that refuses (one older than remote actions does not know them) fails it (`device`) with the agent's answer.",
].join("\n\n");

export const SELECTION_DESCRIPTION = `Devices by \`deviceIds\` (at most 10,000) or \`filter\` (a JSON array of {key, op, val}; \`[]\` = every device of the organization). Filter keys: ${DEVICE_SELECTION_KEYS}. \`tags\` takes \`contains\` (has the tag), \`!contains\`, \`in\` (has any of the tags) and \`== null\` (no tags). Unknown device ids: 404 NOT_FOUND naming them, nothing happens.`;
