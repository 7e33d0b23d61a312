// Screenshots of every operator dashboard of a running Granary (the seeded demo, or after a real
// run of scripts/demo-traffic.sh), at desktop (1280x800) and phone (390x844) width, into
// var/screenshots/dash-*.png (dash-NAME.png at desktop width, dash-NAME-phone.png on a phone).
// The *-numbers shots open every chart's table, to see that the tables fit their boxes.
//
//   node scripts/dashboard-screenshots.mjs [BASE_URL] [SHOT...]   (default http://127.0.0.1:8000)
//
// SHOT names pick some (today, 30-days, throughput, overview, overview-numbers, archive,
// archive-numbers, queues, failures); all by default. DASH_QUEUE_WAIT_S waits that long for pending work on the Queues page (to catch a
// delivery's migrations while they queue). E2E_OPERATOR / E2E_OPERATOR_PASSWORD pick the account.
import { launchChromium, SCREENSHOTS } from '../tests/e2e/browser.mjs';

const [, , base, ...wanted] = process.argv;
const BASE_URL = (base || process.env.GRANARY_URL || 'http://127.0.0.1:8000').replace(/\/+$/, '');
const USER = process.env.E2E_OPERATOR || 'operator';
const PASSWORD = process.env.E2E_OPERATOR_PASSWORD || 'granary-operator';
const QUEUE_WAIT_MS = Number(process.env.DASH_QUEUE_WAIT_S || 0) * 1000;

/** @typedef {import('playwright-core').Page} Page */

/** @param {Page} page */
async function openFailedGranules(page) {
  const closed = page.locator('button.disclosure[aria-expanded="false"]');
  while (await closed.count()) await closed.first().click();
  await page.waitForLoadState('networkidle');
}

/** @param {Page} page */
async function pendingWork(page) {
  if (!QUEUE_WAIT_MS) return;
  const deadline = Date.now() + QUEUE_WAIT_MS;
  while (Date.now() < deadline && !(await page.locator('table tbody tr').count())) {
    await page.waitForTimeout(1000);
    await page.reload();
    await page.locator('h1').waitFor();
    await page.waitForLoadState('networkidle');
  }
}

/** @param {Page} page */
async function openNumbers(page) {
  const closed = page.locator('details.chart-figure__data:not([open]) > summary');
  while (await closed.count()) await closed.first().click();
}

// name: [page, what shows it is loaded, the section to shoot (whole page when null), prepare]
const SHOTS = {
  today: ['/dashboards', '#today-heading', '#today-heading'],
  '30-days': ['/dashboards', 'canvas', '#daily-heading'],
  throughput: ['/dashboards', 'canvas', '#throughput-heading'],
  overview: ['/dashboards', 'canvas', null],
  'overview-numbers': ['/dashboards', 'canvas', null, openNumbers],
  archive: ['/dashboards/archive', 'canvas', null],
  'archive-numbers': ['/dashboards/archive', 'canvas', null, openNumbers],
  queues: ['/dashboards/queues', 'h1', null, pendingWork],
  failures: ['/dashboards/failures', '#ingest-failures-heading', null, openFailedGranules],
};

const names = wanted.length ? wanted : Object.keys(SHOTS);
const unknown = names.filter((name) => !(name in SHOTS));
if (unknown.length) throw new Error(`no such dashboard shot: ${unknown.join(', ')}`);

const VIEWPORTS = [
  ['', { width: 1280, height: 800 }],
  ['-phone', { width: 390, height: 844 }],
];

/**
 * Whether the page scrolls sideways (a table or chart wider than the screen).
 * @param {Page} page
 */
function sideways(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

const browser = await launchChromium();
try {
  for (const [suffix, viewport] of VIEWPORTS) {
    const page = await browser.newPage({ viewport });
    page.setDefaultTimeout(30_000);
    await page.goto(`${BASE_URL}/login?next=${encodeURIComponent('/dashboards')}`);
    await page.getByLabel('User name').fill(USER);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL((url) => url.pathname === '/dashboards');
    for (const name of names) {
      const [path, ready, section, prepare] = SHOTS[name];
      await page.goto(`${BASE_URL}${path}`);
      await page.locator(ready).first().waitFor();
      await page.waitForLoadState('networkidle');
      if (prepare) await prepare(page);
      const file = `${SCREENSHOTS}dash-${name}${suffix}.png`;
      if (section) {
        await page.locator('section.dash-section', { has: page.locator(section) }).screenshot({ path: file });
      } else {
        await page.screenshot({ path: file, fullPage: true });
      }
      const overflow = await sideways(page);
      console.log(`${file}  (${path})${overflow > 0 ? `  SCROLLS SIDEWAYS by ${overflow} px` : ''}`);
    }
    await page.close();
  }
} finally {
  await browser.close();
}
