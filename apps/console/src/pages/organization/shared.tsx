/** Pieces the organization page's tabs share. */
import { Alert, Button, Code, CopyButton, Group, Stack, Text } from "@mantine/core";

/** A secret the API returns once: shown with a copy button until dismissed, never again. */
export function SecretOnce({
  title,
  secret,
  command,
  onDismiss,
}: {
  title: string;
  secret: string;
  command?: string;
  onDismiss: () => void;
}) {
  return (
    <Alert color="yellow" variant="light" title={title} role="status" data-testid="secret-once">
      <Stack gap="xs">
        <Text size="sm">Copy it now: it is not shown again (the server keeps only its hash).</Text>
        <Code block data-testid="secret-value">
          {command ?? secret}
        </Code>
        <Group>
          <CopyButton value={command ?? secret}>
            {({ copied, copy }) => (
              <Button size="xs" onClick={copy}>
                {copied ? "Copied" : command ? "Copy the command" : "Copy"}
              </Button>
            )}
          </CopyButton>
          <Button size="xs" variant="default" onClick={onDismiss}>
            Done
          </Button>
        </Group>
      </Stack>
    </Alert>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "–");
