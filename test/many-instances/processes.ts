// The scenario's child processes (receivers, workers, the proxy): each is a TypeScript script run
// with tsx, configured by its environment, that prints one line starting with "listening" or
// "ready" once it serves. Its stderr is kept for the error message should it exit early.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Child {
  readonly process: ChildProcess;
  /** The line it printed once ready, e.g. `listening 40123`. */
  readonly readyLine: string;
  /** All it wrote to stderr so far: the warnings a test prints when something went wrong. */
  stderr(): string;
}

export async function startChild(script: string, env: Record<string, string>): Promise<Child> {
  const path = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  child.stderr.on('data', (data: Buffer) => {
    output += data.toString();
    stderr += data.toString();
  });
  const readyLine = await new Promise<string>((resolve, reject) => {
    const onData = (data: Buffer) => {
      output += data.toString();
      const line = /^(listening|ready)\b.*$/m.exec(output);
      if (line) {
        child.stdout.off('data', onData);
        child.stdout.resume();
        child.off('exit', onExit);
        resolve(line[0]);
      }
    };
    const onExit = (code: number | null) => reject(new Error(`${script} exited (${code}): ${output}`));
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });
  return { process: child, readyLine, stderr: () => stderr };
}

export async function stopChild(child: Child, signal: NodeJS.Signals): Promise<void> {
  const { process: running } = child;
  if (running.exitCode !== null || running.signalCode !== null) return;
  const exited = once(running, 'exit');
  running.kill(signal);
  await exited;
}
