import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson, configHash, DeviceConfig } from "../src/index.ts";

const full = DeviceConfig.parse(
  JSON.parse(readFileSync(join(import.meta.dirname, "..", "fixtures", "v1", "DeviceConfig", "valid-full.json"), "utf8")),
);

/** Rebuilds every object with its keys in reverse order. */
function reverseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reverseKeys);
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reverseKeys(v)]),
    );
  return value;
}

/** Every leaf path of a JSON value. */
function leaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...path, i]));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  return [path];
}

function mutate(config: unknown, path: (string | number)[]): unknown {
  const copy = structuredClone(config) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  const v = node[last];
  node[last] = typeof v === "number" ? v + 1 : typeof v === "boolean" ? !v : v === null ? "x" : `${String(v)}x`;
  return copy;
}

/** The definition canonicalJson is built to: entries without undefined, sorted by key (`<`), joined. */
function definition(value: unknown): string {
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError("non-finite");
    return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : definition(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${definition(v)}`).join(",")}}`;
}

/** A random JSON-like value (seeded): keys with quotes, non-ASCII and astral characters, undefined members. */
function randomValue(next: () => number, depth: number): unknown {
  const keys = ["a", "B", "b", "é", "\u{1F600}", 'z"q', "", "10", "2", "aa", "A", "_"];
  const r = next();
  if (depth <= 0 || r < 0.35) {
    const leaf = [null, true, false, 0, -1.5, 1e21, 2 ** 40, "x", "tab\there", "ü\u2028", undefined];
    return leaf[Math.floor(next() * leaf.length)];
  }
  if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth - 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 6); i > 0; i--) o[keys[Math.floor(next() * keys.length)]!] = randomValue(next, depth - 1);
  return o;
}

describe("canonicalJson", () => {
  it("writes the same text as its definition for 2,000 random values and the full fixture", () => {
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let i = 0; i < 2000; i++) {
      const v = randomValue(next, 4);
      expect(canonicalJson(v)).toBe(definition(v));
    }
    expect(canonicalJson(full)).toBe(definition(full));
  });
  it("keeps the hash every stored config was written with", () => {
    // valid-full.json's hash before the one-pass rewrite: a change here would send every device a new job.
    expect(configHash(full)).toBe("32b8947f5413032a1ac2c6778cf990a243bb892ef79a304458d4cf219c405a49");
  });
  it("sorts keys recursively and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1], c: null } })).toBe('{"a":{"c":null,"d":[3,1]},"b":1}');
  });
  it("drops undefined members", () => {
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}');
  });
  it("refuses non-finite numbers", () => {
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/non-finite/);
  });
});

describe("configHash", () => {
  it("is a sha256 hex digest", () => {
    expect(configHash(full)).toMatch(/^[0-9a-f]{64}$/);
  });
  it("is stable under key reordering", () => {
    expect(configHash(reverseKeys(full) as DeviceConfig)).toBe(configHash(full));
  });
  it("changes when any single value changes", () => {
    const base = configHash(full);
    const paths = leaves(full);
    expect(paths.length).toBeGreaterThan(100);
    for (const path of paths) {
      expect(configHash(mutate(full, path) as DeviceConfig), path.join(".")).not.toBe(base);
    }
  });
  it("changes when array order changes", () => {
    const swapped = { ...full, tunnels: [...full.tunnels].reverse() };
    expect(configHash(swapped)).not.toBe(configHash(full));
  });
});
