import { describe, expect, it } from "vitest";
import { isAccentColor, logoProblem } from "./logo.ts";

describe("logoProblem", () => {
  it("accepts PNG and SVG up to 256 KiB", () => {
    expect(logoProblem({ name: "a.png", type: "image/png", size: 1000 })).toBeNull();
    expect(logoProblem({ name: "a.svg", type: "image/svg+xml", size: 256 * 1024 })).toBeNull();
  });
  it("refuses other types, empty and larger files", () => {
    expect(logoProblem({ name: "a.jpg", type: "image/jpeg", size: 10 })).toMatch(/not a PNG or SVG/);
    expect(logoProblem({ name: "a.png", type: "image/png", size: 256 * 1024 + 1 })).toMatch(/at most 256 KiB/);
    expect(logoProblem({ name: "a.png", type: "image/png", size: 0 })).toMatch(/empty/);
  });
});

describe("isAccentColor", () => {
  it("takes #rrggbb only", () => {
    expect(isAccentColor("#0B7285")).toBe(true);
    expect(isAccentColor("#fff")).toBe(false);
    expect(isAccentColor("red")).toBe(false);
  });
});
