/** Small formats of the upgrades pages. */

/** Bytes in B, KiB or MiB, as a package's size reads. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** A maintenance window in words: "01:00–05:00 UTC", or "any time". */
export function windowText(window: { start: string; end: string } | null): string {
  return window ? `${window.start}–${window.end} UTC` : "any time";
}
