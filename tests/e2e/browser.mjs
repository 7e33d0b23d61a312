// The one way the browser journeys start Chromium: Debian's build through playwright-core,
// with the flags this machine needs (no sandbox as root, no background network traffic).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

export const SCREENSHOTS = fileURLToPath(new URL('../../var/screenshots/', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export async function launchChromium() {
  await mkdir(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export const BASE_URL = (process.env.GRANARY_URL || 'http://127.0.0.1:8000').replace(/\/+$/, '');
export const TIMEOUT_MS = 20_000;

/** The demo's logins (seed_demo), or others given in the environment. */
export const OPERATOR = {
  user: process.env.E2E_OPERATOR || 'operator',
  password: process.env.E2E_OPERATOR_PASSWORD || 'granary-operator',
};
export const PROVIDER = {
  user: process.env.E2E_PROVIDER || 'modaps',
  password: process.env.E2E_PROVIDER_PASSWORD || 'granary-provider',
};
export const SCIENTIST = {
  user: process.env.E2E_USER || 'scientist',
  password: process.env.E2E_USER_PASSWORD || 'granary-scientist',
};

/**
 * A fresh browser context and page, with console errors collected.
 * @param {import('playwright-core').Browser | undefined} browser
 * @param {{ width: number, height: number }} viewport
 */
export async function openPage(browser, viewport) {
  if (!browser) throw new Error('Chromium did not start');
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(TIMEOUT_MS);
  /** @type {string[]} */
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
  return { context, page, consoleErrors };
}

/**
 * Log in through the SPA's login page and land on `next`.
 * @param {import('playwright-core').Page} page
 * @param {{ user: string, password: string }} login
 * @param {string} next
 */
export async function logIn(page, { user, password }, next) {
  await page.goto(`${BASE_URL}/login?next=${encodeURIComponent(next)}`, { waitUntil: 'load' });
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.waitForURL((url) => url.pathname === next);
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}

/**
 * What the page says, for failure messages.
 * @param {import('playwright-core').Page} page
 */
export async function pageText(page) {
  return (await page.locator('main').innerText().catch(() => '')).slice(0, 800);
}

/**
 * How far the page scrolls sideways (0 when it fits the window).
 * @param {import('playwright-core').Page} page
 */
export async function sidewaysOverflow(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/**
 * Save a full-page screenshot under var/screenshots/.
 * @param {import('playwright-core').Page} page
 * @param {string} name
 */
export async function shoot(page, name) {
  await page.screenshot({ path: `${SCREENSHOTS}${name}`, fullPage: true }).catch(() => {});
}

/**
 * Call the API with a context's session (and its CSRF token on unsafe methods); the body is
 * the parsed JSON, or the text when it is none.
 * @param {import('playwright-core').BrowserContext} context
 * @param {string} method
 * @param {string} path
 * @param {{ json?: unknown, bytes?: Buffer, headers?: Record<string, string> }} [body]
 */
export async function callApi(context, method, path, { json, bytes, headers = {} } = {}) {
  const token = (await context.cookies(BASE_URL)).find((cookie) => cookie.name === 'csrftoken')?.value ?? '';
  const response = await context.request.fetch(`${BASE_URL}${path}`, {
    method,
    headers: {
      Accept: 'application/json',
      'X-CSRFToken': token,
      Referer: `${BASE_URL}/`,
      ...(bytes ? { 'Content-Type': 'application/octet-stream' } : {}),
      ...headers,
    },
    data: bytes ?? json,
  });
  const text = await response.text();
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: response.status(), body: parsed };
}

/**
 * Upload a file into the provider's staging area (checksum declared, as a provider does); its
 * file spec for a bulk ingest request.
 * @param {import('playwright-core').BrowserContext} context
 * @param {string} path
 * @param {Buffer} bytes
 */
export async function stageFile(context, path, bytes) {
  const md5 = createHash('md5').update(bytes).digest('hex');
  const answer = await callApi(context, 'PUT', `/api/v1/ingest/uploads/${path}`, {
    bytes,
    headers: { 'X-Checksum-Type': 'MD5', 'X-Checksum': md5 },
  });
  assert.equal(answer.status, 201, `upload of ${path}: ${JSON.stringify(answer.body)}`);
  return { path, size: bytes.length, checksum_type: 'MD5', checksum: md5, role: 'data' };
}

/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Poll `check` every second until it answers something truthy, or fail saying `what` after
 * `waitMs`.
 * @template T
 * @param {() => Promise<T>} check
 * @param {string} what
 * @param {number} waitMs
 * @returns {Promise<T>}
 */
export async function until(check, what, waitMs) {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    assert.ok(Date.now() < deadline, `${what} after ${waitMs / 1000} s`);
    await sleep(1000);
  }
}
