/** Theme-aware colours (CSS variables of app/global.css) for status text and badges. */
export const tone = {
  ok: "var(--tern-ok)",
  bad: "var(--tern-bad)",
  warn: "var(--tern-warn)",
  info: "var(--tern-info)",
  flag: "var(--tern-flag)",
  muted: "var(--tern-muted)",
} as const;
