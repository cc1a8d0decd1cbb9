/** Members and their roles, and the invitations waiting for an answer. */
import { Button, Card, Group, Select, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@tern/client";
import type { Role } from "@tern/protocol";
import { useState } from "react";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { useAction } from "../../components/useAction.ts";
import { useCan } from "../../session/permissions.ts";
import { useOrg, useSession } from "../../session/session-context.ts";
import { when } from "./shared.tsx";

const ROLES: Role[] = ["owner", "manager", "viewer"];

export function Members() {
  const org = useOrg();
  const { session } = useSession();
  const queryClient = useQueryClient();
  const canEdit = useCan("members", "put");
  const canRemove = useCan("members", "del");
  const action = useAction();
  const members = useQuery({
    queryKey: ["organization", org.id, "members"],
    queryFn: () => ok(tern.api.GET("/api/members", { params: { query: { limit: 1000 } } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["organization", org.id] });
  const setRole = (id: string, role: Role) =>
    action.run(async () => {
      await ok(tern.api.PUT("/api/members/{id}", { params: { path: { id } }, body: { role } }));
      await refresh();
    });
  const remove = async (id: string) => {
    await ok(tern.api.DELETE("/api/members/{id}", { params: { path: { id } } }));
    await refresh();
  };
  return (
    <Stack>
      <Card withBorder component="section" aria-labelledby="members-title">
        <Title order={2} size="h4" id="members-title" mb="sm">
          Members
        </Title>
        {action.error !== null && <ErrorAlert title="Not changed" error={action.error} />}
        <QueryState query={members} label="members">
          {(list) => (
            <Table.ScrollContainer minWidth={640}>
              <Table aria-label="Members">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Name</Table.Th>
                    <Table.Th>E-mail</Table.Th>
                    <Table.Th>Role</Table.Th>
                    <Table.Th>Of</Table.Th>
                    <Table.Th>Since</Table.Th>
                    {canRemove && <Table.Th>Actions</Table.Th>}
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {list.map((m) => {
                    const self = m.user.id === session?.user.id;
                    return (
                      <Table.Tr key={m.id}>
                        <Table.Td>{m.user.name || "–"}</Table.Td>
                        <Table.Td>{m.user.email}</Table.Td>
                        <Table.Td>
                          {canEdit && !self ? (
                            <Select
                              size="xs"
                              w={120}
                              aria-label={`Role of ${m.user.email}`}
                              data={ROLES}
                              allowDeselect={false}
                              value={m.role}
                              disabled={action.busy}
                              onChange={(v) => v && v !== m.role && void setRole(m.id, v as Role)}
                            />
                          ) : (
                            m.role
                          )}
                        </Table.Td>
                        <Table.Td>{m.scope === "account" ? "the account" : "this organization"}</Table.Td>
                        <Table.Td>{when(m.createdAt)}</Table.Td>
                        {canRemove && (
                          <Table.Td>
                            {!self && (
                              <ConfirmButton
                                size="xs"
                                variant="default"
                                label="Remove"
                                question={`Remove ${m.user.email}? They lose access at once.`}
                                confirm="Remove"
                                onConfirm={() => remove(m.id)}
                              />
                            )}
                          </Table.Td>
                        )}
                      </Table.Tr>
                    );
                  })}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
          )}
        </QueryState>
      </Card>
      <Invitations />
    </Stack>
  );
}

function Invitations() {
  const org = useOrg();
  const queryClient = useQueryClient();
  const canInvite = useCan("members", "post");
  const canRevoke = useCan("members", "del");
  const action = useAction();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const invitations = useQuery({
    queryKey: ["organization", org.id, "invitations"],
    queryFn: () => ok(tern.api.GET("/api/invitations", { params: { query: { limit: 1000 } } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["organization", org.id, "invitations"] });
  const invite = async () => {
    if (await action.run(() => ok(tern.api.POST("/api/invitations", { body: { email: email.trim(), role } })))) setEmail("");
    await refresh();
  };
  const revoke = async (id: string) => {
    await ok(tern.api.DELETE("/api/invitations/{id}", { params: { path: { id } } }));
    await refresh();
  };
  return (
    <Card withBorder component="section" aria-labelledby="invitations-title">
      <Title order={2} size="h4" id="invitations-title" mb="sm">
        Invitations
      </Title>
      {canInvite && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void invite();
          }}
        >
          <Group align="flex-end" mb="sm">
            <TextInput
              label="E-mail"
              type="email"
              required
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
              w={280}
            />
            <Select
              label="Role"
              data={ROLES}
              allowDeselect={false}
              value={role}
              onChange={(v) => v && setRole(v as Role)}
              w={140}
            />
            <Button type="submit" loading={action.busy} disabled={!email.trim()}>
              Invite
            </Button>
          </Group>
          {action.error !== null && <ErrorAlert title="Not invited" error={action.error} />}
        </form>
      )}
      <QueryState query={invitations} label="invitations">
        {(list) =>
          list.length === 0 ? (
            <Text size="sm">
              No invitation is waiting.{canInvite ? " The invited person gets an e-mail with a link to join." : ""}
            </Text>
          ) : (
            <Table aria-label="Invitations">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>E-mail</Table.Th>
                  <Table.Th>Role</Table.Th>
                  <Table.Th>Expires</Table.Th>
                  {canRevoke && <Table.Th>Actions</Table.Th>}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((i) => (
                  <Table.Tr key={i.id}>
                    <Table.Td>{i.email}</Table.Td>
                    <Table.Td>{i.role}</Table.Td>
                    <Table.Td>{when(i.expiresAt)}</Table.Td>
                    {canRevoke && (
                      <Table.Td>
                        <ConfirmButton
                          size="xs"
                          variant="default"
                          label="Revoke"
                          question={`Revoke the invitation of ${i.email}?`}
                          confirm="Revoke"
                          onConfirm={() => revoke(i.id)}
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
    </Card>
  );
}
