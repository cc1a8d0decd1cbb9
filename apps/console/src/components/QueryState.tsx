/** Loading and error states of a query, the same on every page: the error shows the API's message and code. */
import { Alert, Button, Center, Group, Loader } from "@mantine/core";
import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { errorText } from "../api/errors.ts";

export function QueryState<T>({
  query,
  label,
  children,
}: {
  query: UseQueryResult<T>;
  label: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending)
    return (
      <Center p="xl">
        <Loader aria-label={`Loading ${label}`} />
      </Center>
    );
  if (query.isError) return <ErrorAlert title={`Cannot load ${label}`} error={query.error} retry={() => void query.refetch()} />;
  return <>{children(query.data)}</>;
}

export function ErrorAlert({ title, error, retry }: { title: string; error: unknown; retry?: () => void }) {
  return (
    <Alert color="red" title={title} role="alert" variant="light">
      <Group justify="space-between">
        <span>{errorText(error)}</span>
        {retry && (
          <Button size="xs" variant="default" onClick={retry}>
            Retry
          </Button>
        )}
      </Group>
    </Alert>
  );
}
