/**
 * The order of a rollout: the canary share first (at least one device when the share is above 0), then the
 * others; both cut in batches of at most `batchSize`, numbered from 0 (canaries' batches first). Pure, so the
 * scheduler's tests check it directly.
 */
export function planBatches(
  deviceIds: readonly string[],
  canaryPercent: number,
  batchSize: number,
): Map<string, { canary: boolean; batch: number }> {
  const plan = new Map<string, { canary: boolean; batch: number }>();
  const canaries =
    canaryPercent > 0 ? Math.min(deviceIds.length, Math.max(1, Math.ceil((deviceIds.length * canaryPercent) / 100))) : 0;
  const canaryBatches = Math.ceil(canaries / batchSize);
  deviceIds.forEach((id, i) => {
    if (i < canaries) plan.set(id, { canary: true, batch: Math.floor(i / batchSize) });
    else plan.set(id, { canary: false, batch: canaryBatches + Math.floor((i - canaries) / batchSize) });
  });
  return plan;
}

/** True when `now` (UTC) is inside the daily window `start`–`end` (HH:MM; a window may wrap midnight); no window: always. */
export function inWindow(window: { start: string; end: string } | null, now: Date): boolean {
  if (!window) return true;
  const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  const t = now.getUTCHours() * 60 + now.getUTCMinutes();
  const s = minutes(window.start);
  const e = minutes(window.end);
  if (s === e) return true;
  return s < e ? t >= s && t < e : t >= s || t < e;
}
