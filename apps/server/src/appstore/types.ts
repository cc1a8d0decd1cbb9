/** What a catalog application is: its actions, each with a params schema and the work it does. */
import type { z } from "zod";
import type { ServiceCtx } from "../services/context.ts";

export interface ActionOutcome {
  /** The application's state after the action (replaces the stored state). */
  state: Record<string, unknown>;
  /** What the caller gets back. */
  result: Record<string, unknown>;
  /** One line for `lastAction.result`. */
  summary: string;
  /**
   * Devices whose desired config the action changed (installed, removed, or
   * running an application whose certificate or users changed): the app
   * store recompiles them and queues their jobs after the state is saved.
   */
  devices?: readonly string[];
}

/**
 * The associated data of a purchased application's encrypted state fields
 * (those ending in `Enc`): a secret copied to another purchase does not open,
 * and key rotation (secrets/reencrypt.ts) knows how to re-encrypt them.
 */
export const appSecretAad = (purchaseId: string) => `app-key:${purchaseId}`;

export interface AppActionContext {
  /** The request's context, inside the action's transaction. */
  ctx: ServiceCtx;
  /** The purchased application's id (associated data of its encrypted secrets). */
  purchaseId: string;
  state: Record<string, unknown>;
}

export interface AppActionDefinition<P extends z.ZodType = z.ZodType> {
  description: string;
  /** Validates the params; query text arrives as strings, so numbers are coerced. */
  params: P;
  /** Params that are secrets (write-only): the audit log records only that they were set. */
  secretParams?: readonly string[];
  run(context: AppActionContext, params: z.output<P>): Promise<ActionOutcome>;
}

export interface AppDefinition {
  id: string;
  name: string;
  description: string;
  actions: Record<string, AppActionDefinition>;
}

/** Keeps each action's params type tied to its schema. */
export function defineAction<P extends z.ZodType>(action: AppActionDefinition<P>): AppActionDefinition {
  return action as unknown as AppActionDefinition;
}
