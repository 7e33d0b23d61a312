// Screenshots of every operator dashboard of a running Granary, as the operator sees them after
// a real ingest and download run (scripts/demo-traffic.sh), into var/screenshots/dash-*.png.
//
//   node scripts/dashboard-screenshots.mjs [BASE_URL] [SHOT...]   (default http://127.0.0.1:8000)
//
// SHOT names pick some (today, 30-days, throughput, overview, archive, queues, failures); all by
// default. DASH_QUEUE_WAIT_S waits that long for pending work on the Queues page (to catch a
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

// name: [page, what shows it is loaded, the section to shoot (whole page when null), prepare]
const SHOTS = {
  today: ['/dashboards', '#today-heading', '#today-heading'],
  '30-days': ['/dashboards', 'canvas', '#daily-heading'],
  throughput: ['/dashboards', 'canvas', '#throughput-heading'],
  overview: ['/dashboards', 'canvas', null],
  archive: ['/dashboards/archive', 'canvas', null],
  queues: ['/dashboards/queues', 'h1', null, pendingWork],
  failures: ['/dashboards/failures', '#ingest-failures-heading', null, openFailedGranules],
};

const names = wanted.length ? wanted : Object.keys(SHOTS);
const unknown = names.filter((name) => !(name in SHOTS));
if (unknown.length) throw new Error(`no such dashboard shot: ${unknown.join(', ')}`);

const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
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
    const file = `${SCREENSHOTS}dash-${name}.png`;
    if (section) {
      await page.locator('section.dash-section', { has: page.locator(section) }).screenshot({ path: file });
    } else {
      await page.screenshot({ path: file, fullPage: true });
    }
    console.log(`${file}  (${path})`);
  }
} finally {
  await browser.close();
}
