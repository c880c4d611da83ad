#!/usr/bin/env node
// Real-browser test of the HTML report: Debian's headless Chromium (never a downloaded browser)
// driven by playwright-core. Loads the report from a file:// URL and checks that the page raises
// no JavaScript or console errors, fetches nothing from the network, shows every section, that
// sorting and filtering work, that hostile strings never execute, and that the static content
// is there with JavaScript off. Saves a full-page screenshot.
//
// It also checks the answer sections (the verdict per generation pair, the speedup heatmap,
// per-kernel rooflines, and the model layers when a workloads.json was given: a speedup or its
// reason per layer and pair, a layer's steps opening and sorting), that no element outside a
// scrolling table is wider than a 1280 px viewport, and the page weight (< 3 MB; the main job's
// full report is held to it by report_main_page_weight, tests/report/tests.cmake).
//
// Nothing here depends on the machine's speed or load: the test waits for the page's own ready
// signal (data-gs-ready on <html>, set by reports/assets/report.js once the page is loaded and
// laid out) and sets no Playwright timeout (0 = none), so only ctest's TIMEOUT bounds it. The
// load time is printed on every run for information, never asserted (a speed belongs to a
// benchmark, not a test).
//
// With --incomplete=I/N (the report of a merge that lacks shard I of N) it checks that the
// first screen says the results are incomplete and names shard I/N and jobs not run, and that
// every generation pair's speedup is marked partial; with --interrupted=J/N too (shard J was
// merged but interrupted) that a job of shard J is named as interrupted and J is not a missing
// shard.
//
// usage: node report_browser_test.mjs REPORT.html SCREENSHOT.png [--hostile] [--top-shot=PNG]
//        [--drill-shot=PNG] [--incomplete=I/N [--interrupted=J/N]]
// (--top-shot saves the first screen, the README's reports/screenshot.png; --drill-shot one
// drill-down, the per-kernel rooflines, reports/screenshot-drilldown.png)
// exit: 0 all passed, 1 a check failed, 77 chromium or playwright-core missing (skipped) unless
// CI is set, in which case missing tools fail with a clear message.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const CHROMIUM = process.env.GS_CHROMIUM || '/usr/bin/chromium';
const [reportPath, shotPath] = process.argv.slice(2);
const hostile = process.argv.includes('--hostile');
const topShot = (process.argv.find((a) => a.startsWith('--top-shot=')) || '').slice(11);
const drillShot = (process.argv.find((a) => a.startsWith('--drill-shot=')) || '').slice(13);
const missingShard = (process.argv.find((a) => a.startsWith('--incomplete=')) || '').slice(13);
const interruptedShard = (process.argv.find((a) => a.startsWith('--interrupted=')) || '').slice(14);
const MAX_BYTES = 3 * 1024 * 1024;
const inCI = !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0';

function missing(what) {
  if (inCI) {
    console.error(`FAIL: ${what} (CI=true: the browser test must run; .ci/test installs it)`);
    process.exit(1);
  }
  console.error(`SKIP: ${what}`);
  process.exit(77);
}

if (!reportPath || !shotPath) {
  console.error('usage: node report_browser_test.mjs REPORT.html SCREENSHOT.png [--hostile]');
  process.exit(2);
}
if (!fs.existsSync(reportPath)) {
  console.error(`FAIL: report not found: ${reportPath}`);
  process.exit(1);
}
if (!fs.existsSync(CHROMIUM)) missing(`${CHROMIUM} not found (apt-get install chromium)`);
let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch (e) {
  missing(`playwright-core not installed (cd tests/browser && npm ci): ${e.message}`);
}

let passed = 0;
let failed = 0;
function check(ok, name, detail = '') {
  if (ok) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`not ok - ${name}${detail ? ': ' + detail : ''}`);
  }
}

const SECTIONS = ['verdict', 'heatmap', 'rooflines', 'models', 'summary', 'generations', 'portability',
  'engines', 'timelines', 'correctness', 'baseline', 'variants', 'whatif'];
const url = pathToFileURL(path.resolve(reportPath)).href;

async function openContext(javaScriptEnabled) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gs-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    timeout: 0, // no launch timeout: ctest's TIMEOUT bounds the test
    headless: true,
    javaScriptEnabled,
    viewport: { width: 1280, height: 800 }, // a laptop screen
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  ctx.setDefaultTimeout(0); // every action, wait and screenshot: no timeout of its own
  ctx.setDefaultNavigationTimeout(0);
  const external = [];
  // Anything that is not the report itself is an external load: refuse it and remember it.
  await ctx.route('**/*', (route) => {
    const u = route.request().url();
    if (u === url || u.startsWith('data:')) return route.continue();
    external.push(u);
    return route.abort();
  });
  return { ctx, dir, external };
}

async function close({ ctx, dir }) {
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

// visible rows of the jobs table, as {gen, status, v: [data-v of column i]}
async function jobRows(page, col, sel = 'table.jobs tbody tr') {
  return page.$$eval(sel, (rows, c) => rows.filter((r) => !r.hidden).map((r) => ({
    gen: r.getAttribute('data-gen'),
    status: r.getAttribute('data-status'),
    v: c >= 0 && r.cells[c] ? r.cells[c].getAttribute('data-v') : null,
  })), col);
}

const s = await openContext(true);
try {
  const page = s.ctx.pages()[0] || await s.ctx.newPage();
  const errors = [];
  const dialogs = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  // a script error before the ready signal would leave the page never ready: stop waiting then
  const broken = new Promise((resolve) => page.once('pageerror', resolve));
  await page.goto(url, { waitUntil: 'load', timeout: 0 });
  await Promise.race([broken,
    page.waitForSelector('html[data-gs-ready]', { state: 'attached', timeout: 0 }).catch(() => {})]);
  const ready = (await page.$('html[data-gs-ready]')) !== null;
  check(ready, 'the page signals ready (data-gs-ready)', errors.join(' | '));
  if (!ready) {
    await close(s);
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(1);
  }
  const loadMs = await page.evaluate(() => {
    const n = performance.getEntriesByType('navigation')[0];
    return n ? n.loadEventEnd - n.startTime : NaN;
  });
  const bytes = fs.statSync(reportPath).size;
  check(bytes < MAX_BYTES, 'page weight under 3 MB', `${(bytes / 1048576).toFixed(2)} MiB`);
  console.log(`# page ${(bytes / 1048576).toFixed(2)} MiB, load ${Math.round(loadMs)} ms (information only)`);

  // the answer first: verdict cards (one per generation pair), heatmap, per-kernel rooflines
  const gensInPage = await page.$$eval('#heatmap thead th', (t) => t.length - 1);
  const verdicts = await page.$$eval('#verdict .verdict h3', (h) => h.map((x) => x.textContent));
  check(gensInPage < 2 || (verdicts.length >= 1 &&
    verdicts.every((t) => /^\S+ vs \S+: (\d[\d.]*× (faster|slower)|no common passing job)/.test(t))),
  'verdict states a geomean speedup per generation pair', JSON.stringify(verdicts));
  const firstScreen = await page.evaluate(() => {
    const v = document.querySelector('#verdict');
    return v ? v.getBoundingClientRect().top < window.innerHeight : false;
  });
  check(firstScreen, 'the verdict is on the first screen');
  // an incomplete results file says so on the first screen, names what is missing, and no
  // speedup from a pair that lost jobs reads as the whole answer
  const notice = await page.evaluate(() => {
    const n = document.querySelector('#incomplete');
    if (!n) return null;
    const r = n.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, h: window.innerHeight, text: n.textContent,
      jobs: n.querySelectorAll('ul.notrun li').length };
  });
  if (missingShard) {
    check(!!notice && notice.top >= 0 && notice.top < notice.h,
      'incomplete: the notice is on the first screen', JSON.stringify(notice && [notice.top, notice.h]));
    check(!!notice && notice.text.includes(`Missing shards: ${missingShard}`),
      `incomplete: the notice names the missing shard ${missingShard}`, notice ? notice.text.slice(0, 300) : '');
    check(!!notice && notice.jobs > 0 && new RegExp(`\\(shard ${missingShard}\\)`).test(notice.text),
      'incomplete: the notice names the jobs not run, each with its shard', notice ? `${notice.jobs} listed` : '');
    const partial = await page.$$eval('#verdict .verdict', (v) => v.map((x) => [x.getAttribute('data-partial'),
      x.querySelector('h3').textContent]));
    check(partial.length > 0 && partial.every(([p, h]) => p === '1' && /partial/.test(h)),
      'incomplete: every generation pair\'s speedup is marked partial', JSON.stringify(partial));
    const verdictTop = await page.$eval('#verdict', (v) => v.getBoundingClientRect().top);
    check(verdictTop > notice.top, 'incomplete: the notice comes before the verdict');
    if (interruptedShard) {
      const missingList = notice ? (notice.text.match(/Missing shards: ([^.]*)\./) || ['', ''])[1] : '';
      check(!!notice && notice.text.includes(`(shard ${interruptedShard}, interrupted)`) &&
        !missingList.includes(interruptedShard),
      `incomplete: a job of interrupted shard ${interruptedShard} is named as interrupted, the shard not as missing`,
      notice ? notice.text.slice(0, 300) : '');
    }
    const clean = await page.evaluate(() => /No job failed\./.test(document.body.textContent));
    check(!clean, 'incomplete: no "No job failed." on results with jobs not run');
  } else {
    check(notice === null, 'complete results: no incomplete notice');
    const partial = await page.$$('#verdict .verdict[data-partial]');
    check(partial.length === 0, 'complete results: no speedup marked partial');
  }
  const heatCells = await page.$$eval('#heatmap td', (t) => t.filter((x) => /\d×/.test(x.textContent)).length);
  check(gensInPage < 2 || heatCells > 0, 'speedup heatmap has speedups', `${heatCells}`);
  const roofs = await page.$$eval('#rooflines figure.roof', (f) => f.map((x) => x.querySelectorAll('circle').length));
  check(roofs.length > 0 && roofs.every((n) => n >= 1), 'per-kernel rooflines with a point per generation',
    JSON.stringify(roofs.slice(0, 10)));
  // no element wider than the viewport, outside the tables that scroll on purpose
  const wide = await page.evaluate(() => {
    const w = window.innerWidth, out = [];
    for (const e of document.querySelectorAll('body *')) {
      if (e.closest('.scroll') || e.closest('details:not([open])')) continue;
      const r = e.getBoundingClientRect();
      if (r.width > w + 1) out.push(`${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}.${e.className}: ${Math.round(r.width)}px`);
    }
    return out;
  });
  check(wide.length === 0, 'no element wider than the 1280 px viewport', wide.slice(0, 5).join('; '));
  // reasons never wrap one character per line: no reason cell narrower than 8 em
  const narrow = await page.$$eval('td.reason', (t) => t.filter((x) => x.offsetParent && x.textContent.length > 20 &&
    x.getBoundingClientRect().width < 100).length);
  check(narrow === 0, 'reason cells keep a readable width', `${narrow} narrow`);

  for (const id of SECTIONS) {
    check(await page.isVisible(`section#${id}`), `section #${id} is visible`);
  }
  // model layers (a model sweep's workloads.json given): one table per generation pair, each
  // with a speedup or the reason there is none, and the steps table opens and sorts
  const pairs = await page.$$eval('#models table.models-pair', (t) => t.map((x) =>
    [...x.querySelectorAll('tbody tr')].map((r) => r.cells[4].textContent)));
  if (pairs.length) {
    check(pairs.every((rows) => rows.length > 0 && rows.every((c) => /^\d[\d.]*×$|^— \S/.test(c))),
      'model layers: each pair states a speedup or why it has none', JSON.stringify(pairs));
    check(pairs.flat().some((c) => /×$/.test(c)), 'model layers: some layer has a speedup');
    await page.click('#models details.model-steps > summary');
    const steps = '#models details.model-steps table';
    check(await page.isVisible(steps), 'model layers: a layer\'s steps open');
    await page.click(`${steps} thead th:nth-child(5)`);
    const v = await page.$eval(steps, (t) => [...t.tBodies[0].rows].map((x) => x.cells[4].getAttribute('data-v'))
      .filter((x) => x !== '').map(Number)); // the first layer's table, the one clicked
    check(v.length > 1 && v.every((x, i) => i === 0 || x >= v[i - 1]),
      'model layers: steps sort by time', v.join(','));
  }
  check(await page.isVisible('#filters'), 'filter controls shown when JavaScript runs');

  // the every-job table is collapsed under the compact correctness table: open it
  await page.click('details.alljobs > summary');
  // sorting: the time column of the jobs table, ascending then descending
  const headers = await page.$$eval('#jobs thead th', (ths) => ths.map((t) => t.textContent));
  const col = headers.indexOf('time');
  check(col >= 0, 'jobs table has a time column', JSON.stringify(headers));
  const nums = (rows) => rows.map((r) => r.v).filter((v) => v !== '' && v !== null).map(Number);
  const sorted = (a, dir) => a.every((x, i) => i === 0 || dir * (x - a[i - 1]) >= 0);
  await page.click(`#jobs thead th:nth-child(${col + 1})`);
  let v = nums(await jobRows(page, col, '#jobs tbody tr'));
  check(v.length > 1 && sorted(v, 1), 'clicking "time" sorts ascending', v.slice(0, 8).join(','));
  check((await page.getAttribute(`#jobs thead th:nth-child(${col + 1})`, 'aria-sort')) === 'ascending',
    'sorted header carries aria-sort=ascending');
  const allRows = await jobRows(page, col, '#jobs tbody tr');
  const lastKnown = allRows.findIndex((r) => r.v === '');
  check(lastKnown < 0 || allRows.slice(lastKnown).every((r) => r.v === ''),
    'jobs without a time sort last');
  await page.click(`#jobs thead th:nth-child(${col + 1})`);
  v = nums(await jobRows(page, col, '#jobs tbody tr'));
  check(v.length > 1 && sorted(v, -1), 'clicking again sorts descending', v.slice(0, 8).join(','));
  // keyboard: Enter on a focused header sorts too
  await page.focus('#jobs thead th:nth-child(1)');
  await page.keyboard.press('Enter');
  const ids = await page.$$eval('#jobs tbody tr td:first-child', (t) => t.map((x) => x.textContent));
  check(ids.every((x, i) => i === 0 || ids[i - 1].localeCompare(x) <= 0), 'Enter on a header sorts by text');

  // filtering by generation
  const total = (await jobRows(page, -1)).length;
  const gens = await page.$$eval('#f-gen option', (o) => o.map((x) => x.value).filter(Boolean));
  check(gens.length >= 2, 'generation filter lists the generations', gens.join(','));
  const g = gens[gens.length - 1];
  await page.selectOption('#f-gen', g);
  let rows = await jobRows(page, -1);
  check(rows.length > 0 && rows.length < total && rows.every((r) => r.gen.split('|').includes(g)),
    `filter generation=${g} keeps only its jobs`, `${rows.length} of ${total}`);
  const countText = await page.textContent('#f-count');
  check(/\d+ of \d+ rows shown/.test(countText), 'filter shows a row count', countText);

  // filtering by status (combined with the generation filter reset)
  await page.click('#f-reset');
  check((await jobRows(page, -1)).length === total, 'reset shows every job again');
  const sts = await page.$$eval('#f-status option', (o) => o.map((x) => x.value).filter(Boolean));
  const st = sts.find((x) => x !== 'pass') || sts[0];
  await page.selectOption('#f-status', st);
  rows = await jobRows(page, -1);
  check(rows.length > 0 && rows.every((r) => r.status === st), `filter status=${st} keeps only those jobs`,
    `${rows.length} rows`);
  // the portability matrix follows: only kernel rows with a job of that status stay
  const mx = await page.$$eval('table.matrix tbody tr', (r) => r.map((x) => [x.hidden, x.getAttribute('data-status')]));
  // (a report whose jobs all passed has no row to hide: the filtered rows must still match)
  check((mx.some((x) => x[0]) || sts.every((x) => x === 'pass')) &&
    mx.filter((x) => !x[0]).every((x) => x[1].split('|').includes(st)),
  `portability matrix rows follow the status filter`, JSON.stringify(mx));
  await page.click('#f-reset');

  // hover text: portability cells carry their per-shape details in title (works with JS off too)
  const title = await page.getAttribute('table.matrix td.cell', 'title');
  check(!!title && /: (pass|fail|unsupported|does-not-fit|crash|timeout|deadlock|error)/.test(title),
    'portability cells have per-shape status in their tooltip', title || '');

  // charts rendered with a size
  const svgs = await page.$$eval('svg', (l) => l.filter((e) => e.getBoundingClientRect().width > 50).length);
  check(svgs >= 3, 'inline SVG charts are laid out', `${svgs}`);
  // works at a laptop width: nothing forces the page itself to scroll sideways
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, 'no horizontal page overflow at 1366 px', `${overflow}px`);

  if (hostile) {
    const text = await page.textContent('body');
    check(text.includes('<script>alert(1)</script>'), 'hostile config name renders as text');
    const imgs = await page.$$('img');
    check(imgs.length === 0, 'hostile <img> in a kernel name is not an element');
    const scripts = await page.$$('script');
    check(scripts.length === 1, 'the only script element is the report\'s own', `${scripts.length}`);
  }
  check(dialogs.length === 0, 'no alert/confirm dialog was opened', dialogs.join(' | '));
  check(errors.length === 0, 'no JavaScript or console errors', errors.join(' | '));
  check(s.external.length === 0, 'no request left the file', s.external.join(' '));

  if (topShot) {
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: topShot, fullPage: false });
  }
  if (drillShot) {
    await page.evaluate(() => document.querySelector('#rooflines').scrollIntoView());
    await page.screenshot({ path: drillShot, fullPage: false });
  }
  fs.mkdirSync(path.dirname(path.resolve(shotPath)), { recursive: true });
  await page.screenshot({ path: shotPath, fullPage: true });
  check(fs.statSync(shotPath).size > 10000, `full-page screenshot saved to ${shotPath}`);
} finally {
  await close(s);
}

// JavaScript off: the static report is all there, the controls stay hidden
const n = await openContext(false);
try {
  const page = n.ctx.pages()[0] || await n.ctx.newPage();
  await page.goto(url, { waitUntil: 'load', timeout: 0 }); // no script, so no ready signal
  let all = true;
  for (const id of SECTIONS) all = all && await page.isVisible(`section#${id}`);
  check(all, 'JavaScript off: every section is visible');
  check(!(await page.isVisible('#filters')), 'JavaScript off: filter controls stay hidden');
  const rows = await page.$$eval('#jobs tbody tr', (r) => r.filter((x) => !x.hidden).length);
  check(rows > 0, 'JavaScript off: the jobs table has its rows', `${rows}`);
} finally {
  await close(n);
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
