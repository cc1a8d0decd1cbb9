import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";

describe("loadConfig", () => {
  it("has sensible defaults", () => {
    expect(loadConfig({})).toMatchObject({ PORT: 3000, HOST: "127.0.0.1", TERN_DATA_DIR: "./.tern-data" });
  });
  it("names the bad variable", () => {
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL: must be a postgres/);
  });
});
