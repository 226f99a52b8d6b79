import { createHash } from 'node:crypto';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

/** The one file the console is: HTML with its CSS and script inline, nothing fetched but its own data. */
export const CONSOLE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>jobhook gateway console</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<header class="top">
  <h1>jobhook gateway console</h1>
  <span class="conn" id="connection" data-state="connecting">connecting…</span>
  <span class="muted">base URL <code id="base-url"></code></span>
  <span class="muted">account <code id="account"></code></span>
  <span class="muted">simulator: state is in memory and gone when it stops</span>
</header>
<main>
  <p class="muted">This page shows one account: the main one, or the one whose key opened it
    (<code>/_console?api_key=&lt;key&gt;</code>). What it does goes through the API's checks.</p>
  <section>
    <h2>Submit a job</h2>
    <form class="submit" id="submit">
      <input name="prompt" aria-label="prompt" value="a red fox in the snow" maxlength="4000" required>
      <select name="outcome" aria-label="outcome">
        <option value="completed">completes</option>
        <option value="failed">fails</option>
      </select>
      <button name="send" type="submit">Submit job</button>
    </form>
    <div class="notice muted" id="notice" role="status"></div>
  </section>
  <section>
    <h2>API keys <span class="count" id="key-count"></span></h2>
    <form class="submit" id="create-key">
      <input name="title" aria-label="key title" placeholder="title, e.g. my app" maxlength="200" required>
      <button name="create" type="submit">Create API key</button>
    </form>
    <div class="notice" id="new-key" role="status"></div>
    <div id="keys"></div>
  </section>
  <section>
    <h2>Webhooks <span class="count" id="webhook-count"></span></h2>
    <form class="submit" id="create-webhook">
      <input name="url" aria-label="webhook URL" placeholder="webhook URL: https, or http to a loopback host" maxlength="2048" required>
      <label><input type="checkbox" name="completed" checked> job.completed</label>
      <label><input type="checkbox" name="failed" checked> job.failed</label>
      <input name="secret" aria-label="secret_key" placeholder="secret_key (optional: whsec_…)" autocomplete="off">
      <button name="create" type="submit">Create webhook</button>
    </form>
    <div id="webhooks"></div>
  </section>
  <section>
    <h2>Deliveries <span class="count" id="delivery-count"></span></h2>
    <div id="deliveries"></div>
  </section>
  <section>
    <h2>Jobs <span class="count" id="job-count"></span></h2>
    <div id="jobs"></div>
  </section>
</main>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * Only the page's own inline script and style run, and it may talk to its own origin only: a
 * receiver's answer that slipped into the markup could neither run nor load anything.
 */
export const CONSOLE_PAGE_POLICY = [
  "default-src 'none'",
  `script-src ${sha256(PAGE_SCRIPT)}`,
  `style-src ${sha256(PAGE_STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
