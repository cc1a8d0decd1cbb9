/**
 * The tunnel mesh of the fleet overview, drawn in SVG from a d3-force layout
 * (layout.ts). Devices are coloured by state, tunnels coloured and dashed by
 * status. Pointing at (or focusing) a tunnel shows its loss/RTT/jitter; a
 * click (or Enter) opens its page, as a device's opens the device's. The
 * lists come from the overview's queries, which live events refresh; the
 * layout is recomputed only when devices or tunnels come or go, not when a
 * state changes. Loaded lazily: d3-force stays out of the initial bundle.
 */
import { Anchor, Group, Paper, Stack, Text } from "@mantine/core";
import { useElementSize } from "@mantine/hooks";
import { useQuery } from "@tanstack/react-query";
import type { DeviceSummary, TunnelSummary } from "@tern/client";
import { ok } from "@tern/client";
import { useEffect, useMemo, useRef, useState } from "react";
import { Link, useNavigate } from "react-router";
import { queryKey } from "../../../api/keys.ts";
import { tern } from "../../../api/tern.ts";
import { useOrg } from "../../../session/session-context.ts";
import { fixed } from "../../tunnels/figures.ts";
import { layoutMesh, type Positions } from "./layout.ts";
import classes from "./mesh.module.css";
import {
  buildMesh,
  type EdgeStatus,
  type FleetTotals,
  type MeshEdge,
  type MeshNode,
  type NodeState,
  topologyKey,
} from "./mesh.ts";

/** Names are written beside the nodes up to this many nodes (beyond, on hover). */
const LABELS_UP_TO = 60;
/** Re-render the drawing at most this often while the layout settles. */
const PROGRESS_MS = 200;
const PADDING = 24;
const RADIUS = 7;

const EDGE_CLASS: Record<EdgeStatus, string> = {
  Connected: classes.connected!,
  "Not Connected": classes.notConnected!,
  Pending: classes.pendingEdge!,
  "N/A": classes.na!,
};
const NODE_CLASS: Record<NodeState, string> = {
  online: classes.online!,
  offline: classes.offline!,
  pending: classes.pending!,
  peer: classes.peer!,
};

type Focus = { kind: "edge"; edge: MeshEdge } | { kind: "node"; node: MeshNode } | null;

export default function MeshGraph({
  devices,
  tunnels,
  totals,
}: {
  devices: DeviceSummary[];
  tunnels: TunnelSummary[];
  /** The fleet's counts, when `devices` and `tunnels` are the chosen part of it. */
  totals?: FleetTotals | undefined;
}) {
  const navigate = useNavigate();
  const mesh = useMemo(() => buildMesh(devices, tunnels, undefined, totals), [devices, tunnels, totals]);
  const key = useMemo(() => topologyKey(mesh), [mesh]);
  const meshRef = useRef(mesh);
  meshRef.current = mesh;
  const placed = useRef<Positions>(new Map());
  const [positions, setPositions] = useState<Positions>(new Map());
  const [settled, setSettled] = useState(false);
  const [focus, setFocus] = useState<Focus>(null);
  const { ref: frame, width, height } = useElementSize();

  // `key` stands for the topology: the layout re-runs when a node or a tunnel comes or goes.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the mesh is read through its ref on purpose
  useEffect(() => {
    setSettled(false);
    let shown = 0;
    return layoutMesh(meshRef.current, placed.current, (p, done) => {
      placed.current = p;
      const now = performance.now();
      if (done || now - shown > PROGRESS_MS) {
        shown = now;
        setPositions(p);
      }
      if (done) setSettled(true);
    });
  }, [key]);

  const project = useMemo(() => fit(positions, width, height), [positions, width, height]);
  const byId = useMemo(() => new Map(mesh.nodes.map((n) => [n.id, n])), [mesh]);
  const open = (f: NonNullable<Focus>) =>
    navigate(f.kind === "edge" ? `/tunnels/${f.edge.id}` : f.node.state === "peer" ? "/peers" : `/devices/${f.node.id}`);
  const activate = (f: NonNullable<Focus>) => ({
    tabIndex: 0,
    role: "link",
    onMouseEnter: () => setFocus(f),
    onFocus: () => setFocus(f),
    onClick: () => open(f),
    onKeyDown: (e: React.KeyboardEvent) => {
      if (e.key === "Enter") open(f);
    },
  });
  const showLabels = mesh.nodes.length <= LABELS_UP_TO;

  return (
    <Stack gap="xs">
      {mesh.hidden > 0 && (
        <Text size="sm" data-testid="mesh-cap">
          Showing {mesh.nodes.length} of {mesh.totalNodes} devices: those with a tunnel not connected first, then offline and
          pending ones, then the most connected ({mesh.hiddenEdges} tunnels to the others not drawn). The Devices and Tunnels
          pages list them all.
        </Text>
      )}
      <Legend />
      <div ref={frame} className={classes.frame} data-testid="mesh-graph" data-settled={settled}>
        <svg className={classes.svg} aria-label={`Tunnel mesh: ${mesh.nodes.length} devices, ${mesh.edges.length} tunnels`}>
          <g>
            {mesh.edges.map((e) => {
              const a = project(e.source);
              const b = project(e.target);
              if (!a || !b) return null;
              const active = focus?.kind === "edge" && focus.edge.id === e.id;
              return (
                <g
                  key={e.id}
                  className={`${classes.item} ${active ? classes.active : ""}`}
                  data-testid="mesh-edge"
                  data-status={e.status}
                  data-tunnel-id={e.id}
                  aria-label={`Tunnel ${e.label}: ${e.status}`}
                  {...activate({ kind: "edge", edge: e })}
                >
                  <line className={classes.hit} x1={a.x} y1={a.y} x2={b.x} y2={b.y} />
                  <line className={`${classes.edge} ${EDGE_CLASS[e.status]}`} x1={a.x} y1={a.y} x2={b.x} y2={b.y} />
                </g>
              );
            })}
          </g>
          <g>
            {mesh.nodes.map((n) => {
              const p = project(n.id);
              if (!p) return null;
              const active = focus?.kind === "node" && focus.node.id === n.id;
              return (
                <g
                  key={n.id}
                  className={`${classes.item} ${active ? classes.active : ""}`}
                  data-testid="mesh-node"
                  data-state={n.state}
                  aria-label={`${n.state === "peer" ? "Peer" : "Device"} ${n.name}: ${n.state}`}
                  {...activate({ kind: "node", node: n })}
                >
                  <circle className={classes.ring} cx={p.x} cy={p.y} r={RADIUS + 4} />
                  {n.state === "peer" ? (
                    <rect
                      className={`${classes.node} ${NODE_CLASS[n.state]}`}
                      x={p.x - RADIUS}
                      y={p.y - RADIUS}
                      width={RADIUS * 2}
                      height={RADIUS * 2}
                    />
                  ) : (
                    <circle className={`${classes.node} ${NODE_CLASS[n.state]}`} cx={p.x} cy={p.y} r={RADIUS} />
                  )}
                  {(showLabels || active) && (
                    <text className={classes.label} x={p.x + RADIUS + 3} y={p.y + 4}>
                      {n.name}
                    </text>
                  )}
                </g>
              );
            })}
          </g>
        </svg>
      </div>
      <Details focus={focus} nodes={byId} />
    </Stack>
  );
}

/** Positions scaled and centred into the frame, in pixels. */
function fit(positions: Positions, width: number, height: number) {
  let minX = Number.POSITIVE_INFINITY;
  let minY = Number.POSITIVE_INFINITY;
  let maxX = Number.NEGATIVE_INFINITY;
  let maxY = Number.NEGATIVE_INFINITY;
  for (const p of positions.values()) {
    minX = Math.min(minX, p.x);
    maxX = Math.max(maxX, p.x);
    minY = Math.min(minY, p.y);
    maxY = Math.max(maxY, p.y);
  }
  const w = Math.max(width - 2 * PADDING - 80, 1); // room for the labels on the right
  const h = Math.max(height - 2 * PADDING, 1);
  const scale = Math.min(1.5, w / Math.max(maxX - minX, 1), h / Math.max(maxY - minY, 1));
  const cx = (minX + maxX) / 2;
  const cy = (minY + maxY) / 2;
  return (id: string) => {
    const p = positions.get(id);
    return p ? { x: (p.x - cx) * scale + width / 2 - 40, y: (p.y - cy) * scale + height / 2 } : null;
  };
}

function Legend() {
  const line = (status: EdgeStatus) => (
    <span className={classes.legend} key={status}>
      <svg width="28" height="10" aria-hidden="true">
        <line className={`${classes.edge} ${EDGE_CLASS[status]}`} x1="2" y1="5" x2="26" y2="5" />
      </svg>
      <Text size="xs">{status}</Text>
    </span>
  );
  const dot = (state: NodeState, label: string) => (
    <span className={classes.legend} key={state}>
      <svg width="16" height="16" aria-hidden="true">
        {state === "peer" ? (
          <rect className={`${classes.node} ${NODE_CLASS[state]}`} x="2" y="2" width="12" height="12" />
        ) : (
          <circle className={`${classes.node} ${NODE_CLASS[state]}`} cx="8" cy="8" r="6" />
        )}
      </svg>
      <Text size="xs">{label}</Text>
    </span>
  );
  return (
    <Group gap="md" aria-label="Legend" role="group">
      {dot("online", "online")}
      {dot("offline", "offline")}
      {dot("pending", "pending")}
      {dot("peer", "peer")}
      {(["Connected", "Not Connected", "Pending", "N/A"] as const).map(line)}
    </Group>
  );
}

/** What is pointed at: a tunnel's status and figures (both ends), or a device's state. */
function Details({ focus, nodes }: { focus: Focus; nodes: Map<string, MeshNode> }) {
  return (
    <Paper withBorder p="xs" radius="sm" aria-live="polite" data-testid="mesh-details" mih={58}>
      {!focus ? (
        <Text size="sm" c="dimmed">
          Point at a tunnel for its loss, RTT and jitter; click it to open its page.
        </Text>
      ) : focus.kind === "edge" ? (
        <EdgeDetails edge={focus.edge} nodes={nodes} />
      ) : (
        <Text size="sm">
          <Anchor component={Link} to={focus.node.state === "peer" ? "/peers" : `/devices/${focus.node.id}`}>
            {focus.node.name}
          </Anchor>{" "}
          · {focus.node.state} · {focus.node.degree} tunnel{focus.node.degree === 1 ? "" : "s"}
        </Text>
      )}
    </Paper>
  );
}

function EdgeDetails({ edge, nodes }: { edge: MeshEdge; nodes: Map<string, MeshNode> }) {
  const org = useOrg();
  // The same query as the tunnel page's: the figures are read only for the tunnel pointed at.
  const tunnel = useQuery({
    queryKey: queryKey("tunnel", org.id, "one", edge.id),
    queryFn: () => ok(tern.api.GET("/api/tunnels/{id}", { params: { path: { id: edge.id } } })),
  });
  const q = tunnel.data?.quality;
  const side = (name: string | undefined, s: { loss: number; rtt: number; jitter: number; at?: string } | undefined) =>
    `${name ?? "peer"}: ${s?.at ? `loss ${fixed(s.loss)} %, RTT ${fixed(s.rtt)} ms, jitter ${fixed(s.jitter)} ms` : "no figures yet"}`;
  return (
    <Stack gap={2}>
      <Text size="sm">
        <Anchor component={Link} to={`/tunnels/${edge.id}`}>
          Tunnel {edge.label}
        </Anchor>{" "}
        · <span data-testid="mesh-details-status">{edge.status}</span>
      </Text>
      <Text size="xs">
        {tunnel.isPending
          ? "Reading its figures…"
          : tunnel.isError
            ? "Its figures could not be read."
            : `${side(nodes.get(edge.source)?.name, q?.a ?? undefined)} · ${side(nodes.get(edge.target)?.name, q?.b ?? undefined)}`}
      </Text>
    </Stack>
  );
}
