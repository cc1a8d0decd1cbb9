/** The checks the console makes before an upload (the server makes them again, and sanitizes SVG). */
export const LOGO_TYPES = ["image/png", "image/svg+xml"] as const;
export const MAX_LOGO_BYTES = 256 * 1024;
const HEX = /^#[0-9a-f]{6}$/i;

/** Why this file cannot be the logo, or null when it can. */
export function logoProblem(file: Pick<File, "type" | "size" | "name">): string | null {
  if (!(LOGO_TYPES as readonly string[]).includes(file.type)) return `${file.name} is not a PNG or SVG image`;
  if (file.size > MAX_LOGO_BYTES) return `${file.name} is ${Math.ceil(file.size / 1024)} KiB; the logo may be at most 256 KiB`;
  if (file.size === 0) return `${file.name} is empty`;
  return null;
}

export function isAccentColor(value: string): boolean {
  return HEX.test(value);
}
