import { Badge } from "@mantine/core";
import { tone } from "./tones.ts";

/** Status words and their tones (readable in both themes). */
const COLORS: Record<string, string> = {
  online: tone.ok,
  Connected: tone.ok,
  complete: tone.ok,
  up: tone.ok,
  Established: tone.ok,
  MASTER: tone.ok,
  offline: tone.bad,
  "Not Connected": tone.bad,
  failed: tone.bad,
  down: tone.bad,
  critical: tone.bad,
  pending: tone.warn,
  Pending: tone.warn,
  warning: tone.warn,
  running: tone.info,
  queued: tone.muted,
  // Agent rollouts and their devices.
  upgraded: tone.ok,
  "rolled-back": tone.bad,
  paused: tone.warn,
  sending: tone.info,
  installing: tone.info,
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge variant="outline" color={COLORS[status] ?? tone.muted}>
      {status}
    </Badge>
  );
}
