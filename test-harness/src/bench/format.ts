/** Human formatting of figures: units scaled, thousands separated, ratios as ×. */

export function formatValue(value: number | null, unit: string): string {
  if (value === null || Number.isNaN(value)) return "–";
  switch (unit) {
    case "B":
      return bytes(value);
    case "ms":
      return `${value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : group(Math.round(value))} ms`;
    case "%":
      return `${value.toFixed(1)} %`;
    case "count":
      return group(Math.round(value));
    default:
      return `${value >= 100 ? group(Math.round(value)) : value.toFixed(2)} ${unit}`;
  }
}

function bytes(v: number): string {
  const abs = Math.abs(v);
  if (abs >= 2 ** 30) return `${(v / 2 ** 30).toFixed(2)} GiB`;
  if (abs >= 2 ** 20) return `${(v / 2 ** 20).toFixed(1)} MiB`;
  if (abs >= 10 * 2 ** 10) return `${(v / 2 ** 10).toFixed(1)} KiB`;
  return `${group(Math.round(v))} B`;
}

/** 12345678 → "12,345,678". */
export function group(n: number): string {
  return n.toLocaleString("en-US");
}

export function formatRatio(ratio: number | null): string {
  if (ratio === null || !Number.isFinite(ratio)) return "–";
  return `${ratio >= 10 ? ratio.toFixed(1) : ratio.toFixed(2)}×`;
}

/** `connections=1000 intervalMs=2000`. */
export function formatParams(params: Record<string, unknown>): string {
  return Object.entries(params)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
}
