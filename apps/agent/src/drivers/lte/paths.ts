/** Where the LTE driver keeps what it connected: `runDir/lte/<ifname>.connected` holds the settings' fingerprint. */
import { join } from "node:path";

export const lteDir = (runDir: string) => join(runDir, "lte");
export const connectedFile = (runDir: string, ifname: string) => join(lteDir(runDir), `${ifname}.connected`);
export const CONNECTED_SUFFIX = ".connected";
