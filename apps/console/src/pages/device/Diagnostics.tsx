/**
 * The device page's Diagnostics panel: ping, traceroute or a DNS lookup run
 * on the router, its output lines shown as they stream in; Stop (or leaving
 * the page) closes the stream, which stops the command on the router.
 * Anyone who may read the device may run them (docs/server.md, "Remote actions").
 */
import { Button, Card, Code, Group, SegmentedControl, Text, TextInput, Title } from "@mantine/core";
import type { Device } from "@tern/client";
import { useEffect, useRef, useState } from "react";
import { type DiagnosticKind, runDiagnostic } from "../../api/diagnostics-stream.ts";
import { ErrorAlert } from "../../components/QueryState.tsx";

const KINDS: { value: DiagnosticKind; label: string }[] = [
  { value: "ping", label: "Ping" },
  { value: "traceroute", label: "Traceroute" },
  { value: "dns", label: "DNS lookup" },
];

export function Diagnostics({ device }: { device: Device }) {
  const [kind, setKind] = useState<DiagnosticKind>("ping");
  const [target, setTarget] = useState("");
  const [lines, setLines] = useState<string[]>([]);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const running = useRef<AbortController | null>(null);
  const [busy, setBusy] = useState(false);

  // Leaving the page stops a run on the router.
  useEffect(() => () => running.current?.abort(), []);

  const run = async () => {
    const abort = new AbortController();
    running.current = abort;
    setBusy(true);
    setLines([]);
    setOutcome(null);
    setError(null);
    const body = kind === "dns" ? { name: target.trim() } : { target: target.trim() };
    try {
      await runDiagnostic(
        device.id,
        kind,
        body,
        (event) => {
          if (event.type === "lines") setLines((old) => [...old, ...event.lines].slice(-500));
          else if (event.type === "result") setOutcome("done");
          else if (event.type === "error") setOutcome(`failed: ${event.message}`);
        },
        abort.signal,
      );
    } catch (err) {
      if (!abort.signal.aborted) setError(err);
      else setOutcome("stopped");
    } finally {
      running.current = null;
      setBusy(false);
    }
  };

  return (
    <Card withBorder padding="md" radius="md" component="section" aria-label="Diagnostics">
      <Title order={2} size="h4" mb="sm">
        Diagnostics
      </Title>
      <Text size="sm" c="dimmed" mb="sm">
        Runs on the router itself, from where it stands: its routes, its resolver.
      </Text>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy && target.trim()) void run();
        }}
      >
        <Group align="end">
          <SegmentedControl
            aria-label="Diagnostic"
            data={KINDS}
            value={kind}
            onChange={(v) => setKind(v as DiagnosticKind)}
            disabled={busy}
          />
          <TextInput
            label={kind === "dns" ? "Name to resolve" : "Target"}
            placeholder={kind === "dns" ? "example.com" : "192.0.2.1, 2001:db8::1 or a host name"}
            value={target}
            onChange={(e) => setTarget(e.currentTarget.value)}
            disabled={busy}
            w={320}
          />
          <Button type="submit" disabled={busy || !target.trim() || !device.isConnected}>
            Run
          </Button>
          {busy && (
            <Button variant="default" onClick={() => running.current?.abort()}>
              Stop
            </Button>
          )}
        </Group>
      </form>
      {!device.isConnected && (
        <Text size="sm" c="dimmed" mt="xs">
          The router is not connected: diagnostics run once it is.
        </Text>
      )}
      {error !== null && <ErrorAlert title="The server refused" error={error} />}
      {(lines.length > 0 || busy) && (
        <Code block mt="sm" aria-label="Diagnostic output" data-testid="diagnostic-output">
          {lines.join("\n") || "…"}
        </Code>
      )}
      {outcome && (
        <Text size="sm" mt="xs" aria-live="polite">
          {outcome}
        </Text>
      )}
    </Card>
  );
}
