// The one file the console is: HTML with its CSS and script inline, nothing fetched but its own data.
import { createHash } from 'node:crypto';

const PAGE_STYLE = String.raw`
:root { color-scheme: light dark; --fg: #1d1f23; --muted: #667085; --line: #d0d5dd; --bg: #fff;
  --panel: #f6f7f9; --ok: #067647; --bad: #b42318; --warn: #b54708; --accent: #3538cd; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e4e7ec; --muted: #98a2b3; --line: #344054; --bg: #101828; --panel: #1d2939;
    --ok: #47cd89; --bad: #f97066; --warn: #fdb022; --accent: #9b8afb; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: var(--fg); background: var(--bg); }
header.top { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.5rem 1.25rem;
  padding: 0.75rem 1.25rem; border-bottom: 1px solid var(--line); background: var(--panel); }
header.top h1 { font-size: 1.1rem; margin: 0; }
main { padding: 0.5rem 1.25rem 2rem; display: grid; gap: 1.25rem; }
h2 { font-size: 1rem; margin: 0.75rem 0 0.4rem; }
h2 .count { color: var(--muted); font-weight: normal; }
code, .mono, pre { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.muted { color: var(--muted); }
.conn { font-weight: 600; }
.conn[data-state="live"] { color: var(--ok); }
.conn[data-state="reconnecting"] { color: var(--warn); }
form.submit { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
input, select, button { font: inherit; padding: 0.3rem 0.55rem; border: 1px solid var(--line);
  border-radius: 6px; background: var(--bg); color: var(--fg); }
input[name="prompt"] { min-width: 18rem; }
input[name="url"] { min-width: 22rem; }
input[type="checkbox"] { padding: 0; }
button { cursor: pointer; background: var(--accent); border-color: var(--accent); color: #fff; }
button.secondary { background: var(--bg); color: var(--accent); }
button:disabled { opacity: 0.6; cursor: default; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line); }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.empty { color: var(--muted); font-style: italic; padding: 0.3rem 0; }
.status-ok, .state-delivered, .job-completed { color: var(--ok); font-weight: 600; }
.status-bad, .state-failed, .job-failed, .state-cancelled, .state-dropped { color: var(--bad); font-weight: 600; }
.state-retrying, .state-sending, .job-pending, .job-processing { color: var(--warn); font-weight: 600; }
article.delivery { border: 1px solid var(--line); border-radius: 8px; padding: 0.5rem 0.75rem; margin: 0 0 0.6rem; }
article.delivery > .head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 0.35rem 0.9rem; }
article.delivery > .ids { color: var(--muted); margin: 0.2rem 0 0.35rem; }
article.delivery .spacer { flex: 1; }
table.attempts { table-layout: fixed; }
table.attempts th:nth-child(1) { width: 2.5rem; }
table.attempts th:nth-child(2) { width: 8rem; }
table.attempts th:nth-child(3) { width: 12rem; }
table.attempts th:nth-child(4) { width: 6rem; }
pre.answer { margin: 0; white-space: pre-wrap; word-break: break-all; max-height: 6rem; overflow: auto; }
.notice { min-height: 1.2rem; }
.badge { font-size: 11px; padding: 0 0.4rem; border: 1px solid var(--accent); border-radius: 999px; color: var(--accent); }
.wrap { word-break: break-all; }
`;

/**
 * The page's script renders every value as text, never innerHTML: URLs and answers come from
 * whoever runs the receiver. Plain ES2017 in a raw string, so no build step touches it.
 */
const PAGE_SCRIPT = String.raw`
(function () {
  'use strict';
  var $ = function (id) { return document.getElementById(id); };

  /** An element; children are nodes or strings (as text nodes); never parses markup. */
  function el(tag, attributes, children) {
    var node = document.createElement(tag);
    Object.keys(attributes || {}).forEach(function (name) {
      var value = attributes[name];
      if (value === undefined || value === null || value === false) return;
      if (name === 'text') node.textContent = String(value);
      else if (name === 'onclick') node.addEventListener('click', value);
      else node.setAttribute(name, String(value));
    });
    (children || []).forEach(function (child) {
      if (child === undefined || child === null) return;
      node.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
    });
    return node;
  }

  function time(iso) {
    if (!iso) return '';
    var date = new Date(iso);
    var pad = function (n, width) { return String(n).padStart(width || 2, '0'); };
    return pad(date.getHours()) + ':' + pad(date.getMinutes()) + ':' + pad(date.getSeconds()) +
      '.' + pad(date.getMilliseconds(), 3);
  }

  function table(headings, rows, empty, className) {
    if (rows.length === 0) return el('div', { class: 'empty', text: empty });
    return el('table', { class: className }, [
      el('thead', {}, [el('tr', {}, headings.map(function (h) { return el('th', { text: h }); }))]),
      el('tbody', {}, rows)
    ]);
  }

  function renderKeys(keys, account) {
    $('key-count').textContent = '(' + keys.length + ')';
    $('keys').replaceChildren(table(
      ['id', 'title', 'status', 'created'],
      keys.map(function (k) {
        return el('tr', { 'data-key-id': k.id }, [
          el('td', { class: 'num', text: k.id }),
          el('td', { class: 'wrap', text: k.title + (k.id === account.key_id ? ' (this page acts with it)' : '') }),
          el('td', { text: k.status }),
          el('td', { class: 'mono', text: time(k.created_at) })
        ]);
      }),
      'No API key.'
    ));
  }

  function renderWebhooks(webhooks) {
    $('webhook-count').textContent = '(' + webhooks.length + ')';
    $('webhooks').replaceChildren(table(
      ['id', 'URL', 'events', 'sent', 'failed', 'last attempt', 'last error', ''],
      webhooks.map(function (w) {
        var button = el('button', {
          type: 'button', class: 'secondary delete-webhook', text: 'Delete',
          onclick: function () { deleteWebhook(w.id, button); }
        });
        return el('tr', { 'data-webhook-id': w.id }, [
          el('td', { class: 'num', text: w.id }),
          el('td', { class: 'mono wrap', text: w.url }),
          el('td', { text: w.events.join(', ') }),
          el('td', { class: 'num', text: w.total_sent }),
          el('td', { class: 'num', text: w.total_failed }),
          el('td', { class: 'mono', text: time(w.last_sent_at) }),
          el('td', { class: 'wrap', text: w.last_error || '' }),
          el('td', {}, [button])
        ]);
      }),
      'No webhook yet: register one (jobhook webhooks register <url>, or receiver.register()).'
    ));
  }

  function renderJobs(jobs, total) {
    $('job-count').textContent = '(' + total + ')';
    $('jobs').replaceChildren(table(
      ['task', 'status', 'prompt', 'result', 'submitted', 'updated'],
      jobs.map(function (j) {
        var result = j.error ? j.error.code + ': ' + j.error.message : (j.image_url || '');
        return el('tr', { 'data-task-id': j.task_id }, [
          el('td', { class: 'mono', text: j.task_id }),
          el('td', { class: 'job-' + j.status, text: j.status }),
          el('td', { class: 'wrap', text: j.prompt }),
          el('td', { class: 'mono wrap', text: result }),
          el('td', { class: 'mono', text: time(j.created_at) }),
          el('td', { class: 'mono', text: time(j.updated_at) })
        ]);
      }),
      'No job yet: submit one above, or with the API.'
    ));
  }

  function attemptRow(a) {
    var outcome = a.status !== undefined ? String(a.status) : (a.error || 'failed');
    if (a.status !== undefined && a.error) outcome = a.error;
    return el('tr', { 'data-attempt': a.attempt }, [
      el('td', { class: 'num', text: a.attempt }),
      el('td', { class: 'mono', text: time(a.at) }),
      el('td', { class: (a.ok ? 'status-ok' : 'status-bad') + ' attempt-status', text: outcome }),
      el('td', { class: 'num', text: a.durationMs + ' ms' }),
      el('td', {}, [el('pre', { class: 'answer', text: a.answer === undefined ? '' : a.answer })])
    ]);
  }

  function renderDeliveries(deliveries, total) {
    $('delivery-count').textContent = '(' + total + ')';
    if (deliveries.length === 0) {
      $('deliveries').replaceChildren(el('div', { class: 'empty',
        text: 'No delivery yet: a job that ends sends its event to every subscribed webhook.' }));
      return;
    }
    $('deliveries').replaceChildren.apply($('deliveries'), deliveries.map(function (d) {
      var state = d.state;
      if (state === 'retrying' && d.nextAttemptAt) state += ', next attempt at ' + time(d.nextAttemptAt);
      if (state === 'dropped') state += ' (never sent: deliveries.dropRate)';
      var button = el('button', {
        type: 'button', class: 'secondary redeliver',
        title: 'Send this delivery again: same webhook-id and body, new attempts',
        disabled: d.url === null, text: 'Redeliver',
        onclick: function () { redeliver(d.deliveryId, button); }
      });
      return el('article', {
        class: 'delivery', 'data-number': d.number, 'data-delivery-id': d.deliveryId, 'data-state': d.state,
        'data-redelivery': d.redelivery
      }, [
        el('div', { class: 'head' }, [
          el('strong', { text: '#' + d.number + ' ' + d.type }),
          d.redelivery ? el('span', { class: 'badge', text: 'redelivery' }) : null,
          el('span', { class: 'state-' + d.state + ' delivery-state', text: state }),
          el('span', { class: 'mono', text: d.taskId }),
          el('span', {}, ['to webhook ' + d.webhookId + ' ', el('span', { class: 'mono wrap', text: d.url === null ? '(deleted)' : d.url })]),
          el('span', { class: 'spacer' }),
          button
        ]),
        el('div', { class: 'ids mono' }, [
          'webhook-id ' + d.deliveryId + ' · event ' + d.eventId + ' · started ' + time(d.startedAt)
        ]),
        d.attempts.length === 0
          ? el('div', { class: 'empty', text: d.state === 'dropped' ? 'No attempt: the simulator dropped this delivery.' : 'Sending the first attempt…' })
          : table(['#', 'time', 'status', 'latency', 'answer (first 2 KB)'], d.attempts.map(attemptRow), '', 'attempts')
      ]);
    }));
  }

  function render(snapshot) {
    $('base-url').textContent = snapshot.baseUrl;
    $('account').textContent = '#' + snapshot.account.id + ' · ' + snapshot.account.remaining_credits +
      ' credits' + (snapshot.account.approved ? '' : ' · API access not approved');
    renderKeys(snapshot.keys, snapshot.account);
    renderWebhooks(snapshot.webhooks);
    renderJobs(snapshot.jobs, snapshot.totals.jobs);
    renderDeliveries(snapshot.deliveries, snapshot.totals.deliveries);
  }

  function post(path, body, method) {
    return fetch(path, {
      method: method || 'POST',
      headers: { 'content-type': 'application/json' },
      body: method === 'DELETE' ? undefined : JSON.stringify(body)
    }).then(function (response) {
      return response.json().then(function (json) {
        if (!response.ok) throw new Error((json.error && json.error.message) || ('HTTP ' + response.status));
        return json;
      });
    });
  }

  function notice(text, bad) {
    var box = $('notice');
    box.textContent = text;
    box.className = 'notice ' + (bad ? 'status-bad' : 'muted');
  }

  function redeliver(deliveryId, button) {
    button.disabled = true;
    post('/_console/deliveries/' + encodeURIComponent(deliveryId) + '/redeliver', {})
      .then(function (json) { notice('Redelivering ' + json.deliveryId + ' (delivery #' + json.number + ').'); })
      .catch(function (error) { notice(error.message, true); button.disabled = false; });
  }

  function deleteWebhook(id, button) {
    button.disabled = true;
    post('/_console/webhooks/' + encodeURIComponent(id), undefined, 'DELETE')
      .then(function () { notice('Deleted webhook ' + id + '.'); })
      .catch(function (error) { notice(error.message, true); button.disabled = false; });
  }

  $('create-key').addEventListener('submit', function (event) {
    event.preventDefault();
    var form = event.target;
    form.elements.create.disabled = true;
    post('/_console/keys', { title: form.elements.title.value })
      .then(function (json) {
        // Shown this once, as the API answers it once: it cannot be read again.
        $('new-key').className = 'notice';
        $('new-key').replaceChildren(
          'New key ' + json.id + ' (copy it now, it is not shown again): ',
          el('code', { id: 'new-key-value', text: json.api_key })
        );
        form.reset();
      })
      .catch(function (error) { notice(error.message, true); })
      .then(function () { form.elements.create.disabled = false; });
  });

  $('create-webhook').addEventListener('submit', function (event) {
    event.preventDefault();
    var form = event.target;
    var events = [];
    if (form.elements.completed.checked) events.push('job.completed');
    if (form.elements.failed.checked) events.push('job.failed');
    var body = { url: form.elements.url.value, events: events };
    if (form.elements.secret.value) body.secret_key = form.elements.secret.value;
    form.elements.create.disabled = true;
    post('/_console/webhooks', body)
      .then(function (json) { notice('Created webhook ' + json.id + '.'); form.reset(); })
      .catch(function (error) { notice(error.message, true); })
      .then(function () { form.elements.create.disabled = false; });
  });

  $('submit').addEventListener('submit', function (event) {
    event.preventDefault();
    var form = event.target;
    var data = { prompt: form.elements.prompt.value, outcome: form.elements.outcome.value };
    form.elements.send.disabled = true;
    post('/_console/jobs', data)
      .then(function (json) { notice('Submitted ' + json.task_id + '.'); })
      .catch(function (error) { notice(error.message, true); })
      .then(function () { form.elements.send.disabled = false; });
  });

  var connection = $('connection');
  function connected(state, text) { connection.dataset.state = state; connection.textContent = text; }
  var source = new EventSource('/_console/events');
  source.addEventListener('open', function () { connected('live', 'live'); });
  source.addEventListener('error', function () {
    connected('reconnecting', source.readyState === EventSource.CLOSED ? 'disconnected' : 'reconnecting…');
  });
  source.addEventListener('state', function (event) { render(JSON.parse(event.data)); });
})();
`;

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

/** Only the page's own script and style run, talking to its own origin: injected markup can do nothing. */
export const CONSOLE_PAGE_POLICY = [
  "default-src 'none'",
  `script-src ${sha256(PAGE_SCRIPT)}`,
  `style-src ${sha256(PAGE_STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
