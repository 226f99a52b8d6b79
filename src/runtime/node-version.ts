// The oldest Node jobhook runs on, checked when it loads (Web APIs only: the client runs anywhere).

/** package.json `engines`: Node 20.19 or later. */
const OLDEST = { major: 20, minor: 19 } as const;

interface ProcessInfo {
  versions?: Readonly<Record<string, string | undefined>>;
  release?: { name?: string };
}

/** Throws on Node older than 20.19, rather than fail every call later; Deno, Bun and others are left alone. */
export function requireSupportedNode(info: ProcessInfo | undefined = globalThis.process): void {
  const versions = info?.versions;
  if (info?.release?.name !== 'node' || versions?.bun !== undefined || versions?.deno !== undefined) return;
  const version = versions?.node;
  const match = /^(\d+)\.(\d+)\./.exec(version ?? '');
  if (!match) return;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major > OLDEST.major || (major === OLDEST.major && minor >= OLDEST.minor)) return;
  throw new Error(`jobhook needs Node ${OLDEST.major}.${OLDEST.minor} or later (this is ${version}).`);
}
