/**
 * The CLI and workers against the production-shaped Temporal: mutual TLS on the frontend, the
 * `infersweep` namespace with registered search attributes, PostgreSQL persistence.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { TransportError } from '@temporalio/worker';
import { connectWorker } from '@infersweep/orchestrator';
import { toolsDir } from '@infersweep/testkit/stack';
import {
  CONFIG,
  cli,
  prodClient,
  prodEnv,
  prodTarget,
  expectEachPointOnce,
  spawnWorker,
  startSweep,
  uiGet,
  until,
  type WorkerProcess,
} from './harness';

let client: Client;
let east: WorkerProcess | undefined;

beforeAll(async () => {
  client = await prodClient();
});
afterAll(async () => {
  east?.kill('SIGTERM');
  await client?.connection.close();
});

/** A CA nobody trusts and a client certificate it signed (openssl, like the stack's own CA). */
/**
 * The connection is refused by the TLS layer: a TransportError from the worker's native connection
 * whose text is not that of an unreachable server or a missing file. Returns the message.
 */
async function tlsRefusal(connecting: Promise<unknown>): Promise<string> {
  const err = await connecting.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TransportError);
  const message = (err as Error).message;
  expect(message).not.toMatch(/connection refused|no such file|ENOENT|dns error/i);
  return message;
}

function foreignCa(): { ca: string; cert: string; key: string } {
  const d = mkdtempSync(join(tmpdir(), 'infersweep-foreign-ca-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: d, stdio: 'ignore' });
  run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'ca.key');
  run(
    'req',
    '-x509',
    '-new',
    '-key',
    'ca.key',
    '-days',
    '2',
    '-out',
    'ca.pem',
    '-subj',
    '/CN=not the infersweep CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  );
  run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', 'w.key');
  run('req', '-new', '-key', 'w.key', '-subj', '/CN=worker-east', '-out', 'w.csr');
  // the same X.509 v3 extensions as the stack's own client certificates (scripts/stack-production.sh):
  // only the issuing CA differs (a v1 certificate would be refused for its version, not its CA)
  writeFileSync(
    join(d, 'w.ext'),
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n',
  );
  run(
    'x509',
    '-req',
    '-in',
    'w.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'w.ext',
    '-out',
    'w.pem',
  );
  return { ca: join(d, 'ca.pem'), cert: join(d, 'w.pem'), key: join(d, 'w.key') };
}

describe('production stack: mutual TLS and the infersweep namespace', () => {
  it('the Temporal server persists to PostgreSQL and serves only TLS with client certificates', () => {
    const e = prodEnv();
    expect(e.TEMPORAL_NAMESPACE).toBe('infersweep');
    // the Temporal CLI without a client certificate is refused by the frontend's TLS handshake…
    const temporal = join(toolsDir, 'bin', 'temporal');
    expect(existsSync(temporal), temporal).toBe(true);
    const health = (clientCert: string[]) =>
      spawnSync(
        temporal,
        [
          'operator',
          'cluster',
          'health',
          '--address',
          e.TEMPORAL_ADDRESS!,
          '--tls-ca-path',
          e.TEMPORAL_TLS_SERVER_CA_CERT_PATH!,
          '--tls-server-name',
          'localhost',
          ...clientCert,
        ],
        { encoding: 'utf8', timeout: 30_000 },
      );
    const noCert = health([]);
    expect(noCert.error).toBeUndefined(); // the binary ran
    expect(noCert.status).not.toBe(0);
    // (the frontend ends the handshake: Go's client reports the closed connection as a broken pipe)
    expect(noCert.stderr).toMatch(/certificate required|bad certificate|tls|broken pipe|connection reset/i);
    expect(noCert.stderr).not.toMatch(/connection refused|no such host/i);
    // …while the same command with the stack's client certificate is answered (same binary, address, CA)
    const withCert = health([
      '--tls-cert-path',
      e.TEMPORAL_TLS_CLIENT_CERT_PATH!,
      '--tls-key-path',
      e.TEMPORAL_TLS_CLIENT_KEY_PATH!,
    ]);
    expect(withCert.status, withCert.stderr).toBe(0);
    expect(withCert.stdout).toMatch(/SERVING/);
    // the namespace's data lives in PostgreSQL (temporal.namespaces), reached with the stack's own role over TLS
    const rows = execFileSync(
      'psql',
      [
        `host=127.0.0.1 port=${e.INFERSWEEP_PRODUCTION_PG_PORT} user=temporal dbname=temporal sslmode=verify-full sslrootcert=${e.TEMPORAL_TLS_SERVER_CA_CERT_PATH}`,
        '-tAc',
        'SELECT name FROM namespaces ORDER BY name',
      ],
      {
        env: {
          ...process.env,
          PGPASSFILE: '/dev/null',
          PGPASSWORD: execFileSync('cat', [join(e.INFERSWEEP_PRODUCTION!, 'secrets', 'pg-temporal-password')])
            .toString()
            .trim(),
        },
        timeout: 30_000,
      },
    ).toString();
    expect(rows.split('\n')).toContain('infersweep');
  });

  it('a worker that trusts another CA, or shows a certificate of another CA, or none, is refused', async () => {
    const f = foreignCa();
    const e = prodEnv();
    // trusts the wrong CA: the worker refuses the frontend's certificate
    expect(await tlsRefusal(connectWorker(prodTarget({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: f.ca })))).toMatch(
      /UnknownIssuer/,
    );
    // presents a certificate of the wrong CA: the frontend refuses the worker. In TLS 1.3 the server checks the
    // client's certificate after the client has finished its side of the handshake, so the client reads either
    // the server's alert or, when the server has already closed, a broken pipe or a closed connection (CI saw
    // all three); the right certificate's success below is the control that the refusal is the certificate's
    expect(
      await tlsRefusal(
        connectWorker(prodTarget({ TEMPORAL_TLS_CLIENT_CERT_PATH: f.cert, TEMPORAL_TLS_CLIENT_KEY_PATH: f.key })),
      ),
    ).toMatch(
      /UnknownCA|BadCertificate|bad certificate|unknown certificate authority|broken pipe|connection (reset|closed|was not ready)/i,
    );
    // no client certificate at all
    expect(
      await tlsRefusal(
        connectWorker(prodTarget({ TEMPORAL_TLS_CLIENT_CERT_PATH: '', TEMPORAL_TLS_CLIENT_KEY_PATH: '' })),
      ),
    ).toMatch(/CertificateRequired|certificate required|HandshakeFailure|broken pipe|connection (reset|closed)/i);
    // plain text to a TLS frontend: reached (not refused), but no gRPC conversation
    expect(await tlsRefusal(connectWorker({ ...prodTarget(), tls: false, tlsFiles: undefined }))).toMatch(
      /h2 protocol error|connection (closed|reset)|frame|transport error/i,
    );
    // and the right certificate is accepted
    const ok = await connectWorker(
      prodTarget({
        TEMPORAL_TLS_CLIENT_CERT_PATH: join(e.INFERSWEEP_PRODUCTION!, 'tls', 'clients', 'worker-east.pem'),
        TEMPORAL_TLS_CLIENT_KEY_PATH: join(e.INFERSWEEP_PRODUCTION!, 'tls', 'clients', 'worker-east.key'),
      }),
    );
    await ok.close();
  });

  it('sweep, status, list and results through mutual TLS in namespace infersweep, run by a deployed worker', async () => {
    east = spawnWorker('east');
    const label = `tls-${randomUUID().slice(0, 6)}`;
    const s = await startSweep('east', 'single-node', label, [2]);
    expect(s.uiLink).toContain('/namespaces/infersweep/');
    const h = client.workflow.getHandle(s.sweepId);
    const r = await h.result();
    expect(r.status).toBe('completed');
    // status: the namespace and the cluster; one runPoint per point
    const st = await cli(['status', s.sweepId, '--json']);
    expect(st.code).toBe(0);
    const view = JSON.parse(st.stdout) as {
      workflowStatus: string;
      points: { concurrency: number; status: string; resultPath?: string }[];
      uiLink: string;
    };
    expect(view.workflowStatus).toBe('COMPLETED');
    expect(view.points.map((p) => [p.concurrency, p.status])).toEqual([[2, 'done']]);
    expect(existsSync(view.points[0]!.resultPath!)).toBe(true);
    expect((await expectEachPointOnce(h, [2])).get(2)).toMatchObject({ attempts: 1, reused: false });
    // list by search attribute (registered in the namespace by the stack)
    const list = await cli(['list', '--cluster', 'east', '--config', 'two-clusters-local', '--json']);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { workflowId: string }[]).map((x) => x.workflowId)).toContain(s.sweepId);
    // the Web UI server reads it through its own mutual TLS connection
    const ui = await uiGet(`/api/v1/namespaces/infersweep/workflows/${encodeURIComponent(s.sweepId)}`);
    expect(ui.status).toBe(200);
    expect(ui.body).toContain('WORKFLOW_EXECUTION_STATUS_COMPLETED');
    // the same id is unknown in the default namespace
    const other = await cli(['status', s.sweepId], { TEMPORAL_NAMESPACE: 'default' });
    expect(other.code).toBe(1);
  });

  it('schedule create, list, describe, trigger and delete through mutual TLS', async () => {
    const name = `prod-${randomUUID().slice(0, 6)}`;
    const c = await cli([
      'schedule',
      'create',
      name,
      '--cron',
      '0 3 * * *',
      '--config',
      CONFIG,
      '--cluster',
      'east',
      '--orientation',
      'single-node',
      '--points',
      '2',
      '--paused',
      '--json',
    ]);
    expect(c.code, c.stderr).toBe(0);
    try {
      const list = await cli(['schedule', 'list', '--json']);
      expect((JSON.parse(list.stdout) as { scheduleId: string }[]).map((x) => x.scheduleId)).toContain(
        `infersweep-${name}`,
      );
      const d = await cli(['schedule', 'describe', name, '--json']);
      expect(JSON.parse(d.stdout)).toMatchObject({ paused: true });
      // a triggered run starts sweepAllWorkflow in the namespace on east's queue; the east worker runs it
      expect((await cli(['schedule', 'trigger', name])).code).toBe(0);
      const run = await until(
        'the triggered schedule run',
        async () => {
          for await (const w of client.workflow.list({ query: `TemporalScheduledById = "infersweep-${name}"` }))
            return w;
          return undefined;
        },
        60_000,
      );
      expect(run.taskQueue).toBe('infersweep-east');
      await client.workflow.getHandle(run.workflowId).terminate('test: the schedule run is not needed');
    } finally {
      expect((await cli(['schedule', 'delete', name])).code).toBe(0);
    }
  });
});
