/** Golden keepalived config from the protocol's full sample; timing, weights, validation, transitions. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, constants, openSync, writeSync } from "node:fs";
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ConfigVrrp } from "@tern/protocol";
import { describe, expect, it } from "vitest";
import { VrrpDriver } from "../../src/drivers/vrrp/driver.ts";
import {
  advertInt,
  optionalWeight,
  renderKeepalivedConf,
  renderNotifyScript,
  validateVrrp,
} from "../../src/drivers/vrrp/render.ts";
import { groupStates, parseTransitions, type Transition, TransitionWatcher } from "../../src/drivers/vrrp/transitions.ts";
import { fullConfig } from "../support/configs.ts";
import { tempDirs } from "../support/context.ts";

const sample = fullConfig().vrrp;
const NOTIFY = { fifo: "/run/tern/vrrp/notify.fifo", script: "/run/tern/vrrp/notify.sh" };

describe("vrrp render (golden)", () => {
  it("the sample group", async () => {
    await expect(renderKeepalivedConf(sample, NOTIFY)).toMatchFileSnapshot("./golden/keepalived.conf");
    await expect(renderNotifyScript("/run/tern/vrrp/transitions.log")).toMatchFileSnapshot("./golden/notify.sh");
  });

  it("no preemption, accept mode, optional tracking, slow adverts", async () => {
    const g: ConfigVrrp = {
      ...sample[0]!,
      groupId: "g2",
      virtualRouterId: 52,
      preemption: false,
      acceptMode: true,
      advertIntervalMs: 1500,
      trackOptional: ["wan1"],
      priority: 100,
    };
    const conf = renderKeepalivedConf([g], NOTIFY);
    await expect(conf).toMatchFileSnapshot("./golden/keepalived-nopreempt.conf");
    expect(conf).toMatch(/^ {2}state BACKUP\n/m);
    expect(conf).toMatch(/^ {2}nopreempt$/m);
    expect(conf).toMatch(/^ {2}accept$/m);
    expect(conf).toMatch(/^ {4}wan1 weight -99$/m);
    expect(conf).toMatch(/^ {2}advert_int 1\.5$/m);
  });

  it("advert interval in milliseconds becomes seconds with centisecond decimals", () => {
    expect([10, 100, 250, 1000, 1500, 3000, 4].map(advertInt)).toEqual(["0.01", "0.1", "0.25", "1", "1.5", "3", "0.01"]);
  });

  it("an optional interface's loss drops the priority to 1 but never means FAULT (weight 0)", () => {
    expect([150, 100, 2, 1, 255].map(optionalWeight)).toEqual([-149, -99, -1, -1, -253]);
  });

  it("plans keepalived under start-stop-daemon with per-instance pid files", () => {
    const plan = new VrrpDriver().plan(fullConfig(), { mode: "standalone", runDir: "/run/tern", stateDir: "/var/lib/tern" });
    expect(plan.files.map((f) => [f.path, f.mode.toString(8)])).toEqual([
      ["keepalived.conf", "644"],
      ["notify.sh", "755"],
    ]);
    expect(plan.commands[0]?.join(" ")).toBe(
      "start-stop-daemon --start --background --pidfile /run/tern/vrrp/keepalived.pid --output /run/tern/vrrp/keepalived.out --exec /usr/sbin/keepalived -- -P -n -l -D -G -f /run/tern/vrrp/keepalived.conf -p /run/tern/vrrp/keepalived.pid -r /run/tern/vrrp/vrrp.pid",
    );
  });

  it("refuses bad input with INVALID_CONFIG and a path", () => {
    const check = (groups: ConfigVrrp[], path: string) => {
      try {
        validateVrrp(groups);
        throw new Error("accepted");
      } catch (e) {
        expect(e).toMatchObject({ code: "INVALID_CONFIG", path });
      }
    };
    const g = sample[0]!;
    check([{ ...g, groupId: "has space" }], "vrrp.0.groupId");
    check([g, { ...g, groupId: "other" }], "vrrp.1.virtualRouterId");
    check([{ ...g, trackOptional: ["wan0"] }], "vrrp.0.trackOptional");
    check([{ ...g, trackMandatory: ["lan0"] }], "vrrp.0.interface");
    expect(() => validateVrrp([g, { ...g, groupId: "other", interface: "lan1" }])).not.toThrow();
  });
});

describe("vrrp transitions", () => {
  const text =
    "1795303829.814 tern-g1 BACKUP 150\n1795303830.158 tern-g1 MASTER 150\n1795303830.2 other X Y\nbroken\n1795303831.5 tern-g2 FAULT 100\n";

  it("parses what the notify script writes", () => {
    expect(parseTransitions(text).map((t) => [t.groupId, t.state, t.priority, t.at.getTime()])).toEqual([
      ["g1", "BACKUP", 150, 1795303829814],
      ["g1", "MASTER", 150, 1795303830158],
      ["g2", "FAULT", 100, 1795303831500],
    ]);
  });

  it("reports the latest state per configured group, unknown when keepalived is not running", () => {
    const groups = [sample[0]!, { ...sample[0]!, groupId: "g1" }, { ...sample[0]!, groupId: "g3" }];
    const t = parseTransitions(text);
    expect(groupStates(groups, t, true)).toEqual([
      { groupId: sample[0]!.groupId, state: "INIT", since: null },
      { groupId: "g1", state: "MASTER", since: "2026-11-21T23:30:30.158Z" },
      { groupId: "g3", state: "INIT", since: null },
    ]);
    expect(groupStates(groups, t, false).map((s) => s.state)).toEqual(["unknown", "unknown", "unknown"]);
  });

  it("the notify FIFO script writes every state change in the order keepalived sent it, and reads on after TERM", async () => {
    const dir = await tempDirs("vrrp-fifo");
    try {
      const fifo = join(dir.root, "notify.fifo");
      const script = join(dir.root, "notify.sh");
      const transitions = join(dir.root, "transitions.log");
      await writeFile(script, renderNotifyScript(transitions), { mode: 0o755 });
      await once(spawn("mkfifo", [fifo]), "exit");
      // keepalived runs the script with the FIFO as the last argument, then opens the FIFO read-write, non-blocking.
      const child = spawn("/bin/sh", [script, "ignored", fifo], { stdio: "ignore" });
      const exited = once(child, "exit");
      const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
      const states = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? "MASTER" : "BACKUP"));
      const sent = [
        'INSTANCE "tern-g1" BACKUP 150',
        ...states.map((st) => `INSTANCE "tern-g1" ${st} 150`),
        'INSTANCE "tern-g1" MASTER_RX_LOWER_PRI 150',
        'GROUP "sync" MASTER 0',
        'INSTANCE "tern-g2" FAULT 100',
      ];
      writeSync(fd, `${sent.join("\n")}\n`);
      // keepalived stopping: TERM first, then more lines, then the FIFO closes.
      await expect.poll(async () => (await readFile(transitions, "utf8").catch(() => "")).split("\n").length).toBeGreaterThan(50);
      child.kill("SIGTERM");
      writeSync(fd, 'INSTANCE "tern-g1" STOP 150\n');
      closeSync(fd);
      const [code] = await exited;
      expect(code).toBe(0);
      const got = parseTransitions(await readFile(transitions, "utf8"));
      expect(got.map((t) => `${t.groupId} ${t.state} ${t.priority}`)).toEqual([
        "g1 BACKUP 150",
        ...states.map((st) => `g1 ${st} 150`),
        "g2 FAULT 100",
        "g1 INIT 150",
      ]);
      const times = got.map((t) => t.at.getTime());
      expect(times).toEqual([...times].sort((a, b) => a - b));
    } finally {
      await dir.remove();
    }
  });

  it("the watcher hands over each new whole line at once, also for a file that appears later", async () => {
    const dir = await tempDirs("vrrp-watch");
    try {
      const path = join(dir.root, "transitions.log");
      const seen: Transition[] = [];
      const w = new TransitionWatcher(path, (t) => seen.push(t));
      await w.start();
      await writeFile(path, "1.0 tern-g1 BACKUP 100\n");
      await expect.poll(() => seen.map((t) => t.state)).toEqual(["BACKUP"]);
      await appendFile(path, "2.0 tern-g1 MAS");
      await appendFile(path, "TER 100\n");
      await expect.poll(() => seen.map((t) => t.state)).toEqual(["BACKUP", "MASTER"]);
      await writeFile(path, "");
      w.reset();
      await appendFile(path, "3.0 tern-g1 FAULT 100\n");
      await expect.poll(() => seen.map((t) => t.state)).toEqual(["BACKUP", "MASTER", "FAULT"]);
      w.stop();
    } finally {
      await dir.remove();
    }
  });
});
