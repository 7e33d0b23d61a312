// An order downloaded with its script, from the browser: a user orders three demo granules
// through the search and the cart, downloads the order's script from its page and runs it with
// python, slowed down and killed mid-file; one of the files was made unavailable on purpose
// (its cached copy deleted, its tape copies marked bad, as tests/distribution/test_granary_get.py
// does) before it ran; run again, the script resumes the cut file with a Range, every file it got matches
// the catalog's checksum (computed here from the bytes on disk), the failure manifest lists the
// lost file with the archive's reason, and the script exits non-zero.
//
//   E2E_PORT=8776 scripts/e2e.sh tests/e2e/portal-download.test.mjs
//
// Needs the demo data (seed_demo), a worker and beat. Screenshots: var/screenshots/download-*.png.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { BASE_URL, launchChromium, logIn, openPage, pageText, shoot } from './browser.mjs';

const RUN = Date.now();
// A user of its own, so no other journey's cart or orders get in the way.
const USER = { user: `downloader${RUN}`, password: `granary-${RUN}` };
const DAY = '2026-11-04';
const WAIT_MS = Number(process.env.E2E_ARCHIVE_WAIT_MS || 180_000);

/** @type {import('playwright-core').Browser | undefined} */
let browser;
/** @type {string} */
let folder = '';

/**
 * Run Python in Granary's Django (the journey's database and data root, from e2e.sh's environment).
 * @param {string} code
 */
function django(code) {
  return execFileSync('.venv/bin/python', ['manage.py', 'shell', '-c', code], { encoding: 'utf8' });
}

before(async () => {
  django(`from backend.accounts.services import create_user; create_user(${JSON.stringify(USER.user)}, "user", password=${JSON.stringify(USER.password)})`);
  browser = await launchChromium();
  folder = await mkdtemp(join(tmpdir(), 'granary-download-'));
});

after(async () => {
  await browser?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Run the order's script; resolves with its exit code and what it printed.
 * @param {string[]} args
 * @param {(child: import('node:child_process').ChildProcess) => Promise<void>} [meanwhile]
 */
function runScript(args, meanwhile) {
  const child = spawn('.venv/bin/python', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => { output += chunk; });
  child.stderr.on('data', (chunk) => { output += chunk; });
  const ended = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, output: () => output })));
  return { child, ended: /** @type {Promise<{ code: number | null, signal: string | null, output: () => string }>} */ (ended), meanwhile };
}

/**
 * @param {string} path
 * @param {string} kind checksum type as the catalog names it
 */
async function digest(path, kind) {
  return createHash(kind.toLowerCase().replace('-', '')).update(await readFile(path)).digest('hex');
}

/** @param {string} path */
async function sizeOf(path) {
  return stat(path).then((s) => s.size, () => -1);
}

test('an order downloaded by its script resumes a cut file and lists the file made unavailable', async () => {
  const { context, page, consoleErrors } = await openPage(browser, { width: 1280, height: 800 });
  try {
    await logIn(page, USER, '/search');

    // Three archived demo granules of one day, all in the disk cache.
    /** @type {any[]} */
    let granules = [];
    const deadline = Date.now() + WAIT_MS;
    while (granules.length < 3) {
      const answer = await (await context.request.get(`${BASE_URL}/api/v1/granules/?start=${DAY}&end=${DAY}&residency=cache&limit=50`)).json();
      granules = answer.results;
      assert.ok(Date.now() < deadline, `fewer than three archived granules of ${DAY}`);
      if (granules.length < 3) await sleep(1000);
    }
    /** @param {any} g */
    const dataFile = (g) => g.files.find((/** @type {any} */ f) => f.role === 'data');
    granules.sort((a, b) => dataFile(b).size - dataFile(a).size);
    const [big, other, lost] = [granules[0], granules[1], granules[2]];
    const bigFile = dataFile(big);
    const lostFile = dataFile(lost);
    assert.ok(bigFile.size > 60_000, `the largest demo file is only ${bigFile.size} bytes`);

    // Order them through the search and the cart.
    for (const g of [big, other, lost]) {
      await page.goto(`${BASE_URL}/search?q=${encodeURIComponent(g.granule_id)}`, { waitUntil: 'load' });
      const row = page.getByRole('region', { name: 'Results' }).getByRole('row', { name: new RegExp(g.granule_id.replaceAll('.', '\\.')) });
      await row.getByRole('button', { name: `Add ${g.granule_id} to the cart` }).click();
      await row.getByRole('link', { name: /is in the cart/ }).waitFor();
    }
    await page.getByRole('link', { name: 'Cart, 3 granules' }).click();
    await page.getByRole('button', { name: /^Order 3 granules/ }).click();
    await page.waitForURL((url) => /^\/orders\/\d+$/.test(url.pathname));
    const orderId = Number(new URL(page.url()).pathname.split('/').pop());
    await page.getByRole('heading', { name: new RegExp(`Order ${orderId}\\s*Ready`) }).waitFor({ timeout: WAIT_MS }).catch(async () => {
      throw new Error(`order ${orderId} never got ready. The page says:\n${await pageText(page)}`);
    });

    // The script, as the order page offers it.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download script' }).click()]);
    const script = join(folder, download.suggestedFilename());
    await download.saveAs(script);
    assert.equal(download.suggestedFilename(), `granary-order-${orderId}.py`);
    const out = join(folder, 'out');
    const target = (/** @type {any} */ g, /** @type {any} */ f) => join(out, `${g.collection}_${g.granule_id}`.replaceAll(':', '_'), f.name);
    const part = `${target(big, bigFile)}.part`;

    // One file made unavailable on purpose after the order was ready: its cached copy gone and
    // every tape copy bad.
    django([
      'from backend.archive import services as archive',
      'from backend.archive.models import CacheEntry, FileCopy',
      'from backend.catalog.models import File',
      `f = File.objects.get(pk=${lostFile.id})`,
      'CacheEntry.objects.filter(file=f).delete()',
      'archive.cache_path(f).unlink()',
      'FileCopy.objects.filter(file=f).update(state=FileCopy.State.BAD)',
    ].join('\n'));

    // First run: slowed to about ten seconds for the big file, killed a third of the way in.
    const rate = Math.max(4, Math.floor(bigFile.size / 10 / 1024));
    const first = runScript([script, '-o', out, '--limit-rate', `${rate}k`]);
    const killBy = Date.now() + 120_000;
    while ((await sizeOf(part)) < bigFile.size / 3) {
      if (first.child.exitCode !== null) assert.fail(`the script ended first: ${(await first.ended).output()}`);
      assert.ok(Date.now() < killBy, `${part} never reached a third of ${bigFile.size} bytes`);
      await sleep(50);
    }
    first.child.kill('SIGKILL');
    assert.equal((await first.ended).signal, 'SIGKILL');
    const held = await sizeOf(part);
    assert.ok(held >= bigFile.size / 3 && held < bigFile.size, `${held} of ${bigFile.size} bytes held`);
    assert.equal(await sizeOf(target(big, bigFile)), -1, 'the cut file was put in place');

    // Second run: resumes, and ends non-zero with the lost file in the failure manifest.
    const second = runScript([script, '-o', out]);
    const ended = await Promise.race([second.ended, new Promise((resolve) => setTimeout(resolve, 300_000).unref())]);
    if (!ended) assert.fail('the second run did not end in five minutes');
    assert.equal(ended.code, 1, ended.output());
    assert.match(ended.output(), new RegExp(`resuming at byte ${held} of ${bigFile.size}`));

    const manifest = JSON.parse(await readFile(join(out, 'granary-manifest.json'), 'utf8'));
    const rows = Object.fromEntries(manifest.files.map((/** @type {any} */ row) => [row.name, row]));
    assert.equal(rows[bigFile.name].outcome, 'ok');
    assert.equal(rows[bigFile.name].resumed_from, held);
    assert.equal(rows[bigFile.name].bytes_received, bigFile.size - held);
    for (const g of [big, other]) {
      for (const f of g.files) {
        // Fetched now, or on the first run and verified again now.
        assert.ok(['ok', 'skipped'].includes(rows[f.name].outcome), `${f.name}: ${JSON.stringify(rows[f.name])}`);
        assert.equal(await digest(target(g, f), f.checksum_type), f.checksum, `${f.name} differs from the catalog`);
      }
    }
    const failure = rows[lostFile.name];
    assert.equal(failure.outcome, 'failed');
    assert.match(failure.reason, /no readable copy/);
    assert.ok(manifest.complete_percent < 100);
    assert.equal(await sizeOf(target(lost, lostFile)), -1, 'the lost file was written');
    const text = await readFile(join(out, 'granary-manifest.txt'), 'utf8');
    assert.ok(text.includes(`FAILED   ${failure.path}`), text);
    assert.equal(await sizeOf(part), -1, 'a partial copy was left behind');

    // The order page says the same.
    await page.reload({ waitUntil: 'load' });
    const lostRow = page.getByRole('row', { name: new RegExp(lostFile.name.replaceAll('.', '\\.')) });
    await lostRow.getByText(/no readable copy/).waitFor();
    await shoot(page, 'download-order-failed-file.png');
    assert.deepEqual(consoleErrors, [], 'the browser console logged errors');
  } finally {
    await context.close();
  }
});
