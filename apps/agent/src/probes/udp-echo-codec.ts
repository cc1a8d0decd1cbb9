/**
 * The Tern probe packet (UDP, port PROBE_PORT), 24 bytes, big-endian:
 *
 *   0  magic "TRNP"   4  version (1)   5  type (1 request, 2 reply)
 *   6  reserved (0)   8  session id (u32, random per sender)
 *  12  sequence (u32) 16  sender timestamp (u64 ns, echoed back unchanged)
 *
 * The responder echoes the packet with type 2. The sender trusts only its own
 * record of when it sent `seq`; the echoed timestamp is for debugging.
 */
export const PROBE_MAGIC = 0x54524e50; // "TRNP"
export const PROBE_VERSION = 1;
export const PROBE_PACKET_BYTES = 24;

export interface ProbePacket {
  type: "request" | "reply";
  session: number;
  seq: number;
  timestampNs: bigint;
}

export function encodeProbe(p: ProbePacket): Buffer {
  const b = Buffer.alloc(PROBE_PACKET_BYTES);
  b.writeUInt32BE(PROBE_MAGIC, 0);
  b.writeUInt8(PROBE_VERSION, 4);
  b.writeUInt8(p.type === "request" ? 1 : 2, 5);
  b.writeUInt32BE(p.session >>> 0, 8);
  b.writeUInt32BE(p.seq >>> 0, 12);
  b.writeBigUInt64BE(p.timestampNs, 16);
  return b;
}

/** Parses a probe packet; null for anything else (wrong size, magic, version or type). */
export function decodeProbe(b: Buffer): ProbePacket | null {
  if (b.length !== PROBE_PACKET_BYTES || b.readUInt32BE(0) !== PROBE_MAGIC || b.readUInt8(4) !== PROBE_VERSION) return null;
  const t = b.readUInt8(5);
  if (t !== 1 && t !== 2) return null;
  return {
    type: t === 1 ? "request" : "reply",
    session: b.readUInt32BE(8),
    seq: b.readUInt32BE(12),
    timestampNs: b.readBigUInt64BE(16),
  };
}
