// Runs `npm run demo` exactly as a newcomer would, and reads what it prints.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** Without npm's per-run variables, as from a terminal. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));

it('npm run demo: registers, submits three jobs, prints each typed event, summarises, exits 0', async () => {
  const { stdout, stderr } = await promisify(execFile)(npm, ['run', '--silent', 'demo'], { cwd: root, env });
  expect(stderr.replace(/^npm warn .*\n/gim, '')).toBe('');
  const lines = stdout.trimEnd().split('\n');

  expect(lines[0]).toMatch(/^Gateway simulator at http:\/\/127\.0\.0\.1:\d+$/);
  expect(lines).toContainEqual(
    expect.stringMatching(/^Registered webhook \d+ for job\.completed, job\.failed$/),
  );

  const submitted = lines.flatMap((line) => /^\s+submit (task_\w+)\s/.exec(line)?.[1] ?? []);
  const completed = lines.flatMap(
    (line) => /^\s+event\s+job\.completed\s+(task_\w+)\s+image: https:/.exec(line)?.[1] ?? [],
  );
  const failed = lines.flatMap(
    (line) => /^\s+event\s+job\.failed\s+(task_\w+)\s+\w+: /.exec(line)?.[1] ?? [],
  );
  expect(submitted).toHaveLength(3);
  expect(completed).toHaveLength(2);
  expect(failed).toHaveLength(1);
  // Every event belongs to a submitted job, and every job got exactly one event.
  expect([...completed, ...failed].sort()).toEqual([...submitted].sort());

  expect(lines.at(-1)).toMatch(
    /^Done in \d+\.\d+ s: 3 jobs submitted, 3 events received \(2 completed, 1 failed\), 970 credits left\.$/,
  );
}, 60_000);
