/** The list page above a resource's own page (/devices/:id → /devices), or null on any other page. */
export function listOf(pathname: string): string | null {
  const match = /^(\/[^/]+)\/[^/]+\/?$/.exec(pathname);
  return match ? match[1]! : null;
}
