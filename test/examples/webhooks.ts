// webhooks.ts: the app's receiver, made by a function so that a test can give it what it needs.
import { createReceiver, type ReceiverOptions } from 'jobhook';

/** Where the app keeps what the gateway tells it: a database in production. */
export interface Images {
  saved(image: { tenant: string | undefined; taskId: string; url: string }): Promise<void>;
  failed(job: { tenant: string | undefined; taskId: string; reason: string }): Promise<void>;
}

export function createWebhooks(images: Images, options: ReceiverOptions) {
  return createReceiver(options)
    .onJobCompleted((event, { tenant }) =>
      images.saved({ tenant, taskId: event.data.task_id, url: event.data.image_url }),
    )
    .onJobFailed((event, { tenant }) =>
      images.failed({ tenant, taskId: event.data.task_id, reason: event.data.error.message }),
    );
}
