/** The console page's CSS, inline in the page (no asset to fetch, works offline). */
export const PAGE_STYLE = String.raw`
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
