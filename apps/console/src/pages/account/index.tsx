/**
 * Account: who is signed in (profile, organizations and roles), two-factor
 * sign-in (TwoFactor.tsx), the password change (it ends every session, this one included, so
 * the console signs in again), and the user's sessions, each revocable.
 */
import { Badge, Button, Card, Group, PasswordInput, SimpleGrid, Stack, Table, Text, Title } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@tern/client";
import { type ReactNode, useState } from "react";
import { tern } from "../../api/tern.ts";
import { ConfirmButton } from "../../components/ConfirmButton.tsx";
import { ErrorAlert, QueryState } from "../../components/QueryState.tsx";
import { tone } from "../../components/tones.ts";
import { useAction } from "../../components/useAction.ts";
import { useSession } from "../../session/session-context.ts";
import { describeAgent, passwordProblem } from "./password.ts";
import { TwoFactor } from "./TwoFactor.tsx";

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : "–");

function Section({ title, id, children }: { title: string; id: string; children: ReactNode }) {
  return (
    <Card withBorder component="section" aria-labelledby={id}>
      <Title order={2} size="h4" id={id} mb="sm">
        {title}
      </Title>
      {children}
    </Card>
  );
}

export default function AccountPage() {
  return (
    <Stack>
      <Title order={1} size="h2">
        Account
      </Title>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <Profile />
        <PasswordChange />
      </SimpleGrid>
      <TwoFactor />
      <Sessions />
    </Stack>
  );
}

function Profile() {
  const { session } = useSession();
  if (!session) return null;
  return (
    <Section title="Profile" id="account-profile">
      <Stack gap="xs">
        <Text>
          <Text span fw={600}>
            Name:
          </Text>{" "}
          {session.user.name || "–"}
        </Text>
        <Text>
          <Text span fw={600}>
            E-mail:
          </Text>{" "}
          {session.user.email}
        </Text>
        <Text fw={600}>Organizations</Text>
        <Group gap="xs">
          {session.organizations.map((o) => (
            <Badge key={o.id} variant="outline" color={tone.muted}>
              {o.name}: {o.role}
            </Badge>
          ))}
        </Group>
      </Stack>
    </Section>
  );
}

function PasswordChange() {
  const { signOut } = useSession();
  const action = useAction();
  const [form, setForm] = useState({ current: "", next: "", repeat: "" });
  const [tried, setTried] = useState(false);
  const problem = passwordProblem(form.current, form.next, form.repeat);
  const change = async () => {
    setTried(true);
    if (problem) return;
    const done = await action.run(() =>
      ok(tern.api.POST("/api/users/password", { body: { currentPassword: form.current, newPassword: form.next } })),
    );
    // Every session ended with the change, the console's too: sign in again with the new password.
    if (done) await signOut();
  };
  return (
    <Section title="Password" id="account-password">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void change();
        }}
      >
        <Stack gap="sm">
          <PasswordInput
            label="Current password"
            autoComplete="current-password"
            value={form.current}
            onChange={(e) => setForm({ ...form, current: e.currentTarget.value })}
          />
          <PasswordInput
            label="New password"
            autoComplete="new-password"
            value={form.next}
            onChange={(e) => setForm({ ...form, next: e.currentTarget.value })}
          />
          <PasswordInput
            label="New password again"
            autoComplete="new-password"
            value={form.repeat}
            onChange={(e) => setForm({ ...form, repeat: e.currentTarget.value })}
            error={tried ? problem : undefined}
          />
          <Text size="xs">Changing it signs you out everywhere, here too.</Text>
          {action.error !== null && <ErrorAlert title="Not changed" error={action.error} />}
          <Group justify="flex-end">
            <Button type="submit" loading={action.busy}>
              Change password
            </Button>
          </Group>
        </Stack>
      </form>
    </Section>
  );
}

function Sessions() {
  const { signOut } = useSession();
  const queryClient = useQueryClient();
  const sessions = useQuery({ queryKey: ["account", "sessions"], queryFn: () => ok(tern.api.GET("/api/users/sessions")) });
  const revoke = async (id: string, current: boolean) => {
    await ok(tern.api.DELETE("/api/users/sessions/{id}", { params: { path: { id } } }));
    if (current) await signOut();
    else await queryClient.invalidateQueries({ queryKey: ["account", "sessions"] });
  };
  return (
    <Section title="Sessions" id="account-sessions">
      <QueryState query={sessions} label="your sessions">
        {(list) => (
          <Table.ScrollContainer minWidth={720}>
            <Table aria-label="Sessions">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Client</Table.Th>
                  <Table.Th>Address</Table.Th>
                  <Table.Th>Signed in</Table.Th>
                  <Table.Th>Last used</Table.Th>
                  <Table.Th>Expires</Table.Th>
                  <Table.Th>Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((s) => (
                  <Table.Tr key={s.id}>
                    <Table.Td>
                      {describeAgent(s.userAgent)}{" "}
                      {s.current && (
                        <Badge variant="outline" color={tone.ok}>
                          this one
                        </Badge>
                      )}
                    </Table.Td>
                    <Table.Td>{s.ip || "–"}</Table.Td>
                    <Table.Td>{when(s.createdAt)}</Table.Td>
                    <Table.Td>{when(s.lastUsedAt)}</Table.Td>
                    <Table.Td>{when(s.expiresAt)}</Table.Td>
                    <Table.Td>
                      <ConfirmButton
                        size="xs"
                        variant="default"
                        label={s.current ? "Sign out" : "Revoke"}
                        question={
                          s.current
                            ? "End this session? You are signed out."
                            : `End the session of ${describeAgent(s.userAgent)}?`
                        }
                        confirm={s.current ? "Sign out" : "Revoke"}
                        onConfirm={() => revoke(s.id, s.current)}
                      />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryState>
    </Section>
  );
}
