// A fresh clone installs on the oldest Node jobhook supports without EBADENGINE warnings: every
// package the lockfile installs (dev dependencies too) accepts that version. npm skips an optional
// package whose engines refuse the running Node, silently, so those may ask for more.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { expect, test } from 'vitest';
import { root } from '../support/dist.js';

interface LockedPackage {
  version?: string;
  optional?: boolean;
  engines?: { node?: string } | string[];
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};
const oldest = semver.minVersion(pkg.engines.node)!.version;

test('the oldest supported Node is 20.19', () => {
  expect(oldest).toBe('20.19.0');
});

test(`every package the lockfile installs accepts Node ${oldest}`, () => {
  const refusing = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && !entry.optional)
    .flatMap(([path, entry]) => {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      return range && !semver.satisfies(oldest, range) ? [`${path}@${entry.version}: node ${range}`] : [];
    });
  expect(refusing).toEqual([]);
});
