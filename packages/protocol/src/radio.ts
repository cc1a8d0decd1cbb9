/**
 * Radio interfaces: the cellular (LTE) modem settings of an `lte` interface
 * and the WiFi access point settings of a `wifi` interface, as an admin
 * writes them and as the compiled config carries them to the agent.
 *
 * Secrets (SIM PIN, APN password, WPA passphrase) are write-only in the API:
 * the server stores them encrypted and never returns them; an update that
 * leaves one out keeps the stored value, an empty string clears it.
 */
import * as z from "zod";

/** An APN as operators publish them: DNS-like labels (RFC 1035 letters, digits, hyphens, dots), at most 63 characters. */
export const LteApn = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,61}[A-Za-z0-9])?$/, "an APN is letters, digits, '.' and '-' (1–63 characters)");

/** A SIM PIN: 4 to 8 digits (ETSI TS 102 221). */
export const SimPin = z.string().regex(/^[0-9]{4,8}$/, "a SIM PIN is 4 to 8 digits");

/**
 * APN user name or password: printable ASCII without quotes, commas or
 * backslashes, which mmcli's `--simple-connect` key=value list cannot carry.
 */
export const LteCredential = z
  .string()
  .max(64)
  .regex(/^[\x20-\x7e]*$/, "printable ASCII only")
  .refine((s) => !/[,'"\\=]/.test(s), { message: "must not contain , ' \" \\ or =" });

export const LteAuth = z.enum(["none", "pap", "chap"]);
export const LteIpType = z.enum(["ipv4", "ipv4v6"]);

/** Modem settings of an `lte` interface (`DeviceInterface.lte`). */
export const LteSettings = z
  .strictObject({
    apn: LteApn,
    ipType: LteIpType.default("ipv4"),
    auth: LteAuth.default("none"),
    username: LteCredential.default(""),
    /** Write-only: never returned. Omitted on update: the stored one stays; "" clears it. */
    password: LteCredential.optional(),
    /** SIM PIN, write-only like `password`. Needed when the SIM is PIN-locked. */
    pin: SimPin.or(z.literal("")).optional(),
    /** Connect while roaming. */
    allowRoaming: z.boolean().default(false),
  })
  .superRefine((s, ctx) => {
    if (s.auth !== "none" && s.username === "")
      ctx.addIssue({ code: "custom", path: ["username"], message: `username is required with auth ${s.auth}` });
  });
export type LteSettings = z.infer<typeof LteSettings>;

export const WifiBand = z.enum(["2.4GHz", "5GHz"]);
export type WifiBand = z.infer<typeof WifiBand>;

/** 20 MHz channels an access point may use in each band (2.4 GHz: 1–13; 5 GHz: UNII-1 to UNII-3). */
export const WIFI_CHANNELS: Record<WifiBand, readonly number[]> = {
  "2.4GHz": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
  "5GHz": [36, 40, 44, 48, 52, 56, 60, 64, 100, 104, 108, 112, 116, 120, 124, 128, 132, 136, 140, 144, 149, 153, 157, 161, 165],
};

/** A WPA passphrase: 8 to 63 printable ASCII characters (IEEE 802.11i). */
export const WpaPassphrase = z.string().regex(/^[\x20-\x7e]{8,63}$/, "a WPA passphrase is 8 to 63 printable ASCII characters");

export const WifiSecurity = z.enum(["wpa2", "wpa3", "wpa2-wpa3"]);

/** Access point settings of a `wifi` interface (`DeviceInterface.wifi`), run by hostapd. */
export const WifiSettings = z
  .strictObject({
    ssid: z
      .string()
      .min(1)
      .refine((s) => ![...s].some((c) => (c.codePointAt(0) ?? 0) < 0x20 || c === "\u007f"), { message: "no control characters" })
      .refine((s) => new TextEncoder().encode(s).length <= 32, { message: "an SSID is at most 32 bytes" }),
    band: WifiBand,
    channel: z.number().int(),
    /** ISO 3166-1 alpha-2 country code: sets the regulatory domain (allowed channels and power). */
    country: z.string().regex(/^[A-Z]{2}$/, "a two-letter ISO 3166 country code in capitals"),
    security: WifiSecurity.default("wpa2"),
    /** Write-only: never returned. Omitted on update: the stored one stays. */
    passphrase: WpaPassphrase.optional(),
    hidden: z.boolean().default(false),
  })
  .superRefine((w, ctx) => {
    if (!WIFI_CHANNELS[w.band].includes(w.channel))
      ctx.addIssue({
        code: "custom",
        path: ["channel"],
        message: `channel ${w.channel} is not a ${w.band} channel (${WIFI_CHANNELS[w.band].join(", ")})`,
      });
  });
export type WifiSettings = z.infer<typeof WifiSettings>;

/** What the agent needs to bring a modem up: the settings with the secrets in clear. */
export const ConfigLte = z.object({
  apn: LteApn,
  ipType: LteIpType,
  auth: LteAuth,
  username: z.string(),
  password: z.string(),
  pin: z.string(),
  allowRoaming: z.boolean(),
});
export type ConfigLte = z.infer<typeof ConfigLte>;

/** What the agent renders into hostapd.conf. */
export const ConfigWifi = z.object({
  ssid: z.string(),
  band: WifiBand,
  channel: z.number().int(),
  country: z.string(),
  security: WifiSecurity,
  passphrase: z.string(),
  hidden: z.boolean(),
});
export type ConfigWifi = z.infer<typeof ConfigWifi>;
