/** The device's tags: shown to everyone, edited (PUT /api/devices/{id} `tags`) by members who may change devices. */
import { Badge, Button, Group, TagsInput, Text } from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import type { Device } from "@tern/client";
import { useState } from "react";
import { ErrorAlert } from "../../components/QueryState.tsx";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { setDeviceTags } from "./device-writes.ts";

export function DeviceTags({ device }: { device: Device }) {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canEdit = useCan("devices", "put");
  const tags = device.tags ?? [];
  const [editing, setEditing] = useState<string[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);

  if (editing !== null)
    return (
      <Group align="flex-end" gap="xs">
        <TagsInput
          label="Tags"
          description="Letters, digits and . _ : / - (at most 32)"
          value={editing}
          onChange={setEditing}
          maxTags={32}
          w={420}
        />
        <Button
          loading={saving}
          onClick={async () => {
            setSaving(true);
            setError(null);
            try {
              await setDeviceTags(device.id, editing);
              setEditing(null);
              await queryClient.invalidateQueries({ queryKey: ["device", org.id] });
            } catch (err) {
              setError(err);
            } finally {
              setSaving(false);
            }
          }}
        >
          Save tags
        </Button>
        <Button variant="default" onClick={() => setEditing(null)}>
          Cancel
        </Button>
        {error !== null && <ErrorAlert title="The server refused" error={error} />}
      </Group>
    );
  return (
    <Group gap="xs" role="group" aria-label="Tags">
      {tags.length === 0 ? (
        <Text size="sm" c="dimmed">
          No tags
        </Text>
      ) : (
        tags.map((t) => (
          <Badge key={t} variant="light" tt="none">
            {t}
          </Badge>
        ))
      )}
      {canEdit && (
        <Button size="compact-sm" variant="subtle" onClick={() => setEditing(tags)}>
          Edit tags
        </Button>
      )}
    </Group>
  );
}
