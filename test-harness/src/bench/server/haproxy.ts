/**
 * HAProxy from Debian in front of several Tern server instances, for the
 * scale-out case. The configuration is the deployable example of
 * docs/scale.md: devices' websockets balanced by `leastconn` (long-lived
 * links: a new link goes to the instance holding the fewest, so a restarted
 * or added instance fills up first), API requests by `roundrobin` per request
 * (short, similar requests), TCP health checks (not `/api/health`: its
 * database check fails on every instance at once when the shared PostgreSQL
 * is slow), and a server marked down on its first refused connection so a
 * killed instance's devices reconnect to the others at once.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { SkipCase } from "../types.ts";

export const HAPROXY_CANDIDATES = ["/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"];

/** Debian's haproxy binary, or null when the package is not installed. */
export function haproxyBinary(): string | null {
  return HAPROXY_CANDIDATES.find((p) => existsSync(p)) ?? null;
}

export interface Upstream {
  /** Server name in HAProxy (also the `X-Tern-Served-By` answer header). */
  name: string;
  host: string;
  port: number;
}

export interface HaproxyConfigOptions {
  bindHost: string;
  bindPort: number;
  servers: Upstream[];
  /** Connections the proxy holds at most (every device link counts once on each side). */
  maxconn: number;
}

/** The HAProxy configuration: one frontend, a backend for device links and one for the API. */
export function haproxyConfig(o: HaproxyConfigOptions): string {
  const servers = (extra: string) =>
    o.servers
      .map(
        (s) =>
          `  server ${s.name} ${s.host}:${s.port} check inter 2s fall 3 rise 2 observe layer4 error-limit 1 on-error mark-down${extra}`,
      )
      .join("\n");
  return `# Tern behind HAProxy: N stateless server instances on one PostgreSQL (docs/scale.md).
global
  # Run as root, HAProxy raises its own file-descriptor limit to fit maxconn (two per proxied link).
  maxconn ${o.maxconn}

defaults
  mode http
  option forwardfor            # the instances run with TERN_TRUST_PROXY=true
  option redispatch 1          # a retry after a failed connect goes to another instance
  retries 3
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout http-request 10s
  timeout http-keep-alive 30s
  timeout check 5s
  # A device link after the websocket upgrade: a status every 10 s keeps it far inside this.
  timeout tunnel 1h
  timeout client-fin 5s

frontend tern
  bind ${o.bindHost}:${o.bindPort}
  maxconn ${o.maxconn}
  acl device_link path /api/connect/ws
  use_backend tern_devices if device_link
  default_backend tern_api

# Health checks are TCP connects: is the process there. Not /api/health, whose "select 1" fails on
# every instance at once when the one shared PostgreSQL is slow, and would take them all out.
# A killed instance is out at its first refused connection (observe layer4).

# Device websockets: long-lived, so balance by the links each instance holds.
backend tern_devices
  balance leastconn
${servers("")}

# API requests: short and alike, spread one by one.
backend tern_api
  balance roundrobin
  http-response set-header X-Tern-Served-By %[srv_name]
${servers("")}
`;
}

/** The hard limit of open files this process (and HAProxy, started by it) may reach. */
export function hardFdLimit(): number {
  try {
    const m = /^Max open files\s+\S+\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    return !m || m[1] === "unlimited" ? 1_048_576 : Number(m[1]);
  } catch {
    return 1024;
  }
}

/**
 * Links one HAProxy process can hold within the hard file-descriptor limit
 * (two descriptors per proxied link, a few hundred for listeners, checks and
 * logs). Raising the limit needs CAP_SYS_RESOURCE, which a container may not
 * have: then a fleet larger than this is spread over several proxies, as a
 * production site spreads it over several load-balancer nodes.
 */
export function linksPerProxy(fdLimit = hardFdLimit()): number {
  return Math.floor((fdLimit - 400) / 2);
}

/** A free TCP port on 127.0.0.1 (bound and released; HAProxy binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface RunningHaproxy {
  url: string;
  wsUrl: string;
  pid: number;
  config: string;
  stop(): Promise<void>;
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

/** Starts HAProxy in the foreground (`-db`) with the configuration above; SkipCase when it is not installed. */
export async function startHaproxy(servers: Upstream[], dir: string, maxconn: number): Promise<RunningHaproxy> {
  const bin = haproxyBinary();
  if (!bin) throw new SkipCase("haproxy is not installed (Debian: apt-get install haproxy)");
  const port = await freePort();
  const config = haproxyConfig({ bindHost: "127.0.0.1", bindPort: port, servers, maxconn });
  const file = join(dir, `haproxy-${port}.cfg`);
  await writeFile(file, config);
  const check = spawn(bin, ["-c", "-q", "-f", file], { stdio: ["ignore", "ignore", "pipe"] });
  let checkErr = "";
  check.stderr.on("data", (d: Buffer) => {
    checkErr += d.toString();
  });
  const checkCode = await new Promise<number | null>((r) => check.once("exit", (c) => r(c)));
  if (checkCode !== 0) throw new Error(`haproxy -c refused the configuration: ${checkErr.trim()}`);
  const child: ChildProcess = spawn(bin, ["-db", "-f", file], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const t0 = performance.now();
  while (!(await portOpen(port))) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${stderr.trim()}`);
    if (performance.now() - t0 > 10_000) throw new Error(`haproxy did not listen on ${port} within 10 s: ${stderr.trim()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}/api/connect/ws`,
    pid: child.pid ?? 0,
    config,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await gone;
      clearTimeout(timer);
    },
  };
}
