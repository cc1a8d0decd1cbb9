/**
 * checkKeyOpensDatabase (restore and doctor): which server key opens a
 * database's encrypted values: a device's sealed config first, else a peer's
 * or tunnel's PSK; "nothing-encrypted" on a database without any.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { checkKeyOpensDatabase } from "../../src/services/backup/key-check.ts";
import { useTestServer } from "../support/test-server.ts";
import { createPeer, createTunnels, peerTunnelBody, tunnelBody, wanDevice } from "../support/tunnels.ts";

const t = useTestServer();

describe("checkKeyOpensDatabase", () => {
  it("tells the server's key from another one, on PSKs and then on sealed configs", async () => {
    const key = Buffer.from(t.deps.config.TERN_SECRET_KEY!, "base64");
    const other = randomBytes(32);
    expect(await checkKeyOpensDatabase(t.database.db, key)).toBe("nothing-encrypted");

    const peer = await createPeer(t, { psk: "a peer secret of sixteen+" });
    expect(await checkKeyOpensDatabase(t.database.db, key)).toBe("opens");
    expect(await checkKeyOpensDatabase(t.database.db, other)).toBe("does-not-open");

    const [a, b] = [await wanDevice(t), await wanDevice(t)];
    await createTunnels(t, [tunnelBody(a, b), peerTunnelBody(a, peer.id)]);
    const sealed = await t.database.db.selectFrom("devices").select("id").where("desired_config_enc", "is not", null).execute();
    expect(sealed.length).toBeGreaterThan(0);
    expect(await checkKeyOpensDatabase(t.database.db, key)).toBe("opens");
    expect(await checkKeyOpensDatabase(t.database.db, other)).toBe("does-not-open");
  });
});
