import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Health } from "@tern/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { memoryPercentOf, readCpuTicks, readTemperatureC, SystemHealth } from "../../src/status/health.ts";

const dirs: string[] = [];
const tempDir = async () => {
  const d = await mkdtemp(join(tmpdir(), "tern-health-"));
  dirs.push(d);
  return d;
};
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

describe("health from the kernel", () => {
  it("counts busy and total CPU ticks from /proc/stat's first line (iowait idle, steal busy)", async () => {
    const d = await tempDir();
    await writeFile(join(d, "stat"), "cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 50 2 25 400 10 1 1 5 3 0\n");
    expect(await readCpuTicks(join(d, "stat"))).toEqual({ busy: 170, total: 990 });
  });

  it("memory in use is MemTotal − MemAvailable, with free + buffers + cache on kernels without MemAvailable", () => {
    expect(memoryPercentOf("MemTotal:  1000 kB\nMemFree:  100 kB\nMemAvailable:  250 kB\n")).toBe(75);
    expect(memoryPercentOf("MemTotal:  1000 kB\nMemFree:  100 kB\nBuffers:  50 kB\nCached:  250 kB\n")).toBe(60);
    expect(memoryPercentOf("")).toBe(0);
  });

  it("takes the CPU's thermal zone, else the first with a reading, else null", async () => {
    const d = await tempDir();
    expect(await readTemperatureC(d)).toBeNull();
    const zone = async (n: number, type: string, milli: string) => {
      await mkdir(join(d, `thermal_zone${n}`));
      await writeFile(join(d, `thermal_zone${n}`, "type"), `${type}\n`);
      await writeFile(join(d, `thermal_zone${n}`, "temp"), `${milli}\n`);
    };
    await zone(0, "acpitz", "0");
    await zone(1, "iwlwifi_1", "41000");
    expect(await readTemperatureC(d)).toBe(41);
    await zone(2, "x86_pkg_temp", "52500");
    expect(await readTemperatureC(d)).toBe(52.5);
  });

  it("reports this machine's figures in the protocol's ranges, the CPU over the time between two readings", async () => {
    const source = new SystemHealth();
    const first = await source.read();
    const until = Date.now() + 300;
    while (Date.now() < until); // keep one core busy between the readings
    const second = await source.read();
    for (const h of [first, second]) expect(Health.parse(h)).toEqual(h);
    expect(second?.cpuPercent).toBeGreaterThan(0);
    expect(second?.diskPercent).toBeGreaterThan(0);
  });

  it("falls back to / when the configured mount is not there", async () => {
    const h = await new SystemHealth("/no/such/mount").read();
    expect(h?.diskPercent).toBe((await new SystemHealth("/").read())?.diskPercent);
  });
});
