/**
 * Registration tokens: what a router enrols with. A new token is shown once,
 * inside the `tern-agent enroll` command to run on the router.
 */
import { Button, Card, Group, NumberInput, Stack, Table, TextInput, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok, type RegistrationTokenCreated } from "@tern/client";
import { useState } from "react";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { useAction } from "../../components/useAction.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { SecretOnce, when } from "./shared.tsx";

export const enrollCommand = (server: string, token: string) => `tern-agent enroll --server ${server} --token ${token}`;

export function RegistrationTokens() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canCreate = useCan("tokens", "post");
  const canDelete = useCan("tokens", "del");
  const action = useAction();
  const [name, setName] = useState("");
  const [maxUses, setMaxUses] = useState<number | "">("");
  const [created, setCreated] = useState<RegistrationTokenCreated | null>(null);
  const tokens = useQuery({
    queryKey: ["organization", org.id, "tokens"],
    queryFn: () => ok(tern.api.GET("/api/tokens", { params: { query: { limit: 1000 } } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["organization", org.id, "tokens"] });
  const create = async () => {
    await action.run(async () => {
      const token = await ok(
        tern.api.POST("/api/tokens", { body: { name: name.trim(), ...(maxUses === "" ? {} : { maxUses: Number(maxUses) }) } }),
      );
      setCreated(token);
      setName("");
    });
    await refresh();
  };
  const remove = async (id: string) => {
    await ok(tern.api.DELETE("/api/tokens/{id}", { params: { path: { id } } }));
    await refresh();
  };
  return (
    <Stack>
      {created && (
        <SecretOnce
          title={`Registration token "${created.name}" created: run this on each router`}
          secret={created.token}
          command={enrollCommand(window.location.origin, created.token)}
          onDismiss={() => setCreated(null)}
        />
      )}
      {canCreate && (
        <Card withBorder component="section" aria-labelledby="create-regtoken">
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void create();
            }}
          >
            <Title order={2} size="h4" id="create-regtoken" mb="sm">
              Create a registration token
            </Title>
            <Group align="flex-end">
              <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} w={260} />
              <NumberInput
                label="Uses (blank: unlimited)"
                min={1}
                value={maxUses}
                onChange={(v) => setMaxUses(v === "" ? "" : Number(v))}
                w={200}
              />
              <Button type="submit" loading={action.busy} disabled={!name.trim()}>
                Create token
              </Button>
            </Group>
            {action.error !== null && <ErrorAlert title="Not created" error={action.error} />}
          </form>
        </Card>
      )}
      <QueryState query={tokens} label="registration tokens">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title="No registration tokens">
              Create one, then run <code>{enrollCommand(window.location.origin, "<token>")}</code> on each router: it appears
              under Devices as pending until approved.
            </EmptyHint>
          ) : (
            <Table aria-label="Registration tokens">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Name</Table.Th>
                  <Table.Th ta="right">Uses</Table.Th>
                  <Table.Th>Expires</Table.Th>
                  <Table.Th>Created</Table.Th>
                  {canDelete && <Table.Th>Actions</Table.Th>}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((t) => (
                  <Table.Tr key={t.id}>
                    <Table.Td>{t.name}</Table.Td>
                    <Table.Td ta="right">
                      {t.uses}
                      {t.maxUses ? ` / ${t.maxUses}` : ""}
                    </Table.Td>
                    <Table.Td>{t.expiresAt ? when(t.expiresAt) : "never"}</Table.Td>
                    <Table.Td>{when(t.createdAt)}</Table.Td>
                    {canDelete && (
                      <Table.Td>
                        <ConfirmButton
                          size="xs"
                          variant="default"
                          label="Delete"
                          question={`Delete the registration token "${t.name}"? Routers can no longer enrol with it; enrolled ones are not affected.`}
                          confirm="Delete"
                          onConfirm={() => remove(t.id)}
                        />
                      </Table.Td>
                    )}
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )
        }
      </QueryState>
    </Stack>
  );
}
