/**
 * A whole fake router behind the Runner interface, for tests of the agent
 * (every driver in DRIVER_ORDER, the reconcile loop, the CLI, the control
 * link): one strict FakeRunner (a command nobody models fails with 127) with
 * the kernel (ip, sysctl), nftables, tc, a process table with dhclient, and
 * the daemons the drivers run (charon with swanctl, zebra/bgpd with vtysh and
 * frr-reload, keepalived, kea-dhcp4), each modelled as far as the drivers
 * look at it.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { FakeKernel, type FakeLink, type FakeRoute } from "./fake-kernel.ts";
import { FakeNft } from "./fake-nft.ts";
import { argAfter, FakeProcesses } from "./fake-processes.ts";
import { FakeRunner } from "./fake-runner.ts";
import { FakeTc } from "./fake-tc.ts";

export class FakeSystem extends FakeRunner {
  readonly kernel: FakeKernel;
  readonly nft: FakeNft;
  readonly tc: FakeTc;
  readonly processes: FakeProcesses;
  /** swanctl connections charon has loaded. */
  loadedConns: string[] = [];

  constructor(links: (string | (Partial<FakeLink> & { name: string }))[] = []) {
    super({ strict: true });
    this.kernel = new FakeKernel(this, links);
    this.nft = new FakeNft(this);
    this.tc = new FakeTc(this);
    this.processes = new FakeProcesses(this).dhclient();
    this.daemons();
  }

  get links(): FakeLink[] {
    return this.kernel.links;
  }

  get routes(): FakeRoute[] {
    return this.kernel.routes;
  }

  /** Makes every dhclient vanish without clean-up (a crash). */
  killAllDhclients(): void {
    this.processes.crash("dhclient");
  }

  private daemons(): void {
    const { processes, kernel } = this;
    // Supervisor plumbing: readiness sockets, ownership of FRR's directory.
    this.on(["test", "-S"], {});
    this.on(["install", "-d"], {});
    this.on(["chown"], {});
    // strongSwan: charon-systemd brings kernel-libipsec's ipsec0; swanctl loads the conns directory.
    processes.daemon(/^start-stop-daemon --start .*charon-systemd/, "charon-systemd", (a) => argAfter(a, "--pidfile"), {
      start: () => kernel.addLink("ipsec0", { up: true, linkType: "none" }),
      exit: () => {
        kernel.removeLink("ipsec0");
        this.loadedConns = [];
      },
    });
    this.on(/^swanctl --load-all/, async (a) => {
      const conns = join(argAfter(a, "--file"), "..", "conns");
      this.loadedConns = (await readdir(conns).catch(() => [] as string[]))
        .filter((n) => n.startsWith("tern-"))
        .map((n) => n.slice(0, -5));
      return {};
    });
    this.on(/^swanctl --list-conns/, () => ({
      stdout: this.loadedConns.map((n) => `list-conn event {\n  ${n} {\n    version = IKEv2\n  }\n}\n`).join(""),
    }));
    this.on(/^swanctl --(list-sas|terminate)/, {});
    // FRR: forking daemons with pid files; vtysh and frr-reload answer without state.
    processes.daemon(/^\/usr\/lib\/frr\/zebra /, "zebra", (a) => argAfter(a, "-i"));
    processes.daemon(/^\/usr\/lib\/frr\/bgpd /, "bgpd", (a) => argAfter(a, "-i"));
    this.on(["vtysh"], { stdout: "{}" });
    this.on(/frr-reload\.py /, {});
    // keepalived and kea write their own pid files, named by argv or by KEA_PIDFILE_DIR.
    processes.daemon(/^start-stop-daemon --start .*keepalived/, "keepalived", (a) => argAfter(a, "--pidfile"));
    processes.daemon(/^start-stop-daemon --start .*kea-dhcp4/, "kea-dhcp4", (a) => argAfter(a, "--pidfile"));
    this.on(/^\/usr\/sbin\/kea-dhcp4 -t /, {});
  }
}

export type { FakeLink, FakeRoute };
