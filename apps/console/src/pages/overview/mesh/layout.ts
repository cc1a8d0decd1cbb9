/**
 * Force layout of the mesh (d3-force), computed in slices of a few
 * milliseconds between frames so that laying out hundreds of nodes never
 * blocks the page (no long task). Nodes already placed keep their place and
 * the simulation starts cooler then: a live change moves the drawing little.
 */
import {
  forceCenter,
  forceCollide,
  forceLink,
  forceManyBody,
  forceSimulation,
  forceX,
  forceY,
  type SimulationNodeDatum,
} from "d3-force";
import type { Mesh } from "./mesh.ts";

export type Positions = Map<string, { x: number; y: number }>;

interface LayoutNode extends SimulationNodeDatum {
  id: string;
}

/** Time of one slice of ticks, in ms (well under the 50 ms of a long task). */
const SLICE_MS = 8;

/**
 * Lays `mesh` out starting from `previous`; calls `onProgress` after each
 * slice with the positions so far and `done` at the end. Returns a cancel function.
 */
export function layoutMesh(
  mesh: Mesh,
  previous: Positions,
  onProgress: (positions: Positions, done: boolean) => void,
): () => void {
  const known = mesh.nodes.filter((n) => previous.has(n.id)).length;
  const nodes: LayoutNode[] = mesh.nodes.map((n, i) => {
    const p = previous.get(n.id);
    if (p) return { id: n.id, x: p.x, y: p.y };
    // New nodes on a spiral (d3's own initial placement), near the centre.
    const radius = 10 * Math.sqrt(0.5 + i);
    const angle = i * Math.PI * (3 - Math.sqrt(5));
    return { id: n.id, x: radius * Math.cos(angle), y: radius * Math.sin(angle) };
  });
  const links = mesh.edges.map((e) => ({ source: e.source, target: e.target }));
  const simulation = forceSimulation(nodes)
    .force(
      "link",
      forceLink<LayoutNode, { source: string; target: string }>(links)
        .id((n) => n.id)
        .distance(90),
    )
    .force("charge", forceManyBody().strength(-120).distanceMax(400))
    .force("collide", forceCollide(14))
    .force("center", forceCenter(0, 0))
    // Pulled harder vertically than horizontally: a wide drawing, as wide as the page's frame.
    .force("x", forceX(0).strength(0.03))
    .force("y", forceY(0).strength(0.1))
    .stop();
  // Mostly known nodes: a warm start, fewer ticks.
  if (nodes.length > 0 && known / nodes.length > 0.8) simulation.alpha(0.3);

  let cancelled = false;
  let handle: ReturnType<typeof setTimeout> | undefined;
  const snapshot = (): Positions => new Map(nodes.map((n) => [n.id, { x: n.x ?? 0, y: n.y ?? 0 }]));
  const slice = () => {
    if (cancelled) return;
    const start = performance.now();
    while (simulation.alpha() > simulation.alphaMin() && performance.now() - start < SLICE_MS) simulation.tick();
    const done = simulation.alpha() <= simulation.alphaMin();
    onProgress(snapshot(), done);
    if (!done) handle = setTimeout(slice, 0);
  };
  slice();
  return () => {
    cancelled = true;
    clearTimeout(handle);
  };
}
