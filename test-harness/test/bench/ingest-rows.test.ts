import { describe, expect, it } from "vitest";
import {
  COLUMNS,
  copyText,
  createTableSql,
  insertParams,
  insertSql,
  sampleRows,
  unnestParams,
} from "../../src/bench/ingest/rows.ts";

describe("tunnel-sample rows", () => {
  it("are deterministic, 4 tunnels per device, each tunnel every 10 s", () => {
    const a = sampleRows(10, 4);
    expect(sampleRows(10, 4)).toEqual(a);
    expect(new Set(a.tunnelId.slice(0, 4)).size).toBe(4);
    expect(new Set(a.deviceId.slice(0, 4)).size).toBe(1);
    expect(a.tunnelId[4]).toBe(a.tunnelId[0]);
    expect(Date.parse(a.at[4]!) - Date.parse(a.at[0]!)).toBe(10_000);
    for (let i = 0; i < 10; i++) {
      expect(a.loss[i]).toBeGreaterThanOrEqual(0);
      expect(a.loss[i]).toBeLessThanOrEqual(100);
    }
  });

  it("build a multi-row INSERT with 8 placeholders per row, and refuse more than PostgreSQL's 65,535", () => {
    const sql = insertSql("t", 3);
    expect(sql).toMatch(/^INSERT INTO t \(tunnel_id,device_id,at,up,loss,rtt,jitter,samples\) VALUES \(\$1,.*\$24\)$/);
    expect(sql.match(/\$\d+/g)).toHaveLength(24);
    expect(insertParams(sampleRows(5), 1, 4)).toHaveLength(24);
    expect(() => insertSql("t", 9000)).toThrow(/65,535 parameters/);
  });

  it("give unnest one array per column and COPY one tab-separated line per row", () => {
    const rows = sampleRows(6);
    const arrays = unnestParams(rows, 2, 5) as unknown[][];
    expect(arrays).toHaveLength(COLUMNS.length);
    expect(arrays.every((a) => a.length === 3)).toBe(true);
    const lines = copyText(rows, 0, 6).trimEnd().split("\n");
    expect(lines).toHaveLength(6);
    expect(lines[0]!.split("\t")).toHaveLength(COLUMNS.length);
    expect(lines[0]!.split("\t")[3]).toMatch(/^[tf]$/);
    expect(createTableSql("x")).toContain("CREATE INDEX x_tunnel_at ON x (tunnel_id, at)");
  });
});
