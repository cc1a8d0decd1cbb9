/**
 * The kernel settings Tern's server package installs (packaging/tern-server/sysctl.conf: the accept queue a
 * fleet reconnecting at once needs), applied for a bench run so the server cases measure the host as the
 * package sets it up, and put back as they were afterwards. Only raised, never lowered; where the run is not
 * root (or /proc/sys is read-only) the host keeps its own, and the results say which values the run had.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface HostSetting {
  key: string;
  /** What the run had. */
  value: string;
  /** What the host had before the run, when the run raised it. */
  raisedFrom?: string;
}

/** `key = value` lines of a sysctl.d file. */
export function parseSysctlConf(text: string): { key: string; value: string }[] {
  return text
    .split("\n")
    .map((line) => line.replace(/[#;].*$/, "").trim())
    .filter((line) => line.includes("="))
    .map((line) => {
      const [key, ...rest] = line.split("=");
      return { key: key!.trim(), value: rest.join("=").trim() };
    });
}

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return null;
  }
}

/**
 * Raises each numeric setting of the package's file that the host has lower; returns what the run has and a
 * function that puts the raised ones back.
 */
export function applyPackageSettings(repoDir: string, procSys = "/proc/sys"): { settings: HostSetting[]; restore: () => void } {
  const wanted = parseSysctlConf(readFileSync(join(repoDir, "packaging/tern-server/sysctl.conf"), "utf8"));
  const procPath = (key: string) => join(procSys, ...key.split("."));
  const settings: HostSetting[] = [];
  const raised: { key: string; before: string }[] = [];
  for (const { key, value } of wanted) {
    const before = read(procPath(key));
    if (before === null) continue;
    if (Number(before) < Number(value)) {
      try {
        writeFileSync(procPath(key), value);
        raised.push({ key, before });
        settings.push({ key, value, raisedFrom: before });
        continue;
      } catch {
        // Not root, or a read-only /proc/sys: the host keeps its own.
      }
    }
    settings.push({ key, value: before });
  }
  return {
    settings,
    restore() {
      for (const { key, before } of raised) {
        try {
          writeFileSync(procPath(key), before);
        } catch {
          // Nothing more to do: the raised value stays until the next boot.
        }
      }
    },
  };
}
