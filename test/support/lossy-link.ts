// A TCP relay on loopback to one server that can lose what a client sends: `loseUntil(marker)`
// drops every byte clients send from then on, until the dropped bytes hold `marker`, then cuts
// every connection, as a link that went down with data in flight; new connections pass again.
// What was dropped never reached the server, and the client believes it sent it.
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

export interface LossyLink {
  readonly port: number;
  /** Resolves once a dropped write held `marker` and every connection was cut. */
  loseUntil(marker: string): Promise<void>;
  close(): Promise<void>;
}

export async function startLossyLink(serverPort: number): Promise<LossyLink> {
  const sockets = new Set<Socket>();
  let losing: { marker: string; dropped: string; lost: () => void } | undefined;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  };
  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };

  const server = createServer((client) => {
    track(client);
    const upstream = connect(serverPort, '127.0.0.1');
    track(upstream);
    upstream.pipe(client);
    client.on('data', (chunk: Buffer) => {
      if (!losing) return void upstream.write(chunk);
      // Kept whole up to the marker's length, so that a marker split across two writes is found.
      losing.dropped = (losing.dropped + chunk.toString('latin1')).slice(
        -(chunk.length + losing.marker.length),
      );
      if (!losing.dropped.includes(losing.marker)) return;
      const { lost } = losing;
      losing = undefined;
      cutAll();
      lost();
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as { port: number }).port,
    loseUntil: (marker) => new Promise<void>((lost) => (losing = { marker, dropped: '', lost })),
    async close() {
      cutAll();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
