/**
 * The BullMQ job id for a dedupe key. BullMQ refuses custom ids that look like integers or that
 * contain `:`, so those (and `%`, the escape character) are percent-escaped; any other key, such
 * as the gateway's `evt_…` ids, is its own job id. Distinct keys always give distinct ids.
 */
export function jobIdOf(key: string): string {
  const escaped = key.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
  // `${parseInt(id, 10)}` === id is BullMQ's own integer test: escape the first character then.
  if (`${Number.parseInt(escaped, 10)}` === escaped) {
    return `%${escaped.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}${escaped.slice(1)}`;
  }
  return escaped;
}
