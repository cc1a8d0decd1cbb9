/** A rollout's progress: a bar of its devices per state and the figures in words (the bar is one image to assistive tech). */
import { Box, Group, Stack, Text } from "@mantine/core";
import { type Rollout, rolloutProgress } from "./progress.ts";

export function RolloutProgress({ counts, width = 260 }: { counts: Rollout["counts"]; width?: number }) {
  const p = rolloutProgress(counts);
  return (
    <Stack gap={4} w={width}>
      <Group
        gap={0}
        wrap="nowrap"
        role="img"
        aria-label={`${p.finished} of ${p.total} devices finished: ${p.summary}`}
        h={10}
        style={{
          borderRadius: 5,
          overflow: "hidden",
          border: "1px solid var(--mantine-color-default-border)",
          background: "var(--mantine-color-default-hover)",
        }}
      >
        {p.sections.map((s) => (
          <Box key={s.state} h="100%" w={`${s.percent}%`} bg={s.color} title={`${s.count} ${s.state}`} />
        ))}
      </Group>
      <Text size="xs" data-testid="rollout-figures">
        {p.finished}/{p.total} finished ({p.percent} %) · {p.summary}
      </Text>
    </Stack>
  );
}
