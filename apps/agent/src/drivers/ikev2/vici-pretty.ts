/**
 * Parser for `swanctl --pretty` output: VICI messages printed one key per line
 * (`key = value`, `name {`…`}`, `key = [`…`]`). Robust to spaces inside
 * values, unlike the one-line `--raw` form.
 */
export type ViciValue = string | string[] | ViciSection;
export interface ViciSection {
  [key: string]: ViciValue;
}

/** The top-level messages, in order (e.g. one `list-sa event` per IKE SA). */
export function parseViciPretty(text: string): { name: string; body: ViciSection }[] {
  const out: { name: string; body: ViciSection }[] = [];
  const stack: ViciSection[] = [];
  let list: string[] | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    if (list) {
      if (line === "]") list = null;
      else list.push(line);
      continue;
    }
    const top = stack.at(-1);
    if (line === "}") {
      stack.pop();
      continue;
    }
    if (line.endsWith("{")) {
      const name = line.slice(0, -1).trim();
      const section: ViciSection = {};
      if (top) top[name] = section;
      else out.push({ name, body: section });
      stack.push(section);
      continue;
    }
    const eq = line.indexOf(" = ");
    const key = eq >= 0 ? line.slice(0, eq) : line.replace(/ =$/, "");
    const value = eq >= 0 ? line.slice(eq + 3) : "";
    if (!top) continue;
    if (value === "[") {
      list = [];
      top[key] = list;
    } else top[key] = value;
  }
  return out;
}

export function str(v: ViciValue | undefined): string | null {
  return typeof v === "string" ? v : null;
}

export function num(v: ViciValue | undefined): number | null {
  const s = str(v);
  if (s === null || s === "") return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

export function section(v: ViciValue | undefined): ViciSection {
  return v && typeof v === "object" && !Array.isArray(v) ? v : {};
}

export function list(v: ViciValue | undefined): string[] {
  return Array.isArray(v) ? v : [];
}
