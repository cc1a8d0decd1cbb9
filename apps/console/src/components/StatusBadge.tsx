import { Badge } from "@mantine/core";

/** Colours dark enough for text contrast on the light variant's tint, in both themes. */
const COLORS: Record<string, string> = {
  online: "teal.9",
  Connected: "teal.9",
  complete: "teal.9",
  up: "teal.9",
  Established: "teal.9",
  MASTER: "teal.9",
  offline: "red.9",
  "Not Connected": "red.9",
  failed: "red.9",
  down: "red.9",
  critical: "red.9",
  pending: "orange.9",
  Pending: "orange.9",
  warning: "orange.9",
  running: "blue.9",
  queued: "gray.8",
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge variant="outline" color={COLORS[status] ?? "gray.8"}>
      {status}
    </Badge>
  );
}
