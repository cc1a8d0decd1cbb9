/**
 * Input descriptions in the body text colour: Mantine's "dimmed" grey falls
 * below the WCAG contrast ratio (axe: color-contrast) in the light theme.
 */
export const readableDescription = { description: { color: "var(--mantine-color-text)" } } as const;
