/** Simulator options: defaults and validation with clear messages. */
import { PROTOCOL_VERSION } from "@tern/protocol";
import { z } from "zod";
import { checkApplyBehaviour } from "./device.ts";
import { validateMetrics } from "./metrics.ts";
import { DEFAULT_APPLY, DEFAULT_METRICS, type SimulatorOptions } from "./types.ts";

/** The serialisable options, checked with zod; functions (metrics, onEvent) are checked by hand. */
const Checked = z.object({
  server: z
    .string()
    .url()
    .refine((s) => /^https?:$/.test(new URL(s).protocol), "must be an http:// or https:// URL"),
  token: z.string().min(1, "a registration token is required"),
  count: z.number().int().min(1).max(100_000),
  startIndex: z.number().int().min(0).max(10_000_000),
  machinePrefix: z.string().regex(/^[A-Za-z0-9._:-]{1,60}$/, "must be 1–60 characters [A-Za-z0-9._:-]"),
  identitySeed: z.string().min(1).max(200),
  agentVersion: z.string().max(50),
  protocolVersion: z.number().int(),
  statusIntervalMs: z.number().int().min(10).nullable(),
  concurrency: z.number().int().min(1).max(10_000),
  syntheticTunnels: z.number().int().min(0).max(1000),
  reconnect: z.boolean(),
  reconnectMinMs: z.number().int().min(1),
  reconnectMaxMs: z.number().int().min(1),
  connect: z.boolean(),
  failFast: z.boolean(),
  admin: z
    .union([z.object({ email: z.string().min(1), password: z.string().min(1) }), z.object({ token: z.string().min(1) })])
    .nullable(),
  approvalWaitMs: z.number().int().min(0),
});

export type SimulatorInput = Pick<SimulatorOptions, "server" | "token" | "count"> &
  Partial<Omit<SimulatorOptions, "apply">> & { apply?: Partial<SimulatorOptions["apply"]> };

export class SimulatorOptionsError extends Error {
  readonly code = "invalid-simulator-options";
  constructor(message: string) {
    super(message);
    this.name = "SimulatorOptionsError";
  }
}

export function resolveOptions(input: SimulatorInput): SimulatorOptions {
  const options: SimulatorOptions = {
    startIndex: 0,
    machinePrefix: "tern-sim",
    agentVersion: "0.1.0-sim",
    protocolVersion: PROTOCOL_VERSION,
    statusIntervalMs: null,
    concurrency: 100,
    syntheticTunnels: 0,
    metrics: DEFAULT_METRICS,
    reconnect: true,
    reconnectMinMs: 1000,
    reconnectMaxMs: 30_000,
    connect: true,
    failFast: true,
    admin: null,
    // With credentials the fleet approves itself: wait for that. Without, a 403 fails at once as before
    // (tests expect it), unless a wait is asked for (the CLI waits 120 s for an operator).
    approvalWaitMs: input.admin ? 120_000 : 0,
    onEvent: null,
    ...stripUndefined(input),
    server: input.server,
    token: input.token,
    count: input.count,
    identitySeed: input.identitySeed ?? `sim:${input.machinePrefix ?? "tern-sim"}`,
    apply: { ...DEFAULT_APPLY, ...stripUndefined(input.apply ?? {}) },
  };
  const checked = Checked.safeParse(options);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    throw new SimulatorOptionsError(`simulator option ${issue.path.join(".")}: ${issue.message}`);
  }
  try {
    checkApplyBehaviour(options.apply);
    validateMetrics(options.metrics);
  } catch (err) {
    throw new SimulatorOptionsError(`simulator option: ${(err as Error).message}`);
  }
  return options;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
