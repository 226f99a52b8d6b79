/**
 * The console page's script, inline in the page. It renders every value with text nodes and
 * textContent, never innerHTML: webhook URLs and receivers' answers come from whoever runs the
 * receiver, and must show as text. Kept as plain ES2017 in a raw string (no template literals in
 * it), so that no build step and no bundler touches what the browser runs.
 */
export const PAGE_SCRIPT = String.raw`
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
