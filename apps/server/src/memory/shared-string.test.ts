import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { sharedString } from "./shared-string.ts";

describe("sharedString", () => {
  it("returns the text it is given, whatever the text", () => {
    const texts = [
      "0b0f8a0e-7d1c-4e51-9f55-6d6f0b7e2a10",
      "tunnel:0b0f8a0e-7d1c-4e51-9f55-6d6f0b7e2a10",
      "pci:0000:00:03.0",
      "",
      "0",
      "42",
      "4294967295",
      "-1",
      "1.5",
      "__proto__",
      "constructor",
      "toString",
      "hasOwnProperty",
      "Ünïcödé ✓ 🚀",
      "10.0.0.1/24",
    ];
    for (const t of texts) {
      // A new string of the same text (not the literal itself).
      const copy = JSON.parse(JSON.stringify(t)) as string;
      expect(sharedString(copy)).toBe(t);
      expect(typeof sharedString(copy)).toBe("string");
    }
    expect(sharedString(null)).toBeNull();
  });

  it("keeps one copy of equal strings: 20,000 references to 1,000 ids hold about 1,000 strings", () => {
    // A full collection on demand (the flag exposes gc() to contexts made after it is set).
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const ids = Array.from({ length: 1000 }, (_, i) => `device-${String(i).padStart(29, "0")}`);
    const measure = (share: (s: string) => string) => {
      gc();
      const before = process.memoryUsage().heapUsed;
      const kept: string[] = [];
      for (let round = 0; round < 20; round++) for (const id of ids) kept.push(share(JSON.parse(`"${id}"`) as string));
      gc();
      const bytes = process.memoryUsage().heapUsed - before;
      expect(kept.length).toBe(20_000);
      return bytes;
    };
    const copies = measure((s) => s);
    const shared = measure(sharedString);
    expect(shared).toBeLessThan(copies / 2);
  });
});
