/**
 * Access tokens (API keys of the organization) with their permission masks;
 * a new token's secret is shown once, right after creation, never again (the
 * list has no secret: the API does not return it).
 */
import { Button, Card, Checkbox, Group, Select, Stack, Switch, Table, Text, TextInput, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type AccessTokenCreated, ok } from "@tern/client";
import { PERM, PERMISSION_RESOURCES, type Permissions, type Role } from "@tern/protocol";
import { useState } from "react";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { EmptyHint } from "../../components/EmptyHint.tsx";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { useAction } from "../../components/useAction.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg } from "../../session/session-context.ts";
import { BITS, differsFromRole, maskWords, roleMasks, toggleBit } from "./masks.ts";
import { SecretOnce, when } from "./shared.tsx";

export function AccessTokens() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canCreate = useCan("accesstokens", "post");
  const canDelete = useCan("accesstokens", "del");
  const [created, setCreated] = useState<AccessTokenCreated | null>(null);
  const tokens = useQuery({
    queryKey: ["organization", org.id, "accesstokens"],
    queryFn: () => ok(tern.api.GET("/api/accesstokens", { params: { query: { limit: 1000 } } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["organization", org.id, "accesstokens"] });
  const remove = async (id: string) => {
    await ok(tern.api.DELETE("/api/accesstokens/{id}", { params: { path: { id } } }));
    await refresh();
  };
  return (
    <Stack>
      {created && (
        <SecretOnce title={`Access token "${created.name}" created`} secret={created.token} onDismiss={() => setCreated(null)} />
      )}
      {canCreate && (
        <CreateAccessToken
          onCreated={(token) => {
            setCreated(token);
            void refresh();
          }}
        />
      )}
      <QueryState query={tokens} label="access tokens">
        {(list) =>
          list.length === 0 ? (
            <EmptyHint title="No access tokens">
              An access token lets a script or the <code>tern</code> CLI use the API for this organization, with a role's
              permissions or fewer.
            </EmptyHint>
          ) : (
            <Table.ScrollContainer minWidth={760}>
              <Table aria-label="Access tokens">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>Role</Table.Th>
                    <Table.Th>Permissions</Table.Th>
                    <Table.Th>Created</Table.Th>
                    <Table.Th>Last used</Table.Th>
                    {canDelete && <Table.Th>Actions</Table.Th>}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {list.map((t) => {
                    const custom = differsFromRole(t.permissions, t.role);
                    return (
                      <Table.Tr key={t.id}>
                        <Table.Td>{t.name}</Table.Td>
                        <Table.Td>{t.role}</Table.Td>
                        <Table.Td>
                          <Text size="sm">
                            {custom.length === 0
                              ? `the ${t.role}'s`
                              : custom.map((r) => `${r}: ${maskWords(t.permissions[r])}`).join("; ")}
                          </Text>
                        </Table.Td>
                        <Table.Td>{when(t.createdAt)}</Table.Td>
                        <Table.Td>{when(t.lastUsedAt)}</Table.Td>
                        {canDelete && (
                          <Table.Td>
                            <ConfirmButton
                              size="xs"
                              variant="default"
                              label="Revoke"
                              question={`Revoke the access token "${t.name}"? Scripts using it stop working at once.`}
                              confirm="Revoke"
                              onConfirm={() => remove(t.id)}
                            />
                          </Table.Td>
                        )}
                      </Table.Tr>
                    );
                  })}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )
        }
      </QueryState>
    </Stack>
  );
}

function CreateAccessToken({ onCreated }: { onCreated: (token: AccessTokenCreated) => void }) {
  const action = useAction();
  const [name, setName] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [custom, setCustom] = useState(false);
  const [perms, setPerms] = useState<Permissions>(() => roleMasks("viewer"));
  const create = async () => {
    let token: AccessTokenCreated | null = null;
    const done = await action.run(async () => {
      token = await ok(
        tern.api.POST("/api/accesstokens", { body: { name: name.trim(), role, ...(custom ? { permissions: perms } : {}) } }),
      );
    });
    if (done && token) {
      setName("");
      onCreated(token);
    }
  };
  return (
    <Card withBorder component="section" aria-labelledby="create-accesstoken">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create();
        }}
      >
        <Stack gap="sm">
          <Title order={2} size="h4" id="create-accesstoken">
            Create an access token
          </Title>
          <Group align="flex-end">
            <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} w={260} />
            <Select
              label="Role"
              w={140}
              allowDeselect={false}
              data={["owner", "manager", "viewer"]}
              value={role}
              onChange={(v) => {
                if (!v) return;
                setRole(v as Role);
                setPerms(roleMasks(v as Role));
              }}
            />
            <Switch
              label="Fewer permissions than the role"
              checked={custom}
              onChange={(e) => setCustom(e.currentTarget.checked)}
              mb={8}
            />
          </Group>
          {custom && (
            <Table.ScrollContainer minWidth={420}>
              <Table aria-label="Permission masks" withTableBorder>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Resource</Table.Th>
                    {BITS.map((b) => (
                      <Table.Th key={b}>{b}</Table.Th>
                    ))}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {PERMISSION_RESOURCES.map((r) => (
                    <Table.Tr key={r}>
                      <Table.Td>{r}</Table.Td>
                      {BITS.map((b) => (
                        <Table.Td key={b}>
                          <Checkbox
                            aria-label={`${r} ${b}`}
                            checked={((perms[r] ?? 0) & PERM[b]) !== 0}
                            onChange={() => setPerms((p) => toggleBit(p, r, b))}
                          />
                        </Table.Td>
                      ))}
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
          {action.error !== null && <ErrorAlert title="Not created" error={action.error} />}
          <Group justify="flex-end">
            <Button type="submit" loading={action.busy} disabled={!name.trim()}>
              Create token
            </Button>
          </Group>
        </Stack>
      </form>
    </Card>
  );
}
