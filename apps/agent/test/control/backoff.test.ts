import { describe, expect, it } from "vitest";
import { Backoff } from "../../src/control/backoff.ts";
import { parsePing } from "../../src/control/diagnostics.ts";
import { deviceWebsocketUrl, registerUrl } from "../../src/control/urls.ts";

describe("reconnect back-off", () => {
  it("doubles the ceiling up to the maximum, half fixed and half random", () => {
    const low = new Backoff({ initialMs: 1000, maxMs: 8000, factor: 2, random: () => 0 });
    expect([low.next(), low.next(), low.next(), low.next(), low.next()]).toEqual([500, 1000, 2000, 4000, 4000]);
    const high = new Backoff({ initialMs: 1000, maxMs: 8000, factor: 2, random: () => 0.999999 });
    expect([high.next(), high.next(), high.next(), high.next(), high.next()]).toEqual([1000, 2000, 4000, 8000, 8000]);
  });
  it("spreads a fleet: different random draws give different delays", () => {
    const delays = new Set(
      Array.from({ length: 20 }, (_, i) =>
        new Backoff({ initialMs: 1000, maxMs: 60000, factor: 2, random: () => i / 20 }).next(),
      ),
    );
    expect(delays.size).toBe(20);
  });
  it("starts over after reset and waits the longest for unfixable errors", () => {
    const b = new Backoff({ initialMs: 100, maxMs: 6000, factor: 3, random: () => 0.5 });
    b.next();
    b.next();
    b.reset();
    expect(b.next()).toBe(75);
    expect(b.longest()).toBe(4500);
  });
});

describe("server URLs", () => {
  it("puts register and the device websocket under the server URL, keeping a base path", () => {
    expect(registerUrl("http://10.0.0.1:3000")).toBe("http://10.0.0.1:3000/api/connect/register");
    expect(deviceWebsocketUrl("http://10.0.0.1:3000/")).toBe("ws://10.0.0.1:3000/api/connect/ws");
    expect(deviceWebsocketUrl("https://tern.example.net/base/")).toBe("wss://tern.example.net/base/api/connect/ws");
    expect(() => registerUrl("ftp://x")).toThrow(expect.objectContaining({ code: "USAGE" }));
    expect(() => registerUrl("not a url")).toThrow(expect.objectContaining({ code: "USAGE" }));
  });
});

describe("ping output", () => {
  it("reads loss and average RTT, fractional loss and duplicates included", () => {
    expect(
      parsePing(
        "5 packets transmitted, 4 received, +1 duplicates, 20% packet loss, time 4005ms\nrtt min/avg/max/mdev = 1.1/2.25/3.3/0.4 ms\n",
      ),
    ).toEqual({
      transmitted: 5,
      received: 4,
      lossPercent: 20,
      rttAvgMs: 2.25,
    });
    expect(parsePing("3 packets transmitted, 0 received, 100% packet loss, time 2047ms\n")).toEqual({
      transmitted: 3,
      received: 0,
      lossPercent: 100,
      rttAvgMs: null,
    });
    expect(parsePing("7 packets transmitted, 6 received, 14.2857% packet loss")).toMatchObject({ lossPercent: 14.2857 });
  });
});
