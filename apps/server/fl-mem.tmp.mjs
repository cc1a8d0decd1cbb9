import { PGlite } from "@electric-sql/pglite";

const mb = (x) => Math.round(x / 1048576);
const show = (l) => {
  const m = process.memoryUsage();
  console.log(l, "rss", mb(m.rss), "ext", mb(m.external), "ab", mb(m.arrayBuffers), "heap", mb(m.heapUsed));
};
const sb = process.argv[2];
const dir = process.argv[3];
const opts = dir ? { dataDir: dir } : {};
if (sb) opts.startParams = [...PGlite.defaultStartParams, "-c", `shared_buffers=${sb}`];
const pg = await PGlite.create(opts);
show("created");
global.gc();
await new Promise((r) => setTimeout(r, 200));
global.gc();
show("gc");
await pg.exec(
  "create table if not exists t(id int primary key, v text); insert into t select g, repeat('x', 200) from generate_series(1,100000) g on conflict do nothing;",
);
for (let i = 0; i < 20; i++) await pg.query("select count(*), max(v) from t");
global.gc();
show("after work+gc");
console.log((await pg.query("show shared_buffers")).rows[0]);
