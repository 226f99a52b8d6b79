import { spawn, type ChildProcess } from 'node:child_process';
import { cli } from '../support/dist.js';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built `jobhook` binary as a child process, with only the settings variables given. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = start(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Starts the binary (in `cwd`, default this process's); the caller reads its streams and ends it. */
export function start(args: string[], env: Record<string, string> = {}, cwd?: string): ChildProcess {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(JOBHOOK_|GATEWAY_)/.test(name) && name !== 'WEBHOOK_SECRET',
    ),
  );
  return spawn(process.execPath, [cli, ...args], {
    env: { ...inherited, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd !== undefined && { cwd }),
  });
}

/** The one-line error contract: exactly one line on stderr, no stack frame. */
export function oneLineError(result: CliResult): string {
  const lines = result.stderr.trimEnd().split('\n');
  if (lines.length !== 1 || !lines[0]!.startsWith('jobhook: ') || /\n\s+at /.test(result.stderr)) {
    throw new Error(`expected one error line, got:\n${result.stderr}`);
  }
  return lines[0]!;
}

/**
 * Starts `jobhook gateway <args>` and resolves once it has printed where it listens: its base URL,
 * API key and console URL, and the output so far (which keeps growing as it reports).
 */
export async function startGatewayCli(args: string[] = [], cwd?: string) {
  const child = start(['gateway', ...args], {}, cwd);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const printed = await new Promise<{ baseUrl: string; apiKey: string; consoleUrl: string }>(
    (resolve, reject) => {
      child.stdout!.on('data', () => {
        const baseUrl = /^GATEWAY_URL=(.+)$/m.exec(output)?.[1];
        const apiKey = /^GATEWAY_API_KEY=(.+)$/m.exec(output)?.[1];
        const consoleUrl = /^Console: (\S+)/m.exec(output)?.[1];
        if (baseUrl && apiKey && consoleUrl) resolve({ baseUrl, apiKey, consoleUrl });
      });
      child.on('exit', (code) => reject(new Error(`jobhook gateway exited (${code}): ${output}`)));
    },
  );
  return { child, ...printed, output: () => output };
}
