/** A destructive action behind a confirmation dialog (keyboard: Escape cancels, focus stays in the dialog). */
import { Button, type ButtonProps, Group, Modal, Text } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useState } from "react";
import { ErrorAlert } from "./QueryState.tsx";

export function ConfirmButton({
  label,
  question,
  confirm,
  onConfirm,
  ...button
}: ButtonProps & { label: string; question: string; confirm: string; onConfirm: () => Promise<void> }) {
  const [opened, { open, close }] = useDisclosure();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <Button {...button} onClick={open}>
        {label}
      </Button>
      <Modal opened={opened} onClose={close} title={label} centered>
        <Text mb="md">{question}</Text>
        {error !== null && <ErrorAlert title="Refused" error={error} />}
        <Group justify="flex-end" mt="md">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button color="red.8" loading={busy} onClick={() => void run()}>
            {confirm}
          </Button>
        </Group>
      </Modal>
    </>
  );
}
