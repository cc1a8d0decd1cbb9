/**
 * The reads of the upgrades pages. Rollouts are keyed by the `upgrade` live
 * event (the server sends one on every device's progress), so the list and a
 * report refetch as devices move; a pause or resume by someone else changes no
 * device, so they are also read every 15 s. The fleet's versions are device facts
 * (`device` events). Packages and signing keys belong to the account and
 * change only by uploads (packaging/agent-package.mjs): read when the page opens.
 */
import { queryOptions } from "@tanstack/react-query";
import { ok, TernApiError } from "@tern/client";
import { queryKey } from "../../api/keys.ts";
import { tern } from "../../api/tern.ts";

/** A rollout's own state (pause, resume) comes with no live event. */
const STATE_POLL_MS = 15_000;

export const rolloutsQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("upgrade", org, "list"),
    queryFn: () => ok(tern.api.GET("/api/agent-upgrades")),
    refetchInterval: STATE_POLL_MS,
  });

export const rolloutQuery = (org: string | null, id: string) =>
  queryOptions({
    queryKey: queryKey("upgrade", org, "one", id),
    queryFn: () => ok(tern.api.GET("/api/agent-upgrades/{id}", { params: { path: { id } } })),
    refetchInterval: STATE_POLL_MS,
  });

export const versionsQuery = (org: string | null) =>
  queryOptions({
    queryKey: queryKey("device", org, "agent-versions"),
    queryFn: () => ok(tern.api.GET("/api/agent-versions")),
  });

/** Account-wide lists: only the account's managers and owners may read them (403 for the others). */
export const packagesQuery = (org: string | null) =>
  queryOptions({
    queryKey: ["account", org, "agent-packages"] as const,
    queryFn: () => ok(tern.api.GET("/api/agent-packages")),
    retry: (count, error) => !isForbidden(error) && count < 2,
  });

export const signingKeysQuery = (org: string | null) =>
  queryOptions({
    queryKey: ["account", org, "agent-signing-keys"] as const,
    queryFn: () => ok(tern.api.GET("/api/agent-signing-keys")),
    retry: (count, error) => !isForbidden(error) && count < 2,
  });

export const isForbidden = (error: unknown) => error instanceof TernApiError && error.code === "FORBIDDEN";

export async function rolloutAct(id: string, act: "pause" | "resume" | "cancel"): Promise<void> {
  const init = { params: { path: { id } } };
  if (act === "pause") await ok(tern.api.POST("/api/agent-upgrades/{id}/pause", init));
  else if (act === "resume") await ok(tern.api.POST("/api/agent-upgrades/{id}/resume", init));
  else await ok(tern.api.POST("/api/agent-upgrades/{id}/cancel", init));
}
