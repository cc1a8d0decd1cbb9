/** The organization itself: name, description and the tunnel range tunnels take their addresses from. */
import { Button, Card, Group, Stack, Text, TextInput, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@tern/client";
import { useEffect, useState } from "react";
import { tern } from "../../api/tern.ts";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { readableDescription } from "../../components/readable.ts";
import { useAction } from "../../components/useAction.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";

export function Settings() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canEdit = useCan("organizations", "put");
  const action = useAction();
  const [saved, setSaved] = useState(false);
  const [form, setForm] = useState({ name: "", description: "", tunnelRange: "" });
  const current = useQuery({
    queryKey: ["organization", org.id, "self"],
    queryFn: () => ok(tern.api.GET("/api/organizations/{id}", { params: { path: { id: org.id } } })),
  });
  useEffect(() => {
    if (current.data)
      setForm({ name: current.data.name, description: current.data.description, tunnelRange: current.data.tunnelRange });
  }, [current.data]);
  const save = async () => {
    setSaved(false);
    const done = await action.run(() =>
      ok(tern.api.PUT("/api/organizations/{id}", { params: { path: { id: org.id } }, body: form })),
    );
    await queryClient.invalidateQueries({ queryKey: ["organization", org.id, "self"] });
    setSaved(done);
  };
  return (
    <Card withBorder component="section" aria-labelledby="org-settings" maw={640}>
      <Title order={2} size="h4" id="org-settings" mb="sm">
        Organization
      </Title>
      <QueryState query={current} label="the organization">
        {() => (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void save();
            }}
          >
            <Stack gap="sm">
              <TextInput
                label="Name"
                required
                readOnly={!canEdit}
                value={form.name}
                onChange={(e) => setForm({ ...form, name: e.currentTarget.value })}
              />
              <TextInput
                label="Description"
                readOnly={!canEdit}
                value={form.description}
                onChange={(e) => setForm({ ...form, description: e.currentTarget.value })}
              />
              <TextInput
                label="Tunnel range"
                styles={readableDescription}
                description="The network tunnel addresses come from (a /24 or larger). Changing it re-addresses every tunnel."
                readOnly={!canEdit}
                value={form.tunnelRange}
                onChange={(e) => setForm({ ...form, tunnelRange: e.currentTarget.value })}
              />
              {action.error !== null && <ErrorAlert title="Not saved" error={action.error} />}
              {canEdit && (
                <Group justify="flex-end">
                  {saved && (
                    <Text size="sm" role="status">
                      Saved
                    </Text>
                  )}
                  <Button type="submit" loading={action.busy}>
                    Save
                  </Button>
                </Group>
              )}
            </Stack>
          </form>
        )}
      </QueryState>
    </Card>
  );
}
