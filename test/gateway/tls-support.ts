import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificates {
  /** The test CA's certificate (PEM): what a sender must trust. */
  ca: string;
  /** The receiver's key and certificate (PEM) for 127.0.0.1 and localhost, signed by the CA. */
  key: string;
  cert: string;
}

/**
 * A fresh CA and a receiver certificate signed by it, made with openssl at test time (nothing is
 * checked in, nothing outlives the test run). `name` goes in the CA's subject, to tell CAs apart.
 */
export async function makeCertificates(name = 'jobhook test CA'): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'jobhook-tls-'));
  const at = (file: string) => join(dir, file);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    openssl(
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    );
    openssl('req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost');
    await writeFile(at('leaf.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    openssl(
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'leaf.pem',
      '-days',
      '2',
      '-extfile',
      'leaf.ext',
    );
    const [ca, key, cert] = await Promise.all(
      ['ca.pem', 'leaf.key', 'leaf.pem'].map((f) => readFile(at(f), 'utf8')),
    );
    return { ca: ca!, key: key!, cert: cert! };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
