/** An empty list says what to do next, not just "nothing here". */
import { Paper, Stack, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";

export function EmptyHint({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Paper withBorder p="lg" radius="md">
      <Stack gap="xs">
        <Title order={3} size="h4">
          {title}
        </Title>
        <Text component="div" size="sm">
          {children}
        </Text>
      </Stack>
    </Paper>
  );
}

/** The next step of an empty fleet: the enrolment of a router. */
export function EnrolHint() {
  const server = window.location.origin;
  return (
    <EmptyHint title="No devices yet">
      Create a registration token (<code>POST /api/tokens</code>, or <code>tern tokens create</code>), then on each router run{" "}
      <code>tern-agent enroll --server {server} --token &lt;token&gt;</code>. The router appears here as pending; approve it to
      bring it online.
    </EmptyHint>
  );
}
