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

describe("canonicalJson", () => {
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
