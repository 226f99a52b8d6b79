// A round-robin TCP proxy on loopback, the load balancer in front of the receiver processes.
// Each connection goes to the next backend; a backend that refuses the connection (its process is
// down) is skipped for the next one, as a load balancer's "next upstream" does. A connection cut
// mid-request (its process was killed) is cut for the sender too, which then retries.
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

export interface Proxy {
  readonly url: string;
  close(): Promise<void>;
}

export async function startProxy(backendPorts: readonly number[]): Promise<Proxy> {
  let next = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const server = createServer((client) => {
    track(client);
    client.pause();
    client.on('error', () => undefined);
    const first = next++ % backendPorts.length;
    const tryBackend = (tried: number) => {
      if (tried === backendPorts.length || client.destroyed) return void client.destroy();
      const upstream = connect(backendPorts[(first + tried) % backendPorts.length]!, '127.0.0.1');
      track(upstream);
      const refused = () => tryBackend(tried + 1);
      upstream.once('error', refused);
      upstream.once('connect', () => {
        upstream.off('error', refused);
        // Only a failure cuts the other side: after a clean end, pipe() ends it once its buffered
        // bytes are written (destroying it on 'close' would drop the tail of the answer).
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        // The sender gave up (its time-out): nothing can reach it any more.
        client.on('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    tryBackend(0);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
