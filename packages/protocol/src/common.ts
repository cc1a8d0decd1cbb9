/** Primitive schemas reused by every resource. */
import * as z from "zod";
import { parseCidr, parseIPv4 } from "./ip.ts";

/** Server-generated identifiers are UUIDs. */
export const Id = z.uuid();
export type Id = z.infer<typeof Id>;

export const Timestamp = z.iso.datetime({ offset: true });

export const IPv4 = z.string().refine((s) => parseIPv4(s) !== null, { message: "must be an IPv4 address" });

/** "a.b.c.d/n"; host bits may be set (an interface address with its prefix). */
export const CidrAddress = z
  .string()
  .refine((s) => parseCidr(s) !== null, { message: "must be an IPv4 address with prefix length (a.b.c.d/n)" });

/** A network in CIDR form with no host bits set ("10.0.0.0/24"). */
export const Network = z.string().refine(
  (s) => {
    const c = parseCidr(s);
    return c !== null && c.address === c.network;
  },
  { message: "must be an IPv4 network (a.b.c.d/n) with no host bits set" },
);

export const Mac = z
  .string()
  .regex(/^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$/, "must be a MAC address like 02:00:00:00:00:01")
  .transform((s) => s.toLowerCase());

/** A Linux interface name (IFNAMSIZ 16 incl. NUL). */
export const IfName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{2,15}$/, "must be a Linux interface name of 2 to 15 characters [A-Za-z0-9_.-]");

export const Hostname = z
  .string()
  .regex(/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, "must be a host name");

export const Name = z.string().trim().min(1).max(100);
export const Description = z.string().max(1000).default("");

/** A port "80" or range "8000-8080". */
export const PortRange = z
  .string()
  .regex(/^\d{1,5}(-\d{1,5})?$/, "must be a port or a range like 8000-8080")
  .refine(
    (s) => {
      const [a, b] = s.split("-").map(Number) as [number, number | undefined];
      return a >= 1 && a <= 65535 && (b === undefined || (b >= a && b <= 65535));
    },
    { message: "ports must be 1-65535 and ranges ascending" },
  );

export const Asn = z.number().int().min(1).max(4294967295);

/** The {id, name} shape used where one resource refers to another. */
export const Ref = z.object({ id: Id, name: z.string() });
export type Ref = z.infer<typeof Ref>;
