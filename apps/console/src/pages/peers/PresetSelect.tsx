/**
 * The peer form's preset select: None or a cloud IPsec gateway's preset
 * (GET /api/peers/presets). Choosing one fills the proposals from its values
 * (applyPreset); its source note and vendor page are shown as help text.
 */
import { Anchor, Group, Select, Stack, Text, UnstyledButton } from "@mantine/core";
import { queryOptions, useQuery } from "@tanstack/react-query";
import { ok, type PeerPreset } from "@tern/client";
import { useState } from "react";
import { tern } from "../../api/tern.ts";

/** The presets are the server's constants: fetched once per session, the same for every organization. */
export const peerPresetsQuery = queryOptions({
  queryKey: ["peer-presets"],
  queryFn: () => ok(tern.api.GET("/api/peers/presets")),
  staleTime: Number.POSITIVE_INFINITY,
});

const NONE = "none";

export function PresetSelect({
  value,
  onChange,
  error,
}: {
  value: string | null;
  onChange: (preset: PeerPreset | null) => void;
  error?: string;
}) {
  const presets = useQuery(peerPresetsQuery);
  const [wholeNote, setWholeNote] = useState(false);
  const list = presets.data ?? [];
  const chosen = list.find((p) => p.id === value);
  const data = [
    { value: NONE, label: "None (Tern's defaults)" },
    ...list.map((p) => ({ value: p.id, label: p.vendor })),
    // A stored peer's preset the server no longer lists is still shown, by its id.
    ...(value && !chosen && presets.data ? [{ value, label: value }] : []),
  ];
  return (
    <Stack gap={4}>
      <Select
        label="Preset"
        description="A cloud gateway's documented proposals, lifetimes, PFS and DPD; the fields stay editable and what you change wins"
        data={data}
        allowDeselect={false}
        placeholder={presets.isPending ? "Loading presets…" : undefined}
        value={value ?? NONE}
        onChange={(id) => onChange(id === NONE ? null : (list.find((p) => p.id === id) ?? null))}
        error={error ?? (presets.isError ? "The presets could not be loaded" : undefined)}
      />
      {chosen && (
        <>
          {/* The notes run to several lines: two are shown, the rest on request, so the form stays in view. */}
          <Text size="xs" c="dimmed" lineClamp={wholeNote ? undefined : 2} data-testid="preset-note">
            {chosen.note}
          </Text>
          <Group gap="md">
            <UnstyledButton fz="xs" c="var(--mantine-color-anchor)" td="underline" onClick={() => setWholeNote((w) => !w)}>
              {wholeNote ? "Show less" : "Show the whole note"}
            </UnstyledButton>
            <Anchor href={chosen.source} target="_blank" rel="noopener noreferrer" size="xs" underline="always">
              {chosen.vendor} documentation
            </Anchor>
          </Group>
        </>
      )}
    </Stack>
  );
}
