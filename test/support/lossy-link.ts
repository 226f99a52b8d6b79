// A TCP relay on loopback to one server that can lose what a client sends: `loseNext(marker)`
// drops the next write a client sends that holds `marker` and cuts every connection, as a link
// that went down with that write in flight; new connections pass again. What was dropped never
// reached the server, and the client believes it sent it.
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

export interface LossyLink {
  readonly port: number;
  /** Resolves once a write holding `marker` was dropped and every connection cut. */
  loseNext(marker: string): Promise<void>;
  close(): Promise<void>;
}

export async function startLossyLink(serverPort: number): Promise<LossyLink> {
  const sockets = new Set<Socket>();
  let losing: { marker: string; lost: () => void } | undefined;
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
      // On loopback a small write (one protocol message) arrives as one chunk.
      if (!losing || !chunk.toString('latin1').includes(losing.marker)) return void upstream.write(chunk);
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
    loseNext: (marker) => new Promise<void>((lost) => (losing = { marker, lost })),
    async close() {
      cutAll();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
