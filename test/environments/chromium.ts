// Debian's chromium for the browser tests. Playwright's own browser download is not possible here,
// so playwright-core drives the system browser through `executablePath`.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * The path of chromium, installing it with apt-get when missing. Without it the browser tests are
 * skipped with one line on stderr, except under CI=true, where a missing browser is a failure.
 */
export function findChromium(): string | undefined {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  for (const args of [
    ['install', '-y', '--no-install-recommends', 'chromium'],
    ['update'],
    ['install', '-y', '--no-install-recommends', 'chromium'],
  ]) {
    if (existsSync(CHROMIUM)) break;
    try {
      execFileSync('apt-get', args, { stdio: 'ignore', timeout: 600_000 });
    } catch {
      // not root, no network, no such package: decided below
    }
  }
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing and apt-get could not install it`);
  process.stderr.write(
    `skipping the browser tests: ${CHROMIUM} is missing and apt-get could not install it\n`,
  );
  return undefined;
}

/** A headless chromium that stays off the network (no updates, no sync, no background requests). */
export function launch(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}
