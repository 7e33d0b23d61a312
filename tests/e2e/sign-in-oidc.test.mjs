// Single sign-on in Chromium: a new user signs in through the OpenID provider scripts/e2e.sh
// started (scripts/oidc-provider.mjs), lands with the role its group maps to (olga is in
// granary-operators: operator), orders a granule, and signs out.
//
//   E2E_PORT=8861 E2E_S3_PORT=8862 E2E_OIDC_PORT=8863 scripts/e2e.sh tests/e2e/sign-in-oidc.test.mjs
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BASE_URL, callApi, launchChromium, openPage, pageText, shoot } from './browser.mjs';

const ARCHIVE_WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);

/** @type {import('playwright-core').Browser | undefined} */
let browser;

before(async () => {
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
});

/**
 * An archived demo granule with every file in the disk cache, once the worker has archived it.
 * @param {import('playwright-core').BrowserContext} context
 */
async function cachedGranule(context) {
  const deadline = Date.now() + ARCHIVE_WAIT_MS;
  for (;;) {
    const answer = await callApi(context, 'GET', '/api/v1/granules/?collection=GHRSST_OISST_L4.2.1');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    if (answer.body.results.length > 0) return answer.body.results[0];
    assert.ok(Date.now() < deadline, `no archived granule after ${ARCHIVE_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

test('a new user signs in through the OpenID provider, orders a granule and signs out', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 1280, height: 900 });
  try {
    await page.goto(`${BASE_URL}/login?next=${encodeURIComponent('/cart')}`, { waitUntil: 'load' });
    await shoot(page, 'sign-in-login-page.png');
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();

    // The provider's own sign-in page (oidc-provider's development pages).
    await page.waitForURL((url) => url.origin !== BASE_URL);
    await page.locator('input[name="login"]').fill('olga');
    await page.locator('input[name="password"]').fill('any password');
    await shoot(page, 'sign-in-provider.png');
    await page.locator('button[type="submit"]').click();

    // Back in Granary, where `next` said, signed in with the role the group maps to.
    await page.waitForURL((url) => url.origin === BASE_URL && url.pathname === '/cart');
    // the provider's development pages ask for a web font and a favicon they cannot have:
    // only Granary's own pages are held to a clean console
    consoleErrors.length = 0;
    const menu = page.locator('.user-menu');
    await menu.getByRole('button', { name: 'Log out' }).waitFor();
    assert.match(await menu.innerText(), /olga/);
    assert.match(await menu.innerText(), /operator/i);
    const me = await callApi(context, 'GET', '/api/v1/me/');
    assert.equal(me.body.username, 'olga');
    assert.equal(me.body.role, 'operator');

    // An order, through the granule's page and the cart.
    const granule = await cachedGranule(context);
    await page.goto(`${BASE_URL}/granules/${granule.id}`, { waitUntil: 'load' });
    await page.getByRole('button', { name: `Add ${granule.granule_id} to the cart` }).click();
    await page.getByRole('link', { name: /is in the cart/ }).waitFor();
    await page.getByRole('link', { name: 'Cart, 1 granule' }).click();
    await page.getByRole('button', { name: /^Order 1 granule/ }).click();
    await page.waitForURL((url) => /^\/orders\/\d+$/.test(url.pathname));
    const orderId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByRole('heading', { name: new RegExp(`Order ${orderId}`) }).waitFor();
    const order = await callApi(context, 'GET', `/api/v1/orders/${orderId}/`);
    assert.equal(order.status, 200, JSON.stringify(order.body));
    await shoot(page, 'sign-in-order.png');

    assert.deepEqual(consoleErrors, [], `the browser console logged errors: ${consoleErrors}`);

    // Signing out ends the session.
    await menu.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Log in' }).waitFor();
    assert.deepEqual(consoleErrors, [], `the page asked as nobody after the logout: ${consoleErrors}`);
    const after = await callApi(context, 'GET', '/api/v1/me/');
    assert.equal(after.body.authenticated, false);
    assert.equal((await callApi(context, 'GET', `/api/v1/orders/${orderId}/`)).status, 401);
  } catch (error) {
    await shoot(page, 'sign-in-failure.png');
    throw new Error(`${error}\nThe page says:\n${await pageText(page)}`);
  } finally {
    await context.close();
  }
});
