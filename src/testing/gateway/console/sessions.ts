import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ApiKeyRecord } from '../state.js';

/** Sessions at most; the oldest goes first. A simulator serves one developer, not a crowd. */
const MAX_SESSIONS = 1000;

/**
 * Which key the console acts with, per browser: opened as `/_console?api_key=<key>`, the page gets
 * a cookie that names a session of that key; without one it acts with the main account's key. The
 * cookie's name is unique to this simulator (cookies ignore ports, and a developer may run two),
 * HttpOnly (the page's script never sees it) and SameSite=Strict (no other site's page sends it).
 */
export function consoleSessions() {
  const cookieName = `jobhook_console_${randomBytes(4).toString('hex')}`;
  const sessions = new Map<string, ApiKeyRecord>();
  return {
    /** Starts a session for `key`; answers the Set-Cookie header value. */
    open(key: ApiKeyRecord, path: string): string {
      const token = randomBytes(24).toString('base64url');
      sessions.set(token, key);
      if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
      return `${cookieName}=${token}; Path=${path}; HttpOnly; SameSite=Strict`;
    },
    /** The key of the request's session, or undefined without one (or with a stale one). */
    keyOf(req: IncomingMessage): ApiKeyRecord | undefined {
      for (const part of (req.headers.cookie ?? '').split(';')) {
        const [name, value] = part.trim().split('=', 2);
        if (name === cookieName && value !== undefined) return sessions.get(value);
      }
      return undefined;
    },
  };
}
