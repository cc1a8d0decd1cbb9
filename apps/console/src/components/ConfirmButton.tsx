/** A destructive action behind a confirmation dialog (keyboard: Escape cancels, focus stays in the dialog). */
import { Button, type ButtonProps, Group, Modal, Text } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useEffect, useState } from "react";
import { ErrorAlert } from "./QueryState.tsx";

export function ConfirmButton({
  label,
  question,
  confirm,
  onConfirm,
  ...button
}: ButtonProps & { label: string; question: string; confirm: string; onConfirm: () => Promise<void> }) {
  const [opened, { open, close }] = useDisclosure();
  return (
    <>
      <Button {...button} onClick={open}>
        {label}
      </Button>
      <ConfirmDialog opened={opened} onClose={close} title={label} question={question} confirm={confirm} onConfirm={onConfirm} />
    </>
  );
}

/**
 * The dialog alone, for a list that shares one among its rows (a modal per
 * row costs every row's mount its hooks and listeners).
 */
export function ConfirmDialog({
  opened,
  onClose,
  title,
  question,
  confirm,
  onConfirm,
}: {
  opened: boolean;
  onClose: () => void;
  title: string;
  question: string;
  confirm: string;
  onConfirm: () => Promise<void>;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  // A dialog shared by a list's rows: the last row's refusal is not this one's.
  useEffect(() => {
    if (opened) setError(null);
  }, [opened]);
  const run = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
      onClose();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal opened={opened} onClose={onClose} title={title} centered closeButtonProps={{ "aria-label": "Close" }}>
      <Text mb="md">{question}</Text>
      {error !== null && <ErrorAlert title="Refused" error={error} />}
      <Group justify="flex-end" mt="md">
        <Button variant="default" onClick={onClose}>
          Cancel
        </Button>
        <Button color="red.8" loading={busy} onClick={() => void run()}>
          {confirm}
        </Button>
      </Group>
    </Modal>
  );
}
