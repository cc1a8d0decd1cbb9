/**
 * The "New rollout" form (POST /api/agent-upgrades): a package, which devices
 * (every device, tags, an agent version, or devices by name), a maintenance
 * window, canaries, batch size and health time. The API's refusal lands on
 * the fields it names, with its code.
 */
import {
  Alert,
  Button,
  Group,
  MultiSelect,
  NumberInput,
  Paper,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@tern/client";
import { useMemo, useState } from "react";
import { errorText } from "../../api/errors.ts";
import { devicesQuery } from "../../api/queries.ts";
import { tern } from "../../api/tern.ts";
import { readableDescription } from "../../components/readable.ts";
import { useOrg } from "../../session/session-context.ts";
import { tagsOf } from "../devices/device-rows.ts";
import { packagesQuery, versionsQuery } from "./queries.ts";
import { ROLLOUT_DEFAULTS, type RolloutFormState, rolloutFieldErrors, rolloutRequest, type TargetKind } from "./rollout-form.ts";

const TARGETS: { value: TargetKind; label: string }[] = [
  { value: "tags", label: "Tags" },
  { value: "version", label: "Agent version" },
  { value: "devices", label: "Devices" },
  { value: "all", label: "All devices" },
];

export function NewRollout({ onDone }: { onDone: (id: string | null) => void }) {
  const org = useOrg();
  const queryClient = useQueryClient();
  const packages = useQuery(packagesQuery(org.id));
  const devices = useQuery(devicesQuery(org.id));
  const versions = useQuery(versionsQuery(org.id));
  const [form, setForm] = useState<RolloutFormState>(ROLLOUT_DEFAULTS);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const set = (part: Partial<RolloutFormState>) => setForm((f) => ({ ...f, ...part }));
  const tags = useMemo(() => tagsOf(devices.data ?? []), [devices.data]);
  const deviceOptions = useMemo(() => (devices.data ?? []).map((d) => ({ value: d.id, label: d.name })), [devices.data]);
  const { fields, rest } = rolloutFieldErrors(error);

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const rollout = await ok(tern.api.POST("/api/agent-upgrades", { body: rolloutRequest(form) }));
      await queryClient.invalidateQueries({ queryKey: ["upgrade", org.id] });
      onDone(rollout.id);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="new-rollout">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
        noValidate
      >
        <Stack>
          <Title order={2} size="h4" id="new-rollout">
            New rollout
          </Title>
          <Select
            label="Package"
            placeholder={packages.isError ? errorText(packages.error) : "Choose a package"}
            data={(packages.data ?? []).map((p) => ({ value: p.id, label: `${p.version} (${p.sha256.slice(0, 12)}…)` }))}
            value={form.package}
            onChange={(v) => set({ package: v })}
            error={fields.package}
            w={420}
          />
          <Stack gap={6}>
            <Text size="sm" fw={500} id="rollout-target">
              Devices
            </Text>
            <SegmentedControl
              aria-labelledby="rollout-target"
              w="fit-content"
              data={TARGETS}
              value={form.targetKind}
              onChange={(v) => set({ targetKind: v as TargetKind })}
            />
            {form.targetKind === "tags" && (
              <MultiSelect
                label="Tags"
                description="Devices with any of these tags"
                styles={readableDescription}
                data={tags}
                value={form.tags}
                onChange={(v) => set({ tags: v })}
                searchable
                error={fields.target}
                w={420}
              />
            )}
            {form.targetKind === "version" && (
              <Select
                label="Agent version"
                description="Devices running this version"
                styles={readableDescription}
                data={(versions.data ?? []).map((v) => ({ value: v.version, label: `${v.version} (${v.devices} devices)` }))}
                value={form.version}
                onChange={(v) => set({ version: v })}
                error={fields.target}
                w={420}
              />
            )}
            {form.targetKind === "devices" && (
              <MultiSelect
                label="Devices by name"
                data={deviceOptions}
                value={form.deviceIds}
                onChange={(v) => set({ deviceIds: v })}
                searchable
                limit={50}
                error={fields.target}
                w={420}
              />
            )}
            {form.targetKind === "all" && (
              <Text size="sm" c={fields.target ? "var(--mantine-color-error)" : undefined}>
                Every device of the organization ({devices.data?.length ?? "…"}); those on the version already are skipped.
                {fields.target && ` ${fields.target}`}
              </Text>
            )}
          </Stack>
          <Stack gap={6}>
            <Switch
              label="Only in a daily maintenance window (UTC)"
              checked={form.windowOn}
              onChange={(e) => set({ windowOn: e.currentTarget.checked })}
            />
            {form.windowOn && (
              <Group align="flex-start">
                <TextInput
                  label="Window start"
                  description="HH:MM, UTC"
                  styles={readableDescription}
                  value={form.windowStart}
                  onChange={(e) => set({ windowStart: e.currentTarget.value })}
                  error={fields.windowStart}
                  w={220}
                />
                <TextInput
                  label="Window end"
                  description="HH:MM, UTC (may wrap midnight)"
                  styles={readableDescription}
                  value={form.windowEnd}
                  onChange={(e) => set({ windowEnd: e.currentTarget.value })}
                  error={fields.windowEnd}
                  w={220}
                />
              </Group>
            )}
          </Stack>
          <SimpleGrid cols={{ base: 1, sm: 3 }} maw={720}>
            <NumberInput
              label="Canaries (%)"
              description="Upgraded first; a failure pauses"
              styles={readableDescription}
              value={form.canaryPercent}
              onChange={(v) => set({ canaryPercent: v })}
              error={fields.canaryPercent}
              allowDecimal={false}
            />
            <NumberInput
              label="Batch size"
              description="Devices upgraded at once"
              styles={readableDescription}
              value={form.batchSize}
              onChange={(v) => set({ batchSize: v })}
              error={fields.batchSize}
              allowDecimal={false}
            />
            <NumberInput
              label="Health timeout (s)"
              description="Back healthy within, or rolled back"
              styles={readableDescription}
              value={form.healthTimeoutSec}
              onChange={(v) => set({ healthTimeoutSec: v })}
              error={fields.healthTimeoutSec}
              allowDecimal={false}
            />
          </SimpleGrid>
          {rest && (
            <Alert color="red" title="The server refused" role="alert" variant="light">
              {errorText(error)}
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={busy}>
              Start rollout
            </Button>
            <Button variant="default" onClick={() => onDone(null)}>
              Cancel
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  );
}
