/** What `redis` must be, in the message that refuses anything else (the same for every Redis part). */
export const IOREDIS = 'an ioredis client, e.g. new Redis(process.env.REDIS_URL)';
