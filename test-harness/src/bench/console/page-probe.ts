/**
 * What the console-pages case measures inside the page (Debian's Chromium
 * through Playwright): long tasks (PerformanceObserver 'longtask', from the
 * navigation on), the instant a selector first appears (MutationObserver),
 * and the frames while the devices table is scrolled to its end. Times are
 * performance.now() of the page: milliseconds since the navigation started.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "@playwright/test";

export interface LongTask {
  start: number;
  duration: number;
}

/**
 * The init script (page.addInitScript), before any script of the page runs.
 * Plain JavaScript text: a function passed from here would carry the helpers
 * tsx's compiler adds to named functions, which the page does not have.
 */
export function probeScript(selectors: string[]): string {
  return `(() => {
    const selectors = ${JSON.stringify(selectors)};
    window.__longTasks = [];
    window.__firstSeen = {};
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push({ start: e.startTime, duration: e.duration });
    }).observe({ type: "longtask", buffered: true });
    const look = () => {
      for (const s of selectors) if (!(s in window.__firstSeen) && document.querySelector(s)) window.__firstSeen[s] = performance.now();
      return selectors.every((s) => s in window.__firstSeen);
    };
    const start = () => {
      if (look()) return;
      const observer = new MutationObserver(() => look() && observer.disconnect());
      observer.observe(document, { childList: true, subtree: true, attributes: true });
    };
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
  })()`;
}

/** Waits until every selector was seen; answers when (ms since navigation). */
export async function firstSeen(page: Page, selectors: string[], timeoutMs: number): Promise<Record<string, number>> {
  const all = `${JSON.stringify(selectors)}.every((s) => s in window.__firstSeen)`;
  await page.waitForFunction(all, undefined, { timeout: timeoutMs, polling: 50 });
  return (await page.evaluate("window.__firstSeen")) as Record<string, number>;
}

/** The long tasks that started within [from, to). */
export async function longTasks(page: Page, from = 0, to = 1e12): Promise<LongTask[]> {
  return (await page.evaluate(
    `window.__longTasks.filter((t) => t.start >= ${Number(from)} && t.start < ${Number(to)})`,
  )) as LongTask[];
}

export interface ScrollRun {
  /** Frames drawn while scrolling (requestAnimationFrame callbacks). */
  frames: number;
  durationMs: number;
  /** Intervals between frames. */
  frameMs: number[];
  start: number;
  end: number;
  /** The table reached its end (scrollTop at the bottom, its last row rendered). */
  reachedEnd: boolean;
  rowsRendered: number;
}

/**
 * Scrolls the scrollable ancestor of the first `rowSelector` to its end by
 * `stepViewports` of its height per frame (a fast flick, the worst case of a
 * virtual table: a new window of rows every frame).
 */
export function scrollToEnd(page: Page, rowSelector: string, stepViewports: number): Promise<ScrollRun> {
  return page.evaluate(`new Promise((resolve) => {
    const selector = ${JSON.stringify(rowSelector)};
    const step = ${Number(stepViewports)};
    let box = document.querySelector(selector)?.parentElement ?? null;
    while (box && box.scrollHeight <= box.clientHeight + 1) box = box.parentElement;
    // A table that fits (the 10-device baseline): nothing to scroll.
    if (!box) {
      const now = performance.now();
      return resolve({ frames: 0, durationMs: 0, frameMs: [], start: now, end: now, reachedEnd: true,
        rowsRendered: document.querySelectorAll(selector).length });
    }
    const scroller = box;
    const times = [];
    const start = performance.now();
    const finish = (t) => {
      times.push(t);
      const end = performance.now();
      const bottom = scroller.scrollHeight - scroller.clientHeight;
      const rows = [...scroller.querySelectorAll(selector)];
      const last = rows.at(-1)?.getBoundingClientRect();
      const view = scroller.getBoundingClientRect();
      resolve({
        frames: times.length,
        durationMs: end - start,
        frameMs: times.slice(1).map((x, i) => x - times[i]),
        start,
        end,
        reachedEnd: scroller.scrollTop >= bottom - 1 && Boolean(last && last.bottom <= view.bottom + 2),
        rowsRendered: rows.length,
      });
    };
    const frame = (now) => {
      times.push(now);
      const bottom = scroller.scrollHeight - scroller.clientHeight;
      // At the end: one more frame, which renders the last window of rows.
      if (scroller.scrollTop >= bottom - 1) return requestAnimationFrame(finish);
      scroller.scrollTop = Math.min(bottom, scroller.scrollTop + scroller.clientHeight * step);
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  })`) as Promise<ScrollRun>;
}

/**
 * With `--profile DIR`: the page's own V8 CPU profile (Chromium's Profiler
 * domain, through CDP) over `work`, written as DIR/`name`.cpuprofile for
 * test-harness/src/bench/profile.ts. Without a directory, just runs `work`.
 */
export async function withPageProfile<T>(page: Page, dir: string | undefined, name: string, work: () => Promise<T>): Promise<T> {
  if (!dir) return work();
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
  await cdp.send("Profiler.start");
  try {
    return await work();
  } finally {
    const { profile } = await cdp.send("Profiler.stop");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    await cdp.detach();
  }
}
