/** The text of every `--help`. Kept in one file so the commands read as code, not prose. */

export const mainHelp = `Usage: jobhook <command> [options]

Try a jobhook receiver and manage the gateway's webhooks from a terminal.

Commands:
  gateway                 Run the gateway simulator in the foreground
  generate "<prompt>"     Submit an image job; with --wait, print its image URL when it ends
  jobs                    List tracked jobs still waiting for their outcome, oldest first
  probe                   Learn how a gateway signs, shapes and retries its deliveries (one job)
  secret                  Print a fresh webhook secret (whsec_...)
  send <url> [payload]    Send a signed test delivery to a receiver and print its answer
  webhooks list           List the webhooks of an account
  webhooks register <url> Create or reuse the webhook that delivers to <url>
  webhooks delete <id>    Delete a webhook
  failed list             List the events a hand-off kept as failed (BullMQ, pg-boss, JetStream)
  failed retry <id|--all> Queue failed events again

Options:
  -h, --help              Show help (also: jobhook <command> --help, jobhook help <command>)
  -v, --version           Show the version

Environment: GATEWAY_URL, GATEWAY_API_KEY and WEBHOOK_SECRET stand in for --base-url, --api-key
and --secret (the older JOBHOOK_BASE_URL, JOBHOOK_API_KEY and JOBHOOK_SECRET still work).

Exit codes: 0 success, 1 failure (unreachable, refused, a non-2xx answer), 2 bad command line.
`;

export const secretHelp = `Usage: jobhook secret

Prints a fresh webhook secret: whsec_ and 32 random bytes in base64, the Standard Webhooks form.
Give it to your receiver (createReceiver({ secret })) and register the webhook with it; keep it
out of source control, like an API key.
`;

export const gatewayHelp = `Usage: jobhook gateway [options]

Runs the in-memory gateway simulator on 127.0.0.1 until Ctrl+C (SIGINT) or SIGTERM, and prints
GATEWAY_URL=..., GATEWAY_API_KEY=... and a fresh WEBHOOK_SECRET=... (lines for a .env file), then
each request and delivery as it happens. Jobs complete after a few milliseconds, and deliveries to
registered webhooks are signed with their secret_key and retried on failure after 1, 2, 4, 8
and 16 s (each attempt may take 15 s): longer than a receiver's handler time-out.

GATEWAY_API_KEY is the same on every run in the same folder (derived from its path), so a .env
stays valid across restarts; --api-key sets another (GATEWAY_API_KEY in the environment is not
read: it may be a real gateway's), --port keeps GATEWAY_URL too. With a --host beyond this machine
the key is random unless --api-key is given (a key derived from a path can be guessed).

Open <base URL>/_console in a browser for the live console: the webhooks, the jobs, and each
delivery with every attempt (time, status, the receiver's answer, latency), updated as they
happen, with buttons to submit a job that completes or fails and to redeliver an event.

Options:
  -p, --port <n>        The port to listen on (default: a free one)
  --host <address>      The address to listen on (default 127.0.0.1); requests must name it in
                        their Host header unless it is 0.0.0.0 or ::
  --credits <n>         Credits of the account (default 1000)
  --fail-when <text>    Jobs whose prompt contains <text> fail (default "fail")
  --drop-rate <share>   Never send this share (0 to 1) of deliveries, to try reconciliation:
                        no attempt is made, the console shows them as dropped
  --no-retries          Try each delivery once: a failed attempt is never retried
  --ca <file>           Also trust this CA (PEM) for https webhook URLs, e.g. a receiver's
                        test certificate
  --api-key <key>       The API key to accept (16 to 256 visible ASCII characters, no spaces)
  --signing <scheme>    Sign deliveries as standard-webhooks (default), svix, hmac-sha256
                        (x-hub-signature-256: sha256=<hex>), stripe (stripe-signature:
                        t=<unix>,v1=<hex>) or unsigned
  --payload <shape>     Write payloads as default, flat, nested or type-in-header
                        (docs/gateway-simulator.md shows each)
  -q, --quiet           Do not print each request and delivery as it happens
  -h, --help            Show this help
`;

export const generateHelp = `Usage: jobhook generate "<prompt>" [options]

Submits an image job and prints its task id. With --wait, waits for the job to end (polling the
gateway, from every second to every 30 s) and prints the image URL, or exits 1 with the job's
error. A wait that times out, or Ctrl+C, leaves the job running at the gateway.

Options:
  --wait                Wait for the job to end and print its image URL
  --model <model>       The model (or set JOBHOOK_MODEL; default "default")
  --aspect-ratio <w:h>  The aspect ratio (default 1:1)
  --timeout <ms>        With --wait: give up waiting after this long (default 600000)
  --api-key <key>       The API key (or set GATEWAY_API_KEY)
  --base-url <url>      The gateway's base URL (or set GATEWAY_URL)
  --json                Print the gateway's answer (with --wait: the finished task) as JSON
  -h, --help            Show this help

Exit code 0 when the job was submitted (with --wait: completed), 1 otherwise.
`;

export const probeHelp = `Usage: jobhook probe [options]

Learns what the gateway's document leaves unstated, by watching it. Listens on this machine,
registers a temporary webhook for job.completed and job.failed with a fresh random secret,
submits one image job (it spends credits: asked first, or --yes), and reports:

  signature  which headers carry what, what is signed, the digest's encoding and layout, and
             whether the secret is text or base64 after whsec_ (or unsigned, or unknown)
  payload    where the event type, task id, image URL, error and event id are
  retries    with --retries-for: the delays between attempts, and whether the ids stay the same
  contract   the receiver configuration that matches, as TypeScript and as JSON:
             createReceiver({ secret, contract }) takes it (docs/contracts.md)

The webhook is deleted at the end, also on failure and on Ctrl+C. The API key and the secret are
never printed, nor any signature.

Options:
  --public-url <url>    The URL the gateway reaches this listener at (default
                        http://<host>:<port>/); a real gateway needs a public HTTPS URL, such as
                        a tunnel to --port
  --host <address>      The address to listen on (default 127.0.0.1)
  -p, --port <n>        The port to listen on (default: a free one)
  --model <model>       The job's model (or set JOBHOOK_MODEL; default "default")
  --prompt <text>       The job's prompt
  --aspect-ratio <w:h>  The job's aspect ratio (default 1:1)
  --fail-prompt <text>  Also submit a job with this prompt, meant to fail, to see a job.failed
                        delivery (the simulator fails prompts that contain "fail")
  --retries-for <s>     Answer the job's deliveries 500 for this many seconds, then 200, and
                        report the retries
  --timeout <s>         The longest wait for the job to end and its delivery (and, with
                        --retries-for, for the next attempt after that window); default 300
  -y, --yes             Do not ask before spending credits (needed without a terminal)
  --json                Print the whole report as JSON
  --out <file>          Also write the report as JSON to <file>
  --api-key <key>       The API key (or set GATEWAY_API_KEY)
  --base-url <url>      The gateway's base URL (or set GATEWAY_URL)
  -h, --help            Show this help

Rehearse against the simulator: npx jobhook gateway --signing hmac-sha256 --payload flat, then
jobhook probe --yes with the GATEWAY_URL and GATEWAY_API_KEY it prints.

Exit code 0 when the report is made, 1 when the probe failed, 2 for a bad command line.
`;

export const sendHelp = `Usage: jobhook send <url> [payload-file] [options]

Signs a test delivery the way the gateway does (Standard Webhooks v1) and POSTs it to <url>,
then prints the answer's status and body. Without a payload file a fresh job.completed or
job.failed event is generated; a payload file is sent byte for byte, as it is.

Options:
  --type <type>         job.completed (default) or job.failed, for the generated payload
  --secret <secret>     The receiver's secret (or set WEBHOOK_SECRET); whsec_... or any string
  --id <id>             The webhook-id header (default: a fresh msg_...); the generated payload's
                        id is evt_<id>, so repeating one repeats the event: tests dedupe
  --timestamp <s>       The webhook-timestamp in Unix seconds (default: now); to test clock skew
  --timeout <ms>        Give up waiting for the answer after this long (default 15000: above
                        the receiver's handlerTimeoutMs, so its own time-out answer arrives)
  --max-answer-bytes <n> Read at most this much of the answer (default 1048576); a longer
                        one fails, exit code 1
  -h, --help            Show this help

Exit code 0 when the receiver answers 2xx, 1 otherwise.
`;

export const webhooksHelp = `Usage: jobhook webhooks <list|register|delete> [options]

Manages the webhooks of the account the API key belongs to, on any gateway.

Commands:
  list                  List the webhooks, with their delivery counters
  register <url>        Create or reuse the webhook for <url>; older ones for <url> are deleted
  delete <id>           Delete the webhook with this numeric id

Options of every command:
  --api-key <key>       The API key (or set GATEWAY_API_KEY)
  --base-url <url>      The gateway's base URL (or set GATEWAY_URL)
  --json                Print the gateway's data as JSON
  -h, --help            Show help (also: jobhook webhooks <command> --help)
`;

export const webhooksListHelp = `Usage: jobhook webhooks list [options]

Lists the webhooks of the account: id, status, events, deliveries sent and failed, URL, last error.

Options:
  --api-key <key>       The API key (or set GATEWAY_API_KEY)
  --base-url <url>      The gateway's base URL (or set GATEWAY_URL)
  --json                Print the list as JSON
  -h, --help            Show this help
`;

export const webhooksRegisterHelp = `Usage: jobhook webhooks register <url> [options]

Makes sure exactly one active webhook delivers to <url>: reuses one with the same events, or
creates it; then deletes older webhooks for the same URL. Webhooks for other URLs are untouched.

Options:
  --secret <secret>     The receiver's secret, sent as secret_key (or set WEBHOOK_SECRET)
  --events <list>       Comma-separated event types (default job.completed,job.failed)
  --rotate-secret       Create a new webhook even if one fits, then delete the old one
  --api-key <key>       The API key (or set GATEWAY_API_KEY)
  --base-url <url>      The gateway's base URL (or set GATEWAY_URL)
  --json                Print the result as JSON
  -h, --help            Show this help
`;

export const webhooksDeleteHelp = `Usage: jobhook webhooks delete <id> [options]

Deletes the webhook with this numeric id.

Options:
  --api-key <key>       The API key (or set GATEWAY_API_KEY)
  --base-url <url>      The gateway's base URL (or set GATEWAY_URL)
  --json                Print the gateway's answer as JSON
  -h, --help            Show this help
`;

export const jobsHelp = `Usage: jobhook jobs (--redis-url <url> | --database-url <url>) [options]

Lists the tasks a job tracker still waits for, oldest first: submitted by a client with a
tracker, their outcome not handled yet by a webhook or a reconcile poll. Each row shows the task
id, its age, the status polls made so far and when it was submitted.

Options:
  --redis-url <url>     The Redis of redisJobTracker (or set JOBHOOK_REDIS_URL)
  --prefix <prefix>     Its key prefix (default jobhook:jobs:)
  --database-url <url>  The PostgreSQL of postgresJobTracker (or set JOBHOOK_DATABASE_URL)
  --table <name>        Its table (default jobhook_jobs)
  --limit <n>           At most this many (default 100)
  --json                Print the list as JSON
  -h, --help            Show this help
`;

const failedWhere = `Where the queue is (one of them):
  --redis-url <url>     BullMQ on Redis (or set JOBHOOK_REDIS_URL); --prefix <p> if not "bull"
  --database-url <url>  pg-boss on PostgreSQL (or set JOBHOOK_DATABASE_URL); --schema <s> if not
                        "pgboss"
  --nats-url <url>      NATS JetStream (or set JOBHOOK_NATS_URL); --stream <s> if not "JOBHOOK",
                        --subject <s> if not "jobhook.events"
  --queue <name>        The queue's name, BullMQ and pg-boss (default "jobhook")`;

export const failedHelp = `Usage: jobhook failed <list|retry> [options]

The events whose handlers kept failing on a hand-off's workers (bullmqHandoff, pgBossHandoff,
natsHandoff), kept after their last attempt with their error.

Commands:
  list                  List them: id, type, event id, attempts, when, the last error
  retry <id|--all>      Queue them again: the handlers run once more, context.attempt counting
                        on; one that was retried already is not run twice

${failedWhere}
`;

export const failedListHelp = `Usage: jobhook failed list [options]

Lists the failed events, oldest first.

${failedWhere}
  --limit <n>           At most this many (default 100)
  --json                Print them as JSON, with each event's payload
  -h, --help            Show this help
`;

export const failedRetryHelp = `Usage: jobhook failed retry <id|--all> [options]

Queues the failed event <id> (from \`jobhook failed list\`), or with --all every failed event
listed now, again. Exit code 1 when <id> is not a failed event (any more).

${failedWhere}
  --limit <n>           With --all: at most this many (default 1000)
  -h, --help            Show this help
`;
