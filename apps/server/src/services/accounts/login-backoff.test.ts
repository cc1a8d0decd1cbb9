/** The login back-off in isolation, on a fake clock: slows guessers per address and per account, never locks the owner out. */
import { describe, expect, it } from "vitest";
import { ACCOUNT_INTERVAL_CAP_S, createLoginBackoff } from "./login-backoff.ts";

const options = { freeFailures: 3, windowSeconds: 300, baseSeconds: 1, maxSeconds: 60 };

describe("login back-off", () => {
  it("an address backs off on an account after its free failures, doubling up to the cap", () => {
    const b = createLoginBackoff(options);
    let now = 1_000_000;
    for (let i = 0; i < 2; i++) {
      expect(b.admit("A", "owner@x", now)).toBeNull();
      b.failed("A", "owner@x", now);
    }
    expect(b.admit("A", "owner@x", now)).toBeNull();
    b.failed("A", "owner@x", now);
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      const wait = b.admit("A", "owner@x", now);
      expect(wait).not.toBeNull();
      waits.push(wait!);
      now += wait! * 1000;
      expect(b.admit("A", "owner@x", now)).toBeNull();
      b.failed("A", "owner@x", now);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60]);
  });

  it("another address gets in at once while the attacker waits", () => {
    const b = createLoginBackoff(options);
    const now = 1_000_000;
    for (let i = 0; i < 10; i++) if (b.admit("A", "owner@x", now) === null) b.failed("A", "owner@x", now);
    expect(b.admit("A", "owner@x", now)).toBeGreaterThan(0);
    expect(b.admit("B", "owner@x", now)).toBeNull();
    b.succeeded("B", "owner@x", now);
    // Other accounts from A are unaffected.
    expect(b.admit("A", "someone-else@x", now)).toBeNull();
  });

  it("a guesser spread over many addresses is throttled per account; known addresses pass, newcomers wait seconds", () => {
    const b = createLoginBackoff(options);
    let now = 1_000_000;
    expect(b.admit("home", "owner@x", now)).toBeNull();
    b.succeeded("home", "owner@x", now);
    let admitted = 0;
    let refused = 0;
    for (let i = 0; i < 200; i++) {
      const wait = b.admit(`bot-${i}`, "owner@x", now);
      if (wait === null) {
        admitted++;
        b.failed(`bot-${i}`, "owner@x", now);
      } else {
        refused++;
        expect(wait).toBeLessThanOrEqual(ACCOUNT_INTERVAL_CAP_S);
      }
      now += 100;
    }
    // 20 s of a 200-address botnet: the free failures, then about one check per interval.
    expect(admitted).toBeLessThan(20);
    expect(refused).toBeGreaterThan(180);
    // The owner's known address is never throttled by the account-wide slot.
    expect(b.admit("home", "owner@x", now)).toBeNull();
    // A new address of the owner waits at most the cap, then gets its check.
    const wait = b.admit("owner-phone", "owner@x", now) ?? 0;
    expect(wait).toBeLessThanOrEqual(ACCOUNT_INTERVAL_CAP_S);
    expect(b.admit("owner-phone", "owner@x", now + wait * 1000)).toBeNull();
  });

  it("a success ends the address's back-off; the window forgets old failures", () => {
    const b = createLoginBackoff(options);
    let now = 1_000_000;
    for (let i = 0; i < 2; i++) b.failed("A", "u@x", now);
    b.succeeded("A", "u@x", now);
    b.failed("A", "u@x", now);
    expect(b.admit("A", "u@x", now)).toBeNull();
    for (let i = 0; i < 3; i++) b.failed("C", "v@x", now);
    now += 301_000;
    expect(b.admit("C", "v@x", now)).toBeNull();
    b.failed("C", "v@x", now);
    expect(b.admit("C", "v@x", now)).toBeNull();
  });
});
