import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { isLoopback } from './webhooks.js';

/**
 * Which Host headers the simulator serves: its guard against DNS rebinding, where a web page on
 * `evil.test`, whose name is made to resolve to 127.0.0.1, has the browser send requests (with
 * `Host: evil.test`) to a local server. The browser always names the page's own host, so a server
 * that answers only names no attacker controls is safe:
 *
 * - on a loopback address, any loopback name of the same port: `127.0.0.1`, `localhost`,
 *   `*.localhost`, `[::1]` (a developer types whichever);
 * - on another address, that address; on a wildcard address (`0.0.0.0`, `::`), any IP literal and
 *   this machine's host name as well (a page can never rebind an IP literal);
 * - on every address, the names in `allowedHosts` (e.g. a name behind a port forward).
 *
 * The refusal names the host to use.
 */
export function hostGuard(bound: { host: string; port: number }, allowedHosts: readonly string[] = []) {
  const address = bound.host.replace(/^\[|\]$/g, '').toLowerCase();
  const wildcard = address === '0.0.0.0' || address === '::';
  const loopback = wildcard || isLoopback(address);
  const allowed = new Set(allowedHosts.map((host) => host.toLowerCase()));
  const machine = hostname().toLowerCase();
  const display = address.includes(':') ? `[${address}]` : address;
  const suggestion = loopback ? `127.0.0.1:${bound.port}` : `${display}:${bound.port}`;

  function accepts(header: string | undefined): boolean {
    if (header === undefined) return false;
    const value = header.toLowerCase();
    if (allowed.has(value)) return true;
    const parsed = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/.exec(value);
    if (!parsed || Number(parsed[2]) !== bound.port) return false;
    const name = parsed[1]!.replace(/^\[|\]$/g, '');
    if (allowed.has(name)) return true;
    if (name === address) return true;
    if (loopback && isLoopback(name)) return true;
    return wildcard && (isIP(name) !== 0 || name === machine);
  }

  return {
    accepts,
    /** The Host to use, as the refusal names it. */
    suggestion,
    refusal(header: string | undefined): string {
      const seen = header === undefined ? 'no Host header' : `Host ${JSON.stringify(header.slice(0, 100))}`;
      return (
        `This host is not the gateway host (${seen}): use ${suggestion}` +
        (loopback ? ` or localhost:${bound.port}.` : '.')
      );
    },
  };
}

export type HostGuard = ReturnType<typeof hostGuard>;
