/**
 * Device tags and remote actions (issue 19): the tag format, the actions an
 * admin can ask of devices, and the `device-action` request the server sends
 * an agent for the actions the agent itself carries out.
 */
import * as z from "zod";
import { Id } from "./common.ts";
import { Filter } from "./list-query.ts";

/** Characters a tag may hold: letters, digits and `. _ : / -`. */
export const TAG_PATTERN = /^[A-Za-z0-9._:/-]+$/;
export const MAX_TAG_LENGTH = 64;
export const MAX_TAGS_PER_DEVICE = 32;

/** One device tag: trimmed, 1–64 characters of TAG_PATTERN. */
export const DeviceTag = z
  .string()
  .trim()
  .min(1, "a tag must not be empty")
  .max(MAX_TAG_LENGTH, `a tag is at most ${MAX_TAG_LENGTH} characters`)
  .regex(TAG_PATTERN, "a tag holds only letters, digits and . _ : / -");

/** Deduplicated tags in the order first given. */
export function dedupeTags(tags: readonly string[]): string[] {
  return [...new Set(tags)];
}

/** A device's whole tag list (PUT /devices/{id}): at most 32 distinct tags, stored deduplicated. */
export const DeviceTags = z
  .array(DeviceTag)
  .max(MAX_TAGS_PER_DEVICE * 4)
  .transform(dedupeTags)
  .refine((tags) => tags.length <= MAX_TAGS_PER_DEVICE, {
    message: `a device has at most ${MAX_TAGS_PER_DEVICE} tags`,
  });

/** Which devices: explicit ids or a filter of the device-selection keys (`[]` = every device of the organization). */
export const selectionFields = {
  deviceIds: z.array(Id).min(1).max(10_000).optional(),
  filter: z.array(Filter).max(20).optional(),
};
export const oneSelection = <T extends { deviceIds?: unknown; filter?: unknown }>(s: T) =>
  (s.deviceIds === undefined) !== (s.filter === undefined);
export const SELECTION_MESSAGE = {
  message: "give either deviceIds or filter ([] = every device), not both or neither",
  path: ["deviceIds"],
};

/** Body of `POST /devices/tags`: tags to add to and remove from many devices. */
export const DeviceTagsBulk = z
  .strictObject({
    ...selectionFields,
    add: z.array(DeviceTag).max(MAX_TAGS_PER_DEVICE).default([]),
    remove: z
      .array(DeviceTag)
      .max(MAX_TAGS_PER_DEVICE * 4)
      .default([]),
  })
  .refine(oneSelection, SELECTION_MESSAGE)
  .refine((b) => b.add.length + b.remove.length > 0, { message: "give tags to add or remove", path: ["add"] });
export type DeviceTagsBulk = z.infer<typeof DeviceTagsBulk>;

export const DeviceTagsBulkResult = z.object({
  /** Devices selected. */
  matched: z.number().int().min(0),
  /** Devices whose tags changed. */
  changed: z.number().int().min(0),
});

/** Remote actions on devices, each tracked as a job of the same type. */
export const DEVICE_ACTIONS = ["sync", "restart-agent", "stop", "start", "reset"] as const;
export const DeviceAction = z.enum(DEVICE_ACTIONS, { message: `action must be one of ${DEVICE_ACTIONS.join(", ")}` });
export type DeviceAction = z.infer<typeof DeviceAction>;

/** The actions the agent carries out itself (`sync` is an ordinary apply of the desired config). */
export const AGENT_ACTIONS = ["restart-agent", "stop", "start", "reset"] as const;
export const AgentAction = z.enum(AGENT_ACTIONS);
export type AgentAction = z.infer<typeof AgentAction>;

/** State of the router's data plane (its tunnels, routing, DHCP and VRRP daemons and kernel state). */
export const DataPlaneState = z.enum(["running", "stopped"]);
export type DataPlaneState = z.infer<typeof DataPlaneState>;

const actionFields = {
  action: DeviceAction,
  /** Required (true) for `reset`: it removes everything the agent configured on the router. */
  confirm: z.boolean().optional(),
};

/** Body of `POST /devices/{id}/actions`. */
export const DeviceActionRequest = z.strictObject(actionFields);
export type DeviceActionRequest = z.infer<typeof DeviceActionRequest>;

/** Body of `POST /devices/actions`: one action for many devices, by ids or filter (e.g. a tag). */
export const DevicesActionRequest = z
  .strictObject({ ...actionFields, ...selectionFields })
  .refine(oneSelection, SELECTION_MESSAGE);
export type DevicesActionRequest = z.infer<typeof DevicesActionRequest>;

/** Params of the `device-action` request (server → agent). */
export const DeviceActionParams = z.object({ action: AgentAction });
/** The agent's answer once the action is done (for `restart-agent`: once the restart is under way). */
export const DeviceActionResult = z.object({
  action: AgentAction,
  dataPlane: DataPlaneState,
  /** What the agent did, for the job's task. */
  message: z.string().max(1000),
});
export type DeviceActionResult = z.infer<typeof DeviceActionResult>;
