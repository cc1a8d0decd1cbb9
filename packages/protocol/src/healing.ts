/**
 * Network healing (docs/healing.md): what the organization lets Tern do by
 * itself, what agents report having done, and the actions the API lists.
 */
import * as z from "zod";
import { Id, Timestamp } from "./common.ts";

/** `act`: heal and record; `suggest`: record what would be done, change nothing; `off`: neither. */
export const HealingMode = z.enum(["act", "suggest", "off"]);
export type HealingMode = z.infer<typeof HealingMode>;
export const DEFAULT_HEALING_MODE: HealingMode = "act";

/** What a healing action does. */
export const HealingKind = z.enum([
  /** Traffic moved off a path whose figures left its learned baseline (quality based routing). */
  "reroute",
  /** A CHILD_SA missing or installed but passing no probes was initiated again by the agent. */
  "sa-reinitiate",
  /** A device whose reported config hash drifted was sent its desired config again. */
  "reapply",
  /** A flapping link was held down (route flap damping, exponential back-off). */
  "damp",
  /** A damped link became usable again. */
  "undamp",
]);
export type HealingKind = z.infer<typeof HealingKind>;

/** Figures of a link at one moment (any may be missing when not measured). */
export const HealingFigures = z.record(z.string().max(64), z.union([z.number(), z.string().max(200), z.boolean(), z.null()]));
export type HealingFigures = z.infer<typeof HealingFigures>;

/**
 * The device config's healing section. Absent means the defaults (mode `act`,
 * nothing avoided), so devices of organizations that never changed it keep
 * the config hash they had before healing existed.
 */
export const ConfigHealing = z.object({
  mode: HealingMode,
  /** Link keys (`tunnel:<id>`, `wan:<ifname>`) the server found degraded against their baseline: used only when nothing else is eligible. */
  avoid: z.array(z.string().max(200)).max(256),
});
export type ConfigHealing = z.infer<typeof ConfigHealing>;

/** One action an agent took (or, in `suggest` mode, would have taken) by itself, in a `status` message. */
export const AgentHealingReport = z.object({
  /** The agent's id for it (status messages may repeat it until the server has seen it). */
  id: z.string().min(1).max(64),
  at: Timestamp,
  kind: HealingKind,
  suggested: z.boolean(),
  /** `tunnel:<id>` or `wan:<ifname>`. */
  link: z.string().max(200),
  reason: z.string().max(500),
  before: HealingFigures,
  after: HealingFigures.nullable(),
});
export type AgentHealingReport = z.infer<typeof AgentHealingReport>;

/** Measured quality of a WAN link that carries a path label (tunnels travel in `tunnels`). */
export const LinkReport = z.object({
  name: z.string().max(32),
  up: z.boolean(),
  loss: z.number().min(0).max(100),
  rtt: z.number().min(0),
  jitter: z.number().min(0),
  samples: z.number().int().min(0),
});
export type LinkReport = z.infer<typeof LinkReport>;

/** `GET /api/healing/actions`. */
export const HealingAction = z.object({
  id: Id,
  at: Timestamp,
  kind: HealingKind,
  /** `act`: done; `suggest`: only recorded. */
  mode: z.enum(["act", "suggest"]),
  /** `agent`: the device did it by itself and reported it; `server`: the server decided it. */
  source: z.enum(["agent", "server"]),
  deviceId: Id.nullable(),
  tunnelId: Id.nullable(),
  /** `tunnel:<id>`, `wan:<ifname>` or `device`. */
  link: z.string(),
  reason: z.string(),
  before: HealingFigures,
  after: HealingFigures.nullable(),
});
export type HealingAction = z.infer<typeof HealingAction>;

export const HealingSettings = z.strictObject({ mode: HealingMode });
export type HealingSettings = z.infer<typeof HealingSettings>;
