// The round-robin proxy in a process of its own, as a load balancer is: `BACKENDS` is a JSON array
// of ports; prints "listening <port>". Apart from the test process, its work does not compete with
// the gateway simulator's for one event loop.
import { startProxy } from './proxy.js';

const proxy = await startProxy(JSON.parse(process.env.BACKENDS ?? '[]') as number[]);
console.log(`listening ${new URL(proxy.url).port}`);
process.once('SIGTERM', () => void proxy.close().then(() => process.exit(0)));
