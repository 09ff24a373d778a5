import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Paths of PEM files made for one test file; removed by `remove()`. */
export interface TestCertificates {
  dir: string;
  /** The CA that signed the server and client certificates. */
  caCert: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A CA that signed nothing here: trusting it instead of `caCert` must fail the handshake. */
  otherCaCert: string;
  /** A key that belongs to no certificate here. */
  strayKey: string;
  remove(): Promise<void>;
}

/**
 * Generates, with the system's openssl, a CA, a server certificate for 127.0.0.1 and
 * localhost, a client certificate for mTLS, an unrelated CA and a stray key. Valid one
 * day; nothing is committed to the repository.
 */
export async function makeTestCertificates(): Promise<TestCertificates> {
  const dir = await mkdtemp(path.join(tmpdir(), 'agent-tls-'));
  const at = (name: string) => path.join(dir, name);
  await makeCa(at('ca'), 'agent test CA');
  await makeCa(at('other-ca'), 'unrelated test CA');
  await makeLeaf(dir, 'server', at('ca'), 'localhost', ['subjectAltName=DNS:localhost,IP:127.0.0.1', 'extendedKeyUsage=serverAuth']);
  await makeLeaf(dir, 'client', at('ca'), 'agent worker', ['extendedKeyUsage=clientAuth']);
  await openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', at('stray.key'));
  return {
    dir,
    caCert: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    otherCaCert: at('other-ca.pem'),
    strayKey: at('stray.key'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

async function makeCa(base: string, name: string): Promise<void> {
  await openssl(
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
    '-subj', `/CN=${name}`, '-keyout', `${base}.key`, '-out', `${base}.pem`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  );
}

async function makeLeaf(dir: string, name: string, ca: string, commonName: string, extensions: string[]): Promise<void> {
  const base = path.join(dir, name);
  const extFile = `${base}.ext`;
  await writeFile(extFile, ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', ...extensions].join('\n'));
  await openssl('req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', `/CN=${commonName}`, '-keyout', `${base}.key`, '-out', `${base}.csr`);
  await openssl('x509', '-req', '-in', `${base}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '1', '-extfile', extFile, '-out', `${base}.pem`);
}

async function openssl(...args: string[]): Promise<void> {
  await run('openssl', args);
}
