// Plain node and the IPC channel, nothing else (no tsx): the runtime the bundled agent runs on, its baseline.
// JavaScript on purpose: a TypeScript worker would need the loader this baseline leaves out.
process.on("message", (m) => process.send({ id: m.id, ok: false, error: `unknown command ${m.cmd}` }));
process.on("disconnect", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));
process.send({});
