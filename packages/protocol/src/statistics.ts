/** Statistics history (docs/server.md "Statistics history"): the answers of the time-series routes. */
import * as z from "zod";
import { Id, Timestamp } from "./common.ts";

/** The storage tier an answer was read from: raw samples, 1-minute or 1-hour roll-ups. */
export const StatisticsTier = z.enum(["raw", "1m", "1h"]);
export type StatisticsTier = z.infer<typeof StatisticsTier>;

/** One interface over one step: mean rates while the device reported, and totals. Null: the device did not send that counter. */
export const InterfacePoint = z.object({
  at: Timestamp,
  rxBps: z.number(),
  txBps: z.number(),
  rxPps: z.number().nullable(),
  txPps: z.number().nullable(),
  rxBytes: z.number(),
  txBytes: z.number(),
  rxErrors: z.number().nullable(),
  txErrors: z.number().nullable(),
  rxDrops: z.number().nullable(),
  txDrops: z.number().nullable(),
});
export type InterfacePoint = z.infer<typeof InterfacePoint>;

/** The device's health over one step: means and maxima of what it reported. */
export const HealthPoint = z.object({
  at: Timestamp,
  cpuPercent: z.number(),
  cpuMaxPercent: z.number(),
  memoryPercent: z.number(),
  diskPercent: z.number(),
  uptimeSeconds: z.number(),
  temperatureC: z.number().nullable(),
});
export type HealthPoint = z.infer<typeof HealthPoint>;

/** A BGP session's or VRRP group's state as it changed (from: null when nothing was known before). */
export const StateChange = z.object({
  at: Timestamp,
  kind: z.enum(["bgp", "vrrp"]),
  /** The BGP neighbour's address or the VRRP group's id. */
  key: z.string(),
  from: z.string().nullable(),
  to: z.string(),
});
export type StateChange = z.infer<typeof StateChange>;

/** `GET /devices/{id}/statistics`. */
export const DeviceStatistics = z.object({
  deviceId: Id,
  /** The range actually covered: `from` rounded down to the step. */
  from: Timestamp,
  to: Timestamp,
  stepSeconds: z.number().int().positive(),
  tier: StatisticsTier,
  interfaces: z.array(z.object({ interface: z.string(), points: z.array(InterfacePoint) })),
  health: z.array(HealthPoint),
  stateChanges: z.array(StateChange),
});
export type DeviceStatistics = z.infer<typeof DeviceStatistics>;

/** `GET /organizations/{id}/statistics/top-talkers`: devices or interfaces by bytes moved over the range. */
export const TopTalkers = z.object({
  from: Timestamp,
  to: Timestamp,
  tier: StatisticsTier,
  by: z.enum(["device", "interface"]),
  items: z.array(
    z.object({
      deviceId: Id,
      deviceName: z.string(),
      /** Null when ranked by device. */
      interface: z.string().nullable(),
      rxBytes: z.number(),
      txBytes: z.number(),
      totalBytes: z.number(),
    }),
  ),
});
export type TopTalkers = z.infer<typeof TopTalkers>;

/** `GET /organizations/{id}/statistics/worst-tunnels`: tunnels by mean loss, RTT or jitter over the range (both ends). */
export const WorstTunnels = z.object({
  from: Timestamp,
  to: Timestamp,
  tier: StatisticsTier,
  by: z.enum(["loss", "rtt", "jitter"]),
  items: z.array(
    z.object({
      tunnelId: Id,
      num: z.number().int(),
      loss: z.number(),
      rtt: z.number(),
      jitter: z.number(),
      /** Share of samples the tunnel was up, 0–100. */
      upPercent: z.number(),
      samples: z.number().int(),
    }),
  ),
});
export type WorstTunnels = z.infer<typeof WorstTunnels>;
