// A Next.js App Router route handler (app/webhooks/route.ts): the route module exports `POST`,
// which Next.js calls with the request; `receiver.fetch` reads its raw bytes itself.
import { createReceiver } from 'jobhook';

const receiver = createReceiver({ secret: process.env.WEBHOOK_SECRET! });

receiver.onJobCompleted((event) => {
  console.log('completed', event.data.task_id, event.data.image_url);
});
receiver.onJobFailed((event) => {
  console.log('failed', event.data.task_id, event.data.error.message);
});

// Either runtime works: 'nodejs' verifies with node:crypto, 'edge' with crypto.subtle.
export const runtime = 'nodejs';
export const POST = (request: Request) => receiver.fetch(request);
