// End-to-end check of the home page against a running Granary (Django serving the built app).
//
//   GRANARY_URL=http://127.0.0.1:8000 npm run e2e
//
// Uses the system Chromium through playwright-core: no browser is ever downloaded.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { launchChromium, SCREENSHOTS } from './browser.mjs';

const BASE_URL = (process.env.GRANARY_URL || 'http://127.0.0.1:8000').replace(/\/+$/, '');
const EXPECTED_KEYS = (process.env.E2E_EXPECT_COLLECTIONS || 'MOD021KM.061,MOD10C1.061')
  .split(',')
  .map((key) => key.trim())
  .filter(Boolean);
const TIMEOUT_MS = 20_000;

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

// Runs even when a test failed, so no Chromium is left behind.
after(async () => {
  await browser?.close();
});

/**
 * Open the home page at one viewport, wait for the expected collections and take a screenshot.
 * @param {{ width: number, height: number }} viewport
 * @param {string} screenshotName
 */
async function checkHome(viewport, screenshotName) {
  assert.ok(browser, 'Chromium did not start');
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  /** @type {string[]} */
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));

  const screenshotPath = `${SCREENSHOTS}${screenshotName}`;
  try {
    let response;
    try {
      response = await page.goto(`${BASE_URL}/`, { waitUntil: 'load', timeout: TIMEOUT_MS });
    } catch (error) {
      const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
      throw new Error(`Could not open ${BASE_URL}/ (is the server running? set GRANARY_URL): ${reason}`);
    }
    assert.equal(response?.status(), 200, `GET / answered ${response?.status()}`);
    assert.equal(await page.title(), 'Granary');

    for (const key of EXPECTED_KEYS) {
      await page
        .getByText(key, { exact: true })
        .first()
        .waitFor({ state: 'visible', timeout: TIMEOUT_MS })
        .catch(async () => {
          const text = (await page.locator('main').innerText().catch(() => '')).slice(0, 500);
          const errors = consoleErrors.length ? `\nConsole errors:\n${consoleErrors.join('\n')}` : '';
          throw new Error(
            `Collection ${key} never appeared on the page. The page says:\n${text || '(nothing)'}${errors}`,
          );
        });
    }
    // The header must have settled too: either the user's name or the login link.
    await page.locator('.user-menu:not(:empty)').waitFor({ timeout: TIMEOUT_MS });

    // Nothing should stick out sideways, least of all on a phone.
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px at ${viewport.width}px wide`);

    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    // A screenshot of a failure is the most useful one.
    await page.screenshot({ path: screenshotPath, fullPage: true }).catch(() => {});
    await context.close();
  }
}

test('home page lists the demo collections', async () => {
  await checkHome({ width: 1280, height: 800 }, 'home.png');
});

test('home page works at phone width', async () => {
  await checkHome({ width: 390, height: 844 }, 'home-phone.png');
});
