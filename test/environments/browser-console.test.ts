// The gateway console in a real browser: submit a job from the page, watch its delivery arrive,
// redeliver it and see the receiver's duplicate answer; hostile answers and URLs render as text.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startGateway, type Gateway, type GatewayOptions } from 'jobhook/testing';
import { root } from '../support/dist.js';
import { SECRET, serve, startReceiverApp } from '../gateway/console-support.js';
import { call } from '../gateway/support.js';
import { findChromium, launch } from './chromium.js';

const executablePath = findChromium();
/** Test artefacts (git-ignored); JOBHOOK_UPDATE_SCREENSHOTS=1 also refreshes the README's image. */
const artefacts = join(root, 'test-results');

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.skipIf(!executablePath)('the gateway console in chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launch(executablePath!);
    await mkdir(artefacts, { recursive: true });
  }, 60_000);
  afterAll(() => browser?.close());

  async function start(options: GatewayOptions = {}) {
    const gateway = await startGateway({ console: true, ...options });
    cleanups.push(() => gateway.close());
    return gateway as Gateway & { consoleUrl: string };
  }
  async function register(gateway: Gateway, url: string, events = ['job.completed', 'job.failed']) {
    const { status } = await call(gateway.baseUrl, 'POST', '/api/v1/webhooks', {
      apiKey: gateway.apiKey,
      body: { url, events, secret_key: SECRET },
    });
    expect(status).toBe(200);
  }
  async function open(gateway: Gateway & { consoleUrl: string }): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    cleanups.push(() => context.close());
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    cleanups.push(async () => expect(problems).toEqual([]));
    await page.goto(gateway.consoleUrl);
    await expect.poll(() => page.textContent('#connection')).toBe('live');
    return page;
  }
  /** The text of a delivery's attempt statuses (and the answer of its last attempt). */
  const delivery = (page: Page, number: number) => page.locator(`article.delivery[data-number="${number}"]`);
  async function submit(page: Page, prompt: string, outcome: 'completed' | 'failed') {
    await page.fill('input[name="prompt"]', prompt);
    await page.selectOption('select[name="outcome"]', outcome);
    await page.click('button[name="send"]');
    await expect.poll(() => page.textContent('#notice')).toMatch(/^Submitted task_/);
  }

  test('submit a job, see its delivery answered 200, redeliver it and see the duplicate answer', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [300, 600, 1200] } });
    const app = await startReceiverApp();
    cleanups.push(app.close);
    // A second receiver that is down for maintenance, so the page also shows failures and retries.
    const flaky = await serve((req, res) => {
      req.resume();
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"down for maintenance"}');
    });
    cleanups.push(flaky.close);
    const page = await open(gateway);
    await register(gateway, app.url);
    await expect.poll(() => page.locator('#webhooks tr[data-webhook-id]').count()).toBe(1);
    await expect.poll(() => page.textContent('#webhooks')).toContain(app.url);

    await submit(page, 'a red fox in the snow', 'completed');
    const first = delivery(page, 1);
    await expect.poll(() => first.getAttribute('data-state')).toBe('delivered');
    expect(await first.locator('.attempt-status').allTextContents()).toEqual(['200']);
    expect(await first.locator('pre.answer').textContent()).toBe('{"ok":true}');
    expect(await first.textContent()).toMatch(/job\.completed/);
    expect(await first.textContent()).toMatch(/\d+(\.\d)? ms/);
    await expect.poll(() => page.locator('#jobs td.job-completed').count()).toBe(1);

    await first.locator('button.redeliver').click();
    const again = delivery(page, 2);
    await expect.poll(() => again.getAttribute('data-state')).toBe('delivered');
    expect(await again.getAttribute('data-delivery-id')).toBe(await first.getAttribute('data-delivery-id'));
    expect(await again.getAttribute('data-redelivery')).toBe('true');
    expect(await again.locator('.attempt-status').allTextContents()).toEqual(['200']);
    expect(await again.locator('pre.answer').textContent()).toBe('{"ok":true,"duplicate":true}');

    // For the screenshot: a failed job, to both receivers; the one that is down gets retried.
    await register(gateway, `${flaky.url}/webhooks`, ['job.failed']);
    await submit(page, 'a blue whale, please fail', 'failed');
    await expect.poll(() => page.locator('article.delivery').count()).toBe(4);
    await expect
      .poll(() => page.locator('article.delivery[data-state="retrying"] .attempt-status').count())
      .toBeGreaterThanOrEqual(2);
    await page.screenshot({ path: join(artefacts, 'console.png'), fullPage: true });
    if (process.env.JOBHOOK_UPDATE_SCREENSHOTS === '1') {
      await page.screenshot({ path: join(root, 'docs', 'console.png'), fullPage: true });
    }
  }, 60_000);

  test('create an API key and a webhook from the page; the webhook receives a delivery; delete it', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [] } });
    const app = await startReceiverApp();
    cleanups.push(app.close);
    const page = await open(gateway);

    await page.fill('input[name="title"]', 'my app');
    await page.click('#create-key button[name="create"]');
    await expect.poll(() => page.textContent('#new-key-value')).toMatch(/^sk_/);
    const apiKey = (await page.textContent('#new-key-value'))!;
    await expect.poll(() => page.locator('#keys tr[data-key-id]').count()).toBe(2);
    expect(await page.textContent('#keys')).toContain('my app');
    expect(await page.textContent('#keys')).not.toContain(apiKey);
    // The key the page made is a working key of the same account.
    const listed = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey });
    expect(listed.status).toBe(200);

    await page.fill('input[name="url"]', app.url);
    await page.fill('input[name="secret"]', SECRET);
    await page.click('#create-webhook button[name="create"]');
    await expect.poll(() => page.locator('#webhooks tr[data-webhook-id]').count()).toBe(1);
    await expect.poll(() => page.textContent('#notice')).toMatch(/^Created webhook \d+\.$/);
    // Signed with the secret typed in the page: the receiver verifies it and answers 200.
    await submit(page, 'a heron at dawn', 'completed');
    await expect.poll(() => delivery(page, 1).getAttribute('data-state')).toBe('delivered');

    await page.click('#webhooks button.delete-webhook');
    await expect.poll(() => page.locator('#webhooks tr[data-webhook-id]').count()).toBe(0);
    const after = await call(gateway.baseUrl, 'GET', '/api/v1/webhooks', { apiKey: gateway.apiKey });
    expect(after.json.data).toEqual([]);
  }, 60_000);

  test('a dropped delivery (deliveries.dropRate) shows as dropped, with no attempt', async () => {
    const gateway = await start({ deliveries: { dropRate: 1 } });
    const app = await startReceiverApp();
    cleanups.push(app.close);
    const page = await open(gateway);
    await register(gateway, app.url);
    await submit(page, 'a lost delivery', 'completed');
    const first = delivery(page, 1);
    await expect.poll(() => first.getAttribute('data-state')).toBe('dropped');
    expect(await first.textContent()).toContain('dropped (never sent: deliveries.dropRate)');
    expect(await first.textContent()).toContain('No attempt: the simulator dropped this delivery.');
  }, 60_000);

  test('hostile answers and webhook URLs show as text: no element, no script from them', async () => {
    const gateway = await start({ deliveries: { retryDelaysMs: [] } });
    const hostile = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script><b>bold</b>';
    const evil = await serve((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'text/html' }).end(hostile);
    });
    cleanups.push(evil.close);
    const page = await open(gateway);
    const url = `${evil.url}/hook?<img src=x onerror=window.pwned=3>`;
    await register(gateway, url);
    await submit(page, '<svg onload="window.pwned=4">', 'completed');
    const first = delivery(page, 1);
    await expect.poll(() => first.getAttribute('data-state')).toBe('failed');

    expect(await first.locator('pre.answer').textContent()).toBe(hostile);
    expect(await first.locator('.attempt-status').textContent()).toBe('HTTP 500');
    expect(await page.textContent('#webhooks')).toContain(url);
    expect(await page.textContent('#jobs')).toContain('<svg onload="window.pwned=4">');
    expect(await page.locator('main img, main script, main svg, main b').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    await page.screenshot({ path: join(artefacts, 'console-hostile.png'), fullPage: true });
  }, 60_000);
});
